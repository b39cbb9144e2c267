#!/bin/sh
# The verbs a user runs on untrusted files, under valgrind: valid or not, no
# read set and no profile may make valgrind complain (its exit code: 99).
# Run by make check's valgrind pass (meson test --suite valgrind).
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || skip "needs valgrind"
FIX=${SRCDIR:?}/tests/fixtures
# (copied where root trusts read sets: a checkout may be below /tmp), with
# the fuzz corpus's whole files (first byte 0: the rest is the file)
cp -r "$FIX/readsets" "$TMP/readsets"
"$PY" - "$SRCDIR/tests/fuzz/corpus/format" "$TMP/readsets" <<'PYEOF'
import os, sys
src, dst = sys.argv[1:]
for name in os.listdir(src):
    data = open(os.path.join(src, name), "rb").read()
    if data and data[0] & 3 == 0:
        with open(os.path.join(dst, "corpus-" + name + ".readset"), "wb") as f:
            f.write(data[1:])
PYEOF
vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"

for f in "$TMP"/readsets/*; do
        rc=0; $vg "$READSET" show --json "$f" >/dev/null 2>"$TMP/err" || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$TMP/err"; fail "show $f exited $rc"; }
done
$vg "$READSET" build --no-walk --paths "$FIX/small.paths" -o "$TMP/x.readset" "$FIX/small.trace" 2>"$TMP/err" ||
        { cat "$TMP/err"; fail "build"; }
printf 'garbage' > "$TMP/bad"
rc=0; $vg "$READSET" show "$TMP/bad" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "show of a bad file exited $rc"
# report: text, JSON and SVG of the fixture, each reference profile, a bad profile
for d in hdd usb sd nvme share; do
        $vg "$READSET" report --no-probe --device $d --svg "$TMP/x.svg" "$TMP/x.readset" >/dev/null 2>"$TMP/err" ||
                { cat "$TMP/err"; fail "report --device $d"; }
done
$vg "$READSET" report --no-probe --json "$TMP/x.readset" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "report --json"; }
$vg "$READSET" replay --dry-run --json "$TMP/x.readset" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "replay --dry-run"; }
# layout's dry run (read-only): hostile read sets, and one naming real files
for f in "$TMP"/readsets/*; do
        rc=0; $vg "$READSET" layout --dry-run --json --profile hdd "$f" >/dev/null 2>"$TMP/err" || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$TMP/err"; fail "layout --dry-run $f exited $rc"; }
done
rc=0; $vg "$READSET" layout --dry-run --profile hdd "$TMP/x.readset" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$TMP/err"; fail "layout --dry-run exited $rc"; }
printf '{"latency_qd1_us": [1, {"a": "\\u00' > "$TMP/bad.json"
rc=0; $vg "$READSET" report --no-probe --device "$TMP/bad.json" "$TMP/x.readset" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "report with a bad profile exited $rc"
# readset auto's status over a store that holds a torn info file, a
# history of junk and a read set of garbage beside a good program
mkdir -m 0700 "$TMP/store"
printf 'exe /usr/bin/true\nscript \nuid 0\nidentity 1 2 3 4\nsmall 0\nbytes 9\nlast 5\n' > "$TMP/store/good.info"
printf '1 2 replay x\n\377\376junk\n' > "$TMP/store/good.readset.history"
printf 'exe rel\n' > "$TMP/store/torn.info"
head -c 300 /dev/urandom > "$TMP/store/good.readset"
$vg "$READSET" auto status --json --store "$TMP/store" > "$TMP/status.json" 2>"$TMP/err" || { cat "$TMP/err"; fail "auto status"; }
grep -q '"program":"/usr/bin/true"' "$TMP/status.json" || fail "auto status did not list the good program: $(cat "$TMP/status.json")"
$vg "$READSET" auto status --store "$TMP/store" > /dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "auto status (text)"; }
echo "valgrind-verbs: ok"
