#!/bin/sh
# readset pack on a real tree: a start reading its files in an order of its
# own is recorded; pack --order lists them in that order (names escaped as
# mksquashfs reads them); pack --image squashfs builds an image whose data
# lies in that order (read from the image's own inode table) where the
# builder's default order differs, holding the same tree (modes, owners,
# xattrs, symlinks, hard links, contents), the same bytes when built twice,
# never written through a symlink; its portable read set replays fully on a
# copy of the image mounted elsewhere (and with run --root), and skips,
# counted and named, each file whose content differs on another image (whose
# own ranges, found from its tables, are read all the same); xz and lz4
# images replay their ranges too, run gets out of the way on xz; an
# EROFS image (mkfs.erofs's own order) replays it too.
. "$(dirname "$0")/lib.sh"
need_root
need_tracefs
need_loop
need_python
command -v mksquashfs >/dev/null || skip "needs mksquashfs (squashfs-tools)"
command -v mkfs.erofs >/dev/null || skip "needs mkfs.erofs (erofs-utils)"
SQ="$PY $SRCDIR/tests/e2e/sqfscheck.py"
# jcheck FILE WHAT EXPR...: each Python expression true of the JSON object d in FILE
jcheck() {
        _f=$1 _what=$2; shift 2
        "$PY" - "$_f" "$@" <<'PYEOF' || fail "$_what: $(cat "$_f")"
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    assert eval(e), e
PYEOF
}

mnt() {   # image dir: mounted read-only on a loop device (detached at unmount)
        mkdir -p "$2"
        mount -o loop,ro "$1" "$2" || fail "mount $1"
        MORE_MNTS="$2 $MORE_MNTS"
}

