#!/bin/sh
# readset report on recorded read sets: the text (80 columns, every section,
# the findings the start deserves), --json (the same figures, consistent with
# show --json and with FIEMAP), every reference device and a probe profile,
# bad options and profiles refused without hanging, and the disk access graph
# rendered by a real browser (headless Chromium), also for 100 000 ranges,
# its axes (the bands touched, round ticks) and the head's path: a thrash
# between two places far apart is a zigzag; its lookup band holds the read
# set's lookups, one mark each or, for 6 000, one per bucket with counts.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop; need_python

make_ext4 1200 128
# Two 16 MiB files written in alternating 256 KiB chunks, synced each time:
# their extents interleave.  Then a directory of small files.
"$PY" - "$MNT" <<'PYEOF'
import os, sys
mnt = sys.argv[1]
fa = os.open(f"{mnt}/hive-a", os.O_WRONLY | os.O_CREAT, 0o644)
fb = os.open(f"{mnt}/hive-b", os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(64):
    for fd in (fa, fb):
        os.write(fd, os.urandom(256 << 10))
        os.fsync(fd)
os.makedirs(f"{mnt}/lib/sub", exist_ok=True)
for i in range(40):
    with open(f"{mnt}/lib/sub/m{i}.py", "wb") as f:
        f.write(os.urandom(3000 + 100 * i))
PYEOF
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"

# The start: the two hives read alternately in 4 KiB pieces (more bytes
# than python3 reads from the root disk: the loop device is the main one),
# then the small files.
"$READSET" record --cold -q -o "$TMP/r.readset" -- "$PY" -c "
import os
a = os.open('$MNT/hive-a', os.O_RDONLY); b = os.open('$MNT/hive-b', os.O_RDONLY)
for fd in (a, b):
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
for i in range(0, 16 << 20, 8 << 10):
    os.pread(a, 4096, i); os.pread(b, 4096, i)
for i in range(40):
    open('$MNT/lib/sub/m%d.py' % i, 'rb').read()
" || fail "record"

# 1. the text report
"$READSET" report --no-probe "$TMP/r.readset" > "$TMP/text" || { cat "$TMP/text"; fail "report"; }
cat "$TMP/text"
awk 'length > 80 {print "too wide: " $0; bad = 1} END {exit bad}' "$TMP/text" || fail "report wider than 80 columns"
for s in "readset report:" "Top files by bytes" "Top files by ranges" "Top directories by bytes" "Top directories by ranges" "On the device (FIEMAP)" \
         "moves of the head" "Predicted read time" "Findings"; do
        grep -q "$s" "$TMP/text" || fail "no '$s' in the report"
done
grep -q "$MNT/hive-a" "$TMP/text" || fail "hive-a not among the top files"
grep -q "alternate" "$TMP/text" || fail "the alternating hives are not a finding"
grep -Eq "^  hdd +[0-9.]+ (s|ms) +[0-9.]+ (s|ms)" "$TMP/text" || fail "no hdd prediction row"

# 2. --json: consistent with show --json and with the layout on disk
"$READSET" report --json --no-probe "$TMP/r.readset" > "$TMP/r.json" || fail "report --json"
"$READSET" show --json "$TMP/r.readset" > "$TMP/show.json" || fail "show --json"
"$PY" - "$TMP/r.json" "$TMP/show.json" "$MNT" <<'PYEOF' || fail "report --json"
import json, os, re, subprocess, sys
r, s, mnt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def frag(path):
    out = subprocess.run(["filefrag", path], capture_output=True, text=True, check=True).stdout
    return int(re.search(r": (\d+) extents? found", out).group(1))
t = r["totals"]
checks = {
    "files": t["files"] == s["totals"]["files"],
    "bytes": t["bytes"] == sum(x["length"] for f in s["files"] for x in f["ranges"]),
    "ranges": t["ranges"] == sum(len(f["ranges"]) for f in s["files"]),
    "meta + data": t["metadata_bytes"] + t["data_bytes"] == t["bytes"],
    "pages": t["pages"] * 4096 == t["bytes"],
    "moves add up": sum(r["disk"]["moves"].values()) == r["disk"]["pieces"] - 1,
    "the loop device is the main one": r["disk"]["main_device"] == "7:%d" % os.minor(os.stat(mnt).st_dev),
    "python3's files are on another": r["disk"]["other_device_pieces"] > 0,
    # the extents FIEMAP gave, as filefrag counts them, every one touched
    "hive-a's extents": any(f["path"] == f"{mnt}/hive-a" and f["extents"] == frag(f["path"]) >= 2 and
                            f["extents_touched"] == f["extents"] for f in r["top_files_by_bytes"]),
    "moves between the hives": r["disk"]["moves"]["under_16m"] + r["disk"]["moves"]["under_256m"] >= 1000,
    "alternation": r["disk"]["alternation"]["switches"] >= 1000 and
                   {r["disk"]["alternation"]["a"], r["disk"]["alternation"]["b"]} == {f"{mnt}/hive-a", f"{mnt}/hive-b"},
    "one prediction, the reference": [p["reference"] for p in r["predictions"]] == [True],
    "hdd plain > replay > 0": r["predictions"][0]["plain"]["seconds"] > r["predictions"][0]["replay"]["seconds"] > 0,
    "layout <= replay": r["predictions"][0]["layout"]["seconds"] <= r["predictions"][0]["replay"]["seconds"],
    "plain requests": r["predictions"][0]["plain"]["requests"] >= 4096,
    "top directories": r["top_directories_by_bytes"][0]["path"] == mnt and r["top_directories_by_ranges"][0]["path"] == mnt,
}
for k, v in checks.items():
    print(("  ok    " if v else "  FAIL  ") + k)
sys.exit(0 if all(checks.values()) else 1)
PYEOF
# the text shows the JSON's figures
"$PY" - "$TMP/r.json" "$TMP/text" <<'PYEOF' || fail "text and JSON disagree"
import json, re, sys
r, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
t = r["totals"]
ok = f"in {t['ranges']} ranges ({t['pages']} pages) of {t['files']} files" in text and \
     f"{r['disk']['extents_touched']} extents touched; {r['disk']['pieces']} pieces" in text and \
     all(f in text.replace("\n    ", " ") for f in r["findings"])
sys.exit(0 if ok else 1)
PYEOF

# 3. every reference device, and a profile from readset probe
for d in hdd usb sd nvme share; do
        "$READSET" report --json --no-probe --device $d "$TMP/r.readset" > "$TMP/d.json" || fail "--device $d"
        "$PY" -c "import json; p = json.load(open('$TMP/d.json'))['predictions'][0]; assert p['plain']['seconds'] > 0" ||
                fail "--device $d: no prediction"
done
"$READSET" probe --quick -o "$TMP/loop.json" "$LOOPDEV" > /dev/null || fail "probe"
"$READSET" report --profile "$TMP/loop.json" "$TMP/r.readset" > "$TMP/two" || fail "--profile"
grep -q "^  this machine " "$TMP/two" || fail "no column for this machine"
# the replay the report predicts is the one readset replay makes: for the
# same profile, the same bytes (this machine: --profile P and --device P;
# the reference disk: a rotational device's plan)
"$READSET" report --json --profile "$TMP/loop.json" "$TMP/r.readset" > "$TMP/two.json" || fail "--profile --json"
"$READSET" replay --dry-run --json --device "$TMP/loop.json" "$TMP/r.readset" > "$TMP/plan-here.json" || fail "replay -n"
"$READSET" replay --dry-run --json --device rotational "$TMP/r.readset" > "$TMP/plan-ref.json" || fail "replay -n"
"$PY" - "$TMP/two.json" "$TMP/plan-here.json" "$TMP/plan-ref.json" <<'PYEOF' || fail "the report predicts another replay than replay's"
import json, sys
r, here, ref = (json.load(open(p)) for p in sys.argv[1:])
assert here["bytes_over_budget"] == 0 and ref["bytes_over_budget"] == 0
this, hdd = r["predictions"]
print(f"  replay bytes: this machine {this['replay']['bytes']} (dry run {here['bytes']}), "
      f"hdd {hdd['replay']['bytes']} (dry run {ref['bytes']})")
assert this["replay"]["bytes"] == here["bytes"] and hdd["replay"]["bytes"] == ref["bytes"]
# costed on this machine: the main device's part only (python3 reads its own files from elsewhere)
assert 0 < this["replay"]["costed_bytes"] < this["replay"]["bytes"]
PYEOF
# without --profile and --no-probe: a quick probe, cached for the next time
"$READSET" report "$TMP/r.readset" > /dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "report with a probe"; }
ls "$TMP/cache"/probe-*.json > /dev/null 2>&1 || fail "the probe was not cached"
cached=$(ls "$TMP/cache"/probe-*.json)
"$READSET" report "$TMP/r.readset" > /dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "report with a cached profile"; }
grep -q probing "$TMP/err" && fail "probed again although the profile was cached"
# a profile cached for another device that had these numbers: probed again
id=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["device_id"])' "$cached")
"$PY" -c 'import json, sys; p = json.load(open(sys.argv[1])); p["device_id"] = "size=1"; json.dump(p, open(sys.argv[1], "w"))' "$cached"
# (standard error a terminal: the probe's progress line drawn there, as probe's own)
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/err" "$READSET" report "$TMP/r.readset" > /dev/null ||
        { cat -v "$TMP/err"; fail "report with a stale profile"; }
