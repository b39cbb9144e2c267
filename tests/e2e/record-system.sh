#!/bin/sh
# record --system-wide follows every process, not only the command's: a
# program started before the recording, and no child of readset, is in the
# read set (pages and lookups), and without --system-wide it is not;
# readset's own lookups (it reads each fanotify event's /proc/self/fd link)
# and its guardian's are never in it.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_python

head -c 300000 /dev/urandom > "$TMP/outsider"
head -c 300000 /dev/urandom > "$TMP/insider"
"$TESTPROG" evict "$TMP/outsider" "$TMP/insider"

# The outsider: started now, it reads its file once the recorded command
# says so (a flag file), then says it is done; the command waits for that
# (bounded).  No timing: each step waits for the one before.
outsider() {   # n
        ( cd "$TMP" && for _ in $(seq 600); do [ -e go-$1 ] && break; sleep 0.05; done
          "$TESTPROG" read "$TMP/outsider" 0 300000; touch done-$1 ) &
        OUT_PID=$!
}
recorded_cmd() {   # n: also notes readset's other children (its guardian)
        echo "ps -o pid= --ppid \$PPID | grep -vw \$\$ > $TMP/guardian-$1; touch $TMP/go-$1; cat $TMP/insider > /dev/null; for i in \$(seq 600); do [ -e $TMP/done-$1 ] && break; sleep 0.05; done; ls /proc/\$PPID/task > $TMP/tasks-$1"
}

outsider 1
"$READSET" record -q --system-wide -o "$TMP/sys.readset" -- sh -c "$(recorded_cmd 1)" & REC=$!
rc=0; wait $REC || rc=$?
[ "$rc" = 0 ] || fail "record --system-wide: exit $rc"
wait $OUT_PID
[ -e "$TMP/done-1" ] || fail "the outsider did not run"
"$TESTPROG" evict "$TMP/outsider" "$TMP/insider"
outsider 2
"$READSET" record -q -o "$TMP/tree.readset" -- sh -c "$(recorded_cmd 2)" || fail "record"
wait $OUT_PID

# readset's own threads, listed while it recorded (the recording may hold
# other readsets' /proc/self/fd lookups: other work on the machine)
tasks=$(tr '\n' ',' < "$TMP/tasks-1")
json_check "$TMP/sys.readset" \
        "(tasks := {${tasks}$REC}) is not None" \
        "covered('$TMP/outsider', 0, 300000, 'accessed')" \
        "covered('$TMP/insider', 0, 300000, 'accessed')" \
        "any(l['op'] == 'open' and l['path'] == '$TMP/outsider' for l in d['lookups'])" \
        "not any(l['pid'] == $REC for l in d['lookups'])" \
        "not any(l['pid'] == int(open('$TMP/guardian-1').read().split()[0]) for l in d['lookups'])" \
        "not any(l['path'].startswith('/proc/self/fd/') and l['pid'] in tasks for l in d['lookups'])"
json_check "$TMP/tree.readset" \
        "'$TMP/outsider' not in files" \
        "covered('$TMP/insider', 0, 300000, 'accessed')" \
        "not any(l['path'] == '$TMP/outsider' for l in d['lookups'])"
echo "record-system: ok"
