#!/bin/sh
# readset boot on this machine, with a state directory of the test's own
# and the boot's end given on stdin (--finished-from-stdin): enable, a
# recorded "boot" (a workload run while the session records every
# process), a replayed one (warmed, with a hit ratio), status (table and
# JSON), stale (re-recorded), a state directory others can write
# (refused), a damaged plan (recorded anew, no failure), disable (nothing
# left).  The real boots are tests/e2e/boot-guest.sh's.
. "$(dirname "$0")/lib.sh"
need_root
need_tracefs
S=$TMP/state/boot
mkdir -p "$TMP/data"
for i in 1 2 3 4 5 6 7 8; do head -c 300000 /dev/urandom >"$TMP/data/f$i"; done

"$READSET" boot enable --state "$S" 2>"$TMP/err" || fail "enable: $(cat "$TMP/err")"
[ -f "$S/enabled" ] || fail "enable made no state"
all_warm() {
        for f in "$TMP"/data/f*; do
                [ "$("$TESTPROG" resident "$f" 0 300000 | cut -d' ' -f1)" -ge 300000 ] || return 1
        done
}
mostly_warm() {
        n=0
        for f in "$TMP"/data/f*; do
                n=$((n + $("$TESTPROG" resident "$f" 0 300000 | cut -d' ' -f1)))
        done
        [ $n -ge $((8 * 300000 * 9 / 10)) ]
}
# one "boot": the session, a cold cache, the workload, its end on stdin;
# "warmed": it replays, and the workload waits for its files to be warm
boot() {
        sync; echo 3 >/proc/sys/vm/drop_caches
        mkfifo "$TMP/in"
        "$READSET" boot start --state "$S" --finished-from-stdin --settle 100 <"$TMP/in" >"$TMP/out" 2>"$TMP/session.err" &
        pid=$!
        exec 7>"$TMP/in"
        # ready first (the session says so on stdout)
        n=0; until grep -q ready "$TMP/out" 2>/dev/null; do
                kill -0 $pid 2>/dev/null || fail "the session ended before it was ready: $(cat "$TMP/session.err")"
                n=$((n + 1)); [ $n -lt 600 ] || { kill $pid; fail "the session never got ready"; }
                sleep 0.1
        done
        # a boot that replays: its reads come once the replay has warmed
        # them (else which of the two reads a page first is a race, and the
        # hit ratio with it); bounded, never a fixed sleep
        # (DAMON's pageout, replay.sh, may take a few of them again right
        # after: then nine tenths of their bytes will do; another test's
        # drop_caches may take them all: then the boot is said cold, and the
        # caller boots again)
        cold=0
        # (a boot the loop measures plain, to judge by, warms nothing)
        if [ "${2:-}" = warmed ] && grep -q "this boot: plain" "$TMP/session.err"; then
                cold=2
        elif [ "${2:-}" = warmed ]; then
                wait_until 60 all_warm || {
                        echo "  not all of the boot's files warm after 60 s (DAMON?): nine tenths will do"
                        mostly_warm || { echo "  the boot's files are not warm (another test's drop_caches?)"; cold=1; }
                }
        fi
        cat "$TMP"/data/f* >/dev/null
        echo "$1" >&7
        exec 7>&-
        wait $pid || fail "boot start exited $?: $(cat "$TMP/session.err")"
        rm -f "$TMP/in"
        return $cold
}
boot 2.5
grep -q "this boot: record" "$TMP/session.err" || fail "the first boot did not record: $(cat "$TMP/session.err")"
[ -f "$S/plan.readset" ] || fail "no plan after a recorded boot"
"$READSET" show "$S/plan.readset" | grep -q "$TMP/data/f8" || fail "the plan lacks what the boot read"
# a replayed boot, warmed.  When the files were taken from the cache
# before the "boot" could read them, booted again: the loop's next boot is
# a plain one (to judge by), the one after replays again; twice at most.
boots=2 rc=0
boot 2.0 warmed || rc=$?
grep -q "this boot: replay+record" "$TMP/session.err" || fail "the second boot did not replay: $(cat "$TMP/session.err")"
while [ $rc != 0 ]; do
        [ $boots -lt 6 ] || fail "the replay never warmed the boot's files, in 3 replayed boots"
        boots=$((boots + 1)) rc=0
        boot 2.0 warmed || rc=$?
        [ $rc != 2 ] || rc=1   # (plain: the next one replays)
