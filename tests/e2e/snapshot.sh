#!/bin/sh
# snapshot writes what the page cache holds of a tree as a read set, reading
# none of it; replay reads it back after the cache is gone; the next
# snapshot into the same file ranks the pages that stayed; symlinks, FIFOs
# and devices are counted, never opened; a file changed since is skipped by
# the replay; a nobody's snapshot of root's files is told nothing; what a
# replay of a snapshot reads back is marked used (the active list).
. "$(dirname "$0")/lib.sh"
need_root; need_loop; need_python

make_ext4 128 128
for i in 1 2 3 4; do head -c $((4 * 1024 * 1024)) /dev/urandom > "$MNT/t$i"; done
mkdir -p "$MNT/d/e"
head -c 1048576 /dev/urandom > "$MNT/d/e/deep"
head -c 1048576 /dev/urandom > "$MNT/never"
head -c $((48 * 1024 * 1024)) /dev/urandom > "$MNT/t5"
ln -s "$MNT/t1" "$MNT/link"
mkfifo "$MNT/fifo"
mknod "$MNT/null" c 1 3
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"

# The service's reads: scattered pieces of t1..t4 and the deep file.  As
# in replay.sh, DAMON may evict idle pages within seconds: the pieces are
# read again right before each snapshot.
touch_pieces() {
        for i in 1 2 3 4; do "$TESTPROG" read "$MNT/t$i" $((i * 262144)) 131072; done
        "$TESTPROG" read "$MNT/d/e/deep" 0 65536
}
touch_pieces
"$READSET" snapshot -j -o "$TMP/s.readset" "$MNT" > "$TMP/s.json" || fail "snapshot"
json_stats() { "$PY" -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)" || { cat "$1"; fail "$2"; }; }
json_stats "$TMP/s.json" "d['files'] == 7 and d['files_cached'] >= 5 and d['bytes_cached'] >= 5 * 131072"
json_stats "$TMP/s.json" "d['skipped']['symlink'] == 1 and d['skipped']['special'] == 2 and d['bytes_kept'] == 0"
json_check "$TMP/s.readset" "covered('$MNT/t2', 524288, 655360) and covered('$MNT/d/e/deep', 0, 65536)"
json_check "$TMP/s.readset" "'$MNT/never' not in files and total('$MNT/t1') < 4 * 1048576"
# nothing read: the file never read is still not cached at all
[ "$("$TESTPROG" resident "$MNT/never" 0 1048576)" = 0 ] || fail "snapshot read '$MNT/never'"
"$READSET" show "$TMP/s.readset" | grep -q "^snapshot:" || fail "show does not say it is a snapshot"

# Read back after the cache is gone, in one sweep: every range resident.
resident_now() {
        set -- $(resident_ranges "$TMP/s.readset" "$MNT")
        echo "  checked every range of the snapshot: $2 not resident"
        [ "$2" = 0 ]
}
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay -j "$TMP/s.readset" > "$TMP/r.json" || fail "replay of the snapshot"
json_stats "$TMP/r.json" "d['bytes_read'] > 0 and d['files_changed'] == 0"
# and each page back marked used twice (the pieces, at least)
json_stats "$TMP/r.json" "d['bytes_marked_used'] >= 5 * 131072"
resident_now || {
        echo "  again, from a cold start (DAMON, see replay.sh)"
        unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
        "$READSET" replay -q "$TMP/s.readset" || fail "replay"
        resident_now || fail "not resident after replay of the snapshot"
}

# The next snapshot into the same file ranks the pages found again.
touch_pieces
"$READSET" snapshot -j -o "$TMP/s.readset" "$MNT" > "$TMP/s2.json" || fail "second snapshot"
json_stats "$TMP/s2.json" "d['bytes_kept'] >= 5 * 131072"
"$READSET" show --json "$TMP/s.readset" > "$TMP/show2.json" || fail "show"
json_stats "$TMP/show2.json" "min(r['time_us'] for f in d['files'] for r in f['ranges']) == 14"

# A budget smaller than the snapshot keeps the best ranks: a page only the
# second snapshot saw (rank 15) is left for the last.
touch_pieces
"$TESTPROG" read "$MNT/t4" 3145728 131072
"$READSET" snapshot -q -o "$TMP/s.readset" "$MNT" || fail "third snapshot"
json_check "$TMP/s.readset" "covered('$MNT/t4', 3145728, 3276800)"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
# (the five pieces read twice are 640 KiB at least, their readahead aside)
"$READSET" replay -j --max-bytes 512K "$TMP/s.readset" > "$TMP/b.json" || fail "replay --max-bytes"
json_stats "$TMP/b.json" "d['bytes_read'] <= 512 * 1024"
[ "$("$TESTPROG" resident "$MNT/t4" 3145728 131072)" = 0 ] || fail "the newest page was read before older ones"