# the tree: 12 files of 200-500 KiB (each at least one whole 128 KiB block,
# compressible, all different), a name with a space, a symlink, a hard
# link, an owner and a mode of their own, an xattr
T=$TMP/tree
mkdir -p "$T/usr/lib" "$T/usr/bin" "$T/etc"
"$PY" - "$T" <<'PYEOF'
import os, random, sys
t = sys.argv[1]
words = [b"alpha", b"beta", b"gamma", b"delta", b"libc", b"python", b"module", b"init", b"\x00\x01\x02"]
for i in range(12):
    d = ("usr/lib", "usr/bin", "etc")[i % 3]
    name = f"f{i:02d}" if i != 5 else "f05 with space"
    r = random.Random(i)
    size = r.randrange(200, 500) * 1024
    data = b" ".join(r.choice(words) for _ in range(size // 4))[:size]
    with open(os.path.join(t, d, name), "wb") as f:
        f.write(data)
PYEOF
ln -s ../lib/f00 "$T/usr/bin/link"
ln "$T/usr/lib/f03" "$T/usr/lib/f03-hard"
chown 65534:65534 "$T/usr/bin/f01" && chmod 0640 "$T/usr/bin/f01"
"$PY" -c 'import os, sys; os.setxattr(sys.argv[1], "user.readset", b"kept")' "$T/etc/f02" ||
        skip "the file system of $TMP keeps no user xattrs"
# read in an order unrelated to the names
( cd "$T" && find . -type f ! -name f03-hard | sed 's|^\./||' | sort ) |
        "$PY" -c 'import random, sys; l = sys.stdin.read().splitlines(); random.Random(3).shuffle(l); print("\n".join(l))' > "$TMP/order"
sed "s|^|$T/|" "$TMP/order" > "$TMP/abs-order"
sync
echo 3 > /proc/sys/vm/drop_caches
"$READSET" record -o "$TMP/t.readset" -- sh -c "while IFS= read -r f; do cat \"\$f\"; done < '$TMP/abs-order' > /dev/null" \
        2>"$TMP/rec.err" || fail "record: $(cat "$TMP/rec.err")"

# --order: a sort file for mksquashfs, relative to the tree, first read first
"$READSET" pack --order "$T" "$TMP/t.readset" > "$TMP/sort" 2>"$TMP/order.err" || fail "pack --order: $(cat "$TMP/order.err")"
sed 's/ /\\ /g' "$TMP/order" > "$TMP/sort.want"
sed 's/ [0-9]*$//' "$TMP/sort" > "$TMP/sort.got"
cmp -s "$TMP/sort.want" "$TMP/sort.got" || fail "pack --order is not the order read: $(diff "$TMP/sort.want" "$TMP/sort.got")"
awk 'NR > 1 && $NF >= prev { bad = 1 } { prev = $NF } END { exit bad }' "$TMP/sort" ||
        fail "pack --order's priorities do not fall: $(cat "$TMP/sort")"

# the image, in access order; twice: the same bytes
"$READSET" pack --image squashfs --compress gzip -o "$TMP/live.img" "$T" "$TMP/t.readset" 2>"$TMP/pack.err" ||
        fail "pack: $(cat "$TMP/pack.err")"
[ -f "$TMP/live.img" ] && [ -f "$TMP/live.img.readset" ] || fail "pack left no image or no read set beside it"
tr -d '\r' < "$TMP/pack.err" | cmp -s - "$TMP/pack.err" || fail "a progress line with standard error a file: $(cat -v "$TMP/pack.err")"
# (again with standard error a terminal: how far the image tool is drawn there)
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty" "$READSET" pack --image squashfs --compress gzip -o "$TMP/tty.img" \
        "$T" "$TMP/t.readset" || fail "pack on a terminal: $(cat -v "$TMP/tty")"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" --check "$TMP/tty" pack || fail "no progress line on a terminal"
"$PY" "$SRCDIR/tests/e2e/ptyrun.py" "$TMP/tty-q" "$READSET" pack -q --image squashfs --compress gzip -o "$TMP/tty-q.img" \
        "$T" "$TMP/t.readset" || fail "pack -q on a terminal: $(cat -v "$TMP/tty-q")"
[ -f "$TMP/tty-q.img" ] || fail "pack -q made no image"
! grep -q "$(printf '\r')" "$TMP/tty-q" || fail "pack -q drew a progress line: $(cat -v "$TMP/tty-q")"
"$READSET" pack --image squashfs --compress gzip -j -o "$TMP/again.img" "$T" "$TMP/t.readset" > "$TMP/again.json" \
        2>/dev/null || fail "pack again"
cmp -s "$TMP/live.img" "$TMP/again.img" || fail "the same tree and read set packed twice differ"
# --json: what was made, in the names other verbs use
"$READSET" show --json "$TMP/again.img.readset" > "$TMP/again-show.json" || fail "show the image's read set"
jcheck "$TMP/again.json" "pack --json" "d['output'] == '$TMP/again.img'" "d['image_read_set'] == '$TMP/again.img.readset'" \
        "d['read_set'] == '$TMP/t.readset'" \
        "d['bytes'] == $(stat -c %s "$TMP/again.img")" "d['image_type'] == 'squashfs' and d['compress'] == 'gzip'" \
        "d['files'] == len(json.load(open('$TMP/again-show.json'))['files']) > 0" "d['files_ordered'] > 0"
rc=0; "$READSET" pack --order -j "$T" "$TMP/t.readset" > /dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "pack --order --json: exit $rc, not a usage error"
ls -a "$TMP" | grep -q '\.pack\.' && fail "pack left its working directory: $(ls -a "$TMP")"
mnt "$TMP/live.img" "$TMP/m1"
tr '\n' '\0' < "$TMP/order" | (cd "$TMP/m1" && xargs -0 $SQ ordered "$TMP/live.img" "$TMP/m1") ||
        fail "the image's data is not in the order read"
# the builder's own order is another (else the check above proves nothing)
mksquashfs "$T" "$TMP/default.img" -comp gzip -noappend -quiet -no-progress > /dev/null || fail "mksquashfs"
mnt "$TMP/default.img" "$TMP/m0"
tr '\n' '\0' < "$TMP/order" | (cd "$TMP/m0" && xargs -0 $SQ ordered "$TMP/default.img" "$TMP/m0") 2>"$TMP/sq0.err" &&
        fail "mksquashfs's default order is the order read already: the test proves nothing"
grep -q "lies at" "$TMP/sq0.err" || fail "the order check on the default image: $(cat "$TMP/sq0.err")"
# the same tree: names, types, modes, owners, sizes, mtimes (seconds), link
# targets, hard links, xattrs, contents
"$PY" - "$T" "$TMP/m1" <<'PYEOF' || fail "the image does not hold the tree"
import hashlib, os, sys
def walk(top):
    out, inos = {}, {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            s = os.lstat(p)
            rel = os.path.relpath(p, top)
            e = (s.st_mode, s.st_uid, s.st_gid, int(s.st_mtime))
            if os.path.islink(p):
                e += (os.readlink(p),)
            elif os.path.isfile(p):
                e += (s.st_size, hashlib.sha256(open(p, "rb").read()).hexdigest(),
                      tuple(sorted((a, os.getxattr(p, a)) for a in os.listxattr(p))))
                inos.setdefault(s.st_ino, []).append(rel)
            out[rel] = e
    return out, sorted(sorted(v) for v in inos.values() if len(v) > 1)
a, b = walk(sys.argv[1]), walk(sys.argv[2])
for k in sorted(set(a[0]) | set(b[0])):
    if a[0].get(k) != b[0].get(k):
        sys.exit(f"{k}: tree {a[0].get(k)} image {b[0].get(k)}")
assert a[1] == b[1] == [["usr/lib/f03", "usr/lib/f03-hard"]], (a[1], b[1])
PYEOF

# the portable read set, on a copy of the image mounted elsewhere: every file
"$READSET" show --json "$TMP/live.img.readset" > "$TMP/p.json" || fail "show the portable read set"
"$PY" - "$TMP/p.json" "$TMP/order" <<'PYEOF' || fail "the portable read set"
import json, sys
d = json.load(open(sys.argv[1]))
want = ["/" + l for l in open(sys.argv[2]).read().splitlines()]
got = [f["path"] for f in d["files"]]
assert got == want, (got, want)
PYEOF
# a copy mounted from a file: the image's ranges the start reads, read from
# that file in its order, their digest the packed one's, so every file the
# start reads is the one packed (those opened after it was known are not
# checked one by one: how many, depends on timing); then the files
cp "$TMP/live.img" "$TMP/copy.img"
mnt "$TMP/copy.img" "$TMP/m2"
echo 3 > /proc/sys/vm/drop_caches
"$READSET" replay --root "$TMP/m2" --json "$TMP/live.img.readset" > "$TMP/r2.json" 2>"$TMP/r2.err" ||
        fail "replay --root: $(cat "$TMP/r2.err")"
jcheck "$TMP/r2.json" "replay on a copy" 'd["image_verified"] and d["files_opened"] == 12' \
        'd["files_changed"] == 0 and d["files_missing"] == 0 and d["files_error"] == 0' \
        'd["bytes_not_resident"] == 0'
# ... all of them read, as many bytes as the image's ranges hold (whether
# the copy file's pages are still cached after is the kernel's to decide:
# seen once, three of them reclaimed already)
"$READSET" show --json "$TMP/live.img.readset" > "$TMP/p.json"
"$PY" - "$TMP/p.json" "$TMP/r2.json" <<'PYEOF' || fail "the image's ranges were not all read"
import json, sys
im, r = json.load(open(sys.argv[1]))["image"], json.load(open(sys.argv[2]))
assert r["image_bytes_read"] == im["bytes"] == sum(s["length"] for s in im["spans"]), (r["image_bytes_read"], im["bytes"])
PYEOF
# a copy on a loop device with direct I/O (no page cache under it): the
# files, each checked by content, every range the start reads resident
L=$(losetup --find --show --direct-io=on --read-only "$TMP/copy.img") || fail "losetup --direct-io"
MORE_LOOPS="$L $MORE_LOOPS"
mkdir -p "$TMP/m2d"
mount -o ro "$L" "$TMP/m2d" || fail "mount the direct-I/O copy"
MORE_MNTS="$TMP/m2d $MORE_MNTS"
echo 3 > /proc/sys/vm/drop_caches
"$READSET" replay --root "$TMP/m2d" --json "$TMP/live.img.readset" > "$TMP/r2d.json" 2>"$TMP/r2d.err" ||
        fail "replay --root, direct I/O: $(cat "$TMP/r2d.err")"
jcheck "$TMP/r2d.json" "replay on a direct-I/O copy" 'd["files_opened"] == 12 and d["files_changed"] == 0' \
        'd["files_missing"] == 0 and d["files_content_checked"] == 12 and d["bytes_not_resident"] == 0' \
        'd["image_bytes_read"] == 0'
# the image's ranges pack named: each file's data blocks, read ahead from the
# copy's file (its own inode table says where they are)
"$READSET" show --json "$TMP/live.img.readset" > "$TMP/p.json"
tr '\n' '\0' < "$TMP/order" | (cd "$TMP/m1" && xargs -0 $SQ starts "$TMP/live.img" "$TMP/m1") > "$TMP/starts" ||
        fail "the image's own table"
"$PY" - "$TMP/p.json" "$TMP/starts" "$TMP/live.img" <<'PYEOF' || fail "the read set's image ranges"
import json, os, sys
d = json.load(open(sys.argv[1]))
im = d["image"]
assert im["size"] == os.path.getsize(sys.argv[3]), im
spans = [(s["offset"], s["offset"] + s["length"]) for s in im["spans"]]
for line in open(sys.argv[2]):
    start = int(line.split()[0])
    assert any(a <= start < b for a, b in spans), (line, spans)
assert im["bytes"] < im["size"], im
PYEOF
# every range resident, asked by one process at once (DAMON, replay.sh:
# the pages that look idle go within seconds; a check that fails is made
# again right after a replay from a cold start)
copy_resident() {
        "$PY" - "$TMP/live.img.readset" "$TMP/m2d" "$READSET" "$TESTPROG" <<'PYEOF'
import json, subprocess, sys
rs, top, readset, prog = sys.argv[1:]
d = json.loads(subprocess.run([readset, "show", "--json", rs], capture_output=True, check=True).stdout)
asked = [(f, r) for f in d["files"] for r in f["ranges"]]
lines = "".join(f"{r['offset']} {r['length']} {top + f['path']}\n" for f, r in asked)
counts = subprocess.run([prog, "resident-list"], input=lines.encode(), capture_output=True, check=True).stdout.split()
for (f, r), got in zip(asked, counts):
    if int(got) < min(r["length"], f["size"] - r["offset"]):
        sys.exit(f"{f['path']} {r}: {got} bytes resident")
PYEOF
}
copy_resident || {
        echo "  again, from a cold start (DAMON, see replay.sh)"
        echo 3 > /proc/sys/vm/drop_caches
        "$READSET" replay --root "$TMP/m2d" -q "$TMP/live.img.readset" || fail "replay --root, direct I/O, again"
        copy_resident || fail "the replay on the copy left data out"
}
# run --root: the same read set beside a command
echo 3 > /proc/sys/vm/drop_caches
"$READSET" run --root "$TMP/m2" "$TMP/live.img.readset" -- sha256sum "$TMP/m2/usr/lib/f00" > "$TMP/run.out" 2>"$TMP/run.err" ||
        fail "run --root: $(cat "$TMP/run.err")"
[ "$(cut -d' ' -f1 "$TMP/run.out")" = "$(sha256sum < "$T/usr/lib/f00" | cut -d' ' -f1)" ] || fail "run --root: the command's output"
# a copy whose bytes differ past its head (one flipped in the data the
# start reads): read, not the image packed, so its files are replayed and
# checked one by one: the one hit is not replayed
cp "$TMP/live.img" "$TMP/bad.img"
"$PY" - "$TMP/p.json" "$TMP/bad.img" <<'PYEOF' || fail "flip a byte"
import json, sys
im = json.load(open(sys.argv[1]))["image"]
s = [s for s in im["spans"][1:] if s["offset"] + s["length"] > 16384][0]   # (the first: the tables)
with open(sys.argv[2], "r+b") as f:
    f.seek(max(s["offset"], 8192) + 100)   # past the head the replay compares
    b = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([b[0] ^ 0xff]))
PYEOF
mnt "$TMP/bad.img" "$TMP/mb"
echo 3 > /proc/sys/vm/drop_caches
"$READSET" replay --root "$TMP/mb" --json "$TMP/live.img.readset" > "$TMP/rb.json" 2>/dev/null || true
jcheck "$TMP/rb.json" "replay on a damaged copy" 'd["image_bytes_read"] > 0 and not d["image_verified"]' \
        'd["files_opened"] < 12 and d["files_opened"] + d["files_error"] + d["files_changed"] == 12'
# xz and lz4: their metadata read back too (the image's ranges replayed,
# checked); run on an xz image gets out of the way (the start waits for the
# decompressor): the command runs, nothing is replayed
for c in xz lz4; do
        "$READSET" pack --image squashfs --compress $c -o "$TMP/$c.img" "$T" "$TMP/t.readset" 2>"$TMP/$c.err" ||
                fail "pack --compress $c: $(cat "$TMP/$c.err")"
        mnt "$TMP/$c.img" "$TMP/m$c"
        echo 3 > /proc/sys/vm/drop_caches
        "$READSET" replay --root "$TMP/m$c" --json "$TMP/$c.img.readset" > "$TMP/r$c.json" 2>/dev/null ||
                fail "replay the $c image"
        jcheck "$TMP/r$c.json" "replay on the $c image" 'd["image_verified"] and d["image_bytes_read"] > 0' \
                'd["files_changed"] == 0 and d["files_content_checked"] == 0'
done
"$READSET" run -v --json --root "$TMP/mxz" "$TMP/xz.img.readset" -- sha256sum "$TMP/mxz/usr/lib/f00" \
        > "$TMP/runxz.out" 2>"$TMP/runxz.err" || fail "run on the xz image: $(cat "$TMP/runxz.err")"
[ "$(cut -d' ' -f1 "$TMP/runxz.out")" = "$(sha256sum < "$T/usr/lib/f00" | cut -d' ' -f1)" ] || fail "run on xz: output"
grep -q "xz-compressed image" "$TMP/runxz.err" || fail "run on xz: not said: $(cat "$TMP/runxz.err")"
tail -n 1 "$TMP/runxz.err" > "$TMP/runxz.json"
jcheck "$TMP/runxz.json" "run on the xz image" 'not d["replayed"] and d["exit_status"] == 0'
# SOURCE_DATE_EPOCH: later mtimes clamped, in the image and in its read set
SOURCE_DATE_EPOCH=1700000000 "$READSET" pack --image squashfs -o "$TMP/epoch.img" "$T" "$TMP/t.readset" 2>"$TMP/e.err" ||
        fail "pack with SOURCE_DATE_EPOCH: $(cat "$TMP/e.err")"
mnt "$TMP/epoch.img" "$TMP/me"
[ "$(stat -c %Y "$TMP/me/usr/lib/f00")" = 1700000000 ] || fail "SOURCE_DATE_EPOCH: not clamped in the image"
"$READSET" replay --root "$TMP/me" --json "$TMP/epoch.img.readset" > "$TMP/re.json" 2>/dev/null || fail "replay the clamped image"
jcheck "$TMP/re.json" "replay on the clamped image" 'd["image_verified"] and d["files_changed"] == 0'
# --portable: the same read set, without an image
"$READSET" pack --portable --json -o "$TMP/only.readset" "$T" "$TMP/t.readset" > "$TMP/only-made.json" 2>/dev/null ||
        fail "pack --portable"
jcheck "$TMP/only-made.json" "pack --portable --json" "d['output'] == '$TMP/only.readset'" "'image_read_set' not in d" \
        "d['files'] > 0"
"$READSET" show --json "$TMP/only.readset" > "$TMP/only.json" || fail "show --portable's"
"$PY" - "$TMP/only.json" "$TMP/p.json" <<'PYEOF' || fail "pack --portable"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["portable"] and "image" not in a, a.keys()
assert [f["path"] for f in a["files"]] == [f["path"] for f in b["files"]]
PYEOF
# a portable read set is no layout's
"$READSET" layout --dry-run "$TMP/only.readset" > /dev/null 2>"$TMP/l.err" && fail "layout took a portable read set"
grep -q "portable read set" "$TMP/l.err" || fail "layout of a portable read set: $(cat "$TMP/l.err")"
# --root is for portable read sets only
"$READSET" replay --root "$TMP/m2" "$TMP/t.readset" > /dev/null 2>"$TMP/np.err" && fail "--root took a read set that is not portable"
grep -q "not a portable read set" "$TMP/np.err" || fail "--root with a plain read set: $(cat "$TMP/np.err")"

# another image: one file changed in place (size and mtime kept), one grown
cp -a "$T" "$TMP/tree2"
f1=$(sed -n 2p "$TMP/order"); f2=$(sed -n 4p "$TMP/order")
printf 'X' | dd of="$TMP/tree2/$f1" bs=1 seek=10 conv=notrunc 2>/dev/null
touch -r "$T/$f1" "$TMP/tree2/$f1"
echo more >> "$TMP/tree2/$f2"
mksquashfs "$TMP/tree2" "$TMP/other.img" -comp gzip -noappend -quiet -no-progress > /dev/null || fail "mksquashfs tree2"
mnt "$TMP/other.img" "$TMP/m3"
"$READSET" replay --root "$TMP/m3" --json -v "$TMP/live.img.readset" > "$TMP/r3.json" 2>"$TMP/r3.err" || fail "replay on the other image"
jcheck "$TMP/r3.json" "replay on a changed image" \
        'd["files_opened"] == 10 and d["files_changed"] == 2 and d["files_content_differs"] == 1' \
        'd["image_bytes_read"] > 0 and not d["image_verified"]' \
        'sorted(s["reason"] for s in d["skipped_files"]) == ["changed", "content differs"]'
"$READSET" replay --root "$TMP/m3" -v "$TMP/live.img.readset" 2>&1 | grep -q "$f1': content differs" ||
        fail "the file changed in place is not named"

# -o through a symlink: the link is replaced, what it pointed to untouched
echo precious > "$TMP/victim"
ln -s "$TMP/victim" "$TMP/link.img"
"$READSET" pack --image squashfs -o "$TMP/link.img" "$T" "$TMP/t.readset" 2>/dev/null || fail "pack -o over a symlink"
[ "$(cat "$TMP/victim")" = precious ] || fail "pack wrote through a symlink"
[ -f "$TMP/link.img" ] && [ ! -L "$TMP/link.img" ] || fail "pack -o left the symlink"
# a tree the read set was not recorded from
mkdir "$TMP/empty"
"$READSET" pack --image squashfs -o "$TMP/e.img" "$TMP/empty" "$TMP/t.readset" > /dev/null 2>&1 && fail "pack of a tree outside the read set"
[ -e "$TMP/e.img" ] && fail "a failed pack left an image"

# EROFS: built in mkfs.erofs's own order; the portable read set replays there
"$READSET" pack --image erofs -o "$TMP/live.erofs" "$T" "$TMP/t.readset" 2>"$TMP/erofs.err" ||
        fail "pack --image erofs: $(cat "$TMP/erofs.err")"
grep -q "own order" "$TMP/erofs.err" || fail "pack --image erofs does not say its order is mkfs.erofs's"
"$READSET" pack --image erofs -o "$TMP/again.erofs" "$T" "$TMP/t.readset" 2>/dev/null || fail "pack --image erofs again"
cmp -s "$TMP/live.erofs" "$TMP/again.erofs" || fail "the same tree packed twice as EROFS differs"
mnt "$TMP/live.erofs" "$TMP/m4"
echo 3 > /proc/sys/vm/drop_caches
"$READSET" replay --root "$TMP/m4" --json "$TMP/live.erofs.readset" > "$TMP/r4.json" 2>"$TMP/r4.err" || fail "replay on erofs"
jcheck "$TMP/r4.json" "replay on the EROFS image" 'd["files_opened"] == 12 and d["files_changed"] == 0'
echo "ok"
