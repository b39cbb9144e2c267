#!/bin/sh
# record keeps the path lookups of the tree, failed ones included, in order,
# with relative names made absolute: relative to the working directory, to
# a directory descriptor (openat, fstatat), to a duplicate of one (fcntl
# F_DUPFD, as find's fts does) and after fchdir.  A name relative to a
# descriptor opened before recording began is counted, never kept bare.
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

# directory walkers: find (fts: openat + fstatat relative to dup'ed dir fds)
# and tar (openat/fstatat relative to its own dir fds), run from elsewhere
mkdir -p "$TMP/walk/a/b" "$TMP/walk/c"
for i in 1 2 3 4 5 6 7 8; do echo $i >"$TMP/walk/a/b/f$i"; echo $i >"$TMP/walk/c/g$i"; done
touch -d 2001-01-01 "$TMP/ref"
cd /
"$READSET" record -q -o "$TMP/find.readset" -- find "${TMP#/}/walk" -type f -newer "$TMP/ref" >/dev/null ||
        fail "record find failed"
cd "$TMP"
"$READSET" record -q -o "$TMP/tar.readset" -- tar -cf /dev/null walk || fail "record tar failed"
for w in find tar; do
        json_check "$TMP/$w.readset" \
                "all(l['path'].startswith('/') for l in d['lookups'])" \
                "d['unresolved_lookups'] == 0" \
                "all(('$TMP/walk/a/b/f%d' % i) in {l['path'] for l in d['lookups'] if l['op'] == 'stat'} for i in range(1, 9))" \
                "all(('$TMP/walk/c/g%d' % i) in {l['path'] for l in d['lookups'] if l['op'] == 'stat'} for i in range(1, 9))" \
                "all(__import__('os').path.lexists(l['path']) for l in d['lookups'] if l['result'] == 0 and '$TMP/walk' in l['path'])"
done

# a directory descriptor opened before recording: its names are counted
cd /
"$READSET" record -q -o "$TMP/inherited.readset" -- $PY -c \
        'import os; os.stat("present", dir_fd=7); os.path.exists("/x")' 7<"$TMP/dir" || fail "record inherited failed"
json_check "$TMP/inherited.readset" \
        "d['unresolved_lookups'] >= 1" \
        "all(l['path'].startswith('/') for l in d['lookups'])" \
        "not any(l['path'].endswith('/present') for l in d['lookups'])"
"$READSET" show "$TMP/inherited.readset" | grep -q "not kept (relative to a directory not known)" ||
        fail "show does not count the unresolved lookups"
echo "record-lookups: ok"