grep -q "measured on another device.*probing this one" "$TMP/err" || { cat -v "$TMP/err"; fail "a stale profile was used"; }
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" --check "$TMP/err" probe || fail "report's probe drew no progress line on a terminal"
[ "$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["device_id"])' "$cached")" = "$id" ] ||
        fail "the stale profile was not replaced"

# 4. refused: unknown device, garbage, a FIFO (no hang), a corrupt read set
set +e
"$READSET" report --device floppy "$TMP/r.readset" > /dev/null 2>&1; [ $? = 2 ] || fail "unknown device accepted"
echo '{"latency_qd1_us": "x"}' > "$TMP/bad.json"
"$READSET" report --device "$TMP/bad.json" "$TMP/r.readset" > /dev/null 2>&1; [ $? = 1 ] || fail "bad profile accepted"
mkfifo "$TMP/fifo.json"
timeout 10 "$READSET" report --device "$TMP/fifo.json" "$TMP/r.readset" > /dev/null 2>&1; rc=$?
[ $rc = 1 ] || fail "FIFO profile: exit $rc"
timeout 10 "$READSET" report --profile "$TMP/fifo.json" "$TMP/r.readset" > /dev/null 2>&1; rc=$?
[ $rc = 1 ] || fail "FIFO local profile: exit $rc"
head -c 300 "$TMP/r.readset" > "$TMP/cut.readset"
"$READSET" report --no-probe "$TMP/cut.readset" > /dev/null 2>&1; [ $? = 1 ] || fail "truncated read set accepted"
"$READSET" report --no-probe > /dev/null 2>&1; [ $? = 2 ] || fail "no file accepted"
set -e

