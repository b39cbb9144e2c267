#!/bin/sh
# The requests a network client sends during a start (record keeps its
# counters from before and after; report --json "client_requests"): on the
# share emulator, the read set's requests_sent against the emulator's own
# round trips over a cold plain run of the same command (within 5%), and
# the amplification, sent / lookups made below the mount, as the text and
# the JSON print it.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_python
need_share
need_bpf

mkdir -p "$TMP/src/d1/d2" "$TMP/src/d3"
for i in 1 2 3 4 5 6 7 8; do echo "file $i" >"$TMP/src/d1/d2/f$i"; done
for i in 1 2 3 4; do head -c 20000 /dev/urandom >"$TMP/src/d3/g$i"; done
# stats of every file found, then the data of some, a missing name too
CMD="find '$m' -name 'f*' -exec stat -c %s {} + >/dev/null; cat '$m'/d3/g* '$m'/d1/d2/f1 >/dev/null;
     stat '$m/d1/nope' 2>/dev/null; true"
trips() { awk '$1 == "round_trips" { print $2 }' "$m/.slowdev-stats"; }
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }

for client in strict smb nfs; do
        neg=60; [ $client = strict ] && neg=0
        # names and attributes (and failed lookups, where the model keeps
        # them) kept for the whole test, so that how long a run takes
        # (recorded, or not) cannot change what it asks
        "$SLOWDEV" up share "$m" --source "$TMP/src" --rtt 0.2 --client "$client" --lifetimes 60:60:$neg 2>/dev/null ||
                fail "up share --client $client"
        "$SLOWDEV" stats "$m" | grep -q '^round_trips ' || fail "the emulator has no round_trips counter"
        grep -q " $m .* - fuse.slowdev-share slowdev-share .*user_id=0" /proc/self/mountinfo ||
                fail "the emulator's mount is not named fuse.slowdev-share: $(grep " $m " /proc/self/mountinfo)"

        # Each measured cold.  Another process may drop the caches meanwhile
        # (other tests do: a run then asks more) or hold some of the mount's
        # names (a system-wide recording's: fewer): a pair that differs is
        # measured again, twice at most, and the last must hold.
        for try in 1 2 3; do
                cold; t0=$(trips)
                sh -c "$CMD"
                plain=$(( $(trips) - t0 ))
                cold; t1=$(trips)
                "$READSET" record -q -o "$TMP/s.readset" -- sh -c "$CMD" 2>"$TMP/rec.err" ||
                        fail "record: $(cat "$TMP/rec.err")"
                recorded=$(( $(trips) - t1 ))
                echo "$client: emulator: $plain round trips plain, $recorded while recorded" \
                     "(readset's own opens there included)"
                [ "$plain" -gt 10 ] || fail "the command made only $plain round trips"
                "$READSET" report --json --no-probe "$TMP/s.readset" >"$TMP/r.json" 2>"$TMP/err" ||
                        fail "report: $(cat "$TMP/err")"
                "$READSET" report --no-probe "$TMP/s.readset" >"$TMP/r.txt" 2>"$TMP/err" ||
                        fail "report: $(cat "$TMP/err")"
                "$PY" - "$TMP/r.json" "$TMP/r.txt" "$m" "$plain" "$client" <<'EOF' && break
import json, sys
doc, text, mnt, plain = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[4])
client = sys.argv[5]
rows = [c for c in doc["client_requests"] if c["mount"] == mnt]
assert len(rows) == 1, f"no one entry for {mnt}: {doc['client_requests']}"
c = rows[0]
sent, made = c["requests_sent"], c["lookups_made"]
print(f"{client}: report: {sent} requests sent for {made} lookups, amplification {c.get('amplification')}")
assert c["client"] == "slowdev", c
assert abs(sent - plain) <= 0.05 * plain, f"requests_sent {sent}, the emulator counted {plain} plain"
assert made > 0, c
assert abs(c["amplification"] - sent / made) <= 1e-5 * sent / made, c
line = f"{mnt} (slowdev): {sent} for {made} lookup{'s' if made != 1 else ''}, {sent / made:.1f}x"
assert line in text, f"no line '{line}' in:\n{text}"
EOF
                [ "$try" != 3 ] || fail "$client: client_requests"
                echo "$client: measured again"
        done
        "$SLOWDEV" down "$m" || fail "down share"
done
mountpoint -q "$m" && fail "still mounted"
echo "share-requests: ok"
