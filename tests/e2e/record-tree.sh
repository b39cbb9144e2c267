#!/bin/sh
# record follows the whole process tree: children, grandchildren, execs,
# background jobs; and their lookups.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_python

for i in 1 2 3; do
        head -c 200000 /dev/urandom > "$TMP/f$i"
done
"$TESTPROG" evict "$TMP/f1" "$TMP/f2" "$TMP/f3"

# f1 from a background child, f2 from a child of a child (fork + exec),
# f3 from a grandchild that outlives nothing: the parent waits.
"$READSET" record -q -o "$TMP/t.readset" -- sh -c "
        cat '$TMP/f1' >/dev/null &
        '$TESTPROG' spawn sh -c \"cat '$TMP/f2' >/dev/null; '$TESTPROG' spawn '$TESTPROG' read '$TMP/f3' 4096 8192\"
        wait" || fail "record failed"

json_check "$TMP/t.readset" \
        "covered('$TMP/f1', 0, 200000, 'accessed')" \
        "covered('$TMP/f2', 0, 200000, 'accessed')" \
        "covered('$TMP/f3', 4096, 12288, 'accessed')" \
        "total('$TMP/f3', 'accessed') == 8192" \
        "'$TESTPROG' in files" \
        "any(l['op'] == 'open' and l['path'] == '$TMP/f3' and l['result'] == 0 for l in d['lookups'])" \
        "len({l['pid'] for l in d['lookups']}) >= 4"
echo "record-tree: ok"
