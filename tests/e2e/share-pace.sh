#!/bin/sh
# Paced lookups on a share (replay/pace.c), on the emulated SMB client:
# run follows the command's own lookups through BPF, reaches the end of the
# sequence and warms again what expired while the command slept; without
# root it goes by the recorded timeline; replay --pace follows a program
# started beside it; the pacer learns that the client keeps failed lookups
# (SMB) or keeps none (strict: then it leaves them to the start and warms
# their directory); a
# program a wrapper started before the follower was in is followed too.  What is
# asserted is what the pacer says it did, never how long anything took: the
# command's sleep (3 s) only has to outlast the client's 1 s lifetime, and
# the 2 ms round trip is 40 times a cache hit.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_python
need_share

mkdir -p "$TMP/src/first" "$TMP/src/second"
for i in $(seq 1 24); do echo "$i" >"$TMP/src/first/f$i"; echo "$i" >"$TMP/src/second/g$i"; done
chmod -R a+rX "$TMP/src"
mkdir -p "$TMP/bin" && cp "$TESTPROG" "$TMP/bin/rs-testprog" && chmod 755 "$TMP" "$TMP/bin" "$TMP/bin/rs-testprog"
"$SLOWDEV" up share "$m" --source "$TMP/src" --rtt 2 --client smb 2>/dev/null || fail "up share"
first=$(for i in $(seq 1 24); do printf '%s ' "$m/first/f$i" "$m/first/nope$i"; done)
second=$(for i in $(seq 1 24); do printf '%s ' "$m/second/g$i" "$m/second/nope$i"; done)
cat >"$TMP/start.sh" <<EOF
#!/bin/sh
"$TMP/bin/rs-testprog" stat $first
sleep 3
"$TMP/bin/rs-testprog" stat $second
EOF
chmod 755 "$TMP/start.sh"
sync; echo 3 >/proc/sys/vm/drop_caches
# run --stats --json $TMP/$1.readset from a cold cache: its summary in
# $TMP/$2.json, its stderr in $TMP/$2.err
paced_run() {
        sync; echo 3 >/proc/sys/vm/drop_caches
        "$READSET" run --stats --json "$TMP/$1.readset" -- "$TMP/start.sh" >/dev/null 2>"$TMP/$2.err" ||
                fail "run ($2): $(cat "$TMP/$2.err")"
        tail -n 1 "$TMP/$2.err" >"$TMP/$2.json"
}
"$READSET" record -q -o "$TMP/p.readset" -- "$TMP/start.sh" >/dev/null || fail "record"
json_check "$TMP/p.readset" \
        "sum(1 for l in d['lookups'] if l['path'].startswith('$m/')) >= 96"

# run, following the command: the whole sequence, and the second half
# warmed again after it expired during the sleep
paced_run p run
"$PY" - "$TMP/run.json" <<'PYEOF' || fail "run's pacing: $(cat "$TMP/run.err")"
import json, sys
p = json.load(open(sys.argv[1]))["paced"]
print("run:", p)
assert p["followed"], "not followed through BPF"
assert p["sequence"] >= 96, "a sequence of %d" % p["sequence"]
assert p["reached"] == p["sequence"], "the start was not followed to the end"
assert p["observed"] >= 96, "its lookups were not seen"
assert p["rewarmed"] >= 1, "nothing warmed again after the sleep"
assert p.get("client_keeps_failed_lookups") is True, "SMB's negative entries not seen kept"
PYEOF

# a wrapper whose program the command forked before run's follower was in
# (no --stats: nothing holds the command): the tree is followed from /proc
# (its subshell, forked at once), the program, forked once the follower is
# surely in, through BPF
cat >"$TMP/wrap.sh" <<EOF
#!/bin/sh
( sleep 2; "$TMP/bin/rs-testprog" stat $first $second )
EOF
chmod 755 "$TMP/wrap.sh"
sync; echo 3 >/proc/sys/vm/drop_caches
"$READSET" run -v "$TMP/p.readset" -- "$TMP/wrap.sh" >/dev/null 2>"$TMP/wrap.err" || fail "run (wrapper): $(cat "$TMP/wrap.err")"
grep -q "the start reached 96 of them (9[6-9] of its lookups seen)" "$TMP/wrap.err" ||
        fail "the wrapper's program was not followed: $(cat "$TMP/wrap.err")"

# without root: by the recorded timeline (the command's start)
chmod 644 "$TMP/p.readset"
sync; echo 3 >/proc/sys/vm/drop_caches
user_readset run -v "$TMP/p.readset" -- "$TMP/start.sh" >/dev/null 2>"$TMP/user.err" ||
        fail "run as $(user_name): $(cat "$TMP/user.err")"
grep -q "paced .* lookups on a share by the recorded timeline" "$TMP/user.err" ||
        fail "run as $(user_name) did not pace by the timeline: $(cat "$TMP/user.err")"

# replay --pace, then the program beside it (the second after replay began:
# replay follows every process once its BPF program is in, a few ms)
sync; echo 3 >/proc/sys/vm/drop_caches
"$READSET" replay --pace -j "$TMP/p.readset" >"$TMP/replay.json" 2>"$TMP/replay.err" &
rpid=$!
sleep 1
"$TMP/start.sh" >/dev/null
wait $rpid || fail "replay --pace: $(cat "$TMP/replay.err")"
"$PY" - "$TMP/replay.json" <<'PYEOF' || fail "replay's pacing: $(cat "$TMP/replay.json" "$TMP/replay.err")"
import json, sys
p = json.load(open(sys.argv[1]))["paced"]
print("replay:", p)
assert p["followed"], "not followed through BPF"
assert p["reached"] == p["sequence"], "the program was not followed to the end"
PYEOF

# --no-pace: warmed at once, no pacer
sync; echo 3 >/proc/sys/vm/drop_caches
"$READSET" run --no-pace --stats --json "$TMP/p.readset" -- "$TMP/start.sh" >/dev/null 2>"$TMP/np.err" ||
        fail "run --no-pace"
tail -n 1 "$TMP/np.err" | grep -q '"paced"' && fail "run --no-pace paced"
"$SLOWDEV" down "$m" || fail "down"

# a client that keeps no failed lookup: they are left to the start, and
# their directory is warmed for them instead
"$SLOWDEV" up share "$m" --source "$TMP/src" --rtt 2 --client strict 2>/dev/null || fail "up share strict"
sync; echo 3 >/proc/sys/vm/drop_caches
"$READSET" record -q -o "$TMP/s.readset" -- "$TMP/start.sh" >/dev/null || fail "record (strict)"
paced_run s strict
"$PY" - "$TMP/strict.json" <<'PYEOF' || fail "strict pacing: $(cat "$TMP/strict.err")"
import json, sys
p = json.load(open(sys.argv[1]))["paced"]
print("strict:", p)
assert p.get("client_keeps_failed_lookups") is False, "strict's lost negative entries not seen"
assert p["left_to_the_start"] >= 24, "the failed lookups were warmed"
assert p["directories_warmed"] >= 1, "no directory of the failed lookups warmed"
PYEOF
"$SLOWDEV" down "$m" || fail "down"
echo "share-pace: ok"
