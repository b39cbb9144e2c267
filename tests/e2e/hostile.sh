#!/bin/sh
# Hostile input, as root (docs/SECURITY.md): the read set, the files it names
# and the output paths replaced, before and during a run, by what a user
# could put there -- FIFOs, sockets, device nodes, symbolic links (to
# devices, to /proc, to files root must not write), directories,
# pseudo-files, huge sparse files; read sets of other users or that anyone
# may write; 100 000 files; duplicated entries; offsets near 2^63; paths with
# newlines and invalid UTF-8; a share whose server is gone.  For each: no
# hang (every command under a timeout), no crash, nothing opened for I/O but
# the recorded regular files (inotify: opens.py), nothing written but the
# output asked for, a clear message or a named skip.  Each case says its
# outcome on one "case:" line.
. "$(dirname "$0")/lib.sh"
need_root
need_python
MK="$PY $SRCDIR/tests/e2e/mkreadset.py"
OPENS="$PY $SRCDIR/tests/e2e/opens.py"
H=$TMP/h
mkdir -p "$H"
chmod 755 "$TMP"
said() { echo "case: $*"; }

# A read set of the regular files given, with the identities they have now.
craft() {   # out path...
        out=$1; shift
        "$PY" - "$out" "$@" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/e2e")
import mkreadset
mkreadset.write(sys.argv[1], [{"path": p, "identity": "stat"} for p in sys.argv[2:]])
PYEOF
}
# One command, bounded; its exit status in $rc, its stderr in $TMP/err.
bounded() {   # seconds cmd...
        secs=$1; shift
        rc=0
        timeout -k 5 "$secs" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
        [ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "hang: $* ($(cat "$TMP/err"))"
        [ "$rc" -lt 128 ] || fail "crash (signal $((rc - 128))): $* ($(cat "$TMP/err"))"
        ! grep -q "process was killed by signal" "$TMP/err" || fail "crash of the replay's process: $* ($(cat "$TMP/err"))"
}
expect_refusal() {   # pattern what cmd...
        pat=$1; what=$2; shift 2
        bounded 20 "$@"
        [ "$rc" = 1 ] || fail "$what: exit $rc, expected 1 ($(cat "$TMP/err"))"
        grep -q -- "$pat" "$TMP/err" || fail "$what: no '$pat' in: $(cat "$TMP/err")"
        [ "$(wc -l < "$TMP/err")" = 1 ] || fail "$what: more than one line: $(cat "$TMP/err")"
        said "$what: refused, '$(cat "$TMP/err")'"
}
# run refuses the same, once, as a warning, and launches all the same:
# the command (cmd... ends with it) runs plain, its exit status run's (3)
expect_launch() {   # pattern what cmd...
        pat=$1; what=$2; shift 2
        bounded 20 "$@" sh -c 'exit 3'
        [ "$rc" = 3 ] || fail "$what: exit $rc, expected the command's 3 ($(cat "$TMP/err"))"
        grep -q -- "warning: .*$pat" "$TMP/err" || fail "$what: no warning '$pat' in: $(cat "$TMP/err")"
        [ "$(wc -l < "$TMP/err")" = 1 ] || fail "$what: more than one line: $(cat "$TMP/err")"
        said "$what: refused, the command run plain, '$(cat "$TMP/err")'"
}

for i in 1 2 3 4 5 6 7 8; do head -c 20000 /dev/urandom > "$H/f$i"; done
echo "victim" > "$H/victim"
chmod 644 "$H/victim"
craft "$H/good.readset" "$H/f1" "$H/f2"
"$READSET" show "$H/good.readset" >/dev/null || fail "a good crafted read set"

# ---- 1. the read set itself ----------------------------------------------
mkfifo "$H/fifo.readset"
for verb in show replay; do
        expect_refusal "not a regular file (a FIFO)" "read set is a FIFO ($verb)" $OPENS "$H" -- \
                "$READSET" "$verb" "$H/fifo.readset"
        ! grep -q "fifo.readset" "$TMP/out" || fail "the FIFO was opened"
done
expect_launch "not a regular file (a FIFO)" "read set is a FIFO (run)" $OPENS "$H" -- \
        "$READSET" run "$H/fifo.readset" --
! grep -q "fifo.readset" "$TMP/out" || fail "the FIFO was opened"
expect_refusal "not a regular file (a FIFO)" "build's trace is a FIFO" "$READSET" build -o "$H/b.readset" "$H/fifo.readset"
"$PY" -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$H/sock.readset"
expect_refusal "not a regular file (a socket)" "read set is a socket" "$READSET" replay "$H/sock.readset"
mknod "$H/zero.readset" c 1 5
expect_refusal "character device" "read set is a device node (/dev/zero's)" $OPENS "$H" -- "$READSET" show "$H/zero.readset"
! grep -q "zero.readset" "$TMP/out" || fail "the device node was opened"
ln -s /dev/tty "$H/tty.readset"
expect_refusal "character device" "read set is a symlink to /dev/tty" "$READSET" replay "$H/tty.readset"
ln -s /proc/self/mem "$H/proc.readset"
expect_refusal "pseudo filesystem" "read set is a symlink to /proc/self/mem" "$READSET" show "$H/proc.readset"
mkdir "$H/dir.readset"
expect_refusal "a directory" "read set is a directory" "$READSET" replay "$H/dir.readset"
truncate -s 100G "$H/huge.readset"
expect_refusal "too large" "read set is a 100 GiB sparse file" "$READSET" show "$H/huge.readset"
cp "$H/good.readset" "$H/theirs.readset"
chown 12345:12345 "$H/theirs.readset"
expect_refusal "owned by uid 12345" "read set owned by another user" "$READSET" replay "$H/theirs.readset"
bounded 20 env SUDO_UID=12345 "$READSET" show "$H/theirs.readset"
[ "$rc" = 0 ] || fail "the invoking user's read set (SUDO_UID) was refused: $(cat "$TMP/err")"
said "read set owned by the user who ran sudo (SUDO_UID): read"
cp "$H/good.readset" "$H/open.readset"
chmod 666 "$H/open.readset"
expect_launch "can be written by anyone" "read set anyone may write (0666)" "$READSET" run "$H/open.readset" --
# a sticky directory anyone may write (as /tmp): others cannot rename or
# replace what is root's there; what they could have placed is refused
mkdir -m 1777 "$H/sticky"
cp "$H/good.readset" "$H/sticky/x.readset"
bounded 20 "$READSET" show "$H/sticky/x.readset"
[ "$rc" = 0 ] || fail "root's read set in a sticky directory: exit $rc: $(cat "$TMP/err")"
said "root's read set in a directory anyone may write, sticky (1777, as /tmp): read"
cp "$H/good.readset" "$H/sticky/theirs.readset"
chown 65534:65534 "$H/sticky/theirs.readset"
expect_refusal "it is owned by uid 65534" "read set of another user in a sticky directory (1777, as /tmp)" \
        "$READSET" show "$H/sticky/theirs.readset"
bounded 20 "$READSET" show --allow-untrusted "$H/sticky/theirs.readset"
[ "$rc" = 0 ] || fail "--allow-untrusted: $(cat "$TMP/err")"
said "the same with --allow-untrusted: read"
mkdir -m 755 "$H/sticky/d"
cp "$H/good.readset" "$H/sticky/d/x.readset"
chown 65534:65534 "$H/sticky/d"
expect_refusal "directory '$H/sticky/d' is owned by uid 65534" \
        "root's read set in another user's directory in a sticky one" "$READSET" show "$H/sticky/d/x.readset"
ln -s "$H/good.readset" "$H/sticky/link.readset"
chown -h 65534:65534 "$H/sticky/link.readset"
expect_refusal "symbolic link '$H/sticky/link.readset' is owned by uid 65534" \
        "another user's symbolic link in a sticky directory, to root's read set" "$READSET" show "$H/sticky/link.readset"
mkdir -m 777 "$H/open"
cp "$H/good.readset" "$H/open/x.readset"
expect_refusal "directory '$H/open' can be written by anyone (mode 0777)" \
        "read set in a directory anyone may write, not sticky (0777)" "$READSET" show "$H/open/x.readset"
# /tmp itself: what root records there, root reads back
TT=$(mktemp -d /tmp/readset-hostile.XXXXXX)
TF=/tmp/readset-hostile-$$.readset
trap 'rm -rf "$TT" "$TF"; cleanup' EXIT
for out in "$TF" "$TT/x.readset"; do
        bounded 30 "$READSET" record -q -o "$out" -- true
        [ "$rc" = 0 ] || fail "record -o $out: exit $rc: $(cat "$TMP/err")"
        bounded 20 "$READSET" show "$out"
        [ "$rc" = 0 ] || fail "root's read set just recorded into $out: exit $rc: $(cat "$TMP/err")"
done
said "record -o /tmp/x.readset, and into a mktemp -d directory below /tmp, then show: read"
chown 65534:65534 "$TF"
expect_refusal "it is owned by uid 65534" "read set of another user in /tmp" "$READSET" show "$TF"
rm -rf "$TT" "$TF"
trap cleanup EXIT
mkdir -m 1777 "$H/auto"
expect_launch "refusing --auto directory" "run --auto directory anyone may write" \
        "$READSET" run --auto "$H/auto" --
printf '{"rotational": true}' > "$H/prof.json"
chown 12345 "$H/prof.json"
expect_refusal "owned by uid 12345" "device profile owned by another user (replay --device)" \
        "$READSET" replay --device "$H/prof.json" "$H/good.readset"

# ---- 2. the files a read set names ---------------------------------------
craft "$H/victims.readset" "$H/f1" "$H/f2" "$H/f3" "$H/f4" "$H/f5" "$H/f6" "$H/f7" "$H/f8"
rm "$H/f2" "$H/f3" "$H/f4" "$H/f5" "$H/f6" "$H/f7"
mkfifo "$H/f2"
"$PY" -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$H/f3"
mknod "$H/f4" c 1 5
ln -s /dev/zero "$H/f5"
mkdir "$H/f6"
truncate -s 64G "$H/f7"
echo "changed" >> "$H/f8"
for m in readahead read fadvise; do
        bounded 30 $OPENS "$H" -- "$READSET" replay --json -m $m "$H/victims.readset"
        [ "$rc" = 0 ] || fail "replay -m $m of replaced files: exit $rc: $(cat "$TMP/err")"
        # (the read set itself is read too)
        grep -v '^{\|^ \|^}\|^victims.readset$' "$TMP/out" > "$TMP/opened" || true
        [ "$(cat "$TMP/opened")" = "f1" ] || fail "replay -m $m opened more than f1: $(cat "$TMP/opened")"
done
"$READSET" replay --json "$H/victims.readset" > "$TMP/rep.json" 2>/dev/null
"$PY" - "$TMP/rep.json" "$H" <<'PYEOF' || fail "the skips are not named as they should be"
import json, sys
d = json.load(open(sys.argv[1]))
h = sys.argv[2]
want = {"f2": "not a regular file", "f3": "not a regular file", "f4": "not a regular file",
        "f5": "not a regular file", "f6": "not a regular file", "f7": "changed", "f8": "changed"}
got = {s["path"][len(h) + 1:]: s["reason"] for s in d["skipped_files"]}
print("  skipped:", got)
assert got == want, got
assert d["files_opened"] == 1
PYEOF
said "recorded files replaced by a FIFO, a socket, a device node, a symlink to /dev/zero, a directory, a 64 GiB sparse file, other data (-m readahead, read, fadvise): only the regular file opened; each skip named"
bounded 30 "$READSET" replay -v "$H/victims.readset"
grep -q "skipped '$H/f2': not a regular file" "$TMP/err" || fail "replay -v does not name the skips: $(cat "$TMP/err")"
bounded 30 $OPENS "$H" -- "$READSET" run -m read "$H/victims.readset" -- cat "$H/f1"
[ "$rc" = 0 ] || fail "run over replaced files: exit $rc"
said "run -m read over the same: the command ran, exit 0"
bounded 60 "$READSET" run --stats --json "$H/victims.readset" -- cat "$H/f1"
tail -1 "$TMP/err" | "$PY" -c "import json, sys; d = json.load(sys.stdin); assert len(d['skipped_files']) == 7, d" ||
        fail "run --stats --json does not name the skips: $(tail -1 "$TMP/err")"
said "run --stats --json over the same: the 7 skips named in its JSON line"

# pseudo-files: named directly, with their identity and without one
"$PY" - "$H/pseudo.readset" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/e2e")
import mkreadset
files = [{"path": "/proc/meminfo", "identity": "stat"},
         {"path": "/sys/kernel/mm/transparent_hugepage/enabled", "identity": "stat"},
         {"path": "/sys/kernel/tracing/trace_pipe"},                         # size 0, mtime 0: unknown
         {"path": "/sys/kernel/tracing/trace_pipe", "identity": "stat"},
         {"path": "/proc/self/mem", "ranges": [[0, 4096]]},
         {"path": "/dev/null", "kind": 0, "identity": "stat"}]
files = [f for f in files if os.path.exists(f["path"])]
mkreadset.write(sys.argv[1], files)
PYEOF
for m in read readahead; do
        bounded 30 "$READSET" run -m $m -v "$H/pseudo.readset" -- true
        [ "$rc" = 0 ] || fail "run -m $m over pseudo-files: exit $rc: $(cat "$TMP/err")"
done
bounded 30 "$READSET" replay --json "$H/pseudo.readset"
"$PY" - "$TMP/out" <<'PYEOF' || fail "pseudo-files were not refused"
import json, sys
d = json.load(open(sys.argv[1]))
print("  skipped:", d["skipped_files"])
assert d["files_opened"] == 0 and d["bytes_read"] == 0
reasons = {s["path"]: s["reason"] for s in d["skipped_files"]}
assert reasons.get("/proc/meminfo") == "on a pseudo filesystem", reasons
assert all(r in ("on a pseudo filesystem", "recorded without identity", "not a regular file", "changed")
           for r in reasons.values()), reasons
PYEOF
said "pseudo-files named by a read set (/proc, sysfs, a tracefs pipe with and without identity, /dev/null as a file): none opened, run -m read and readahead do not hang"

# during the replay: files swapped for FIFOs while it runs
"$PY" - "$H/many" <<'PYEOF'
import os, sys
d = sys.argv[1]
os.makedirs(d)
for i in range(3000):
    with open(f"{d}/{i}", "wb") as f:
        f.write(b"x" * 5000)
PYEOF
(cd "$H/many" && craft "$H/many.readset" $(seq 0 2999 | sed "s|^|$H/many/|"))
sync
echo 3 > /proc/sys/vm/drop_caches
"$PY" - "$H/many" > "$TMP/swapper.out" 2>&1 <<'PYEOF' &
import os, sys
d = sys.argv[1]
for i in range(1500, 3000):
    p = f"{d}/{i}"
    os.unlink(p)
    os.mkfifo(p)
PYEOF
swapper=$!
# every open by name is O_PATH (nothing is opened for I/O before it is
# checked); the I/O open is of the very inode checked, through /proc/self/fd
# (LeakSanitizer cannot stop the world of a process strace traces)
bounded 120 env ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
        strace -f -qq -e trace=openat,open -o "$TMP/strace" "$READSET" replay -m read --json "$H/many.readset"
wait "$swapper" || fail "the swapper failed: $(cat "$TMP/swapper.out")"
[ "$rc" = 0 ] || fail "replay while files turn into FIFOs: exit $rc: $(cat "$TMP/err")"
grep -q "\"$H/many/" "$TMP/strace" || fail "strace saw no open of the files"
if grep "\"$H/many/" "$TMP/strace" | grep -v O_PATH | grep -q .; then
        fail "a file opened by name for I/O: $(grep "\"$H/many/" "$TMP/strace" | grep -v O_PATH | head -3)"
