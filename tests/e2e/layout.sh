#!/bin/sh
# readset layout on a real ext4 image: files written interleaved and
# scattered, read by a program in an order of its own and recorded; a dry
# run changes nothing; layout puts them in one run of consecutive blocks in
# that order (FIEMAP), every file's content unchanged (read cold) and
# e2fsck clean; run again it moves nothing; the report sees the new
# positions; on a device probe measures as solid state nothing moves
# without --force; as a user it refuses; --move ranges moves only what the
# start brought in, leaving the rest of each file where it was.
. "$(dirname "$0")/lib.sh"
need_layout
make_ext4 256
$CHECK scatter "$MNT/tree" 48 1
# the program reads the files in an order unrelated to where they lie
find "$MNT/tree" -type f | sort | "$PY" -c 'import random, sys; l = sys.stdin.read().split(); random.Random(5).shuffle(l); print("\n".join(l))' > "$TMP/order"
record_reading "$TMP/t.readset" "$TMP/order"
$CHECK order "$TMP/t.readset" "$MNT/tree" > "$TMP/rs-order"
[ "$(wc -l < "$TMP/rs-order")" = 48 ] || fail "the read set has $(wc -l < "$TMP/rs-order") of the 48 files"
cmp -s "$TMP/rs-order" "$TMP/order" || fail "the read set's order is not the order the files were read in"
( cd "$MNT/tree" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums"
if $CHECK consecutive $(cat "$TMP/order") 2>/dev/null; then
        fail "the scattered tree already lies in access order: the test proves nothing"
fi
xargs $CHECK maps < "$TMP/order" > "$TMP/maps.before"
"$READSET" report --json --no-probe --top 100 "$TMP/t.readset" > "$TMP/report.before" 2>/dev/null || fail "report"

# a dry run: figures, and nothing changed
"$READSET" layout --under "$MNT" --dry-run --profile hdd "$TMP/t.readset" > "$TMP/dry.out" 2>&1 || fail "dry run: $(cat "$TMP/dry.out")"
grep -q "48 to move" "$TMP/dry.out" || fail "dry run does not say 48 files move: $(cat "$TMP/dry.out")"
grep -q "dry run: nothing moved" "$TMP/dry.out" || fail "dry run: $(cat "$TMP/dry.out")"
grep -q "predicted  on hdd" "$TMP/dry.out" || fail "dry run predicts nothing: $(cat "$TMP/dry.out")"
"$READSET" layout --under "$MNT" --dry-run --json --profile hdd "$TMP/t.readset" > "$TMP/dry.json" || fail "dry run --json"
"$PY" - "$TMP/dry.json" <<'EOF' || fail "dry run JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dry_run"] and d["decision"] == "move", d
assert d["files_to_move"] == 48 and d["pieces_now"] > 48 and d["pieces_after"] == 1, d
assert d["predicted"]["after_layout_s"] < d["predicted"]["replay_s"], d
assert "moved_files" not in d, d
EOF
xargs $CHECK maps < "$TMP/order" > "$TMP/maps.dry"
cmp -s "$TMP/maps.before" "$TMP/maps.dry" || fail "the dry run moved data"

# a user may look, not move
user_readset layout --under "$MNT" "$TMP/t.readset" > "$TMP/user.out" 2>&1 && fail "layout as $(user_name) succeeded"
grep -q "needs root" "$TMP/user.out" || fail "layout as a user: $(cat "$TMP/user.out")"

# the layout
free_before=$(stat -f -c %a "$MNT")
# (standard error a terminal: how far it is drawn there, in place, cleared)
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/run.err" "$READSET" layout --under "$MNT" --json --profile hdd \
        "$TMP/t.readset" > "$TMP/run.json" || fail "layout: $(cat -v "$TMP/run.err")"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" --check "$TMP/run.err" layout || fail "no progress line on a terminal"
"$PY" - "$TMP/run.json" <<'EOF' || fail "layout JSON: $(cat "$TMP/run.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["dry_run"] and d["moved_files"] == 48 and d["verified_files"] == 48, d
assert d["pieces_measured"] <= d["donor_runs"], d
assert "stopped" not in d, d
EOF
runs=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["donor_runs"])' "$TMP/run.json")
[ "$runs" -le 2 ] || fail "the donor space came in $runs runs on an almost empty file system"
$CHECK consecutive --runs "$runs" $(cat "$TMP/order") || fail "after layout the files are not consecutive in access order"
free_after=$(stat -f -c %a "$MNT")
# the donor's space (the old blocks) is free again; the extent trees may differ by a block or two
[ $((free_before - free_after)) -le 8 ] || fail "free blocks $free_before before, $free_after after: the donor stayed"
echo 3 > /proc/sys/vm/drop_caches
( cd "$MNT/tree" && sha256sum --quiet -c "$TMP/sums" ) || fail "content changed"
fsck_clean "after layout"

# again: already laid out, nothing moves
xargs $CHECK maps < "$TMP/order" > "$TMP/maps.after"
"$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset" > "$TMP/again.out" 2>&1 || fail "layout again: $(cat "$TMP/again.out")"
grep -q "nothing moved: the files already lie in 1 run" "$TMP/again.out" || fail "layout again: $(cat "$TMP/again.out")"
xargs $CHECK maps < "$TMP/order" > "$TMP/maps.again"
cmp -s "$TMP/maps.after" "$TMP/maps.again" || fail "layout run again moved data"

