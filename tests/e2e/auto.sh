#!/bin/sh
# readset auto's daemon, run as root, sees programs started without any
# wrapper: a script's first start is recorded (from its exec on), its
# second cold start replayed (the replay's own counter of what it read for
# that start, from the history), a changed program learned anew, a program
# the configuration excludes never learned, the store's bound kept; a
# killed daemon leaves no tracefs instance, BPF program or half-written
# read set.  Each start waits on a FIFO until what it is meant to show has
# happened (the recording is on; the replay has read the files), so that
# nothing depends on how fast this machine is.
. "$(dirname "$0")/lib.sh"
need_root; need_loop; need_tracefs; need_python
INST=/sys/kernel/tracing/instances

make_ext4 256
mkdir "$MNT/app"
for i in $(seq 1 24); do head -c 524288 /dev/urandom > "$MNT/app/data$i"; done
DATA=$((24 * 524288))
cp "$(readlink -f /bin/sh)" "$MNT/app/sh"
# script NAME: waits for a line on its FIFO (if it has one), reads the data
script() {
        cat > "$MNT/app/$1.sh" <<EOF
#!$MNT/app/sh
[ -p "$TMP/go-$1" ] && read go < "$TMP/go-$1"
for f in $MNT/app/data*; do cat "\$f" > /dev/null; done
EOF
        chmod +x "$MNT/app/$1.sh"
}
for s in start secret warm p1 p2 p3 held nob; do script $s; done

