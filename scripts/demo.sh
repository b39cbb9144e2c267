#!/bin/sh
# make demo: record the cold start of a built-in workload and show it.
set -eu
cd "$(dirname "$0")/.."
R=$PWD/build/readset
WORK=$(mktemp -d /tmp/readset-demo.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

MODULES="json csv email.parser http.client urllib.request xml.etree.ElementTree sqlite3 decimal
fractions statistics argparse logging asyncio unittest subprocess tarfile zipfile gzip bz2 lzma
hashlib uuid datetime calendar collections dataclasses enum pathlib shutil tempfile glob re
textwrap difflib pprint pickle configparser socket ssl threading multiprocessing ctypes inspect
ast traceback random base64 ipaddress zoneinfo"
n=$(echo $MODULES | wc -w)
echo "import $(echo $MODULES | tr ' ' ',')" > "$WORK/imports.py"

echo "== readset demo: the cold start of python3 importing $n standard-library modules"
if [ "$(id -u)" != 0 ]; then
        echo "recording needs root (tracefs, fanotify, BPF); run 'sudo make demo'."
        echo "meanwhile, a read set built from the test fixture:"
        "$R" build --no-walk -p tests/fixtures/small.paths -o "$WORK/fixture.readset" tests/fixtures/small.trace
        "$R" show "$WORK/fixture.readset"
        exit 0
fi

echo "\$ readset record --cold -o python3.readset -- python3 imports.py"
(cd "$WORK" && "$R" record --cold -o python3.readset -- /usr/bin/python3 imports.py)
echo
echo "\$ readset show python3.readset      (first 25 files, in the order they were first needed)"
"$R" show "$WORK/python3.readset" | head -n 34
echo "   ..."
echo
echo "\$ readset show --lookups python3.readset | grep ENOENT | head   (paths it looked for in vain)"
"$R" show --lookups "$WORK/python3.readset" | grep ENOENT | head -n 8 || true
echo
"$R" show --json "$WORK/python3.readset" > "$WORK/p.json"
/usr/bin/python3 - "$WORK/p.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]
files = sorted(d["files"], key=lambda f: -f["bytes"])[:3]
print("What this says: a cold python3 start with these imports needed "
      f"{t['bytes']/2**20:.1f} MiB in {t['ranges']} pieces of {t['files']} files "
      f"({t['blockdev_bytes']/2**20:.1f} MiB of it filesystem metadata), and made "
      f"{t['lookups']} path lookups, {t['lookups_failed']} of them for paths that do not exist.")
print("Each piece is a separate request to the disk on a cold start. The biggest files:")
for f in files:
    print(f"  {f['bytes']/2**20:6.1f} MiB in {len(f['ranges']):4} pieces  {f['path']}")
print(f"Recording took {d['duration_us']/1e3:.0f} ms and lost {d['lost_events']} events.")
PYEOF

echo
echo "== the same start, measured here and now (cold = page cache dropped; median of 3)"
cc -O2 -o "$WORK/memtouch" bench/memtouch.c
/usr/bin/python3 - "$R" "$WORK" <<'PYEOF'
import os, statistics, subprocess, sys, time
R, work = sys.argv[1:]
cmd = ["/usr/bin/python3", "imports.py"]
def cold():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")
    # let the VM take back what drop_caches freed before timing anything
    # (a small C program: python itself would warm what we measure)
    subprocess.run([os.path.join(work, "memtouch"), "2048"], check=True)
def t(c, drop):
    if drop:
        cold()
    t0 = time.monotonic()
    subprocess.run(c, cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.monotonic() - t0) * 1e3
rows = {"plain cold start": [], "readset run (cold)": [], "warm (everything cached)": []}
for _ in range(3):
    rows["plain cold start"].append(t(cmd, True))
    rows["readset run (cold)"].append(t([R, "run", os.path.join(work, "python3.readset"), "--"] + cmd, True))
    rows["warm (everything cached)"].append(t(cmd, False))
for k, v in rows.items():
    print(f"  {k:28} {statistics.median(v):6.0f} ms")
plain = statistics.median(rows["plain cold start"])
run = statistics.median(rows["readset run (cold)"])
print(f"readset run made this cold start {plain / run:.1f}x faster.")
PYEOF