# the report sees the new positions: the files' data in one run
"$READSET" report --json --no-probe --top 100 "$TMP/t.readset" > "$TMP/report.after" 2>/dev/null || fail "report"
"$PY" - "$TMP/report.before" "$TMP/report.after" <<'EOF' || fail "report after layout"
import json, sys
b, a = (json.load(open(p)) for p in sys.argv[1:])
def tree(r):
    return [f for f in r["top_files_by_bytes"] if "/tree/" in f["path"]]
assert len(tree(a)) == 48 and all(f["extents"] == 1 for f in tree(a)), tree(a)[:3]
assert sum(f["extents"] for f in tree(b)) > 48, tree(b)[:3]
assert a["disk"]["moves"]["contiguous"] > b["disk"]["moves"]["contiguous"] + 40, (b["disk"], a["disk"])
EOF

# nothing was left behind
"$READSET" layout --under "$MNT" --undo-leftovers "$TMP/t.readset" > "$TMP/undo.out" 2>&1 || fail "undo-leftovers: $(cat "$TMP/undo.out")"
grep -q "no leftovers" "$TMP/undo.out" || fail "undo-leftovers: $(cat "$TMP/undo.out")"

# a device probe measures as solid state (a loop device on a file of this
# machine's disk, page cached): nothing moves without --force
$CHECK scatter "$MNT/tree2" 24 2
find "$MNT/tree2" -type f | sort > "$TMP/order2"
record_reading "$TMP/t2.readset" "$TMP/order2"
xargs $CHECK maps < "$TMP/order2" > "$TMP/maps2.before"
"$READSET" layout --under "$MNT" "$TMP/t2.readset" > "$TMP/ssd.out" 2>&1 || fail "layout on solid state: $(cat "$TMP/ssd.out")"
grep -q "measures as solid state" "$TMP/ssd.out" || fail "layout on solid state: $(cat "$TMP/ssd.out")"
xargs $CHECK maps < "$TMP/order2" > "$TMP/maps2.after"
cmp -s "$TMP/maps2.before" "$TMP/maps2.after" || fail "layout moved data on solid state without --force"
"$READSET" layout --under "$MNT" --force --json "$TMP/t2.readset" > "$TMP/force.json" 2>"$TMP/force.err" ||
        fail "layout --force: $(cat "$TMP/force.err")"
runs=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["donor_runs"])' "$TMP/force.json")
$CHECK consecutive --runs "$runs" $(cat "$TMP/order2") || fail "--force did not lay the files out: $(cat "$TMP/force.json")"
# --move ranges: only what the start brought in moves, the rest stays
mkdir -p "$MNT/big"
for i in 0 1 2 3 4 5; do head -c 2000000 /dev/urandom > "$MNT/big/b$i"; sync; done
ls "$MNT"/big/b* | sort -r > "$TMP/order3"
( cd "$MNT/big" && sha256sum b* ) > "$TMP/sums3"
xargs $CHECK maps < "$TMP/order3" > "$TMP/maps3.before"
echo 3 > /proc/sys/vm/drop_caches
"$READSET" record -o "$TMP/t3.readset" -- sh -c "for f in \$(cat '$TMP/order3'); do head -c 100000 \$f; done > /dev/null" \
        2>"$TMP/rec.err" || fail "record: $(cat "$TMP/rec.err")"
"$READSET" layout --under "$MNT" --profile hdd --move ranges --json "$TMP/t3.readset" > "$TMP/r3.json" 2>"$TMP/r3.err" ||
        fail "layout --move ranges: $(cat "$TMP/r3.err")"
tr -d '\r' < "$TMP/r3.err" | cmp -s - "$TMP/r3.err" || fail "a progress line with standard error a file: $(cat -v "$TMP/r3.err")"
xargs $CHECK maps < "$TMP/order3" > "$TMP/maps3.after"
"$PY" - "$TMP/maps3.before" "$TMP/maps3.after" "$TMP/r3.json" <<'EOF' || fail "--move ranges: $(cat "$TMP/r3.json")"
import json, sys
def maps(p):
    out = []
    for line in open(p):
        path, *ext = line.split()
        out.append((path, [tuple(map(int, e.split(":"))) for e in ext]))
    return out
def phys(m, off):
    for lo, ph, ln in m:
        if lo <= off < lo + ln:
            return ph + off - lo
before, after = maps(sys.argv[1]), maps(sys.argv[2])
d = json.load(open(sys.argv[3]))
assert d["move"] == "ranges" and d["moved_files"] == 6, d
assert d["bytes_to_move"] < 6 * 1000000, d
prev = None
for (p, b), (_, a) in zip(before, after):
    # the cold end of each file stays where it was; its start moved
    assert phys(a, 1900000) == phys(b, 1900000), (p, "the unread end moved")
    assert phys(a, 0) != phys(b, 0), (p, "the start did not move")
    # in access order, each file's moved start follows the previous one's closely
    if prev is not None:
        assert 0 < phys(a, 0) - prev <= 1 << 20, (p, phys(a, 0), prev)
    prev = phys(a, 0)
EOF
echo 3 > /proc/sys/vm/drop_caches
( cd "$MNT/big" && sha256sum --quiet -c "$TMP/sums3" ) || fail "--move ranges changed content"
fsck_clean "after --move ranges"
echo "ok"
