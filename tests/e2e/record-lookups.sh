#!/bin/sh
# record keeps the path lookups of the tree, failed ones included, in order,
# with relative names made absolute.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_python

mkdir -p "$TMP/dir"
echo hello > "$TMP/dir/present"
cd "$TMP/dir"
"$READSET" record -q -o "$TMP/l.readset" -- "$TESTPROG" stat "$TMP/dir/present" "$TMP/dir/absent" relative-absent >/dev/null ||
        fail "record failed"
"$READSET" record -q -o "$TMP/d.readset" -- ls "$TMP/dir" >/dev/null || fail "record ls failed"

json_check "$TMP/l.readset" \
        "d['lookups_traced']" \
        "d['lost_lookups'] == 0" \
        "any(l['op'] == 'stat' and l['path'] == '$TMP/dir/present' and l['result'] == 0 for l in d['lookups'])" \
        "any(l['op'] == 'stat' and l['path'] == '$TMP/dir/absent' and l['error'] == 'ENOENT' for l in d['lookups'])" \
        "any(l['op'] == 'stat' and l['path'] == '$TMP/dir/relative-absent' and l['result'] == -2 for l in d['lookups'])" \
        "any(l['op'] == 'exec' and l['path'] == '$TESTPROG' and l['result'] == 0 for l in d['lookups'])" \
        "[l['time_us'] for l in d['lookups']] == sorted(l['time_us'] for l in d['lookups'])"
json_check "$TMP/d.readset" \
        "any(l['op'] == 'readdir' and l['path'] == '$TMP/dir' for l in d['lookups'])"
"$READSET" show --lookups "$TMP/l.readset" | grep -q "ENOENT  $TMP/dir/absent" || fail "show --lookups"
echo "record-lookups: ok"
