#!/bin/sh
# replay puts every recorded page back in the page cache, metadata included;
# skips (and counts) files that changed, vanished, or became symlinks or
# FIFOs, without hanging; holds the byte budget; and never writes.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop; need_python

make_ext4 128 128
for i in 1 2 3 4 5 6; do
        head -c $((3 * 1024 * 1024)) /dev/urandom > "$MNT/f$i"
done
mkdir -p "$MNT/dir/sub"
echo small > "$MNT/dir/sub/small"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"

# The start: pieces of each file, and a small file deep in the tree.
"$READSET" record -q -o "$TMP/r.readset" -- sh -c "
        for i in 1 2 3 4 5 6; do '$TESTPROG' read '$MNT/f'\$i \$((i * 65536)) 200000; done
        cat '$MNT/dir/sub/small' >/dev/null" || fail "record"

# 1. Cold (the filesystem remounted: its pages and metadata are gone).
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
sums_before=$(cd "$MNT" && md5sum f3 f6 && stat -c '%n %s %Y %X' f3 f6)
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
# These VMs run DAMON with a pageout scheme: unmapped page cache in memory
# that looks idle is evicted within seconds, also pages a replay has just
# read (measured: 1 MiB of 245 MiB replayed gone in 15 s, nothing else
# running).  So a check that a page is resident, or that a replay found
# everything cached, is made again, from a cold start, when it fails; a
# replay that leaves pages out or reads what is cached does so every time.
resident_now() {
        set -- $(resident_ranges "$TMP/r.readset" "$MNT")
        echo "  checked every accessed range: $2 not resident"
        [ "$2" = 0 ]
}
check_resident() {   # replay options...: every accessed range of the read set is resident
        resident_now && return 0
        echo "  again, from a cold start (see above)"
        unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
        "$READSET" replay -q "$@" "$TMP/r.readset" || fail "replay $*"
        resident_now || fail "not resident after replay $*"
}
"$READSET" replay -j "$TMP/r.readset" > "$TMP/s.json" || fail "replay"
check_resident
# the same in one FIEMAP-ordered sweep, all threads in plan order (rotational)
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay -j --device rotational "$TMP/r.readset" > "$TMP/rot.json" || fail "rotational replay"
check_resident --device rotational
grep -q '"bytes_not_resident": 0' "$TMP/rot.json" || { cat "$TMP/rot.json"; fail "rotational replay left data out"; }
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay -j "$TMP/r.readset" > "$TMP/s.json" || fail "replay"
json_check_stats() { "$PY" -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)" || { cat "$1"; fail "$2"; }; }
json_check_stats "$TMP/s.json" "d['bytes_read'] > 0 and d['bytes_not_resident'] == 0 and d['files_changed'] == 0"
if have_bpf; then
        json_check_stats "$TMP/s.json" "d['lookups'] > 0"
else
        echo "  lookups replayed: not checked, none were recorded ($WHY_NO_BPF)"
fi

# How far it is, on a terminal: a line drawn in place, no wider than the
# terminal, cleared at the end; none with -q, with standard error a file,
# or on the terminal of a command run starts.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty" "$READSET" replay "$TMP/r.readset" || fail "replay on a terminal"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" --check "$TMP/tty" replay || fail "no progress line on a terminal"
grep -q "readset: replayed" "$TMP/tty" || fail "replay's summary on a terminal: $(cat -v "$TMP/tty")"
no_cr() { tr -d '\r' < "$1" | cmp -s - "$1"; }
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty" "$READSET" replay -q "$TMP/r.readset" || fail "replay -q on a terminal"
[ ! -s "$TMP/tty" ] || fail "replay -q wrote to the terminal: $(cat -v "$TMP/tty")"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay "$TMP/r.readset" > "$TMP/out" 2> "$TMP/err" || fail "replay"
no_cr "$TMP/err" || fail "a progress line with standard error a file: $(cat -v "$TMP/err")"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty" "$READSET" run "$TMP/r.readset" -- true || fail "run on a terminal"
no_cr "$TMP/tty" || fail "run drew a progress line: $(cat -v "$TMP/tty")"

# 2. Warm: nothing to read.
replay_warm "$TMP/w.json" "$TMP/r.readset"
json_check_stats "$TMP/w.json" "d['bytes_read'] == 0 and d['bytes_already_cached'] > 0"

# 3. The budget holds.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay -j --max-bytes 256K "$TMP/r.readset" > "$TMP/b.json" || fail "budget replay"
json_check_stats "$TMP/b.json" "d['bytes_planned'] <= 262144 and d['bytes_over_budget'] > 0 and d['bytes_read'] <= 262144"

