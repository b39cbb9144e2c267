#!/bin/sh
# run and replay on a disk (a loop device marked rotational), seen in the
# order of their system calls (strace), never in their times:
# - the program's own first file on solid state and most of the read set's
#   bytes on the disk: run plans (asks FIEMAP of the files) before the
#   command starts, as it does where the program itself is on the disk
#   (planned beside the command, each FIEMAP's inode read and the
#   command's reads fight over the head);
# - the read set's metadata (inode tables, directories: the disk's block
#   device) read ahead before the plan asks any file where its data lies.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop
command -v strace >/dev/null || skip "needs strace (make check installs it)"

make_ext4 96 128
DISK=$(basename "$LOOPDEV")
echo 1 > "/sys/block/$DISK/queue/rotational"
[ "$(cat "/sys/block/$DISK/queue/rotational")" = 1 ] || skip "the loop device cannot be marked rotational"
# more than run's threshold for planning first (16 MiB), and files in
# directories of their own (inodes and directory blocks to read)
head -c 18000000 /dev/urandom > "$MNT/big"
for d in 1 2 3 4; do
        mkdir -p "$MNT/dir$d"
        for f in 1 2 3 4 5 6; do head -c 20000 /dev/urandom > "$MNT/dir$d/f$f"; done
done
find "$MNT/dir1" "$MNT/dir2" "$MNT/dir3" "$MNT/dir4" -type f | sort > "$TMP/order"
echo "$MNT/big" >> "$TMP/order"
# mounted again: nothing of the new files' metadata stays cached, pinned by
# the journal, so that the recording reads (and keeps) it
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
echo 128 > "/sys/block/$DISK/queue/read_ahead_kb"
record_reading "$TMP/r.readset" "$TMP/order"

# the premises: the first file the start read is not on the disk (sh, its
# libraries), most bytes are, and the disk's metadata was recorded
"$PY" - "$TMP/r.readset" "$READSET" "$MNT" "$DISK" <<'PYEOF' || fail "the read set is not what this test needs"
import json, subprocess, sys
rs, readset, mnt, disk = sys.argv[1:]
d = json.loads(subprocess.run([readset, "show", "--json", rs], capture_output=True, check=True).stdout)
files = [f for f in d["files"] if f["kind"] == "file" and f["ranges"]]
first = min(files, key=lambda f: min(r["time_us"] for r in f["ranges"]))
on = sum(sum(r["length"] for r in f["ranges"]) for f in files if f["path"].startswith(mnt + "/"))
off = sum(sum(r["length"] for r in f["ranges"]) for f in files if not f["path"].startswith(mnt + "/"))
meta = [f for f in d["files"] if f["kind"] == "blockdev" and f["path"] == "/dev/" + disk]
print(f"  first file {first['path']}; {on} bytes on the disk, {off} elsewhere; "
      f"{sum(len(f['ranges']) for f in meta)} metadata ranges of /dev/{disk}")
sys.exit(0 if not first["path"].startswith(mnt + "/") and on > off and meta else 1)
PYEOF
[ "$("$READSET" replay -n -j "$TMP/r.readset" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["rotational"])')" = True ] ||
        fail "replay does not plan the read set for a disk"

# the calls of run (and of its replay's process and the command), in order
traced() {   # output command...
        out=$1; shift
        sync; echo 3 > /proc/sys/vm/drop_caches
        # (LeakSanitizer cannot stop the world of a process strace traces)
        timeout 120 env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
                strace -f -qq -y -e trace=execve,ioctl,readahead -o "$out" "$@" ||
                fail "$*: $(tail -5 "$out")"
}
# the line number of the first line matching a pattern (0: none)
first_line() { grep -n "$2" "$1" | head -1 | cut -d: -f1 | grep . || echo 0; }

traced "$TMP/run.strace" "$READSET" run "$TMP/r.readset" -- sh -c "xargs cat < '$TMP/order' > /dev/null"
cmd=$(first_line "$TMP/run.strace" 'execve("/bin/sh"\|execve("/usr/bin/sh"')
fiemap=$(first_line "$TMP/run.strace" "FS_IOC_FIEMAP")
[ "$cmd" -gt 0 ] || fail "strace saw no exec of the command: $(head -5 "$TMP/run.strace")"
[ "$fiemap" -gt 0 ] || fail "strace saw no FIEMAP: $(grep -c . "$TMP/run.strace") lines"
echo "  run: the first FIEMAP at line $fiemap, the command's exec at line $cmd"
[ "$fiemap" -lt "$cmd" ] || fail "run started the command before it planned (FIEMAP after the exec)"

traced "$TMP/replay.strace" "$READSET" replay "$TMP/r.readset"
meta=$(first_line "$TMP/replay.strace" "^[0-9]* *readahead([0-9]*</dev/$DISK>")
fiemap=$(first_line "$TMP/replay.strace" "FS_IOC_FIEMAP")
[ "$meta" -gt 0 ] || fail "replay read nothing of /dev/$DISK: $(grep readahead "$TMP/replay.strace" | head -3)"
echo "  replay: the first metadata readahead at line $meta, the first FIEMAP at line $fiemap"
[ "$meta" -lt "$fiemap" ] || fail "replay asked FIEMAP before it read the metadata"
# ... and counts what it read there once
replay_warm "$TMP/warm.json" "$TMP/r.readset"
sync; echo 3 > /proc/sys/vm/drop_caches
"$READSET" replay -j "$TMP/r.readset" > "$TMP/cold.json" || fail "replay, cold"
"$PY" - "$TMP/cold.json" "$TMP/r.readset" "$READSET" <<'PYEOF' || fail "a cold replay's figures"
import json, subprocess, sys
c = json.load(open(sys.argv[1]))
d = json.loads(subprocess.run([sys.argv[3], "show", "--json", sys.argv[2]], capture_output=True, check=True).stdout)
planned = c["bytes_planned"]
seen = c["bytes_read"] + c["bytes_already_cached"] + c["bytes_skipped"]
print(f"  cold replay: planned {planned}, read {c['bytes_read']}, cached {c['bytes_already_cached']}, "
      f"skipped {c['bytes_skipped']}")
# every planned byte counted once: read, found cached or skipped
sys.exit(0 if seen == planned and c["bytes_read"] > 0 else 1)
PYEOF
echo "run-disk: ok"
