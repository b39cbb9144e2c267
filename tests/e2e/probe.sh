#!/bin/sh
# probe measures a block device and a directory (through an unnamed scratch
# file that leaves nothing behind), in bounded time, and says what it found.
. "$(dirname "$0")/lib.sh"
need_root; need_loop; need_python

truncate -s 256M "$TMP/dev.img"
LOOPDEV=$(losetup --find --show --direct-io=on "$TMP/dev.img")
dd if=/dev/zero of="$LOOPDEV" bs=1M count=256 oflag=direct status=none

t0=$(date +%s%N)
"$READSET" probe --quick --json -o "$TMP/p.json" --save "$LOOPDEV" > "$TMP/stdout.json" || fail "probe of $LOOPDEV"
t1=$(date +%s%N)
[ $(( (t1 - t0) / 1000000 )) -lt 6000 ] || fail "probe --quick took $(( (t1 - t0) / 1000000 )) ms"
cmp -s "$TMP/p.json" "$TMP/stdout.json" || fail "-o and --json differ"
# --save: where replay, run and report look, under the device's numbers
saved="$READSET_CACHE_DIR/probe-$(lsblk -dno MAJ:MIN "$LOOPDEV" | tr -d ' ').json"
cmp -s "$TMP/p.json" "$saved" || fail "--save did not write $saved"
[ "$(ls "$READSET_CACHE_DIR")" = "$(basename "$saved")" ] || fail "--save left other files: $(ls "$READSET_CACHE_DIR")"
"$PY" - "$TMP/p.json" <<'PYEOF' || fail "implausible probe results"
import json, sys
p = json.load(open(sys.argv[1]))
print(json.dumps(p))
assert p["probed"] == "block device" and p["region_bytes"] == 256 << 20
assert 1 <= p["latency_qd1_us"] <= 100000, "latency"
assert p["latency_qd1_p99_us"] >= p["latency_qd1_us"]
q = p["random_4k_iops"]
assert all(q[k] > 0 for k in ("qd1", "qd4", "qd16", "qd64"))
# one request at a time cannot beat 1 / latency by much
assert q["qd1"] <= 1.5e6 / p["latency_qd1_us"], "qd1 rate vs latency"
assert p["sequential_mbps"] > 1
assert len(p["seek_cost"]) == 4 and all(s["latency_us"] > 0 for s in p["seek_cost"])
assert p["rotational"] in (True, False)
PYEOF

# A directory: a scratch file, gone afterwards.
mkdir "$TMP/dir"
"$READSET" probe --quick --size 32M "$TMP/dir" > "$TMP/out" || fail "probe of a directory"
grep -q "^per request:" "$TMP/out" && grep -q "^random 4 KiB:" "$TMP/out" || { cat "$TMP/out"; fail "output"; }
[ -z "$(ls -A "$TMP/dir")" ] || fail "probe left files behind: $(ls -A "$TMP/dir")"

# On a terminal, how far it is: a line redrawn in place (\r), no wider than
# the terminal, cleared at the end; with standard error a file, nothing.
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty" "$READSET" probe --quick --size 32M "$TMP/dir" > "$TMP/out" ||
        fail "probe on a terminal"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" --check "$TMP/tty" probe || fail "no progress line on a terminal"
grep -q "^per request:" "$TMP/out" || fail "output with standard error a terminal"
"$READSET" probe --quick --size 32M "$TMP/dir" > "$TMP/out" 2> "$TMP/err" || fail "probe of a directory"
[ ! -s "$TMP/err" ] || fail "probe wrote to standard error, a file: $(cat -v "$TMP/err")"

# Clear refusals.
rc=0; READSET_CACHE_DIR=/proc/none "$READSET" probe --quick --size 32M --save "$TMP/dir" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "cannot save the profile" "$TMP/err" || fail "--save where it cannot be written: exit $rc"
rc=0; "$READSET" probe "$TMP/missing" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "cannot probe" "$TMP/err" || fail "missing path: exit $rc"
mkfifo "$TMP/fifo"
rc=0; timeout 10 "$READSET" probe "$TMP/fifo" 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not a directory nor a block device" "$TMP/err" || fail "FIFO: exit $rc"
rc=0; "$READSET" probe --seconds 99 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "bad --seconds: exit $rc"
echo "probe: ok"