# 5. the disk access graph, drawn by Chromium
"$READSET" report --no-probe --svg "$TMP/r.svg" "$TMP/r.readset" > /dev/null || fail "--svg"
pieces=$("$PY" -c "import json; print(json.load(open('$TMP/r.json'))['disk']['pieces'])")
"$PY" - "$TMP/r.svg" "$pieces" <<'PYEOF' || fail "svg structure"
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
marks = [e for e in root.iter(ns + "rect") if e.get("class") == "mark"]
titles = [m.find(ns + "title").text for m in marks]
pieces = int(sys.argv[2])
if pieces <= 4000:      # one mark per piece, titled with its path and range
    ok = len(marks) == pieces and all(re.search(r"\[\d+\+\d+\]", t) for t in titles)
else:                   # aggregated: each mark counts its pieces, and they add up
    counts = [int(re.match(r"(\d+) reads?, ", t).group(1)) for t in titles]
    ok = 0 < len(marks) < pieces and sum(counts) == pieces
ok = ok and any("hive-a" in t for t in titles) and any("hive-b" in t for t in titles)
print("svg:", len(marks), "marks for", sys.argv[2], "pieces")
sys.exit(0 if ok else 1)
PYEOF
# the axes: round ticks in one unit; the head's path; the lookup band, one
# mark per lookup the recording holds (python3's own and the 40 opens of
# the small files), each at its time
"$PY" -c "
import json, sys
s = json.load(open('$TMP/show.json'))
print('lookups recorded:', len(s['lookups']), 'of which failed:', s['totals']['lookups_failed'])
sys.exit(0 if sum(1 for l in s['lookups'] if '/lib/sub/m' in l['path']) >= 40 else 1)" || fail "the recording's lookups"
"$PY" "$SRCDIR/tests/e2e/svggraph.py" "$TMP/r.svg" --lookups "$TMP/show.json" || fail "svg axes"
# (the hives' directory is the largest group: the first colour)
"$PY" "$SRCDIR/tests/e2e/svgcheck.py" "$TMP/r.svg" "$TMP/r.png" --expect-id access --expect-id marks \
        --expect-id cumulative --expect-id legend --expect-id head --expect-id lookups --lookups "$TMP/show.json" \
        --min-marks 100 --expect-colour "#1f77b4" || fail "Chromium: the graph"

