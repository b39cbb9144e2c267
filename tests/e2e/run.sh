#!/bin/sh
# run: the command starts at once and gets its exit status back; --auto
# records on first use, replays after, and records anew when the read set
# went stale; --stats says what the replay covered.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop

make_ext4 64 128
for i in 1 2 3; do head -c 2000000 /dev/urandom > "$MNT/d$i"; done
PROG="$TESTPROG read $MNT/d1 0 2000000"
AUTO=$TMP/auto

# Exit status and output pass through.
"$READSET" record -q -o "$TMP/x.readset" -- $PROG || fail "record"
rc=0; "$READSET" run "$TMP/x.readset" -- sh -c 'echo out; exit 7' > "$TMP/out" || rc=$?
[ "$rc" = 7 ] && [ "$(cat "$TMP/out")" = out ] || fail "run: exit $rc, output '$(cat "$TMP/out")'"
# A launcher always launches: a read set missing, damaged or truncated is
# said once (a warning), and the command runs without a replay, its exit
# status run's.
runs_plain() {   # read-set what grep-pattern
        rm -f "$TMP/ran"
        rc=0; "$READSET" run "$1" -- sh -c "touch '$TMP/ran'; exit 9" 2>"$TMP/err" || rc=$?
        [ "$rc" = 9 ] && [ -e "$TMP/ran" ] || { cat "$TMP/err"; fail "run with $2: exit $rc, ran: $(ls "$TMP/ran" 2>&1)"; }
        grep -q "warning: .*$3.*the command runs without a replay" "$TMP/err" &&
                [ "$(grep -c . "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "run with $2: not said once"; }
}
runs_plain "$TMP/missing.readset" "a missing read set" "cannot read"
cp "$TMP/x.readset" "$TMP/bad.readset"
sz=$(stat -c %s "$TMP/bad.readset")
printf '\377' | dd of="$TMP/bad.readset" bs=1 seek=$((sz - 1)) conv=notrunc 2>/dev/null
runs_plain "$TMP/bad.readset" "a damaged read set" "cannot read"
head -c $((sz / 2)) "$TMP/x.readset" > "$TMP/short.readset"
runs_plain "$TMP/short.readset" "a truncated read set" "truncated"
# refused by the trust policy (as root: one others can write)
cp "$TMP/x.readset" "$TMP/open.readset"; chmod 666 "$TMP/open.readset"
runs_plain "$TMP/open.readset" "a read set others can write" "refusing"
rc=0; "$READSET" run "$TMP/x.readset" -- no-such-command-xyz 2>"$TMP/err" || rc=$?
[ "$rc" = 127 ] || fail "run of a missing command: exit $rc"
grep -q "cannot run 'no-such-command-xyz'" "$TMP/err" || { cat "$TMP/err"; fail "run of a missing command: no word of it"; }