# 4. Files that changed: content appended (size), replaced by a symlink, by a
#    FIFO, deleted.  All skipped and counted; no hang (a FIFO has no writer).
echo more >> "$MNT/f1"
rm "$MNT/f2"; ln -s f3 "$MNT/f2"
rm "$MNT/f4"; mkfifo "$MNT/f4"
rm "$MNT/f5"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
timeout 20 "$READSET" replay -j "$TMP/r.readset" > "$TMP/c.json" || fail "replay of changed files (or a hang)"
json_check_stats "$TMP/c.json" "d['files_changed'] == 1 and d['files_missing'] == 1 and d['files_not_regular'] == 2"
json_check_stats "$TMP/c.json" "d['bytes_skipped'] > 0 and d['bytes_not_resident'] == 0"
[ -p "$MNT/f4" ] && [ -L "$MNT/f2" ] || fail "replay touched the replacements"

# 5. Never writes, nor even changes access times: the untouched files are
#    byte for byte and stat for stat what they were.
sums_after=$(cd "$MNT" && md5sum f3 f6 && stat -c '%n %s %Y %X' f3 f6)
[ "$sums_before" = "$sums_after" ] || fail "files changed by replay: $sums_before / $sums_after"
# 6. --device: a saved probe profile or a kind; the plan says which it used,
#    and a bad one is a usage error.
printf '{ "target": "x", "rotational": true }\n' > "$TMP/prof.json"
"$READSET" replay -n -j --device "$TMP/prof.json" "$TMP/r.readset" | grep -q '"rotational": true' ||
        fail "--device PROFILE not used"
"$READSET" replay -n -j --device solid "$TMP/r.readset" | grep -q '"rotational": false' || fail "--device solid"
printf '{ "rotational": maybe }\n' > "$TMP/bad.json"
rc=0; "$READSET" replay -n --device "$TMP/bad.json" "$TMP/r.readset" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "bad --device profile: exit $rc"
rc=0; "$READSET" replay -n --device "$TMP/none.json" "$TMP/r.readset" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "missing --device profile: exit $rc"
# -n -v: the plan's every read (file, offset, length) in plan order, within
# 80 columns, as many as the plan counts and their lengths its bytes.
for kind in rotational solid; do
        "$READSET" replay -n -v --device $kind "$TMP/r.readset" > "$TMP/plan.txt" || fail "replay -n -v"
        "$READSET" replay -n -j --device $kind "$TMP/r.readset" > "$TMP/plan.json" || fail "replay -n -j"
        python3 - "$TMP/plan.txt" "$TMP/plan.json" "$MNT" <<'PYEOF' || fail "replay -n -v --device $kind: the listing"
