#!/bin/sh
# The common options (docs/HACKING.md): from readset --list-options, a
# letter means one long option in every verb that has it, and the common
# letters their common names; each letter kept one release with its old
# meaning (NEWS) still works and says what to use; -q quiets run; run
# --json without --stats says what run did.  No root needed.
. "$(dirname "$0")/lib.sh"

"$READSET" --list-options > "$TMP/opts" || fail "readset --list-options"
[ "$(wc -l < "$TMP/opts")" -gt 50 ] || fail "--list-options lists too little: $(cat "$TMP/opts")"
awk '
BEGIN { common["-q"] = "--quiet"; common["-v"] = "--verbose"; common["-j"] = "--json"
        common["-n"] = "--dry-run"; common["-o"] = "--output"; common["-h"] = "--help" }
$2 == "-" { next }
$3 == "-" { printf "%s %s: a letter with no long name\n", $1, $2; bad = 1; next }
$2 in common && common[$2] != $3 {
        printf "%s %s is %s, not the common %s\n", $1, $2, $3, common[$2]; bad = 1 }
$2 in name && name[$2] != $3 {
        printf "%s %s is %s, but %s %s is %s\n", $1, $2, $3, verb[$2], $2, name[$2]; bad = 1 }
!($2 in name) { name[$2] = $3; verb[$2] = $1 }
END { exit bad }' "$TMP/opts" > "$TMP/conflicts" || fail "letters that mean two things:
$(cat "$TMP/conflicts")"
# every verb has -h and, but pack's --order, boot and layout the JSON they report
for v in record show replay run report layout pack boot probe build; do
        grep -q "^$v -h --help \.$" "$TMP/opts" || fail "$v has no -h"
        grep -q "^$v -j --json \.$" "$TMP/opts" || fail "$v has no -j/--json"
done
for v in record replay run report layout; do
        grep -q "^$v -q --quiet \.$" "$TMP/opts" || fail "$v has no -q/--quiet"
done

