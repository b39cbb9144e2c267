#!/bin/sh
# Ctrl-C, SIGTERM and SIGKILL of the recorder never leave a tracefs instance
# or BPF programs behind: readset's guardian removes them once readset is
# gone, however it went; instances orphaned anyway (guardian killed too) are
# removed by the next record.  Only this test's own objects are checked (its
# recorders' instances by name, their programs by id), each waited for with
# a bound: the guardian of another test may still be at work.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_bpftool
command -v setsid >/dev/null || skip "needs setsid"
INST=/sys/kernel/tracing/instances

inst_exists() {   # pid: readset-PID or readset-PID-N
        for d in "$INST/readset-$1" "$INST/readset-$1"-*; do
                [ -d "$d" ] && return 0
        done
        return 1
}

# The recorded command: notes the BPF programs its parent (the recorder)
# holds, then its own PID, then sleeps.
cmd() {   # n
        echo "grep -h '^prog_id' /proc/\$PPID/fdinfo/* | cut -f2 | sort -u > $TMP/progs-$1; echo \$\$ > $TMP/cmd-$1; touch $TMP/started-$1; exec sleep 30"
}
# Wait until the recorded command runs: by then the instance and the
# guardian exist.
wait_started() {   # pid n
        wait_until 30 "inst_exists $1 && [ -e $TMP/started-$2 ]" || fail "instance readset-$1 or command $2 never appeared"
        [ -s "$TMP/progs-$2" ] || fail "recorder $1 holds no BPF programs"
}
progs_gone() {   # n: none of the programs recorder n held exists any more
        for id in $(cat "$TMP/progs-$1"); do
                bpftool prog show id "$id" >/dev/null 2>&1 && return 1
        done
        return 0
}
wait_gone() {   # pid n what
        wait_until 30 "! inst_exists $1" || fail "$3 left $INST/readset-$1 behind"
        wait_until 30 "progs_gone $2" || fail "$3 left BPF programs attached: $(cat "$TMP/progs-$2" | tr '\n' ' ')"
}

# Ctrl-C: the terminal sends SIGINT to the whole foreground process group;
# the command dies of it and readset exits as the command did (130).
# (a shell's background job ignores SIGINT; put it back as a terminal would)
setsid "$TESTPROG" sigdfl "$READSET" record -q -o "$TMP/int.readset" -- sh -c "$(cmd 1)" &
REC=$!
wait_started $REC 1
/bin/kill -s INT -- -$REC
rc=0; wait $REC || rc=$?
[ "$rc" = 130 ] || fail "Ctrl-C: exit $rc, expected 130"
wait_gone $REC 1 "Ctrl-C"
[ -s "$TMP/int.readset" ] || fail "Ctrl-C: no read set written"
"$READSET" show "$TMP/int.readset" >/dev/null || fail "Ctrl-C: unreadable read set"

# SIGTERM to the recorder alone is passed on to the command.
"$READSET" record -q -o "$TMP/term.readset" -- sh -c "$(cmd 2)" &
REC=$!
wait_started $REC 2
kill -TERM $REC
rc=0; wait $REC || rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143"
wait_gone $REC 2 "SIGTERM"

# SIGKILL cannot be caught: the guardian notices and cleans up.  The
# command, orphaned, is ended by its PID.
setsid "$READSET" record -q -o "$TMP/kill.readset" -- sh -c "$(cmd 3)" &
REC=$!
wait_started $REC 3
kill -KILL $REC
wait $REC 2>/dev/null || true
wait_gone $REC 3 "SIGKILL"
kill -KILL "$(cat "$TMP/cmd-3")" 2>/dev/null || true

# An instance whose owner and guardian are both gone: removed by the next
# record, which itself leaves nothing.
sh -c 'exit 0' & DEAD=$!; wait $DEAD
mkdir "$INST/readset-$DEAD"
"$READSET" record -q -o "$TMP/next.readset" -- sh -c "$(cmd 4 | sed 's/; exec sleep 30//')" & REC=$!
rc=0; wait $REC || rc=$?
[ "$rc" = 0 ] || fail "record with an orphan present: exit $rc"
[ ! -e "$INST/readset-$DEAD" ] || fail "orphaned instance readset-$DEAD not removed"
wait_gone $REC 4 "a record that ended normally"
echo "record-interrupt: ok"
