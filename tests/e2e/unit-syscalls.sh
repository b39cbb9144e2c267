#!/bin/sh
# The boot unit's system call allow list (systemd/readset-boot.service's
# SystemCallFilter=, as systemd-analyze expands it) against what the boot's
# session really calls: a recorded start, a replayed one, and a replay that
# has data to read, all under strace.  A call the list refuses fails with
# EPERM in the unit (SystemCallErrorNumber=), silently: only those the
# code is known to get over may be left out (cachestat: mincore answers;
# ioprio_set: the unit sets the same class itself).
. "$(dirname "$0")/lib.sh"
need_root
need_tracefs
command -v strace >/dev/null || skip "needs strace (make check installs it)"
command -v systemd-analyze >/dev/null || skip "needs systemd-analyze (Debian package systemd)"
# the census is of the binary the package ships: a sanitizer's runtime
# makes calls of its own (LeakSanitizer's ptrace, ...)
! grep -q "__asan_init\|__ubsan_handle" "$READSET" || skip "a sanitizer build: its runtime's calls are not the unit's"
UNIT=${BUILDDIR:?}/readset-boot.service
[ -f "$UNIT" ] || fail "no built unit '$UNIT'"

S=$TMP/state/boot
mkdir -p "$TMP/data"
for i in 1 2 3 4; do head -c 300000 /dev/urandom >"$TMP/data/f$i"; done
"$READSET" boot enable --state "$S" 2>"$TMP/err" || fail "enable: $(cat "$TMP/err")"
# one start of the session under strace, its end on stdin once it is ready
session() {
        mkfifo "$TMP/in"
        strace -f -qq -o "$TMP/strace.$1" "$READSET" boot start --state "$S" --finished-from-stdin --settle 100 \
                <"$TMP/in" >"$TMP/out.$1" 2>"$TMP/err.$1" &
        pid=$!
        exec 7>"$TMP/in"
        wait_until 60 "grep -q ready '$TMP/out.$1'" || { kill $pid; fail "session $1 never got ready: $(cat "$TMP/err.$1")"; }
        cat "$TMP"/data/f* >/dev/null
        echo 1.0 >&7
        exec 7>&-
        wait $pid || fail "session $1 exited $?: $(cat "$TMP/err.$1")"
        rm -f "$TMP/in"
}
session record
grep -q "this boot: record" "$TMP/err.record" || fail "the first start did not record: $(cat "$TMP/err.record")"
session replay
grep -q "this boot: replay" "$TMP/err.replay" || fail "the second start did not replay: $(cat "$TMP/err.replay")"
# the replay's reads and its wait for them: its files out of the cache first
"$TESTPROG" evict "$TMP"/data/f* || fail "rs-testprog evict failed"
strace -f -qq -o "$TMP/strace.read" "$READSET" replay "$S/plan.readset" 2>"$TMP/err.read" ||
        fail "replay: $(cat "$TMP/err.read")"
grep -q "replayed [1-9]" "$TMP/err.read" || fail "the replay read nothing: $(cat "$TMP/err.read")"

systemd-analyze syscall-filter --no-pager >"$TMP/groups" 2>/dev/null || fail "systemd-analyze syscall-filter failed"
$PY - "$UNIT" "$TMP/groups" "$TMP"/strace.* <<'PYEOF' || fail "the unit's system call filter refuses what the session calls"
import re, sys
unit, groups_file, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
groups, cur = {}, None
for line in open(groups_file):
    s = line.strip()
    if not s or s.startswith("#"):
        continue
    if line.startswith("@"):
        cur = groups.setdefault(s, [])
    elif cur is not None:
        cur.append(s)
def expand(words):
    out = set()
    for w in words:
        out |= expand(groups.get(w, [])) if w.startswith("@") else {w}
    return out
allowed = None
for line in open(unit):
    if line.startswith("SystemCallFilter="):
        v = line.split("=", 1)[1].split()
        if v and v[0].startswith("~"):
            allowed -= expand([v[0][1:]] + v[1:])
        else:
            allowed = expand(v) if allowed is None else allowed | expand(v)
if not allowed:
    sys.exit("FAIL: no allow list in " + unit)
# refused, and got over: cachestat (strace may not know its name)
# falls back to mincore; ioprio_set: IOSchedulingClass= in the unit
known = {"cachestat", "syscall_0x1c3", "ioprio_set"}
called = set()
for t in traces:
    for line in open(t, errors="replace"):
        m = re.match(r"\d+\s+([a-z_0-9]+)\(", line)
        if m:
            called.add(m.group(1))
for need in ("bpf", "fanotify_init", "mincore", "readahead"):
    if need not in called:
        sys.exit(f"FAIL: the session never called {need}: the census missed a path")
refused = sorted(called - allowed - known)
if refused:
    sys.exit("FAIL: refused by the unit, called by the session: " + " ".join(refused))
print(f"ok: {len(called)} system calls, all allowed (or got over: {' '.join(sorted(called & known))})")
PYEOF
echo "ok: the boot unit allows every system call its session makes"