# A file changed since: skipped by the replay, counted.
echo changed >> "$MNT/t3"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
"$READSET" replay -j "$TMP/s.readset" > "$TMP/c.json" || fail "replay after a change"
json_stats "$TMP/c.json" "d['files_changed'] == 1"

# A path that is itself a FIFO: counted, not opened (an open would block).
timeout 20 "$READSET" snapshot -j -o "$TMP/f.readset" "$MNT/fifo" > "$TMP/f.json" || fail "snapshot of a FIFO"
json_stats "$TMP/f.json" "d['skipped']['special'] == 1 and d['files'] == 0"
# nothing there at all: an error, nothing written
if "$READSET" snapshot -q -o "$TMP/g.readset" "$MNT/no-such" 2>"$TMP/g.err"; then fail "snapshot of nothing"; fi
[ ! -e "$TMP/g.readset" ] || fail "a snapshot of nothing was written"
grep -q "no-such" "$TMP/g.err" || { cat "$TMP/g.err"; fail "the error does not name the path"; }

# --cgroup: the files a service's processes hold open, outside any PATH
# given: a process in a cgroup of its own holds t2 open, one piece of it cached
cg_top=/sys/fs/cgroup/memory
[ -d "$cg_top" ] || cg_top=/sys/fs/cgroup
CG=$cg_top/readset-e2e-snapshot.$$
mkdir "$CG" || fail "cannot make the cgroup $CG"
sleep 600 < "$MNT/t2" &
holder=$!
cleanup_cg() {
        kill "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true
        rmdir "$CG" 2>/dev/null || true
        cleanup
}
trap cleanup_cg EXIT
echo "$holder" > "$CG/cgroup.procs" || fail "cannot move $holder into $CG"
"$TESTPROG" read "$MNT/t2" 524288 131072
"$READSET" snapshot -j -o "$TMP/cg.readset" --cgroup "$CG" > "$TMP/cg.json" || fail "snapshot --cgroup"
json_check "$TMP/cg.readset" "covered('$MNT/t2', 524288, 655360) and '$MNT/t1' not in files"
kill "$holder"
wait "$holder" 2>/dev/null || true

# A restore run in a memory cgroup reads no more than the group has room
# for: 64 MiB cached, the group limited to 32 MiB
cat "$MNT"/t1 "$MNT"/t2 "$MNT"/t3 "$MNT"/t4 "$MNT"/t5 > /dev/null
"$READSET" snapshot -q -o "$TMP/big.readset" "$MNT" || fail "snapshot of 64 MiB"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
if [ -e "$CG/memory.limit_in_bytes" ]; then echo $((32 << 20)) > "$CG/memory.limit_in_bytes"
else echo $((32 << 20)) > "$CG/memory.max"; fi
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" replay -j "$3"' sh "$CG" "$READSET" "$TMP/big.readset" \
        > "$TMP/cgr.json" || fail "replay in the cgroup"
json_stats "$TMP/cgr.json" "d['bytes_read'] >= (4 << 20) and d['bytes_read'] <= (32 << 20)"
# what was read back is on the group's active list, as a service's hot
# pages are, not on the inactive list that reclaim takes first
# (with the multi-generational LRU there is no active list to look at)
json_stats "$TMP/cgr.json" "d['bytes_marked_used'] >= d['bytes_read'] // 2"
if grep -qs '^0x0*[1-9a-f]' /sys/kernel/mm/lru_gen/enabled; then
        echo "  the multi-generational LRU is on: the active list not checked"
else
        active=$(awk '$1 == "active_file" { print $2; exit }' "$CG/memory.stat")
        json_stats "$TMP/cgr.json" "$active >= d['bytes_marked_used'] // 2"
fi
rmdir "$CG" || fail "cannot remove $CG"

# root without CAP_FOWNER (a unit's narrower set) is not told either of a
# file it does not own: counted, not taken for "all cached"
chown 65534 "$MNT/t3"
"$TESTPROG" read "$MNT/t3" 0 65536
setpriv --bounding-set=-fowner -- "$READSET" snapshot -j -o "$TMP/nf.readset" "$MNT/t3" > "$TMP/nf.json" ||
        fail "snapshot without CAP_FOWNER"
json_stats "$TMP/nf.json" "d['skipped']['untold'] == 1 and d['files_cached'] == 0"
chown 0 "$MNT/t3"

# nobody is not told what is cached of root's files (mincore would say all)
touch_pieces
user_readset --version >/dev/null || fail "readset as $(user_name)"
mkdir -p "$TMP/u" && chown 65534:65534 "$TMP/u"
chmod 755 "$MNT"
user_readset snapshot -j -o "$TMP/u/u.readset" "$MNT/t1" > "$TMP/u.out" 2>&1 || { cat "$TMP/u.out"; fail "nobody's snapshot"; }
grep -q '"untold": 1' "$TMP/u.out" || { cat "$TMP/u.out"; fail "nobody was told what is cached of root's file"; }
echo "snapshot: ok"