# The letters kept for one release: the old meaning, and a warning that
# says what to use (parsed before --help, which then ends the command).
old() {   # verb letter [value] use
        verb=$1 letter=$2
        shift 2
        if [ $# = 2 ]; then value=$1; shift; else value=; fi
        use=$1
        rc=0; "$READSET" "$verb" "-$letter" $value --help > "$TMP/out" 2> "$TMP/err" || rc=$?
        [ "$rc" = 0 ] || fail "$verb -$letter: exit $rc: $(cat "$TMP/err")"
        grep -q "^readset: warning: -$letter will .* in the next release.*; use $use\$" "$TMP/err" ||
                fail "$verb -$letter: no warning naming $use: $(cat "$TMP/err")"
        [ "$(wc -l < "$TMP/err")" = 1 ] || fail "$verb -$letter: more than the warning: $(cat "$TMP/err")"
}
old probe q --quick
grep -q "warning: -q will mean --quiet in the next release; use --quick" "$TMP/err" || fail "probe -q: $(cat "$TMP/err")"
old probe s --save
old report n 3 --top
old report s "$TMP/g.svg" --svg
old boot n 3 --last
old run a "$TMP/auto" --auto
old build p /dev/null --paths
# ... and the old meaning: build -p reads the paths as --paths does
FIX=$SRCDIR/tests/fixtures
"$READSET" build --no-walk -p "$FIX/small.paths" -o "$TMP/p1.readset" "$FIX/small.trace" 2> "$TMP/err" ||
        fail "build -p: $(cat "$TMP/err")"
grep -q "use --paths" "$TMP/err" || fail "build -p: no warning: $(cat "$TMP/err")"
"$READSET" build --no-walk --paths "$FIX/small.paths" -o "$TMP/p2.readset" "$FIX/small.trace" 2> "$TMP/err" ||
        fail "build --paths: $(cat "$TMP/err")"
! grep -q "warning" "$TMP/err" || fail "build --paths warns: $(cat "$TMP/err")"
"$READSET" show "$TMP/p1.readset" > "$TMP/s1"
"$READSET" show "$TMP/p2.readset" > "$TMP/s2"
cmp -s "$TMP/s1" "$TMP/s2" || fail "build -p and --paths differ"
# the new long names take what the letters took
"$READSET" report --top 3 --svg "$TMP/g.svg" --help > /dev/null 2> "$TMP/err" && [ ! -s "$TMP/err" ] ||
        fail "report --top --svg: $(cat "$TMP/err")"

# run -q: of a read set it cannot use, one warning and nothing else; the
# command runs and its exit status is run's
rc=0; "$READSET" run -q "$TMP/missing.readset" -- sh -c 'exit 3' 2> "$TMP/err" || rc=$?
[ "$rc" = 3 ] || fail "run -q missing: exit $rc: $(cat "$TMP/err")"
[ "$(wc -l < "$TMP/err")" = 1 ] && grep -q "^readset: warning: cannot read" "$TMP/err" ||
        fail "run -q missing: $(cat "$TMP/err")"

# run --json without --stats: what run did, one JSON object on the last
# line of standard error (standard output is the command's)
need_python
PYTHONPATH="$SRCDIR/tests/e2e" "$PY" -c '
import sys, mkreadset
mkreadset.write(sys.argv[1], [{"path": p, "identity": "stat"} for p in sys.argv[2:]])
' "$TMP/s.readset" "$READSET" "$SRCDIR/README.md" || fail "mkreadset"
lastjson() {   # what expr...
        _what=$1; shift
        tail -n 1 "$TMP/err" > "$TMP/last.json"
        "$PY" - "$TMP/last.json" "$@" <<'PYEOF' || fail "$_what: $(cat "$TMP/err")"
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    assert eval(e), e
PYEOF
}
rc=0; "$READSET" run --json "$TMP/s.readset" -- sh -c 'echo out; exit 3' > "$TMP/out" 2> "$TMP/err" || rc=$?
[ "$rc" = 3 ] || fail "run --json: exit $rc: $(cat "$TMP/err")"
[ "$(cat "$TMP/out")" = out ] || fail "run --json: the command's stdout: $(cat "$TMP/out")"
lastjson "run --json" 'd["replayed"] is True' 'd["exit_status"] == 3' 'd["bytes_planned"] > 0' \
        '"files_opened" in d and "skipped_files" in d'
rc=0; "$READSET" run -q -j "$TMP/missing.readset" -- sh -c 'exit 5' 2> "$TMP/err" || rc=$?
[ "$rc" = 5 ] || fail "run -q -j missing: exit $rc: $(cat "$TMP/err")"
[ "$(wc -l < "$TMP/err")" = 2 ] || fail "run -q -j missing: more than the warning and the JSON: $(cat "$TMP/err")"
lastjson "run -j missing" 'd == {"replayed": False, "exit_status": 5}'
# run --auto as a user runs the command plain: --json says so too
rc=0; user_readset run --auto "$TMP/auto" -j -- sh -c 'exit 6' 2> "$TMP/err" || rc=$?
[ "$rc" = 6 ] || fail "run --auto -j as a user: exit $rc: $(cat "$TMP/err")"
lastjson "run --auto -j as a user" 'd == {"replayed": False, "exit_status": 6}'

# report -q: its probe of this machine's device (made and cached: no
# profile in a new cache directory) is not said
READSET_CACHE_DIR="$TMP/cache" "$READSET" report -q "$TMP/s.readset" > "$TMP/out" 2> "$TMP/err" ||
        fail "report -q: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "report -q said: $(cat "$TMP/err")"
grep -q . "$TMP/out" || fail "report -q printed no report"
# layout -q likewise (-n: nothing moved; the files' file system may be one
# layout refuses, which is an error, said)
rc=0; READSET_CACHE_DIR="$TMP/cache2" "$READSET" layout -n -q "$TMP/s.readset" > "$TMP/out" 2> "$TMP/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$TMP/err" ] || { [ "$rc" = 1 ] && grep -q "error:" "$TMP/err"; } ||
        fail "layout -n -q: exit $rc: $(cat "$TMP/err")"
! grep -q "probing" "$TMP/err" || fail "layout -q said its probe: $(cat "$TMP/err")"
echo "options: ok"