# the lookup band of a dense walk: 6 000 lookups over a second, every kind, a
# third failed, in bursts: one mark per time bucket, row and outcome, their
# counts the read set's, each bucket where the axis puts its times; and a
# read set without lookups: no band, and it says so
"$PY" - "$MNT/hive-a" "$TMP" "$SRCDIR/tests/e2e" <<'PYEOF' || fail "the walk's read sets"
import random, sys
sys.path.insert(0, sys.argv[3])
import mkreadset
random.seed(29)
files = [{"path": sys.argv[1], "identity": "stat", "ranges": [[0, 1 << 20]]}]
lookups, t = [], 0
for i in range(6000):
    t += random.choice([0, 1, 5, 40, 400]) if i % 500 else 50000
    lookups.append({"path": "/srv/tree/d%d/f%d" % (i % 37, i % 211), "op": random.choice([1, 2, 2, 2, 3, 4, 5, 6]),
                    "result": -2 if i % 3 == 0 else -20 if i % 17 == 0 else 0, "time_us": t})
mkreadset.write(sys.argv[2] + "/walk.readset", files, lookups, command="walk")
mkreadset.write(sys.argv[2] + "/still.readset", files, [], command="still")
PYEOF
for w in walk still; do
        "$READSET" show --json "$TMP/$w.readset" > "$TMP/$w.json" || fail "show $w"
        "$READSET" report --no-probe --svg "$TMP/$w.svg" "$TMP/$w.readset" > /dev/null || fail "--svg of $w"
        "$PY" "$SRCDIR/tests/e2e/svggraph.py" "$TMP/$w.svg" --lookups "$TMP/$w.json" || fail "the $w's lookup band"
        "$PY" "$SRCDIR/tests/e2e/svgcheck.py" "$TMP/$w.svg" "$TMP/$w.png" --expect-id access --expect-id lookups \
                --lookups "$TMP/$w.json" || fail "Chromium: the $w's lookup band"
done
grep -q 'data-bucketed="1"' "$TMP/walk.svg" || fail "6 000 lookups not bucketed"
grep -q '>no lookups recorded<' "$TMP/still.svg" || fail "no lookups and the graph does not say so"
size=$(stat -c %s "$TMP/walk.svg")
echo "walk: $size bytes of SVG"
[ "$size" -lt 600000 ] || fail "the walk's SVG is $size bytes"

# 6. 100 000 ranges: aggregated, under 2 MB, still a picture
for i in 1 2 3 4; do fallocate -l 200M "$MNT/big$i"; done
"$READSET" record -q -o "$TMP/big.readset" -- "$PY" -c "
import os, random
fds = [os.open('$MNT/big%d' % i, os.O_RDONLY) for i in (1, 2, 3, 4)]
for fd in fds:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
pages = [(fd, p) for fd in fds for p in range(0, 51200, 2)]
random.seed(1); random.shuffle(pages)
for fd, p in pages:
    os.pread(fd, 1, p * 4096)
" || fail "record 100 000 ranges"
"$READSET" report --json --no-probe --svg "$TMP/big.svg" "$TMP/big.readset" > "$TMP/big.json" || fail "report big"
"$PY" -c "
import json, os, sys
r = json.load(open('$TMP/big.json'))
size = os.path.getsize('$TMP/big.svg')
print('big:', r['totals']['ranges'], 'ranges,', size, 'bytes of SVG')
sys.exit(0 if r['totals']['ranges'] >= 100000 and size < 2000000 else 1)" || fail "big SVG"
"$PY" "$SRCDIR/tests/e2e/svgcheck.py" "$TMP/big.svg" "$TMP/big.png" --expect-id access --expect-id cumulative \
        --min-marks 1000 --expect-colour "#1f77b4" || fail "Chromium: the big graph"
"$PY" "$SRCDIR/tests/e2e/svggraph.py" "$TMP/big.svg" || fail "big SVG axes"

# 7. a thrash between two places far apart: hive-a, near the start, and a
# file written after the 800 MiB above, read in turn.  The graph shows the
# two bands (not the span between them) with a break, and the head's path
# between them a zigzag: one segment per pair of pieces, most of them long.
dd if=/dev/urandom of="$MNT/far" bs=1M count=64 conv=fsync status=none
filefrag -v "$MNT/hive-a" "$MNT/far" | grep -E "^ +0:"
"$READSET" record --cold -q -o "$TMP/far.readset" -- "$PY" -c "
import os
a = os.open('$MNT/hive-a', os.O_RDONLY); b = os.open('$MNT/far', os.O_RDONLY)
for fd in (a, b):
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
for i in range(64):
    os.pread(a, 128 << 10, i << 18); os.pread(b, 512 << 10, i << 20)
