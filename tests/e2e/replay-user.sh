#!/bin/sh
# An unprivileged replay warms the page cache as root's does: of the data
# files it may read, the same bytes are resident after nobody's replay as
# after root's (the block device's metadata, which only root may open,
# aside).  cachestat refuses such a user and mincore tells it "all cached";
# before, such a replay read nothing and said it was all there.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop; need_python

make_ext4 64 128
chmod 755 "$TMP" "$MNT"
mkdir "$MNT/data"
for i in 1 2 3 4; do head -c $((2 * 1024 * 1024)) /dev/urandom > "$MNT/data/f$i"; done
chmod 755 "$MNT/data"; chmod 644 "$MNT"/data/f*
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" record -q -o "$TMP/u.readset" -- sh -c "
        for i in 1 2 3 4; do '$TESTPROG' read '$MNT/data/f'\$i \$((i * 131072)) 300000; done" || fail "record"
chmod 644 "$TMP/u.readset"

# Bytes of the recorded data files resident now, as root sees them.
resident() { resident_ranges "$TMP/u.readset" "$MNT" 2>/dev/null | cut -d' ' -f1; }
cold() { unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"; }

# (DAMON on these VMs evicts idle page cache, also pages just read, root's
# as much as nobody's: a shortfall on either side is measured again, both
# from a cold start, see e2e-replay)
for try in 1 2 3; do
        cold
        [ "$(resident)" = 0 ] || fail "not cold after a remount: $(resident) bytes resident"
        "$READSET" replay -q "$TMP/u.readset" || fail "root's replay"
        as_root=$(resident)
        [ "$as_root" -gt 0 ] || fail "root's replay warmed nothing"
        cold
        user_readset replay -j "$TMP/u.readset" > "$TMP/u.json" 2>"$TMP/err" || { cat "$TMP/err"; fail "nobody's replay"; }
        as_user=$(resident)
        echo "  try $try: resident after root's replay $as_root bytes, after $(user_name)'s $as_user"
        [ "$as_user" = "$as_root" ] && break
done
[ "$as_user" = "$as_root" ] || fail "$(user_name)'s replay left $as_user bytes resident, root's $as_root"
"$PY" -c "
import json, sys
d = json.load(open('$TMP/u.json'))
# it read them itself, and did not take them for cached
assert d['bytes_read'] >= $as_root and d['bytes_not_resident'] == 0, d
" || { cat "$TMP/u.json"; fail "nobody's replay statistics"; }
# and once warm, it reads nothing again
user_readset replay -j "$TMP/u.readset" > "$TMP/w.json" || fail "nobody's warm replay"
"$PY" -c "
import json
d = json.load(open('$TMP/w.json'))
assert d['bytes_already_cached'] >= $as_root, d
" || { cat "$TMP/w.json"; fail "nobody's warm replay found the data not cached"; }
echo "replay-user: ok"
