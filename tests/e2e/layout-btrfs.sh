#!/bin/sh
# readset layout --compress on a real btrfs image: files written interleaved
# and scattered, read in an order of their own (one a running program, one
# a reflinked copy, one nodatacow, one open for writing) and recorded; a dry
# run changes nothing; layout rewrites the others compressed, one after the
# other in that order (FIEMAP: encoded extents, each following the one
# before), every file's content unchanged (read cold) and btrfs check
# clean, the running program still running; the copy keeps sharing; a run
# killed midway and one whose read-back is taken as differing keep every
# file's content; on ext4 --compress is refused.
. "$(dirname "$0")/lib.sh"
need_layout
command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null || skip "needs btrfs-progs"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || true
grep -qw btrfs /proc/filesystems || skip "the kernel has no btrfs"

truncate -s 400M "$TMP/fs.img"
btrfs_progs mkfs.btrfs -q -f "$TMP/fs.img" > /dev/null 2>"$TMP/mkfs.err" || fail "mkfs.btrfs: $(cat "$TMP/mkfs.err")"
LOOPDEV=$(losetup --find --show "$TMP/fs.img")
MNT=$TMP/mnt
mkdir -p "$MNT"
mount -t btrfs "$LOOPDEV" "$MNT" || fail "mount btrfs"
$CHECK scatter "$MNT/tree" 24 2 --text
cp /bin/sleep "$MNT/tree/prog"
cp --reflink=always "$MNT/tree/d0/s0/f000" "$MNT/tree/shared"
: > "$MNT/tree/nocow" && chattr +C "$MNT/tree/nocow" && head -c 300000 /usr/bin/ls > "$MNT/tree/nocow" ||
        skip "chattr +C is not possible here"
