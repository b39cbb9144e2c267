#!/bin/sh
# The pipeline below the tracer, from a fixture trace, without privileges:
# build -> format -> show (table and JSON).
. "$(dirname "$0")/lib.sh"
need_python
FIX=${SRCDIR:?}/tests/fixtures

"$READSET" build --no-walk -p "$FIX/small.paths" -o "$TMP/s.readset" "$FIX/small.trace" 2>"$TMP/err" ||
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
awk 'length > 80 && !/^command:/ {exit 1}' "$TMP/table" || fail "table wider than 80 columns"
# stdin works too
"$READSET" build --no-walk -o "$TMP/s2.readset" - < "$FIX/small.trace" 2>/dev/null || fail "build from stdin"
echo "build-fixture: ok"
