# Shared helpers for the end-to-end tests (sourced).  Each test states what
# it needs; a missing prerequisite skips the test (exit 77) with the reason.
set -eu

: "${READSET:?READSET must point at the built binary}"
: "${TESTPROG:?TESTPROG must point at rs-testprog}"
PY=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
# A check that goes on after failing sets FAILED; a skip after it is a failure.
FAILED=
check_fail() { echo "FAIL: $*" >&2; FAILED=1; }
skip() {
        [ -z "$FAILED" ] || fail "a check failed before this skip ($*)"
        echo "SKIP: $*"; exit 77
}

need_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }
need_tracefs() {
        [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
        [ -d /sys/kernel/tracing/instances ] || skip "needs tracefs"
        [ -d /sys/kernel/tracing/events/filemap/mm_filemap_get_pages ] || skip "kernel lacks filemap events"
}
# readset built with BPF (HAVE_BPF, from meson) and the kernel letting it load.
# (after need_root and need_tracefs: it records once to find out)
WHY_NO_BPF=
have_bpf() {
        if [ "${HAVE_BPF:-0}" != 1 ]; then
                WHY_NO_BPF="readset was built without BPF (needs clang, bpftool, libbpf at build time)"
                return 1
        fi
        "$READSET" record -o "$TMP/need-bpf.readset" -- true 2>"$TMP/need-bpf.err" ||
                fail "record -- true: $(cat "$TMP/need-bpf.err")"
        if grep -q "path lookups not traced" "$TMP/need-bpf.err"; then
                WHY_NO_BPF="this kernel refuses readset's BPF programs: $(cat "$TMP/need-bpf.err")"
                return 1
        fi
}
need_bpf() { have_bpf || skip "$WHY_NO_BPF"; }
need_bpftool() {
        command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] || skip "needs bpftool (to see BPF programs by id)"
        command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin
}
# readset run as an unprivileged user (nobody), when this is root; as this
# user otherwise (it is unprivileged then).  The files it reads must be
# readable by all, and the directories on their way searchable; the binary
# (and the profiles beside it) are copied into $TMP, made so, for a build
# tree nobody may not enter.
user_readset() {
        if [ "$(id -u)" != 0 ]; then
                "$READSET" "$@"
                return
        fi
        command -v setpriv >/dev/null || fail "user_readset: needs setpriv (util-linux)"
        if [ ! -x "$TMP/user/bin/readset" ]; then
                mkdir -p "$TMP/user/bin"
                cp "$READSET" "$TMP/user/bin/readset"
                cp -r "${SRCDIR:?}/profiles" "$TMP/user/profiles"
                chmod -R a+rX "$TMP/user"
                chmod 755 "$TMP"
        fi
        setpriv --reuid=65534 --regid=65534 --clear-groups -- "$TMP/user/bin/readset" "$@"
}
user_name() { if [ "$(id -u)" = 0 ]; then echo nobody; else id -un; fi; }
# A btrfs-progs command (mkfs.btrfs, btrfs check) that does not fail on
# someone else's broken mount: before it works on a file or device, it
# looks at the backing file of every mounted loop device, and one it cannot
# reach (on a FUSE file system whose server died: "Transport endpoint is not
# connected") makes it refuse.  Such a mount is not ours and not ours to
# remove: the command runs in a private mount namespace without it.
btrfs_progs() {
        unshare --mount --propagation private sh -c '
                for b in /sys/block/loop*/loop/backing_file; do
                        [ -f "$b" ] || continue
                        f=$(cat "$b" 2>/dev/null) || continue
                        stat "${f% (deleted)}" >/dev/null 2>&1 && continue
                        d=${b#/sys/block/}; d=/dev/${d%%/*}
                        findmnt -n -l -o TARGET -S "$d" | while IFS= read -r t; do umount -l "$t" 2>/dev/null || true; done
                done
                exec "$@"' btrfs_progs "$@"
}
need_python() { [ -x "$PY" ] || skip "needs $PY"; }
need_loop() {
        command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null || skip "needs losetup and mkfs.ext4"
        [ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
        [ -e /dev/loop-control ] || skip "needs loop devices"
}

# The share tests: the emulator (bench/slowdev up share) at $m, brought
# down however the test ends.  (The sanitizer suite points at the plain
# emulator: a sanitized one is too slow to model anything.)
need_share() {
        [ -n "${SLOWDEV_FUSE:-}" ] && [ -x "$SLOWDEV_FUSE" ] || skip "slowdev-fuse not built (needs libfuse3-dev)"
        [ -c /dev/fuse ] || skip "needs /dev/fuse"
        SLOWDEV_FUSE=${READSET_SLOWDEV_FUSE:-$SLOWDEV_FUSE}
        export SLOWDEV_FUSE
        SLOWDEV="$SRCDIR/bench/slowdev"
        m=$TMP/share
        trap '"$SLOWDEV" down "$m" >/dev/null 2>&1 || true; cleanup' EXIT
}

# The layout tests: what they need, and their FIEMAP and tree helper.
need_layout() {
        need_root
        need_tracefs
        need_loop
        need_python
        command -v e2fsck >/dev/null || skip "needs e2fsck"
        CHECK="$PY $SRCDIR/tests/e2e/layoutcheck.py"
}
# A cold recording of cat reading the files listed in ORDER one after the
# other, then running EXTRA (a shell command) if given.
record_reading() {   # readset order [extra]
        sync
        echo 3 > /proc/sys/vm/drop_caches
        "$READSET" record -o "$1" -- sh -c "xargs cat < '$2' > /dev/null; ${3:-true}" 2>"$TMP/rec.err" ||
                fail "record: $(cat "$TMP/rec.err")"
}
# Unmount, waiting (30 s at most) while something else holds the mount for
# a moment (on a shared machine: another program walking the mounts);
# held longer, the test fails, naming who holds it.
unmount() {   # mountpoint
        umount "$1" 2>/dev/null && return 0
        wait_until 30 "umount '$1' 2>/dev/null" && return 0
        fail "cannot unmount $1: $(umount "$1" 2>&1); held by: $(fuser -vm "$1" 2>&1 | tail -n +2)"
}
# e2fsck -fn of $LOOPDEV, unmounted from $MNT for it and mounted again.
fsck_clean() {   # what
        unmount "$MNT"
        e2fsck -fn "$LOOPDEV" > "$TMP/fsck.out" 2>&1 || fail "e2fsck $1: $(cat "$TMP/fsck.out")"
        mount -t ext4 "$LOOPDEV" "$MNT"
}

# Wait (polling every 0.05 s) until a shell condition holds, at most
# `seconds`; false if it never did.  For teardown that readset does in the
# background (its guardian): bounded, never a fixed sleep.
wait_until() {   # seconds condition
        _end=$(( $(date +%s) + $1 ))
        while ! eval "$2"; do
                [ "$(date +%s)" -lt "$_end" ] || return 1
                sleep 0.05
        done
}

# As root, readset reads read sets and profiles only where root alone can
# change them (docs/SECURITY.md): not below /tmp, which anyone can write.
if [ "$(id -u)" = 0 ]; then
        TMP=$(mktemp -d /var/lib/readset-e2e.XXXXXX)
else
        TMP=$(mktemp -d "${TMPDIR:-/tmp}/readset-e2e.XXXXXX")
fi
# saved probe profiles change plans: only those a test saves itself count
export READSET_CACHE_DIR="$TMP/cache"
MNT=
LOOPDEV=
MORE_MNTS=      # more mount points and loop devices a test made, undone the same way
MORE_LOOPS=
cleanup() {
        for m in $MORE_MNTS $MNT; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
        for l in $MORE_LOOPS $LOOPDEV; do losetup -d "$l" 2>/dev/null || true; done
        rm -rf "$TMP"
}
trap cleanup EXIT

# A fresh ext4 on a loop device, mounted at $MNT, read_ahead_kb $2 (default 128).
make_ext4() {
        size_mb=$1
        ra=${2:-128}
        truncate -s "${size_mb}M" "$TMP/fs.img"
        mkfs.ext4 -q -F "$TMP/fs.img"
        LOOPDEV=$(losetup --find --show "$TMP/fs.img")
        MNT=$TMP/mnt
        mkdir -p "$MNT"
        mount -t ext4 "$LOOPDEV" "$MNT"
        echo "$ra" > "/sys/block/$(basename "$LOOPDEV")/queue/read_ahead_kb"
}

# The accessed ranges of a read set's files under a directory, against the
# page cache now (rs-testprog resident, as the caller sees it): prints
# "BYTES RANGES", the bytes resident and the ranges not wholly resident
# (each named on stderr).
resident_ranges() {   # readset dir
        "$PY" - "$1" "$READSET" "$TESTPROG" "$2" <<'PYEOF'
import json, subprocess, sys
rs, readset, prog, top = sys.argv[1:]
d = json.loads(subprocess.run([readset, "show", "--json", rs], capture_output=True, check=True).stdout)
total = bad = 0
asked = [(f, r) for f in d["files"] if f["kind"] == "file" and f["path"].startswith(top)
         for r in f["ranges"] if r["accessed"]]
# one process asks for all of them, at once
lines = "".join(f"{r['offset']} {r['length']} {f['path']}\n" for f, r in asked)
counts = subprocess.run([prog, "resident-list"], input=lines.encode(), capture_output=True,
                        check=True).stdout.split()
for (f, r), got in zip(asked, counts):
        got = int(got)
        want = min(r["length"], max(0, f["size"] - r["offset"]))
        want = (want + 4095) // 4096 * 4096 if r["offset"] + r["length"] <= f["size"] else want
        if got < min(want, r["length"]) and got < want - 4095:
            print(f"  {f['path']} @{r['offset']}+{r['length']}: {got} resident", file=sys.stderr)
            bad += 1
        total += got
print(total, bad)
PYEOF
}

# A warm replay of READSET-FILE (its -j line in OUT) that reads nothing: up
# to three tries, each right after the last, since between a replay and the
# next DAMON's pageout (these machines') may take a few pages, and another
# test's drop_caches the lot.  Fails after the third.
replay_warm() {   # out readset-file
        for try in 1 2 3; do
                "$READSET" replay -j "$2" > "$1" || fail "warm replay of $2"
                "$PY" -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["bytes_read"] == 0 else 1)' \
                        "$1" && return 0
                echo "  a warm replay read $(grep '"bytes_read"' "$1"): again"
        done
        fail "a warm replay read something, three times: $(cat "$1")"
}

# Evaluate a python expression over `readset show --json FILE`; fail if false.
json_check() {
        file=$1; shift
        "$READSET" show --json "$file" > "$TMP/show.json" || fail "show --json $file"
        "$PY" - "$TMP/show.json" "$@" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["path"]: f for f in d["files"]}
def ranges(path, flag=None):
    f = files.get(path)
    if f is None:
        return []
    return [(r["offset"], r["offset"] + r["length"]) for r in f["ranges"] if flag is None or r[flag]]
def covered(path, lo, hi, flag=None):
    """every byte of [lo, hi) is inside some range"""
    pos = lo
    for a, b in sorted(ranges(path, flag)):
        if a <= pos < b:
            pos = b
    return pos >= hi
def total(path, flag=None):
    return sum(b - a for a, b in ranges(path, flag))
def uncovered(path, lo, hi, flag=None):
    """bytes of [lo, hi) in no range (of that flag)"""
    have = 0
    for a, b in sorted(ranges(path, flag)):
        a, b = max(a, lo), min(b, hi)
        if b > a:
            have += b - a
    return (hi - lo) - min(have, hi - lo)
ok = True
for expr in sys.argv[2:]:
    try:
        val = eval(expr)
    except Exception as e:
        val = False
        print("  error in", expr, ":", e)
    print(("  ok    " if val else "  FAIL  ") + expr)
    ok = ok and bool(val)
sys.exit(0 if ok else 1)
PYEOF
}
