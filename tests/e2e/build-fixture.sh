#!/bin/sh
# The pipeline below the tracer, from a fixture trace, without privileges:
# build -> format -> show (table and JSON).
. "$(dirname "$0")/lib.sh"
need_python
FIX=${SRCDIR:?}/tests/fixtures

"$READSET" build --no-walk --paths "$FIX/small.paths" -o "$TMP/s.readset" "$FIX/small.trace" 2>"$TMP/err" ||
        { cat "$TMP/err"; fail "build"; }
grep -q "skipped 1 malformed" "$TMP/err" || fail "malformed line not counted"
json_check "$TMP/s.readset" \
        "[f['path'] for f in d['files']] == ['/usr/lib/libfirst.so', '0:3:271581261', '/usr/share/mapped.dat', '/etc/config', '254:1:2097151']" \
        "ranges('/usr/lib/libfirst.so') == [(0, 16384)]" \
        "ranges('/usr/lib/libfirst.so', 'accessed') == [(0, 16384)]" \
        "[r['time_us'] for r in files['/usr/lib/libfirst.so']['ranges']] == [0]" \
        "covered('/usr/share/mapped.dat', 40960, 45056, 'accessed')" \
        "total('/usr/share/mapped.dat') == 65536" \
        "ranges('/etc/config') == [(8192, 12288)]" \
        "d['totals']['unresolved_files'] == 2" \
        "'254:1:2097151' in files" \
        "not any(f['deleted'] for f in d['files'])" \
        "d['totals']['files'] == 5" \
        "d['events'] == 9"
"$READSET" show "$TMP/s.readset" > "$TMP/table" || fail "show"
grep -q "files:     5 (2 unresolved" "$TMP/table" || { cat "$TMP/table"; fail "show table header"; }
grep -q "/usr/lib/libfirst.so" "$TMP/table" || fail "show table rows"
awk 'length > 80 {exit 1}' "$TMP/table" || fail "table wider than 80 columns"
# The verbs below the replay, as an unprivileged user would run them on the
# fixture (nobody, when this is root): the dry run and the report, both as
# JSON that parses and says what it should.
chmod 755 "$TMP"; chmod 644 "$TMP/s.readset"
user_readset replay --dry-run --json "$TMP/s.readset" > "$TMP/plan.json" 2>"$TMP/err" ||
        { cat "$TMP/err"; fail "replay -n --json as $(user_name)"; }
"$PY" - "$TMP/plan.json" <<'PYEOF' || fail "replay -n --json"
import json, sys
d = json.load(open(sys.argv[1]))
# the fixture's files do not exist here: nothing to read, but a plan
assert set(d) >= {"device", "rotational", "measured", "reads", "metadata_reads", "bytes", "lookups"}, d
assert d["bytes"] >= 0 and d["reads"] >= d["metadata_reads"], d
print("  replay -n --json: ok", d["reads"], "reads,", d["bytes"], "bytes")
PYEOF
# any device name makes valid JSON
cp "$SRCDIR/profiles/hdd-7200.json" "$TMP/a\"b\\c
d.json"; chmod 644 "$TMP"/a*
user_readset replay -n -j --device "$TMP/a\"b\\c
d.json" "$TMP/s.readset" > "$TMP/odd.json" || fail "replay -n -j --device with an odd name"
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['device'] == sys.argv[2] and d['rotational'], d
" "$TMP/odd.json" "$TMP/a\"b\\c
d.json" || { cat "$TMP/odd.json"; fail "replay -n -j: the device name"; }
user_readset report --no-probe --json "$TMP/s.readset" > "$TMP/report.json" 2>"$TMP/err" ||
        { cat "$TMP/err"; fail "report --no-probe --json as $(user_name)"; }
"$PY" - "$TMP/report.json" "$TMP/s.readset" <<'PYEOF' || fail "report --no-probe --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["read_set"] == sys.argv[2], d["read_set"]
assert d["totals"]["files"] == 5 and d["totals"]["unresolved_files"] == 2, d["totals"]
assert d["totals"]["metadata_bytes"] + d["totals"]["data_bytes"] == d["totals"]["bytes"], d["totals"]
# no probe: the reference device only, costed, with its findings
assert [p["device"] for p in d["predictions"]] == ["hdd"], d["predictions"]
assert d["predictions"][0]["reference"] and d["predictions"][0]["plain"]["seconds"] > 0, d["predictions"]
assert any("could not be named" in f for f in d["findings"]), d["findings"]
print("  report --no-probe --json: ok")
PYEOF
# a paths list with a line that is not one: refused, naming the line
printf '# comment\n\n8:1 12 relative/path\n' > "$TMP/bad.paths"
rc=0; "$READSET" build --no-walk --paths "$TMP/bad.paths" -o "$TMP/b.readset" "$FIX/small.trace" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "line 3: expected 'MAJOR:MINOR INODE /PATH'" "$TMP/err" || { cat "$TMP/err"; fail "a bad paths line: exit $rc"; }
# --json: the summary on stdout
"$READSET" build -j --no-walk --paths "$FIX/small.paths" -o "$TMP/s3.readset" "$FIX/small.trace" > "$TMP/b.json" || fail "build -j"
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['files'] == 5 and d['events'] == 9 and d['malformed_lines'] == 1, d
" "$TMP/b.json" || { cat "$TMP/b.json"; fail "build -j"; }
# stdin works too
"$READSET" build --no-walk -o "$TMP/s2.readset" - < "$FIX/small.trace" 2>/dev/null || fail "build from stdin"
# input with no trace events in it: refused naming the file (and the first
# line that is no trace's), nothing written
build_refused() {   # pattern what build-args...
        pat=$1; what=$2; shift 2
        rm -f "$TMP/none.readset"
        rc=0; "$READSET" build --no-walk -o "$TMP/none.readset" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
        [ "$rc" = 1 ] || { cat "$TMP/err"; fail "build of $what: exit $rc, expected 1"; }
        [ "$(wc -l < "$TMP/err")" = 1 ] && grep -q -- "$pat" "$TMP/err" ||
                { cat "$TMP/err"; fail "build of $what: expected one line with '$pat'"; }
        [ ! -e "$TMP/none.readset" ] || fail "build of $what wrote a read set"
        echo "  build of $what: $(cat "$TMP/err")"
}
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$TMP/passwd"
build_refused "no trace events in '$TMP/passwd': line 1 is not a line of a trace" "a text that is no trace" \
        "$TMP/passwd"
: > "$TMP/empty.trace"
build_refused "no trace events in '$TMP/empty.trace'\$" "an empty file" "$TMP/empty.trace"
build_refused "no trace events in 'standard input'\$" "empty standard input" - < /dev/null
build_refused "'$TMP/s.readset' is not a text trace: line [0-9]* has a NUL byte" "a (binary) read set" "$TMP/s.readset"
grep -v filemap "$FIX/small.trace" > "$TMP/other.trace"
build_refused "no trace events in '$TMP/other.trace'\$" "a trace of other events only" "$TMP/other.trace"
echo "build-fixture: ok"
