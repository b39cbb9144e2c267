#!/bin/sh
# Ctrl-C, SIGTERM and SIGKILL of the recorder never leave a tracefs instance
# behind (a SIGKILLed one is removed by the next record).
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs
command -v setsid >/dev/null || skip "needs setsid"
INST=/sys/kernel/tracing/instances

wait_instance() {   # pid
        for _ in $(seq 100); do
                [ -d "$INST/readset-$1" ] && return 0
                sleep 0.05
        done
        fail "instance readset-$1 never appeared"
}

# Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
setsid sh -c "exec '$READSET' record -q -o '$TMP/int.readset' -- sleep 30" &
REC=$!
wait_instance $REC
sleep 0.2
/bin/kill -s INT -- -$REC
rc=0; wait $REC || rc=$?
[ "$rc" = 130 ] || fail "Ctrl-C: exit $rc, expected 130"
[ ! -e "$INST/readset-$REC" ] || fail "Ctrl-C left $INST/readset-$REC"
[ -s "$TMP/int.readset" ] || fail "Ctrl-C: no read set written"
"$READSET" show "$TMP/int.readset" >/dev/null || fail "Ctrl-C: unreadable read set"

# SIGTERM to the recorder alone is passed on to the command.
"$READSET" record -q -o "$TMP/term.readset" -- sleep 30 &
REC=$!
wait_instance $REC
kill -TERM $REC
rc=0; wait $REC || rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143"
[ ! -e "$INST/readset-$REC" ] || fail "SIGTERM left $INST/readset-$REC"

# SIGKILL cannot be caught: the next record removes the orphan.
setsid "$READSET" record -q -o "$TMP/kill.readset" -- sleep 30 &
REC=$!
wait_instance $REC
kill -KILL $REC
wait $REC 2>/dev/null || true
pkill -KILL -f "^sleep 30$" 2>/dev/null || true
[ -d "$INST/readset-$REC" ] || fail "expected an orphaned instance after SIGKILL"
"$READSET" record -q -o "$TMP/next.readset" -- true || fail "record after SIGKILL"
[ ! -e "$INST/readset-$REC" ] || fail "orphaned instance readset-$REC not removed"
# and nothing of ours is left at all
ls "$INST" | grep -q '^readset-' && fail "instances left: $(ls $INST)"
echo "record-interrupt: ok"