import json, sys
text = open(sys.argv[1]).read().splitlines()
plan = json.load(open(sys.argv[2]))
head = text.index("        OFFSET     LENGTH  FILE")
rows = [l.split(None, 2) for l in text[head + 1:]]
assert len(rows) == plan["reads"], (len(rows), plan["reads"])
assert sum(int(r[1]) for r in rows) == plan["bytes"], "lengths against bytes"
assert all(len(l) <= 80 for l in text[head - 1:]), "a line over 80 columns"
meta = [r for r in rows if r[2].endswith(" [metadata]")]
assert rows[:len(meta)] == meta and len(meta) == plan["metadata_reads"], "metadata first"
names = {r[2] for r in rows} - {r[2] for r in meta}
want = {sys.argv[3] + "/f%d" % i for i in range(1, 7)} | {sys.argv[3] + "/dir/sub/small"}
assert want <= names, want - names
PYEOF
done
mkfifo "$TMP/prof.fifo"
rc=0; timeout 10 "$READSET" replay -n --device "$TMP/prof.fifo" "$TMP/r.readset" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "--device FIFO: exit $rc (124: it blocked)"
# 7. A profile saved by "readset probe --save" for the device the read set
#    lives on decides without --device (--device still wins).  One measured
#    on another device with the same numbers, one without a verdict, or a
#    FIFO in its place is passed over with a warning, without hanging.
#    The device is the one most bytes come from: here the test's file
#    system (6 MiB), not the system disk that holds cat (its first file).
"$READSET" record -q -o "$TMP/m.readset" -- cat "$MNT/f3" "$MNT/f6" > /dev/null || fail "record cat"
first=$("$READSET" show --json "$TMP/m.readset" | "$PY" -c '
import collections, json, os, sys
files = json.load(sys.stdin)["files"]
per_dev = collections.Counter()
for f in files:
    per_dev[f["dev"]] += f["bytes"]
main = per_dev.most_common(1)[0][0]
print(next(f["path"] for f in files if f["kind"] == "file" and f["dev"] == main and os.path.exists(f["path"])))')
case $first in "$MNT"/*) ;; *) fail "the read set should come mostly from $MNT, not $first's device" ;; esac
key=$("$PY" -c 'import os, sys; d = os.stat(sys.argv[1]).st_dev; print(f"{os.major(d)}:{os.minor(d)}")' "$first")
saved="$READSET_CACHE_DIR/probe-$key.json"
"$READSET" probe --quick --size 32M --save "$(dirname "$first")" >/dev/null 2>&1 || fail "probe --save"
[ -f "$saved" ] || fail "probe --save wrote no $saved"
edit_saved() { "$PY" -c "import json, sys; p = json.load(open(sys.argv[1])); $1; json.dump(p, open(sys.argv[1], 'w'))" "$saved"; }
for rot in True False; do
        edit_saved "p['rotational'] = $rot"
        "$READSET" replay -n -j "$TMP/m.readset" > "$TMP/n.json" || fail "replay -n with a saved profile"
        json_check_stats "$TMP/n.json" "d['rotational'] == $rot and d['measured']"
done
"$READSET" replay -n -j --device rotational "$TMP/m.readset" > "$TMP/n.json" || fail "replay -n --device"
json_check_stats "$TMP/n.json" "d['rotational'] and not d['measured']"
edit_saved "p['device_id'] = 'size=1;serial=another disk'"
"$READSET" replay -n -j "$TMP/m.readset" > "$TMP/n.json" 2>"$TMP/err" || fail "replay -n, profile of another device"
json_check_stats "$TMP/n.json" "not d['measured']"
grep -q "ignoring .*probe-$key.json: measured on another device that had these numbers" "$TMP/err" ||
        fail "no warning for another device's profile"
# one saved before profiles named their device: not trusted, quietly
edit_saved "del p['device_id']"
"$READSET" replay -n -j "$TMP/m.readset" > "$TMP/n.json" 2>"$TMP/err" || fail "replay -n, profile naming no device"
json_check_stats "$TMP/n.json" "not d['measured']"
[ ! -s "$TMP/err" ] || { cat "$TMP/err"; fail "a warning for a profile naming no device"; }
printf '{ "probed": "metadata only" }\n' > "$saved"
"$READSET" replay -n -j "$TMP/m.readset" > "$TMP/n.json" 2>"$TMP/err" || fail "replay -n with a metadata-only profile"
json_check_stats "$TMP/n.json" "not d['measured']"
grep -q "ignoring .*probe-$key.json: no rotational verdict" "$TMP/err" || fail "no warning for a profile without a verdict"
rm "$saved"; mkfifo "$saved"
timeout 10 "$READSET" replay -n -j "$TMP/m.readset" > "$TMP/n.json" 2>"$TMP/err" || fail "a FIFO as the saved profile (124: it blocked)"
grep -q "ignoring .*probe-$key.json: not a regular file" "$TMP/err" || fail "no warning for a FIFO as the saved profile"
json_check_stats "$TMP/n.json" "not d['measured']"
rm "$saved"
# 8. On a partition, the profile saved for its whole disk counts (the
#    partition's own, if any, first).
truncate -s 96M "$TMP/part.img"
"$PY" - "$TMP/part.img" <<'PYEOF'
import struct, sys
# an MBR with one Linux partition from sector 2048 to the end
sectors = 96 * 2048
entry = struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff", 2048, sectors - 2048)
with open(sys.argv[1], "r+b") as f:
    f.seek(446); f.write(entry); f.seek(510); f.write(b"\x55\xaa")
PYEOF
PARTDISK=$(losetup --find --show -P "$TMP/part.img"); MORE_LOOPS=$PARTDISK
# (a kernel without the MBR parser gets the partition from partx, by BLKPG)
[ -b "${PARTDISK}p1" ] || partx -a "$PARTDISK" 2>/dev/null || true
for i in $(seq 50); do [ -b "${PARTDISK}p1" ] && break; sleep 0.1; done
[ -b "${PARTDISK}p1" ] || fail "no partition ${PARTDISK}p1"
mkfs.ext4 -q "${PARTDISK}p1"
mkdir "$TMP/pmnt"; mount "${PARTDISK}p1" "$TMP/pmnt"; MORE_MNTS="$TMP/pmnt"
head -c 4M /dev/urandom > "$TMP/pmnt/big"; sync
"$READSET" record -q -o "$TMP/p.readset" -- cat "$TMP/pmnt/big" > /dev/null || fail "record on the partition"
"$READSET" replay -n -j "$TMP/p.readset" > "$TMP/n.json" || fail "replay -n on the partition"
json_check_stats "$TMP/n.json" "not d['measured']"
"$READSET" probe --quick --save "$PARTDISK" > /dev/null 2>&1 || fail "probe --save $PARTDISK"
"$READSET" replay -n -j "$TMP/p.readset" > "$TMP/n.json" || fail "replay -n on the partition"
json_check_stats "$TMP/n.json" "d['measured']"
unmount "$TMP/pmnt"; MORE_MNTS=; losetup -d "$PARTDISK"; MORE_LOOPS=

# 9. tmpfs and the like: nothing tells one from the next mounted with the
#    same numbers, so --save refuses, before measuring.
mkdir -p /dev/shm/readset-e2e.$$
rc=0; "$READSET" probe --quick --save /dev/shm/readset-e2e.$$ > /dev/null 2>"$TMP/err" || rc=$?
rmdir /dev/shm/readset-e2e.$$
[ "$rc" = 1 ] && grep -q "no block device tells" "$TMP/err" || { cat "$TMP/err"; fail "--save on tmpfs: exit $rc"; }
echo "replay: ok"