fi
"$PY" - "$TMP/out" <<'PYEOF' || fail "the files turned into FIFOs were not all skipped or replayed before"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"  opened {d['files_opened']}, skipped {len(d['skipped_files'])}")
assert d["files_opened"] + len(d["skipped_files"]) == 3000
assert all(s["reason"] in ("not a regular file", "missing") for s in d["skipped_files"]), d["skipped_files"][:5]
PYEOF
said "3 000 files, half of them turned into FIFOs while the replay runs: no hang, every open by name O_PATH, each file replayed or skipped by name"

# ---- 3. outputs -----------------------------------------------------------
ln -s "$H/victim" "$H/out.readset"
bounded 30 "$READSET" record -q -o "$H/out.readset" -- true
[ "$rc" = 0 ] || fail "record -o onto a symlink: exit $rc: $(cat "$TMP/err")"
[ "$(cat "$H/victim")" = victim ] || fail "record wrote through a symlink"
[ -f "$H/out.readset" ] && [ ! -L "$H/out.readset" ] || fail "record -o did not replace the symlink"
[ "$(stat -c %a "$H/out.readset")" = 600 ] || fail "root's read set is not 0600"
said "record -o onto a symlink to a file: the symlink replaced, its target unchanged; the read set is 0600"
mkdir "$H/home"
chown 12345:12346 "$H/home"
bounded 30 env SUDO_UID=12345 SUDO_GID=12346 "$READSET" record -q -o "$H/home/sudo.readset" -- true
[ "$(stat -c '%u:%g %a' "$H/home/sudo.readset")" = "12345:12346 600" ] ||
        fail "record under sudo into the user's directory: $(stat -c '%u:%g %a' "$H/home/sudo.readset")"
