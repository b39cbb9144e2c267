#!/bin/sh
# What several verbs report has one name in all of their JSON: the table of
# shared keys in docs/FORMAT.md ("The verbs' JSON") against every verb's
# --json on a small read set (show, report, replay -n, replay, run --stats,
# layout -n, probe, boot status, build, record -j, pack where it has
# --json) and against every key the sources write: no name of its "Never"
# column anywhere, and every shared key in some verb's output (the table
# stays true).
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_python

mkdir -p "$TMP/data"
for i in 1 2; do head -c 100000 /dev/urandom > "$TMP/data/f$i"; done
J=$TMP/json
mkdir -p "$J"
RS=$TMP/s.readset
"$READSET" record -j -o "$RS" -- sh -c "cat '$TMP/data/f1' > /dev/null" 2> "$J/record.err" ||
        fail "record: $(cat "$J/record.err")"
tail -n 1 "$J/record.err" > "$J/record.json"

verb_json() {   # name command...
        name=$1; shift
        "$@" > "$J/$name.json" 2> "$J/$name.err" || check_fail "$name: $(cat "$J/$name.err")"
}
verb_json show "$READSET" show --json "$RS"
verb_json report "$READSET" report --json --no-probe "$RS"
verb_json replay-n "$READSET" replay --dry-run --json "$RS"
verb_json replay "$READSET" replay --json "$RS"
verb_json layout-n "$READSET" layout --dry-run --json --profile hdd "$RS"
verb_json probe "$READSET" probe --quick --size 16M --json "$TMP/data"
"$READSET" run --stats --json "$RS" -- sh -c "cat '$TMP/data/f2' > /dev/null" 2> "$J/run.err" ||
        check_fail "run --stats: $(cat "$J/run.err")"
tail -n 1 "$J/run.err" > "$J/run.json"
S=$TMP/state
"$READSET" boot enable --state "$S" 2>"$TMP/err" || fail "boot enable: $(cat "$TMP/err")"
cp "$RS" "$S/plan.readset"
printf '1 %s replay+record 2000000 4000000 4000000 934 0 3 2 replayed\n' "$(date +%s)" > "$S/history"
verb_json boot-status "$READSET" boot status --json --state "$S"
FIX=${SRCDIR:?}/tests/fixtures
verb_json build "$READSET" build --json --no-walk --paths "$FIX/small.paths" -o "$TMP/b.readset" "$FIX/small.trace"
verb_json pack "$READSET" pack --json --portable -o "$TMP/p.readset" "$TMP/data" "$RS"

"$PY" - "$SRCDIR" "$J" <<'PYEOF' || FAILED=1
import glob, json, os, re, sys
src, jdir = sys.argv[1:]

# the table: its rows' key and the names never used
doc = open(os.path.join(src, "docs/FORMAT.md")).read()
section = doc.split("## The verbs' JSON", 1)[1].split("\n## ", 1)[0]
shared, never = [], {}
for line in section.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 4 or not cells[0].startswith("`"):
        continue
    key = re.findall(r"`([a-z0-9_]+)`", cells[0])[0]
    shared.append(key)
    for n in re.findall(r"`([a-z0-9_]+)`", cells[3]):
        never[n] = key
assert len(shared) >= 20, f"the table of shared keys in docs/FORMAT.md has {len(shared)} rows"

def keys(x, out):
    if isinstance(x, dict):
        for k, v in x.items():
            out.add(k)
            keys(v, out)
    elif isinstance(x, list):
        for v in x:
            keys(v, out)
    return out

bad = []
seen = set()
for f in sorted(glob.glob(os.path.join(jdir, "*.json"))):
    name = os.path.basename(f)[:-5]
    try:
        d = json.load(open(f))
    except ValueError as e:
        bad.append(f"{name}: not JSON ({e})")
        continue
    ks = keys(d, set())
    seen |= ks
    for k in sorted(ks & set(never)):
        bad.append(f"{name} --json: '{k}' (the shared name is '{never[k]}')")
# every key the sources write, through util/json.h or by hand
for f in sorted(glob.glob(os.path.join(src, "src/**/*.c"), recursive=True)):
    for i, line in enumerate(open(f), 1):
        for k in re.findall(r'json_[a-z0-9]+\(\s*&?[a-z]+,\s*"([a-z0-9_]+)"', line) + \
                 re.findall(r'\\"([a-z0-9_]+)\\":', line):
            if k in never:
                bad.append(f"{os.path.relpath(f, src)}:{i}: '{k}' (the shared name is '{never[k]}')")
for k in shared:
    if k not in seen:
        bad.append(f"'{k}' is in the table of shared keys but in no verb's output")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
print(f"{len(shared)} shared keys, {len(never)} names never used; {len(seen)} keys seen")
sys.exit(1 if bad else 0)
PYEOF
[ -z "$FAILED" ] || exit 1
echo "every verb's JSON names what it shares as docs/FORMAT.md does"