STORE=$TMP/store
cat > "$TMP/auto.conf" <<EOF
# this test's programs alone (make check runs others beside it)
only $MNT/app
never $MNT/app/secret.sh
window-ms 300000
max-programs 3
EOF
DPID=
stop_daemon() {
        [ -n "$DPID" ] || return 0
        kill -TERM "$DPID" 2>/dev/null || true
        wait "$DPID" 2>/dev/null || true
        DPID=
}
GATED=
# (a start still waiting on its FIFO would hold the test's output open)
trap '[ -z "$GATED" ] || kill "$GATED" 2>/dev/null; stop_daemon; cleanup' EXIT
start_daemon() {
        # (each daemon's own log: a line of the last one says nothing of it)
        [ -e "$TMP/daemon.log" ] && cat "$TMP/daemon.log" >> "$TMP/daemons.log"
        "$READSET" auto start -v --store "$STORE" --config "$TMP/auto.conf" 2> "$TMP/daemon.log" &
        DPID=$!
        # watching once it says so (its fanotify marks are in place)
        wait_until 60 "grep -q 'watching execs' $TMP/daemon.log" || fail "the daemon never started: $(cat "$TMP/daemon.log")"
}
status() { "$READSET" auto status --json --store "$STORE" > "$TMP/status.json" || fail "auto status"; }
# a python expression over program p (the one whose script is NAME.sh)
prog_is() {   # name expression
        "$READSET" auto status --json --store "$STORE" > "$TMP/status.json" || return 1
        "$PY" - "$TMP/status.json" "$MNT/app/$1.sh" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ps = [p for p in d["programs"] if p["script"] == sys.argv[2]]
p = ps[0] if ps else None
programs = d["programs"]
sys.exit(0 if eval(sys.argv[3]) else 1)
PYEOF
}
prog_check() {   # name expression
        prog_is "$1" "$2" || { cat "$TMP/status.json" "$TMP/daemon.log"; fail "$1: $2"; }
}
starts_are() {   # name n: the daemon has noted n starts of it
        prog_is "$1" "p is not None and p['starts'] == $2"
}
recording() {   # some instance of the daemon's traces (a recording is on)
        for d in "$INST/readset-$DPID" "$INST/readset-$DPID"-*; do
                [ "$(cat "$d/tracing_on" 2>/dev/null)" = 1 ] && return 0
        done
        return 1
}
all_resident() {
        for f in "$MNT"/app/data*; do
                [ "$("$TESTPROG" resident "$f" 0 524288)" = 524288 ] || return 1
        done
}
# cold: the data, the program and its scripts (a start found cached is
# warm, neither learned nor judged)
evict() { "$TESTPROG" evict "$MNT"/app/* || fail "evict"; }
# a gated start: runs NAME.sh in the background until released
gated() { rm -f "$TMP/go-$1"; mkfifo "$TMP/go-$1"; "$MNT/app/$1.sh" & GATED=$!; }
release() { echo go > "$TMP/go-$1"; wait $GATED || fail "$1.sh failed"; GATED=; rm -f "$TMP/go-$1"; }
# a cold start of NAME that the daemon records and learns as its Nth:
# waiting on its FIFO until the recording is on, then let go; a new program
# is recorded only with the recorder opened ahead (opened a few a second at
# most), and a recording that came too late is not kept: such a start is
# run through and started again
learned() {   # name n
        for try in 1 2 3 4 5 6 7 8 9 10; do
                evict
                gated "$1"
                wait_until 5 recording || { release "$1"; continue; }
                release "$1"
                wait_until 20 "starts_are $1 $2" && return 0
        done
        fail "$1 was never learned: $(cat "$TMP/daemon.log")"
}

start_daemon

# 1. The first start is recorded, from its exec on.
learned start 1
prog_check start "p['last'] == 'record' and p['recorded'] == 1 and p['read_set_bytes'] >= $DATA"
prog_check start "p['program'] == '$MNT/app/sh' and not p['small']"

# 2. Its second cold start is replayed beside it: the replay reads the
# data (the start waits until it has), and says so in its own counter.
for try in 1 2 3; do
        evict
        all_resident && fail "the data is still cached after eviction"
        gated start
        wait_until 120 all_resident && kill -0 $GATED 2>/dev/null && break
        echo "  the second start's replay did not read the data while it waited ($(kill -0 $GATED 2>/dev/null && echo waiting || echo gone)): again"
        release start
        [ $try = 3 ] && fail "the second start's replay never read the data: $(cat "$TMP/daemon.log")"
done
release start
wait_until 60 "starts_are start 2" || fail "the daemon never noted the second start: $(cat "$TMP/daemon.log")"
prog_check start "p['last'] == 'replay' and p['replayed'] == 1 and p['last_replayed_bytes'] >= $DATA"

# 2b. The loop's next start is plain (its baseline): judged cold by what
# it read from storage itself, and noted.
evict
"$MNT/app/start.sh" || fail "start.sh failed"
wait_until 60 "starts_are start 3" || fail "the daemon never noted the third start: $(cat "$TMP/daemon.log")"
prog_check start "p['last'] == 'plain' and p['plain'] == 1"

# 3. A program that changed is learned anew at its next start.
cp --remove-destination "$(readlink -f /bin/sh)" "$MNT/app/sh.new"
printf '\n' >> "$MNT/app/sh.new"      # other bytes, another inode
mv "$MNT/app/sh.new" "$MNT/app/sh"
learned start 4
prog_check start "p['last'] == 'record' and p['recorded'] == 2"

# 4. An excluded program is never learned, nor a warm start; the next
# cold one is (so the daemon has seen the others by then: events come in
# order).
"$MNT/app/secret.sh" || fail "secret.sh failed"
# (and a warm first start is not learned: warm.sh's files are cached; its
# recording finds it warm, or, too late to tell, keeps nothing)
for f in "$MNT"/app/*; do cat "$f" > /dev/null; done
"$MNT/app/warm.sh" || fail "warm.sh failed"
"$MNT/app/warm.sh" || fail "warm.sh failed"
learned p1 1
prog_check secret "p is None"
grep -q "not learned: .*/secret.sh: named by a never rule" "$TMP/daemon.log" || fail "secret.sh was not seen as excluded: $(cat "$TMP/daemon.log")"
prog_check p1 "p['starts'] == 1 and p['recorded'] == 1"
prog_check warm "p is None"
grep -q "warm.sh.*: \(warm at its first start\|recorded too late\)" "$TMP/daemon.log" ||
        fail "warm.sh was not seen: $(cat "$TMP/daemon.log")"

# 5. The store keeps at most max-programs (3) programs: start, p1, p2 and p3
# make four; the least recently started goes.
for s in p2 p3; do
        learned $s 1
done
wait_until 60 'prog_is p3 "len(programs) == 3"' || prog_check p3 "len(programs) == 3"
# forgotten while the daemon runs: learned anew, not replayed from memory
prog_check p2 "p is not None"
"$READSET" auto forget --store "$STORE" p2.sh > /dev/null || fail "forget p2.sh"
learned p2 1
prog_check p2 "p['last'] == 'record' and p['recorded'] == 1"

# 6. A user is told only of their own starts: each user's are in their
# own file beside the store (the store is root's alone).  nobody starts
# nob.sh (through setpriv: a launcher, its program is the start).
chmod 0711 "$TMP"
for try in 1 2 3 4 5 6 7 8 9 10; do
        evict
        setpriv --reuid=65534 --regid=65534 --clear-groups "$MNT/app/nob.sh" || fail "nob.sh as nobody"
        wait_until 10 "starts_are nob 1" && break
done
prog_check nob "p['uid'] == 65534 and p['recorded'] == 1"
stop_daemon      # (it writes them at its end, and every minute)
[ -s "$STORE-users/0.json" ] || fail "no status of root's starts beside the store"
[ "$(stat -c %a:%u "$STORE-users/0.json")" = 400:0 ] || fail "root's status: $(stat -c %a:%u "$STORE-users/0.json")"
[ "$(stat -c %a "$STORE-users")" = 755 ] || fail "the users' directory: $(stat -c %a "$STORE-users")"
setpriv --reuid=65534 --regid=65534 --clear-groups "$READSET" auto status --json --store "$STORE" > "$TMP/nobody.json" ||
        fail "auto status as nobody"
"$PY" - "$STORE-users/0.json" "$TMP/nobody.json" "$MNT/app/nob.sh" <<'PYEOF' || fail "each user's status: $(cat "$STORE-users/0.json" "$TMP/nobody.json")"
import json, sys
root, nobody = (json.load(open(p))["programs"] for p in sys.argv[1:3])
assert root and all(q["uid"] == 0 for q in root), "root's file: root's programs alone"
assert [q["script"] for q in nobody] == [sys.argv[3]] and nobody[0]["uid"] == 65534, "nobody's: nob.sh alone"
PYEOF
chmod 0700 "$TMP"

start_daemon

# 7. Killed while it records: the guardian removes its tracefs instances
# and BPF programs, and no half-written read set is left in the store.
for try in 1 2 3 4 5 6 7 8 9 10; do
        evict
        gated held
        wait_until 5 recording && break
        release held
done
recording || fail "held was never recorded: $(cat "$TMP/daemon.log")"
progs=$(grep -h '^prog_id' /proc/$DPID/fdinfo/* 2>/dev/null | cut -f2 | sort -u)
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
DEAD=$DPID; DPID=
release held
inst_gone() { ! ls -d "$INST/readset-$DEAD" "$INST/readset-$DEAD"-* >/dev/null 2>&1; }
wait_until 60 inst_gone || fail "the killed daemon left $(ls -d "$INST/readset-$DEAD"*)"
if command -v bpftool >/dev/null; then
        progs_gone() {
                for id in $progs; do bpftool prog show id "$id" >/dev/null 2>&1 && return 1; done
                return 0
        }
        wait_until 60 progs_gone || fail "the killed daemon left BPF programs: $progs"
fi
ls "$STORE" | grep -q '\.new\.\|\.tmp\.' && fail "half-written files in the store: $(ls "$STORE")"
prog_check held "p is None"

# 8. Stopped (SIGTERM): it says what it did, and leaves nothing running.
start_daemon
PID=$DPID
stop_daemon
grep -q "^readset: auto: .* execs" "$TMP/daemon.log" || fail "the daemon said nothing at its end: $(tail -40 "$TMP/daemon.log")"
wait_until 60 "! ls -d $INST/readset-$PID $INST/readset-$PID-* >/dev/null 2>&1" || fail "a stopped daemon left its instance"
prog_check nob "p is not None"
n=$("$READSET" auto status --json --store "$STORE" | "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)["programs"]))')
"$READSET" auto forget --store "$STORE" nob.sh > /dev/null 2>&1 || fail "forget nob.sh"
prog_check nob "p is None and len(programs) == $n - 1"
"$READSET" auto forget --store "$STORE" nob.sh 2>/dev/null && fail "forget of a program not learned succeeded"
echo "ok: recorded, replayed ($(grep -c replayed "$TMP/daemon.log") replays), re-learned, excluded, bounded, killed cleanly"