" || fail "record the thrash"
"$READSET" report --no-probe --svg "$TMP/far.svg" "$TMP/far.readset" > /dev/null || fail "--svg of the thrash"
"$PY" "$SRCDIR/tests/e2e/svggraph.py" "$TMP/far.svg" --min-bands 2 --max-shown 0.5 --exact-path --min-seeks 64 ||
        fail "the thrash's graph"
"$PY" "$SRCDIR/tests/e2e/svgcheck.py" "$TMP/far.svg" "$TMP/far.png" --expect-id access --expect-id head \
        --min-marks 128 || fail "Chromium: the thrash's graph"

# 8. a fresh checkout, reported at once (before any sync): its files are
# delayed allocations, with no place on the disk yet.  As root the report
# has them written back and finds their positions; as nobody (not their
# owner: no writeback forced) it says how many have none yet and costs
# them as the plain start reads them.  Never is the replay predicted
# slower than the plain start for want of positions.
fresh_tree() {   # dir readset
        "$PY" - "$1" "$2" "$SRCDIR/tests/e2e" <<'PYEOF'
import os, random, sys
top, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import mkreadset
random.seed(7)
files = []
for d in range(12):
    os.makedirs(f"{top}/src/mod{d}", exist_ok=True)
    for i in range(25):
        files.append(f"{top}/src/mod{d}/f{i}.c")
files += [f"{top}/big{i}.o" for i in range(4)]
for p in files:
    size = 2 << 20 if p.endswith(".o") else random.randrange(500, 40000)
    with open(p, "wb") as f:
        f.write(os.urandom(size))
spec = [{"path": p, "identity": "stat", "ranges": [[0, os.stat(p).st_size]], "kind": 0, "flags": 0}
        for p in files]
random.shuffle(spec)    # a build reads in its own order, not the checkout's
mkreadset.write(out, spec)
PYEOF
        chmod 644 "$2"
}
fresh_check() {  # json who
        "$PY" - "$1" "$2" <<'PYEOF'
import json, sys
r, who = json.load(open(sys.argv[1])), sys.argv[2]
d, hdd = r["disk"], r["predictions"][-1]
pending, unknown = d["files_not_written_back"], d["files_without_positions"]
print(f"  {who}: {pending} files not written back, {unknown} without positions, moves to unknown places "
      f"{d['moves']['unknown']} of {d['pieces']} pieces; hdd plain {hdd['plain']['seconds']:.3f} s, "
      f"replay {hdd['replay']['seconds']:.3f} s")
ok = hdd["replay"]["seconds"] <= hdd["plain"]["seconds"] and unknown == 0
if who == "root":      # written back first: every position known
    ok = ok and pending == 0 and d["moves"]["unknown"] == 0
sys.exit(0 if ok else 1)
PYEOF
}
fresh_tree "$MNT/co" "$TMP/co.readset"
filefrag -v "$MNT/co/big0.o" | grep -q delalloc || echo "  (big0.o already written back: someone synced)"
"$READSET" report --json --no-probe "$TMP/co.readset" > "$TMP/co.json" || fail "report of a fresh tree"
fresh_check "$TMP/co.json" root || fail "a fresh tree as root"
fresh_tree "$MNT/co2" "$TMP/co2.readset"
user_readset report --no-probe "$TMP/co2.readset" > "$TMP/co2.txt" || fail "nobody's report of a fresh tree"
user_readset report --json --no-probe "$TMP/co2.readset" > "$TMP/co2.json" || fail "nobody's report --json"
fresh_check "$TMP/co2.json" nobody || fail "a fresh tree as nobody"
n=$("$PY" -c "import json; print(json.load(open('$TMP/co2.json'))['disk']['files_not_written_back'])")
if [ "$n" -gt 0 ]; then
        grep -A2 "extents touched" "$TMP/co2.txt" | tr -s '\n ' '  ' | grep -q "$n files with no position yet" ||
                { cat "$TMP/co2.txt"; fail "the text does not say how many files have no position yet"; }
else
        echo "  (nobody's tree written back meanwhile: someone synced)"
fi
echo "report: ok"
