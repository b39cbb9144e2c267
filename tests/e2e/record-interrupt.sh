#!/bin/sh
# Ctrl-C, SIGTERM and SIGKILL of the recorder never leave a tracefs instance
# or BPF programs behind: readset's guardian removes them once readset is
# gone, however it went; instances orphaned anyway (guardian killed too) are
# removed by the next record.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs
command -v setsid >/dev/null || skip "needs setsid"
INST=/sys/kernel/tracing/instances

inst_exists() {   # pid: readset-PID or readset-PID-N
        for d in "$INST/readset-$1" "$INST/readset-$1"-*; do
                [ -d "$d" ] && return 0
        done
        return 1
}

# Wait until the recorded command runs (it touches $TMP/started-N): by
# then the instance and the guardian exist.
wait_instance() {   # pid n
        for _ in $(seq 200); do
                inst_exists "$1" && [ -e "$TMP/started-$2" ] && return 0
                sleep 0.05
        done
        fail "instance readset-$1 or command $2 never appeared"
}
wait_gone() {   # pid what
        for _ in $(seq 100); do
                inst_exists "$1" || return 0
                sleep 0.05
        done
        fail "$2 left $INST/readset-$1 behind"
}
bpf_progs() { command -v bpftool >/dev/null && bpftool prog list 2>/dev/null | grep -c 'on_sys_e' || echo 0; }
progs_before=$(bpf_progs)

# Ctrl-C: the terminal sends SIGINT to the whole foreground process group;
# the command dies of it and readset exits as the command did (130).
# (a shell's background job ignores SIGINT; put it back as a terminal would)
setsid "$TESTPROG" sigdfl "$READSET" record -q -o "$TMP/int.readset" -- sh -c "touch $TMP/started-1; exec sleep 30" &
REC=$!
wait_instance $REC 1
sleep 0.2
/bin/kill -s INT -- -$REC
rc=0; wait $REC || rc=$?
[ "$rc" = 130 ] || fail "Ctrl-C: exit $rc, expected 130"
wait_gone $REC "Ctrl-C"
[ -s "$TMP/int.readset" ] || fail "Ctrl-C: no read set written"
"$READSET" show "$TMP/int.readset" >/dev/null || fail "Ctrl-C: unreadable read set"

# SIGTERM to the recorder alone is passed on to the command.
"$READSET" record -q -o "$TMP/term.readset" -- sh -c "touch $TMP/started-2; exec sleep 30" &
REC=$!
wait_instance $REC 2
kill -TERM $REC
rc=0; wait $REC || rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143"
wait_gone $REC "SIGTERM"

# SIGKILL cannot be caught: the guardian notices and cleans up.
setsid "$READSET" record -q -o "$TMP/kill.readset" -- sh -c "touch $TMP/started-3; exec sleep 30" &
REC=$!
wait_instance $REC 3
kill -KILL $REC
wait $REC 2>/dev/null || true
wait_gone $REC "SIGKILL"
pkill -KILL -f "^sleep 30$" 2>/dev/null || true

# An instance whose owner and guardian are both gone: removed by the next record.
sh -c 'exit 0' & DEAD=$!; wait $DEAD
mkdir "$INST/readset-$DEAD"
"$READSET" record -q -o "$TMP/next.readset" -- true || fail "record with an orphan present"
[ ! -e "$INST/readset-$DEAD" ] || fail "orphaned instance readset-$DEAD not removed"

# Nothing of ours is left: no instances, no attached programs.
for _ in $(seq 100); do
        ls "$INST" | grep -q '^readset-' || break
        sleep 0.05
done
ls "$INST" | grep -q '^readset-' && fail "instances left: $(ls $INST)"
sleep 0.3
[ "$(bpf_progs)" = "$progs_before" ] || fail "BPF programs left attached: $(bpf_progs) vs $progs_before"
echo "record-interrupt: ok"