sync
"$MNT/tree/prog" 300 &
PROG_PID=$!
HOLDER_PID=
trap 'kill $PROG_PID $HOLDER_PID 2>/dev/null || true; cleanup' EXIT
find "$MNT/tree" -type f -name 'f*' | sort | "$PY" -c 'import random, sys; l = sys.stdin.read().split(); random.Random(7).shuffle(l); print("\n".join(l))' > "$TMP/files"
{ echo "$MNT/tree/prog"; cat "$TMP/files"; echo "$MNT/tree/shared"; echo "$MNT/tree/nocow"; } > "$TMP/order"
record_reading "$TMP/t.readset" "$TMP/order"
# one file held open for writing by a process of the test's own
held=$(sed -n 5p "$TMP/files")
"$PY" -c 'import sys, time; f = open(sys.argv[1], "r+b"); print("held", flush=True); time.sleep(300)' "$held" > "$TMP/held" &
HOLDER_PID=$!
wait_until 10 'grep -q held "$TMP/held"' || fail "the holder did not open its file"
# (f000 and its reflinked copy share their extents: both left alone)
grep -v "^$held\$" "$TMP/order" | grep -v "/shared\$" | grep -v "/nocow\$" | grep -v "/f000\$" > "$TMP/moving"
[ "$(wc -l < "$TMP/moving")" = 23 ] || fail "$(wc -l < "$TMP/moving") files to move"
( cd "$MNT/tree" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums"

# FIEMAP: every file's extents encoded (compressed), each following the one
# before on the device, in the order given (a compressed extent takes at
# most its logical length there).  Compressed, a file is written 128 KiB at
# a time, and btrfs's allocator puts a file's last, short extent in the
# first hole it fits: those tails are left out after the layout ("encoded")
cat > "$TMP/follows.py" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/e2e")
import fcntl, struct, layoutcheck as lc
def maps(path):
    out, start = [], 0
    with open(path, "rb") as f:
        while True:
            buf = bytearray(lc.HEAD.size + 64 * lc.EXT.size)
            lc.HEAD.pack_into(buf, 0, start, 2**64 - 1 - start, 1, 0, 64, 0)
            fcntl.ioctl(f.fileno(), lc.FS_IOC_FIEMAP, buf)
            n = lc.HEAD.unpack_from(buf, 0)[3]
            if n == 0:
                return out
            for i in range(n):
                lo, ph, ln, _, _, fl, _, _, _ = lc.EXT.unpack_from(buf, lc.HEAD.size + i * lc.EXT.size)
                out.append((lo, ph, ln, fl))
            if out[-1][3] & 1:
                return out
            start = out[-1][0] + out[-1][2]
prev, runs = None, 0
for p in open(sys.argv[1]).read().split():
    m = maps(p)
    if sys.argv[2] == "encoded" and len(m) > 1:
        m = m[:-1]
    for lo, ph, ln, fl in m:
        if sys.argv[2] == "encoded" and not fl & 0x8:
            sys.exit(f"{p}: extent at {lo} not compressed")
        if prev is None or not (prev[0] <= ph <= prev[0] + prev[1] + 4096):
            runs += 1
        prev = (ph, ln)
print(runs)
PYEOF
runs_before=$(SRCDIR=$SRCDIR "$PY" "$TMP/follows.py" "$TMP/moving" any) || fail "FIEMAP before"
[ "$runs_before" -gt 3 ] || fail "the scattered tree lies in $runs_before runs already: the test proves nothing"

# on ext4, --compress is refused; on btrfs, layout without it
"$READSET" layout --under "$MNT" --compress zstd --dry-run "$TMP/t.readset" > "$TMP/x.out" 2>&1 || fail "dry run: $(cat "$TMP/x.out")"
grep -q "dry run: nothing rewritten" "$TMP/x.out" || fail "dry run: $(cat "$TMP/x.out")"
grep -q "23 to rewrite" "$TMP/x.out" || fail "dry run does not say 23 files: $(cat "$TMP/x.out")"
[ "$(SRCDIR=$SRCDIR "$PY" "$TMP/follows.py" "$TMP/moving" any)" = "$runs_before" ] || fail "the dry run moved data"
"$READSET" layout --under "$MNT" "$TMP/t.readset" > "$TMP/x.out" 2>&1 && fail "layout on btrfs without --compress"
grep -q "compressed (--compress zstd)" "$TMP/x.out" || fail "layout on btrfs without --compress: $(cat "$TMP/x.out")"

# a run whose third read-back is taken as differing stops, and says so; a
# run killed after 5 files: every file keeps its content (a tree of their own)
$CHECK scatter "$MNT/tree2" 12 4 --text
sync
find "$MNT/tree2" -type f | sort > "$TMP/order2"
record_reading "$TMP/t2.readset" "$TMP/order2"
( cd "$MNT/tree2" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums2"
READSET_LAYOUT_FAILPOINT=corrupt:3 "$READSET" layout --under "$MNT/tree2" --compress zstd "$TMP/t2.readset" > "$TMP/c.out" 2>&1 &&
        fail "a run with a differing read-back succeeded"
grep -q "differs from before" "$TMP/c.out" || fail "a differing read-back: $(cat "$TMP/c.out")"
rm -rf "$MNT/tree2"
$CHECK scatter "$MNT/tree2" 12 5 --text
sync
record_reading "$TMP/t2.readset" "$TMP/order2"
( cd "$MNT/tree2" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums2"
READSET_LAYOUT_FAILPOINT=kill:5 "$READSET" layout --under "$MNT/tree2" --compress zstd "$TMP/t2.readset" > /dev/null 2>&1 &&
        fail "the killed run succeeded"
echo 3 > /proc/sys/vm/drop_caches
( cd "$MNT/tree2" && sha256sum -c --quiet "$TMP/sums2" ) || fail "a file changed in an interrupted run"
# (run again, it rewrites what the killed run left)
"$READSET" layout --under "$MNT/tree2" --compress zstd --json "$TMP/t2.readset" > "$TMP/k.json" 2>&1 || fail "after the kill: $(cat "$TMP/k.json")"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["moved_files"] == 7 and d["skipped"]["compressed-already"] == 5, d' \
        "$TMP/k.json" || fail "after the kill: $(cat "$TMP/k.json")"

# the run
"$READSET" layout --under "$MNT/tree" --compress zstd --json "$TMP/t.readset" > "$TMP/l.json" 2>"$TMP/l.err" || fail "layout: $(cat "$TMP/l.err")"
"$PY" - "$TMP/l.json" <<'PYEOF' || fail "layout's figures: $(cat "$TMP/l.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["moved_files"] == 23 and d["verified_files"] == 23, d
assert d["skipped"].get("shared-extents") == 2 and d["skipped"].get("nodatacow") == 1, d
assert d["skipped"].get("open-for-writing") == 1, d
assert d["compressed_extents_after"] > d["compressed_extents_before"], d
assert d["pieces_measured"] < d["pieces_now"], d
PYEOF
runs_after=$(SRCDIR=$SRCDIR "$PY" "$TMP/follows.py" "$TMP/moving" encoded) || fail "after the layout: $runs_after"
[ "$runs_after" = 1 ] || fail "the rewritten files lie in $runs_after runs, not in access order"
kill -0 $PROG_PID 2>/dev/null || fail "the running program died"
echo 3 > /proc/sys/vm/drop_caches
( cd "$MNT/tree" && sha256sum -c --quiet "$TMP/sums" ) || fail "a file's content changed"
filefrag -v "$MNT/tree/shared" | grep -q shared || fail "the reflinked copy no longer shares its extents"
# run again: nothing to rewrite
"$READSET" layout --under "$MNT/tree" --compress zstd "$TMP/t.readset" > "$TMP/again.out" 2>&1 || fail "again: $(cat "$TMP/again.out")"
grep -q "nothing rewritten" "$TMP/again.out" || fail "run again, layout rewrote: $(cat "$TMP/again.out")"
[ "$(SRCDIR=$SRCDIR "$PY" "$TMP/follows.py" "$TMP/moving" encoded)" = "$runs_after" ] || fail "run again, the files moved"
kill $PROG_PID $HOLDER_PID 2>/dev/null || true; wait 2>/dev/null || true; PROG_PID= HOLDER_PID=
unmount "$MNT"
btrfs_progs btrfs check --readonly "$LOOPDEV" > "$TMP/check.out" 2>&1 || fail "btrfs check: $(cat "$TMP/check.out")"
mount -t btrfs "$LOOPDEV" "$MNT"

# ext4 takes no --compress
unmount "$MNT"; losetup -d "$LOOPDEV"; LOOPDEV=
make_ext4 64
echo data > "$MNT/e"
record_reading "$TMP/e.readset" /dev/null "cat $MNT/e > /dev/null"
"$READSET" layout --compress zstd --under "$MNT" "$TMP/e.readset" > "$TMP/e.out" 2>&1 && fail "--compress on ext4"
grep -q "on btrfs only" "$TMP/e.out" || fail "--compress on ext4: $(cat "$TMP/e.out")"
echo "ok"