bounded 30 env SUDO_UID=12345 SUDO_GID=12346 "$READSET" record -q -o "$H/sudo.readset" -- true
[ "$(stat -c '%u:%g %a' "$H/sudo.readset")" = "0:0 600" ] ||
        fail "record under sudo into root's directory: $(stat -c '%u:%g %a' "$H/sudo.readset")"
said "record -o under sudo: in the invoking user's directory the read set is theirs (SUDO_UID, SUDO_GID), in root's root's; mode 0600"
ln -s "$H/victim" "$H/p.json"
bounded 60 "$READSET" probe --quick -o "$H/p.json" "$H"
[ "$(cat "$H/victim")" = victim ] || fail "probe -o wrote through a symlink"
said "probe -o onto a symlink (the reported defect): target unchanged (exit $rc)"
ln -s "$H/victim" "$H/r.svg"
bounded 30 "$READSET" report --no-probe --device hdd --svg "$H/r.svg" "$H/good.readset"
[ "$(cat "$H/victim")" = victim ] || fail "report --svg wrote through a symlink"
said "report --svg onto a symlink: target unchanged (exit $rc)"
mkfifo "$H/out-fifo.readset"
bounded 30 "$READSET" record -q -o "$H/out-fifo.readset" -- true
[ "$rc" = 0 ] && [ -f "$H/out-fifo.readset" ] || fail "record -o onto a FIFO: exit $rc"
said "record -o onto a FIFO: replaced, never opened"
bounded 30 "$READSET" record -q -o "$H/late.readset" -- ln -s "$H/victim" "$H/late.readset"
[ "$(cat "$H/victim")" = victim ] || fail "record wrote through a symlink made while it ran"
said "record -o whose name becomes a symlink while it runs: target unchanged"
bounded 30 "$READSET" record -q -o "$H/dir.readset" -- true
[ "$rc" != 0 ] && grep -q "dir.readset" "$TMP/err" || fail "record -o onto a directory: exit $rc"
said "record -o onto a directory: '$(cat "$TMP/err")'"
ls "$H" | grep -q '\.tmp\.' && fail "temporary files left: $(ls "$H")"