done
grep -q "this boot: replay+record" "$TMP/session.err" || fail "the replayed boot did not replay: $(cat "$TMP/session.err")"
"$READSET" boot status --state "$S" >"$TMP/status" || fail "status"
grep -q "^readset boot: enabled" "$TMP/status" && grep -q "replay+record" "$TMP/status" || fail "status: $(cat "$TMP/status")"
"$READSET" boot status --state "$S" --json >"$TMP/status.json" || fail "status --json"
"$READSET" show --json "$S/boot.0.readset" >"$TMP/boot0.json" || fail "show the replayed boot's recording"
$PY - "$TMP/status.json" "$TMP/boot0.json" "$TMP/data/" $boots <<'PYEOF' || fail "status --json: $(cat "$TMP/status.json")"
import json, sys
s = json.load(open(sys.argv[1]))
b = s["boots"]
assert s["enabled"] and len(b) == int(sys.argv[4]), s
assert b[0]["mode"] == "record" and b[0]["seconds"] == 2.5 and b[0]["used_bytes"] >= 8 * 300000, b[0]
for r in b[1:]:
    assert r["mode"] in ("replay+record", "plain"), r
    if r["mode"] == "replay+record":
        assert r["bytes_read"] >= 8 * 300000, r
        assert 0.0 <= r["hit_ratio"] <= 1.0, r
assert b[1]["mode"] == b[-1]["mode"] == "replay+record", b
# the replay had warmed what the "boot" read (the f* files, waited for): in
# the replayed boot's recording, the f* bytes it accessed were hits, not
# brought in for it.  (The session's hit ratio is the whole machine's: on a
# machine where other work reads files meanwhile, theirs count too.)
rec = json.load(open(sys.argv[2]))
acc = hit = 0
for f in rec["files"]:
    if not f["path"].startswith(sys.argv[3]):
        continue
    for r in f["ranges"]:
        if r["accessed"]:
            acc += r["length"]
            hit += 0 if r["filled"] else r["length"]
assert acc >= 8 * 300000 and hit >= 0.5 * acc, (acc, hit)
PYEOF
# stale: the next boot replays and records anew, and the plan is that boot's alone
"$READSET" boot stale --state "$S" --why "test upgrade" || fail "stale"
"$READSET" boot status --state "$S" | grep -q "stale (test upgrade)" || fail "status does not say stale"
boot 2.1
[ ! -e "$S/stale" ] || fail "the stale mark outlived the re-recording"
[ ! -e "$S/boot.1.readset" ] || fail "boots before the upgrade still make the plan"
# a damaged plan: recorded anew, the session does not fail
head -c 100 /dev/urandom >"$S/plan.readset"
boot 2.0
grep -q "unusable" "$TMP/session.err" || fail "a damaged plan was not said: $(cat "$TMP/session.err")"
# a state directory others can write is refused
chmod 777 "$S"
rc=0; "$READSET" boot status --state "$S" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "refusing" "$TMP/err" || fail "a world-writable state was used ($rc): $(cat "$TMP/err")"
chmod 755 "$S"
"$READSET" boot disable --state "$S" 2>"$TMP/err" || fail "disable: $(cat "$TMP/err")"
[ ! -e "$S" ] || fail "disable left: $(ls -la "$S")"
"$READSET" boot status --state "$S" | grep -q "disabled" || fail "status after disable"
echo "boot: ok"
