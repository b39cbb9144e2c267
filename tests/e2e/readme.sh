#!/bin/sh
# The README's examples, as a new user meets them: each one that can run on
# a small read set runs (tests/e2e/readme.py: which, how, what is checked),
# in a directory of its own below /tmp, as root where the README says sudo
# and as nobody where it does not; the others are listed by name and why,
# and every option of every example is one its verb accepts.  Then the
# rest of a new user's first hour, where the README has no example of it.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_python
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"

# the user's directory: $W (root's, 0755, as mktemp -d makes it below
# /tmp, opened) holds the binary, the profiles beside it and the stand-ins
# for the programs the examples start; $W/home is nobody's
W=$(mktemp -d /tmp/readset-readme.XXXXXX)
chmod 755 "$W"
TAG=$(basename "$W")
trap 'umount "$W/live" 2>/dev/null || umount -l "$W/live" 2>/dev/null || true
      rm -rf "$W" "/tmp/$TAG-"*; cleanup' EXIT
mkdir -p "$W/bin" "$W/stubs" "$W/home/ROOTDIR/lib" "$W/home/.cache" "$W/live"
cp "$READSET" "$W/bin/readset"
cp -r "$SRCDIR/profiles" "$W/profiles"
# probe's cache, as /var/cache/readset: root's, readable by all
export READSET_CACHE_DIR="$W/cache"
mkdir "$READSET_CACHE_DIR"
# clang, make: read their input, write their output, as the real ones would
cat > "$W/stubs/clang" <<'EOF'
#!/bin/sh
for a; do f=$a; done
rm -f "${f%.c}.o"; cat "$f" > "${f%.c}.o"
EOF
cat > "$W/stubs/make" <<'EOF'
#!/bin/sh
cat hello.c > /dev/null
EOF
# the packed image's examples need mksquashfs and a loop device to mount it
[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
if command -v mksquashfs >/dev/null && [ -e /dev/loop-control ]; then touch "$W/stubs/.pack"; fi
# a system to start: a few files of ROOTDIR, read in one order
for i in 1 2 3 4 5 6 7 8; do head -c $((i * 40000)) /dev/urandom > "$W/home/ROOTDIR/lib/f$i"; done
printf '#!/bin/sh\ncat %s/lib/f3 %s/lib/f1 %s/lib/f7 %s/lib/f5 > /dev/null\n' \
        "$W/home/ROOTDIR" "$W/home/ROOTDIR" "$W/home/ROOTDIR" "$W/home/ROOTDIR" > "$W/home/start-the-system"
cp "$W/home/start-the-system" "$W/home/start"
echo 'int main(void) { return 0; }' > "$W/home/hello.c"
chmod 755 "$W/stubs/clang" "$W/stubs/make" "$W/home/start-the-system" "$W/home/start"
chmod -R a+rX "$W"
chown -R nobody: "$W/home"

# the read sets the examples name but do not make: a boot's (the system's
# start), one called rs, and another user's in /tmp
cd "$W/home"
for f in boot.readset rs; do
        SUDO_UID=65534 SUDO_GID=65534 "$W/bin/readset" record -q -o "$f" -- ./start || fail "record $f"
done
cp rs "/tmp/$TAG-theirs.readset"
chown 1:1 "/tmp/$TAG-theirs.readset"

"$PY" "$SRCDIR/tests/e2e/readme.py" "$SRCDIR/README.md" "$W" || FAILED=1

# The rest of the first hour, as nobody: a read set recorded into /tmp
# itself (sudo readset record -o /tmp/x.readset is one of the README's),
# replayed and run by its user; a run of a missing read set runs the
# command (the README shows it with make); boot status says how the boots
# are, as root, with nothing enabled: none of it an error.
user() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
x=/tmp/$TAG-x.readset
[ -f "$x" ] || check_fail "the README's record into /tmp made no $x"
if [ -f "$x" ]; then
        chown nobody: "$x"
        user "$W/bin/readset" replay "$x" 2> "$TMP/err" || check_fail "replay of $x as nobody: $(cat "$TMP/err")"
        ! grep -q "error:" "$TMP/err" || check_fail "replay as nobody: $(cat "$TMP/err")"
        user "$W/bin/readset" run "$x" -- sh -c 'touch ran-x' 2> "$TMP/err" ||
                check_fail "run of $x as nobody: $(cat "$TMP/err")"
        [ -f ran-x ] || check_fail "run $x -- touch: the command did not run"
fi
rc=0; user "$W/bin/readset" run "$W/home/gone.readset" -- sh -c 'touch ran-gone; exit 3' 2> "$TMP/err" || rc=$?
[ "$rc" = 3 ] && [ -f ran-gone ] || check_fail "run of a missing read set: exit $rc (the command's is 3)"
grep -q "warning: cannot read '$W/home/gone.readset'" "$TMP/err" || check_fail "run of a missing read set: $(cat "$TMP/err")"
! grep -q "error:" "$TMP/err" || check_fail "run of a missing read set says error: $(cat "$TMP/err")"
user "$W/bin/readset" layout --dry-run boot.readset > /dev/null 2> "$TMP/err" ||
        check_fail "layout --dry-run as nobody: $(cat "$TMP/err")"
"$W/bin/readset" boot status > /dev/null 2> "$TMP/err" || check_fail "boot status: $(cat "$TMP/err")"
! grep -q "error:" "$TMP/err" || check_fail "boot status says error: $(cat "$TMP/err")"
[ -z "$FAILED" ] || exit 1