# ---- 4. odd entries and scale --------------------------------------------
printf 'nl' > "$H/new
line"
printf 'utf' > "$(printf "$H/bad\377\376")"
"$PY" - "$H/odd.readset" "$H" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/e2e")
import mkreadset
h = os.fsencode(sys.argv[2])
f1 = {"path": sys.argv[2] + "/f1", "identity": "stat"}
files = [f1, dict(f1), {"path_hex": (h + b"/new\nline").hex(), "identity": "stat"},
         {"path_hex": (h + b"/bad\xff\xfe").hex(), "identity": "stat"},
         dict(f1, ranges=[[2**63 - 8192, 4096], [0, 4096], [0, 4096]])]
mkreadset.write(sys.argv[1], files, [{"path": sys.argv[2] + "/f2"}, {"path": "/proc/self/mem"}])
f = dict(f1, ranges=[[2**63 - 4096, 8192]])     # past 2^63 - 1: malformed
mkreadset.write(sys.argv[1] + ".over", [f])
PYEOF
bounded 30 "$READSET" replay --json "$H/odd.readset"
[ "$rc" = 0 ] || fail "replay of odd entries: exit $rc: $(cat "$TMP/err")"
"$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['files_opened'] == 5 and not d['skipped_files'], d" "$TMP/out" ||
        fail "odd entries not replayed"
