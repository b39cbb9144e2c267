#!/bin/sh
# What readset layout refuses or skips, as a user expects: another file
# system (btrfs, without --compress) and an ext4 mounted read-only or data=journal refused with
# one line; files replaced by a symlink or a FIFO, changed, open for
# writing, running, immutable skipped by name and reason (the symlink's
# target untouched), everything else moved; block-mapped files (ext3)
# skipped with the way out; a full file system: what fits moves, a prefix
# of the start, and with no room at all a refusal; another layout running:
# refused; a corrupt read set: refused.
. "$(dirname "$0")/lib.sh"
need_layout
SLEEPER_PID=
HOLDER=
cleanup_refuse() {
        [ -z "$SLEEPER_PID" ] || kill "$SLEEPER_PID" 2>/dev/null || true
        [ -z "$SLEEPER_PID" ] || wait "$SLEEPER_PID" 2>/dev/null || true
        [ -z "$MNT" ] || chattr -i "$MNT/tree/d1/s1/f001" 2>/dev/null || true
        cleanup
}
trap cleanup_refuse EXIT

refused() {   # expected-message command...: exit 1 and the message, one line
        want=$1; shift
        rc=0
        "$@" > "$TMP/ref.out" 2>"$TMP/ref.err" || rc=$?
        [ "$rc" = 1 ] || fail "$*: exit $rc, not 1: $(cat "$TMP/ref.err")"
        grep -q "$want" "$TMP/ref.err" || fail "$*: not '$want': $(cat "$TMP/ref.err")"
        [ "$(wc -l < "$TMP/ref.err")" = 1 ] || fail "$*: more than one line: $(cat "$TMP/ref.err")"
}

# ---- a file system that is not ext4 ----
if command -v mkfs.btrfs >/dev/null; then
        truncate -s 256M "$TMP/btrfs.img"
        btrfs_progs mkfs.btrfs -q "$TMP/btrfs.img" >/dev/null
        BL=$(losetup --find --show "$TMP/btrfs.img"); MORE_LOOPS="$BL"
        mkdir -p "$TMP/b"; mount "$BL" "$TMP/b"; MORE_MNTS="$TMP/b"
        $CHECK scatter "$TMP/b/tree" 8 1
        find "$TMP/b/tree" -type f > "$TMP/border"
        record_reading "$TMP/b.readset" "$TMP/border"
        # (btrfs is laid out compressed only: layout --compress, e2e-layout-btrfs)
        refused "is btrfs: layout rewrites files there compressed (--compress zstd)" \
                "$READSET" layout --under "$TMP/b" --profile hdd "$TMP/b.readset"
else
        echo "  another file system: not checked, no mkfs.btrfs here (make deps installs btrfs-progs)"
fi

# ---- ext4: a tree, recorded ----
make_ext4 128
$CHECK scatter "$MNT/tree" 30 4
cp "$(command -v sleep)" "$MNT/tree/sleepy"
echo "not in the read set" > "$MNT/victim"
find "$MNT/tree" -type f -name 'f*' | sort > "$TMP/order"
record_reading "$TMP/t.readset" "$TMP/order" "'$MNT/tree/sleepy' 0"
grep -q sleepy "$TMP/order" && fail "order lists sleepy"
"$READSET" show "$TMP/t.readset" | grep -q "tree/sleepy" || fail "the read set lacks the executable"

refused "is mounted read-only: nothing can be moved" sh -c "mount -o remount,ro '$MNT' &&
        '$READSET' layout --under '$MNT' --profile hdd '$TMP/t.readset'; rc=\$?; mount -o remount,rw '$MNT'; exit \$rc"
unmount "$MNT"; mount -t ext4 -o data=journal "$LOOPDEV" "$MNT"
refused "is mounted data=journal" "$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset"
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
refused "cannot read" "$READSET" layout --under "$MNT" --profile hdd /etc/hostname
refused "another readset layout is running" \
        flock "$MNT" "$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset"

