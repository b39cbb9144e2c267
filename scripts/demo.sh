#!/bin/sh
# make demo: record the cold start of a built-in workload, show it, and
# measure what readset does for it, here and now.
set -eu
cd "$(dirname "$0")/.."
R=$PWD/build/readset
WORK=/var/lib/readset-demo   # read sets are kept only where root alone can change them (docs/SECURITY.md)
mkdir -p "$WORK"

if [ "$(id -u)" != 0 ]; then
        echo "readset demo: recording and dropping the page cache need root; run 'sudo make demo'."
        echo "Meanwhile, a read set built from the test fixture:"
        "$R" build --no-walk --paths tests/fixtures/small.paths -o "$WORK/fixture.readset" tests/fixtures/small.trace
        "$R" show "$WORK/fixture.readset"
        exit 0
fi

cc -O2 -o "$WORK/consumer" bench/consumer.c
cc -O2 -o "$WORK/memtouch" bench/memtouch.c
echo "== readset demo: a boot-like cold start"
echo "A program reads ~110 MB in small pieces from 1500 files written in a"
echo "different order than it reads them (bench/gen-tree), like a desktop boot."
[ -f "$WORK/boot/manifest" ] || bench/gen-tree "$WORK/boot" --files 1500 --mb 150 --seed 3
echo
echo "\$ readset record --cold -o boot.readset -- consumer manifest"
"$R" record --cold -o "$WORK/boot.readset" -- "$WORK/consumer" "$WORK/boot/manifest" >/dev/null
echo
echo "\$ readset show boot.readset     (the first files it needed, in order)"
"$R" show "$WORK/boot.readset" | head -n 20
echo "   ..."
echo
echo "\$ readset report --top 3 --svg boot.svg boot.readset     (why it is slow; the picture: $WORK/boot.svg)"
"$R" report --top 3 --svg "$WORK/boot.svg" "$WORK/boot.readset"
echo
echo "== the same start, measured here and now (cold = page cache dropped; median of 3)"
/usr/bin/python3 - "$R" "$WORK" <<'PYEOF'
import os, statistics, subprocess, sys, time
R, work = sys.argv[1:]
cmd = [os.path.join(work, "consumer"), os.path.join(work, "boot", "manifest")]
def cold():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")
    # let the VM take back what drop_caches freed before timing anything
    subprocess.run([os.path.join(work, "memtouch"), "2048"], check=True)
def t(c, drop):
    if drop:
        cold()
    t0 = time.monotonic()
    subprocess.run(c, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.monotonic() - t0) * 1e3
rows = {"plain cold start": [], "readset run (cold)": [], "warm (everything cached)": []}
for _ in range(3):
    rows["plain cold start"].append(t(cmd, True))
    rows["readset run (cold)"].append(t([R, "run", os.path.join(work, "boot.readset"), "--"] + cmd, True))
    rows["warm (everything cached)"].append(t(cmd, False))
for k, v in rows.items():
    print(f"  {k:28} {statistics.median(v):6.0f} ms")
plain = statistics.median(rows["plain cold start"])
run = statistics.median(rows["readset run (cold)"])
print(f"\nreadset run made this cold start {plain / run:.1f}x faster: it read the pieces the start")
print("needs, first-needed first, many at a time, while the program ran.")
print("Try it on your own program: sudo readset run --auto ~/.cache/readset -- PROGRAM ARGS")
PYEOF