bounded 30 "$READSET" show --json "$H/odd.readset"
"$PY" -c "import json, sys; json.load(open(sys.argv[1]))" "$TMP/out" || fail "show --json is not JSON"
bounded 30 "$READSET" show "$H/odd.readset"
grep -q 'new\\x0aline' "$TMP/out" && grep -q 'bad\\xff\\xfe' "$TMP/out" || fail "show does not escape paths"
said "duplicated files and ranges, an offset at 2^63 - 8192, paths with a newline and invalid UTF-8: replayed; show escapes them, --json stays JSON"
expect_refusal "malformed\|invalid" "a range past 2^63 - 1" "$READSET" replay "$H/odd.readset.over"

"$PY" - "$H/big" "$H/big.readset" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["SRCDIR"] + "/tests/e2e")
import mkreadset
d = sys.argv[1]
os.makedirs(d)
files = []
for i in range(100000):
    p = f"{d}/{i % 100}/{i}"
    if i < 100:
        os.makedirs(f"{d}/{i}")
    with open(p, "wb") as f:
        f.write(b"y")
    files.append({"path": p, "identity": "stat"})
mkreadset.write(sys.argv[2], files)
PYEOF
bounded 300 sh -c "ulimit -n 1024 && exec \"$READSET\" replay --json \"$H/big.readset\""
[ "$rc" = 0 ] || fail "100 000 files: exit $rc: $(cat "$TMP/err")"
"$PY" - "$TMP/out" <<'PYEOF' || fail "100 000 files were not all replayed"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"  opened {d['files_opened']} in {d['open_file_windows']} windows, skipped {len(d['skipped_files'])}")
assert d["files_opened"] == 100000 and not d["skipped_files"] and d["open_file_windows"] > 1
PYEOF
said "100 000 files with 1 024 descriptors: all opened, in windows, none lost"
rm -rf "$H/big" "$H/big.readset"