# ---- files that changed under the read set ----
( cd "$MNT/tree" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums.all"
$CHECK maps "$MNT/victim" > "$TMP/victim.before"
sum_victim=$(sha256sum < "$MNT/victim")
a=$MNT/tree/d0/s0/f000 b=$MNT/tree/d0/s1/f007 c=$MNT/tree/d0/s2/f014 d=$MNT/tree/d1/s0/f015 e=$MNT/tree/d1/s1/f001
rm "$a"; ln -s "$MNT/victim" "$a"            # a symlink to a file outside the read set
rm "$b"; mkfifo "$b"                          # a FIFO: never opened, so never a hang
echo more >> "$c"                             # changed
exec 3>>"$d"                                  # open for writing (by this shell)
chattr +i "$e"                                # immutable
"$MNT/tree/sleepy" 300 & SLEEPER_PID=$!       # running
wait_until 10 "[ \"\$(readlink /proc/$SLEEPER_PID/exe)\" = '$MNT/tree/sleepy' ]" || fail "the sleeper did not start"

"$READSET" layout --under "$MNT" --profile hdd --json "$TMP/t.readset" > "$TMP/skip.json" 2>"$TMP/skip.err" ||
        fail "layout with skips: $(cat "$TMP/skip.err")"
"$PY" - "$TMP/skip.json" "$a" "$b" "$c" "$d" "$e" "$MNT/tree/sleepy" <<'EOF' || fail "skips: $(cat "$TMP/skip.json")"
import json, sys
d = json.load(open(sys.argv[1]))
a, b, c, dd, e, sleepy = sys.argv[2:]
why = {f["path"]: f["reason"] for f in d["skipped_files"]}
want = {a: "not-regular", b: "not-regular", c: "changed", dd: "open-for-writing", e: "immutable",
        sleepy: "running-executable"}
for p, r in want.items():
    assert why.get(p) == r, (p, why.get(p), r)
for r in set(want.values()):
    assert d["skipped"][r] == sum(1 for v in want.values() if v == r), (r, d["skipped"])
assert d["moved_files"] == 30 - 5 and d["verified_files"] == 25, d
EOF
exec 3>&-
chattr -i "$e"
kill "$SLEEPER_PID"; wait "$SLEEPER_PID" 2>/dev/null || true; SLEEPER_PID=
[ "$(sha256sum < "$MNT/victim")" = "$sum_victim" ] || fail "the symlink's target was written"
$CHECK maps "$MNT/victim" > "$TMP/victim.after"
cmp -s "$TMP/victim.before" "$TMP/victim.after" || fail "the symlink's target was moved"
[ -p "$b" ] || fail "the FIFO is gone"
echo 3 > /proc/sys/vm/drop_caches
grep -v -e "d0/s0/f000" -e "d0/s1/f007" -e "d0/s2/f014" "$TMP/sums.all" > "$TMP/sums.kept"
( cd "$MNT/tree" && sha256sum --quiet -c "$TMP/sums.kept" ) || fail "content changed"
# the text names the reasons and what to do
"$READSET" layout --under "$MNT" --profile hdd --dry-run "$TMP/t.readset" > "$TMP/skip.txt" 2>&1 || fail "dry run"
grep -q "skipped    1 changed: record the start again" "$TMP/skip.txt" || fail "advice: $(cat "$TMP/skip.txt")"
unmount "$MNT"
e2fsck -fn "$LOOPDEV" > "$TMP/fsck.out" 2>&1 || fail "e2fsck: $(cat "$TMP/fsck.out")"

# ---- a full file system: what fits, in first-access order ----
umount "$MNT" 2>/dev/null || true
mkfs.ext4 -q -F "$LOOPDEV"
mount -t ext4 "$LOOPDEV" "$MNT"
$CHECK scatter "$MNT/tree" 30 5
find "$MNT/tree" -type f | sort > "$TMP/order"
record_reading "$TMP/f.readset" "$TMP/order"
"$READSET" layout --under "$MNT" --profile hdd --dry-run --json "$TMP/f.readset" > "$TMP/f.json" || fail "dry run"
eval "$("$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print("need=%d usable=%d" % (d["bytes_to_move"], d["usable_free_bytes"]))' "$TMP/f.json")"
bs=$(stat -f -c %S "$MNT")
# leave usable room for about half of the data
fallocate -l $(( (usable - need / 2) / bs * bs )) "$MNT/filler" || fail "fallocate"
( cd "$MNT/tree" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums.full"
"$READSET" layout --under "$MNT" --profile hdd --json "$TMP/f.readset" > "$TMP/full.json" 2>"$TMP/full.err" ||
        fail "layout on a nearly full file system: $(cat "$TMP/full.err")"
"$PY" - "$TMP/full.json" "$TMP/order" <<'EOF' || fail "nearly full: $(cat "$TMP/full.json")"
import json, sys
d = json.load(open(sys.argv[1]))
order = open(sys.argv[2]).read().split()
assert 0 < d["moved_files"] < 30 and d["skipped"]["no-space"] == 30 - d["moved_files"], d
skipped = {f["path"] for f in d["skipped_files"] if f["reason"] == "no-space"}
# a prefix of the start moved, the rest waits
assert skipped == set(order[d["moved_files"]:]), (sorted(skipped)[:3], order[d["moved_files"]:][:3])
EOF
grep -q "free space on the file system" "$TMP/full.json" && fail "advice in JSON"
fallocate -l $(( usable / bs * bs )) "$MNT/filler2" 2>/dev/null || true
dd if=/dev/zero of="$MNT/filler3" bs=1M 2>/dev/null || true
sync
refused "no room on .* for even the first file" "$READSET" layout --under "$MNT" --profile hdd "$TMP/f.readset"
echo 3 > /proc/sys/vm/drop_caches
( cd "$MNT/tree" && sha256sum --quiet -c "$TMP/sums.full" ) || fail "content changed on the full file system"
rm -f "$MNT"/filler*
unmount "$MNT"
e2fsck -fn "$LOOPDEV" > "$TMP/fsck.out" 2>&1 || fail "e2fsck after the full case: $(cat "$TMP/fsck.out")"

# ---- block-mapped files (ext3's format, mounted as ext4) ----
mkfs.ext3 -q -F "$LOOPDEV"
mount -t ext4 "$LOOPDEV" "$MNT"
$CHECK scatter "$MNT/tree" 10 6
find "$MNT/tree" -type f | sort > "$TMP/order"
record_reading "$TMP/e3.readset" "$TMP/order"
"$READSET" layout --under "$MNT" --profile hdd "$TMP/e3.readset" > "$TMP/e3.out" 2>&1 || fail "ext3: $(cat "$TMP/e3.out")"
grep -q "skipped    10 not-extent-mapped: 'chattr +e FILE' converts" "$TMP/e3.out" || fail "ext3: $(cat "$TMP/e3.out")"
grep -q "nothing moved: no file of the read set can be moved" "$TMP/e3.out" || fail "ext3: $(cat "$TMP/e3.out")"
echo "ok"