# --auto, first run: records.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" run --auto "$AUTO" -- $PROG 2>"$TMP/err1" || fail "auto 1"
grep -q "recorded" "$TMP/err1" || { cat "$TMP/err1"; fail "auto 1 did not record"; }
n=$(ls "$AUTO"/*.readset | wc -l)
[ "$n" = 1 ] || fail "auto: $n read sets"
RS=$(ls "$AUTO"/*.readset)
"$READSET" show "$RS" | grep -q "$MNT/d1" || fail "auto read set lacks d1"

# Second run, cold: replays; the command fetches (almost) nothing itself.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" run --auto "$AUTO" --stats -- $PROG 2>"$TMP/err2" || fail "auto 2"
cat "$TMP/err2"
grep -q "replayed" "$TMP/err2" || fail "auto 2: no replay statistics"
grep -q "hit ratio" "$TMP/err2" || fail "auto 2: no hit ratio"
! grep -q "stale" "$TMP/err2" || fail "auto 2 thought the read set stale"
cmp -s "$RS" "$(ls "$AUTO"/*.readset)" || fail "auto 2 replaced a good read set"

# A program that cannot be run for a while (moved away, say) leaves the
# read set --auto learned for it alone: there is no start to learn from.
cp "$TESTPROG" "$TMP/tp"
"$READSET" run --auto "$TMP/auto-tp" -- "$TMP/tp" read "$MNT/d2" 0 2000000 2>/dev/null || fail "auto-tp"
TP_RS=$(ls "$TMP"/auto-tp/*.readset)
cp "$TP_RS" "$TMP/tp-kept.readset"
mv "$TMP/tp" "$TMP/tp.away"
rc=0; "$READSET" run --auto "$TMP/auto-tp" --stats -- "$TMP/tp" read "$MNT/d2" 0 2000000 2>"$TMP/err" || rc=$?
[ "$rc" = 127 ] && grep -q "cannot run" "$TMP/err" || { cat "$TMP/err"; fail "auto-tp, moved away: exit $rc"; }
cmp -s "$TP_RS" "$TMP/tp-kept.readset" || fail "auto: a command that could not run replaced its read set"
mv "$TMP/tp.away" "$TMP/tp"

# --stats --json: one JSON object, the last line of stderr; the command's
# own output untouched on stdout.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" run --stats --json "$RS" -- sh -c "$PROG; echo out; echo err >&2" > "$TMP/out" 2>"$TMP/err" || fail "run --stats --json"
[ "$(cat "$TMP/out")" = out ] || fail "run --stats --json: stdout '$(cat "$TMP/out")'"
tail -n 1 "$TMP/err" | "$PY" -c "
import json, sys
d = json.loads(sys.stdin.read())
assert d['replayed'] and d['bytes_read'] > 0, d
assert 0 <= d['hit_ratio'] <= 1 and 0 <= d['read_set_used'] <= 1, d
assert d['bytes_accessed_by_command'] > 0, d
print('  run --stats --json:', d)
" || { cat "$TMP/err"; fail "run --stats --json: the last line of stderr"; }
grep -q "^err$" "$TMP/err" || fail "run --stats --json: the command's stderr"
# ... also with --auto, whose own words about the read set come before it
"$READSET" run --auto "$TMP/auto-json" --stats --json -- $PROG 2>"$TMP/err" || fail "run --auto --stats --json"
grep -q "recorded '" "$TMP/err" || { cat "$TMP/err"; fail "run --auto --stats --json: no word of the recording"; }
tail -n 1 "$TMP/err" | "$PY" -c "import json, sys; d = json.loads(sys.stdin.read()); assert not d['replayed'], d" ||
        { cat "$TMP/err"; fail "run --auto --stats --json: not the last line"; }

# The program changes what it reads: the read set is stale, recorded anew.
cp "$RS" "$TMP/old.readset"
"$READSET" run --auto "$AUTO" -- $PROG >/dev/null 2>&1 || true   # same args, same name...
PROG2="$PROG"
echo x >> "$MNT/d1"                                          # ...but d1 changed
"$READSET" run --auto "$AUTO" --stats --stale-below 80 -- $PROG2 2>"$TMP/err3" || fail "auto 3"
cat "$TMP/err3"
grep -q "stale" "$TMP/err3" || fail "auto 3: stale read set not noticed"
! cmp -s "$TMP/old.readset" "$RS" || fail "auto 3: read set not replaced"
# --auto with a command that is over at once: the read set is still
# compared, and kept.
AUTO2=$TMP/auto2
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" run --auto "$AUTO2" -- cat "$MNT/d3" >/dev/null 2>"$TMP/err5" || fail "auto 5"
RS2=$(ls "$AUTO2"/*.readset)
cp "$RS2" "$TMP/kept.readset"
for i in 1 2 3; do
        unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
        "$READSET" run --auto "$AUTO2" -- cat "$MNT/d3" >/dev/null 2>"$TMP/err6" || fail "auto 6"
        ! grep -q "recorded" "$TMP/err6" || { cat "$TMP/err6"; fail "auto 6: a good read set recorded anew"; }
done
cmp -s "$RS2" "$TMP/kept.readset" || fail "auto 6: the read set changed"

# --auto with a damaged read set: the command runs, and the first run that
# would replay it (a plain one reads nothing of readset's) says so and
# records it anew.  Its history is dropped first: after the runs above the
# loop may have turned replay off (it did not help on this loop device, by
# how long they took), and then no run reads the read set at all; with no
# history, the first run records, reading the old read set to judge it.
rm -f "$RS.history"
sz=$(stat -c %s "$RS")
printf '\377' | dd of="$RS" bs=1 seek=$((sz - 1)) conv=notrunc 2>/dev/null
: >"$TMP/err4"
for i in 1 2; do
        "$READSET" run --auto "$AUTO" -- $PROG2 2>>"$TMP/err4" || fail "auto 4"
done
grep -q "unusable" "$TMP/err4" || { cat "$TMP/err4"; fail "auto 4: damage not reported"; }
"$READSET" show "$RS" >/dev/null || fail "auto 4: the read set was not recorded anew"
# --auto's closed loop: the first run records, then runs replay without
# recording, one runs plain to be measured against, and every run has its
# line in NAME.readset.history; where the replays were no faster than the
# plain runs, the next run is plain ("off") and says so once.
AUTO3=$TMP/auto3
for i in 1 2 3 4 5 6 7; do
        sync; echo 3 >/proc/sys/vm/drop_caches
        "$READSET" run --auto "$AUTO3" -- $PROG 2>"$TMP/loop$i" || fail "auto loop $i: $(cat "$TMP/loop$i")"
done
H=$(ls "$AUTO3"/*.readset.history)
[ "$(awk '{print $3}' "$H" | tr '\n' ' ')" = "record replay plain replay plain replay plain " ] ||
        fail "auto loop: modes $(awk '{print $3}' "$H" | tr '\n' ' ')"
for i in 2 3 4 5 6 7; do
        ! grep -q "recorded" "$TMP/loop$i" || fail "auto loop: a good read set recorded again"
done
awk '$4 <= 0 { exit 1 }' "$H" || fail "auto loop: a run without its time: $(cat "$H")"
# replays measured slower than the plain run: off
awk '$3 == "replay" { $4 = 900000 } $3 == "plain" { $4 = 500000 } { print }' "$H" >"$H.x" && mv "$H.x" "$H"
"$READSET" run --auto "$AUTO3" -- $PROG 2>"$TMP/loop8" || fail "auto loop 8"
grep -q "turned off: replay did not help" "$TMP/loop8" || fail "auto loop 8 did not turn off: $(cat "$TMP/loop8")"
[ "$(tail -n 1 "$H" | awk '{print $3}')" = off ] || fail "auto loop 8 was not plain: $(tail -n 1 "$H")"

# A signal sent to readset run (a supervisor stopping it) reaches the
# command; readset waits for it and exits with its status, leaving nothing
# behind, also while recording (--auto), where the recording of a start cut
# short is not kept.
for mode in plain auto; do
        rm -f "$TMP/sig" "$TMP/ready"
        if [ $mode = plain ]; then set -- "$TMP/x.readset"; else set -- --auto "$TMP/auto-sig"; fi
        "$READSET" run "$@" -- sh -c "trap 'echo TERM > $TMP/sig; kill \$!; exit 9' TERM; touch $TMP/ready; sleep 30 & wait" \
                2>"$TMP/err" &
        pid=$!
        for i in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.1; done   # the trap is set
        kill -TERM $pid
        rc=0; wait $pid || rc=$?
        [ "$rc" = 9 ] && [ "$(cat "$TMP/sig" 2>/dev/null)" = TERM ] || fail "$mode: TERM not passed on (exit $rc)"
done
grep -q "interrupted: its recording is not kept" "$TMP/err" || { cat "$TMP/err"; fail "auto: no word of the recording dropped"; }
[ -z "$(ls "$TMP/auto-sig")" ] || fail "auto: left after TERM: $(ls "$TMP/auto-sig")"

# A terminal's ^C reaches the command from the terminal, once: readset does
# not send it again.  With --auto, the recording of a start ^C cut short is
# not kept.
"$PY" - "$READSET" "$TESTPROG" "$TMP" <<'PYEOF' || fail "terminal ^C"
import os, pty, re, sys, time
readset, prog, tmp = sys.argv[1:]
if not os.path.exists("/dev/ptmx"):
    print("terminal ^C: not checked, no pseudo-terminals here (/dev/ptmx)")
    sys.exit(0)

def under_terminal(args, ready):
    """run args on a new terminal, type ^C once ready exists; (exit code, output)"""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(readset, [readset] + args)
    for _ in range(100):
        if os.path.exists(ready):
            break
        time.sleep(0.1)
    os.write(fd, b"\x03")
    out = b""
    try:
        while True:
            chunk = os.read(fd, 1024)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")

rc, out = under_terminal(["run", f"{tmp}/x.readset", "--", prog, "countint", f"{tmp}/tty-ready"], f"{tmp}/tty-ready")
counts = re.findall(r"(\d+) (\d+)", out)   # (the terminal echoes "^C")
print(f"terminal ^C: the command counted {counts} (INTs, INTs from readset), readset exited {rc}")
ok = counts == [("1", "0")] and rc == 0
rc, out = under_terminal(["run", "--auto", f"{tmp}/auto-tty", "--", "sh", "-c", f"touch {tmp}/tty-ready2; exec sleep 20"],
                         f"{tmp}/tty-ready2")
left = os.listdir(f"{tmp}/auto-tty")
print(f"terminal ^C under --auto: readset exited {rc}, left {left}")
sys.exit(0 if ok and rc == 130 and left == [] else 1)
PYEOF

# What a run killed outright left behind (its PID gone) is removed by the
# next run that records; a running one's, and anything else, is not.  A run
# that only replays does not list the directory before the command.
"$READSET" run --auto "$TMP/auto-st" -- true 2>/dev/null || fail "auto-st"
base=$(basename "$(ls "$TMP"/auto-st/*.readset)")
sh -c 'exit 0' & dead=$!; wait $dead
for f in "$base.new.$dead" "$base.new.$dead.tmp.Ab12Cd" "$base.new.$$" "$base.new.x$dead" "other.new.$dead"; do
        echo junk > "$TMP/auto-st/$f"
done
"$READSET" run --auto "$TMP/auto-st" -- true 2>"$TMP/err" || fail "auto-st 2"
! grep -q "left by a run that was killed" "$TMP/err" || fail "a run that did not record listed the store: $(cat "$TMP/err")"
[ -e "$TMP/auto-st/$base.new.$dead" ] || fail "a run that did not record removed what a killed one left"
rm "$TMP/auto-st/$base"         # (no read set: the next run records one)
"$READSET" run --auto "$TMP/auto-st" -- true 2>"$TMP/err" || fail "auto-st 3"
grep -q "left by a run that was killed" "$TMP/err" || { cat "$TMP/err"; fail "stale recordings not reported"; }
[ "$(cd "$TMP/auto-st" && ls | grep -v -e '\.readset$' -e '\.readset\.history$' | sort | tr '\n' ' ')" = "$(printf '%s\n' "$base.new.$$" "$base.new.x$dead" "other.new.$dead" | sort | tr '\n' ' ')" ] ||
        fail "stale recordings: $(ls "$TMP/auto-st")"
echo "run: ok"