# ---- 5. one --auto directory, two readsets at once ------------------------
mkdir -m 700 "$H/store"
for round in 1 2 3; do
        "$READSET" run --auto "$H/store" -- cat "$H/f1" > /dev/null 2>"$TMP/a1" & a1=$!
        "$READSET" run --auto "$H/store" -- cat "$H/f1" > /dev/null 2>"$TMP/a2" & a2=$!
        wait "$a1" || fail "run --auto (1): $(cat "$TMP/a1")"
        wait "$a2" || fail "run --auto (2): $(cat "$TMP/a2")"
done
# the read set and its history, whose lines (two writers at once) are whole
hist=$(ls "$H"/store/*.readset.history 2>/dev/null || true)
[ "$(ls "$H/store" | wc -l)" = 2 ] && [ -f "$hist" ] ||
        fail "--auto left more than its read set and history: $(ls "$H/store")"
[ "$(grep -c -v '^1 [0-9]* [a-z+]* [0-9]* [0-9]* [0-9]* -\{0,1\}[0-9]* [0-9]* [0-9]* [0-9]* ' "$hist")" = 0 ] ||
        fail "--auto's history has torn lines: $(cat "$hist")"
[ "$(wc -l <"$hist")" = 6 ] || fail "--auto's history: not one line a run: $(cat "$hist")"
"$READSET" show "$H/store"/*.readset >/dev/null || fail "--auto's read set is damaged"
said "two run --auto on one directory at once, three times: one read set, whole"
# the command itself plants a symlink at its own read set's name, while it
# runs (the first run records it; the second finds it and replaces it)
plant="for f in '$H/store'/sh-*.readset; do [ -f \"\$f\" ] && ln -sf '$H/victim' \"\$f\"; done; cat '$H/f1'"
for round in 1 2; do
        "$READSET" run --auto "$H/store" -- sh -c "$plant" >/dev/null 2>"$TMP/a1" ||
                fail "run --auto with a planted symlink: $(cat "$TMP/a1")"
done
[ "$(cat "$H/victim")" = victim ] || fail "run --auto wrote through a symlink planted at its read set"
auto_rs=$(ls "$H/store"/sh-*.readset)
said "run --auto whose command plants a symlink at its own read set's name: target unchanged ($(test -L "$auto_rs" &&
        echo "the link kept: the read set was still good" || echo "the link replaced by the new read set"))"

# ---- 6. a share whose server is gone ------------------------------------------
if [ -n "${SLOWDEV_FUSE:-}" ] && [ -e /dev/fuse ]; then
        SHARE=$TMP/share
        mkdir -p "$TMP/share-src" "$SHARE"
        for i in 1 2 3; do head -c 100000 /dev/urandom > "$TMP/share-src/s$i"; done
        slowdev_down() { "$SRCDIR/bench/slowdev" down "$SHARE" >/dev/null 2>&1 || true; }
        trap 'slowdev_down; cleanup' EXIT
        "$SRCDIR/bench/slowdev" up share "$SHARE" --source "$TMP/share-src" --rtt 1 >/dev/null ||
                fail "slowdev up share"
        "$SRCDIR/bench/slowdev" fast "$SHARE"
        craft "$H/share.readset" "$SHARE/s1" "$SHARE/s2" "$SHARE/s3"
        "$SRCDIR/bench/slowdev" stall "$SHARE"
        echo 3 > /proc/sys/vm/drop_caches
        bounded 30 "$READSET" replay --timeout 2 "$H/share.readset"
        grep -q "stopped at the deadline" "$TMP/err" || fail "replay --timeout on a stalled share: $(cat "$TMP/err")"
        said "replay --timeout 2 with the share's server stalled: returned at the deadline, '$(tail -1 "$TMP/err")'"
        bounded 30 "$READSET" run "$H/share.readset" -- true
        [ "$rc" = 0 ] || fail "run on a stalled share: exit $rc: $(cat "$TMP/err")"
        said "run with the share's server stalled: the command's end ended run, '$(tail -1 "$TMP/err")'"
        "$SRCDIR/bench/slowdev" fast "$SHARE"
        slowdev_down
else
        echo "note: no slowdev-fuse or /dev/fuse: the stalled-share case is left out"
        [ "$(id -u)" != 0 ] || [ ! -e /dev/fuse ] || fail "the share emulator should be built here"
fi

# ---- 7. io_uring refused ----------------------------------------------------
bounded 30 "$PY" "$SRCDIR/tests/e2e/no-uring.py" "$READSET" replay -m read "$H/good.readset"
[ "$rc" = 0 ] && grep -q "io_uring is unavailable: not permitted here" "$TMP/err" ||
        fail "replay without io_uring: exit $rc: $(cat "$TMP/err")"
said "replay -m read where io_uring is refused: '$(head -1 "$TMP/err")'"
# ---- 8. record killed at any moment ----------------------------------------
if [ -d /sys/kernel/tracing/instances ] && [ -d /sys/kernel/tracing/events/filemap ]; then
        left() { ls -d /sys/kernel/tracing/instances/readset-"$1" /sys/kernel/tracing/instances/readset-"$1"-* \
                        2>/dev/null; }
        # each checked before the next starts (a start removes what earlier
        # ones left: that would hide a leak); 5-45 ms was the window where
        # the instance existed before its guardian did
        for ms in 000 005 010 015 020 025 030 035 040 045 060 090; do
                # (the command ends by itself: nothing is left to end)
                "$READSET" record -q -o "$H/killed.readset" -- sleep 0.3 & p=$!
                sleep "0.$ms"
                kill -KILL "$p"
                wait "$p" 2>/dev/null || true
                wait_until 30 "[ -z \"\$(left $p)\" ]" || fail "record killed after $ms ms left $(left "$p")"
        done
        said "record killed (SIGKILL) 0-90 ms after it started: no tracefs instance left, each time"
        # every readset process gone (the reaper too): the next one of any verb
        true & dead=$!
        wait "$dead"
        mkdir /sys/kernel/tracing/instances/readset-"$dead"
        "$READSET" show "$H/good.readset" > /dev/null
        [ -z "$(left "$dead")" ] || { rmdir /sys/kernel/tracing/instances/readset-"$dead"; fail "show left an instance"; }
        said "an instance of a readset long dead (every process killed): removed by the next readset, of any verb"
else
        fail "tracefs and its filemap events should be here"
fi
echo "hostile: ok"
