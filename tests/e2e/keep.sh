#!/bin/sh
# keep, without a running systemd (tests/e2e/boot-guest.sh runs it under
# one): enable writes the unit's paths and a drop-in beside the unit that
# systemd-analyze accepts with the templates as built; save snapshots the
# paths; restore reads them back after the cache is gone and, warm, reads
# nothing; status says both; names that are not a service's are refused;
# disable leaves nothing behind.
. "$(dirname "$0")/lib.sh"
need_root; need_loop; need_python

make_ext4 64 128
mkdir -p "$MNT/db/base"
for i in 1 2 3; do head -c $((2 * 1024 * 1024)) /dev/urandom > "$MNT/db/base/$i"; done
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
K="$READSET keep --state $TMP/state --unit-dir $TMP/units"
mkdir -p "$TMP/units"
printf '[Unit]\nDescription=demo\n[Service]\nExecStart=/bin/sleep 1\n' > "$TMP/units/demo.service"
cp "$TMP/units/demo.service" "$TMP/units/demo.service.orig"

$K enable demo "$MNT/db" 2>"$TMP/enable.err" || fail "enable: $(cat "$TMP/enable.err")"
dropin=$TMP/units/demo.service.d/50-readset-keep.conf
[ -f "$dropin" ] || fail "no drop-in"
grep -qx 'Wants=readset-keep-restore@demo.service.service readset-keep-save@demo.service.timer' "$dropin" ||
        { cat "$dropin"; fail "the drop-in does not want the restore and the timer"; }
grep -qx 'PropagatesStopTo=readset-keep-save@demo.service.timer' "$dropin" || fail "the timer is not stopped with the unit"
grep -q '^ExecStopPost=+-/.*/readset keep save demo.service$' "$dropin" || fail "no save when the unit stops"
cmp -s "$TMP/units/demo.service" "$TMP/units/demo.service.orig" || fail "enable changed the unit's own file"
[ "$(stat -c %a:%u "$TMP/state")" = 755:0 ] || fail "the state directory is not root's, readable by all"
grep -qx "$MNT/db" "$TMP/state/demo.service.paths" || fail "the paths are not kept"
# systemd accepts the drop-in and the templates as built (their commands
# pointed at /bin/true: readset is not installed where they say)
if command -v systemd-analyze >/dev/null; then
        for t in readset-keep-restore@.service readset-keep-save@.service readset-keep-save@.timer; do
                inst=$(echo "$t" | sed 's/@\./@demo.service./')
                sed 's|^ExecStart=.*|ExecStart=/bin/true|' "$BUILDDIR/$t" > "$TMP/units/$inst"
        done
        sed -i 's|^ExecStopPost=+-.*|ExecStopPost=+-/bin/true|' "$dropin"
        SYSTEMD_UNIT_PATH="$TMP/units:" systemd-analyze verify --man=no "$TMP/units/demo.service" \
                "$TMP/units/readset-keep-save@demo.service.timer" > "$TMP/verify.out" 2>&1 ||
                { cat "$TMP/verify.out"; fail "systemd-analyze verify"; }
        [ ! -s "$TMP/verify.out" ] || { cat "$TMP/verify.out"; fail "systemd-analyze verify said something"; }
        rm -f "$TMP/units"/readset-keep-*
else
        echo "  the units: not verified (no systemd-analyze)"
fi

# save: what is cached of the paths (two of the three files, a piece each)
"$TESTPROG" read "$MNT/db/base/1" 0 262144
"$TESTPROG" read "$MNT/db/base/2" 1048576 262144
$K save demo.service 2>"$TMP/save.err" || fail "save: $(cat "$TMP/save.err")"
json_check "$TMP/state/demo.service.readset" "covered('$MNT/db/base/2', 1048576, 1310720) and '$MNT/db/base/3' not in files"
$K status --json > "$TMP/st.json" || fail "status"
"$PY" -c "
import json, sys
d = json.load(open('$TMP/st.json'))
sys.exit(0 if len(d) == 1 and d[0]['unit'] == 'demo.service' and d[0]['saved_bytes'] >= 2 * 262144 and d[0]['saved_unix'] > 0 else 1)" ||
        { cat "$TMP/st.json"; fail "status after save"; }

# a restore after the cache is gone ($1: which) leaves every range
# resident (tried once more from a cold start if not: DAMON, see replay.sh);
# its messages in $TMP/restore.err
restore_cold() {
        local tries=0
        while :; do
                unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
                $K restore demo 2>"$TMP/restore.err" || fail "$1: $(cat "$TMP/restore.err")"
                set -- "$1" $(resident_ranges "$TMP/state/demo.service.readset" "$MNT")
                [ "$3" = 0 ] && return 0
                tries=$((tries + 1))
                [ $tries -lt 2 ] || fail "not resident after the $1"
                echo "  again, from a cold start (DAMON, see replay.sh)"
        done
}

# restore after the cache is gone: every range back; warm: nothing read
restore_cold restore
$K status --json demo > "$TMP/st2.json" || fail "status demo"
"$PY" -c "
import json, sys
d = json.load(open('$TMP/st2.json'))[0]
sys.exit(0 if d['restored_bytes'] >= 2 * 262144 and d['restored_unix'] > 0 else 1)" ||
        { cat "$TMP/st2.json"; fail "status after restore"; }
$K restore demo 2>/dev/null || fail "restore, warm"
$K status --json demo > "$TMP/st3.json" || fail "status demo"
"$PY" -c "
import json, sys
sys.exit(0 if json.load(open('$TMP/st3.json'))[0]['restored_bytes'] == 0 else 1)" ||
        { cat "$TMP/st3.json"; fail "a warm restore read something"; }
# on solid state (the loop device told so) the restore reads through
# io_uring, a few at a time: every range back, and nothing said
# (the flag goes with the loop device: attached again, it is set anew)
echo 0 >"/sys/block/$(basename "$LOOPDEV")/queue/rotational" || fail "cannot mark the loop device solid"
"$READSET" replay -n "$TMP/state/demo.service.readset" 2>/dev/null | grep -q "(solid-state)" ||
        fail "the loop device marked solid is not planned for as solid state"
restore_cold "restore on solid state"
! grep -q "io_uring is unavailable" "$TMP/restore.err" || fail "restore on solid state: $(cat "$TMP/restore.err")"
# where io_uring is refused (a sandbox's filter): still read back, and said
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
timeout -k 5 120 "$PY" "$SRCDIR/tests/e2e/no-uring.py" $K restore demo 2>"$TMP/restore.err" ||
        fail "restore without io_uring: $(cat "$TMP/restore.err")"
grep -q "io_uring is unavailable" "$TMP/restore.err" ||
        { cat "$TMP/restore.err"; fail "a restore without io_uring did not say so"; }
$K status --json demo > "$TMP/st4.json" || fail "status demo"
"$PY" -c "
import json, sys
sys.exit(0 if json.load(open('$TMP/st4.json'))[0]['restored_bytes'] >= 2 * 262144 else 1)" ||
        { cat "$TMP/st4.json" "$TMP/restore.err"; fail "a restore without io_uring read nothing back"; }
echo 1 >"/sys/block/$(basename "$LOOPDEV")/queue/rotational"
$K status | grep -q "^demo.service" || fail "status as text"
# status is for everyone; the snapshot is root's alone
chmod 755 "$TMP"
user_readset keep --state "$TMP/state" status --json demo > "$TMP/st4.json" 2>&1 || { cat "$TMP/st4.json"; fail "status as $(user_name)"; }
grep -q '"unit": "demo.service"' "$TMP/st4.json" || { cat "$TMP/st4.json"; fail "status as $(user_name)"; }
[ "$(stat -c %a "$TMP/state/demo.service.readset")" = 600 ] || fail "the snapshot is readable by others"

# a kept path that resolves elsewhere now (a symlink put on its way, by
# whoever owns a directory of it) is skipped, not followed
mv "$MNT/db" "$MNT/db.real"
ln -s "$MNT/db.real" "$MNT/db"
"$TESTPROG" read "$MNT/db.real/base/3" 0 65536
$K save demo 2>/dev/null || fail "save with a symlink on the way"
json_check "$TMP/state/demo.service.readset" "not [p for p in files if p.startswith('$MNT/db')]"
rm "$MNT/db"
mv "$MNT/db.real" "$MNT/db"

# what is not a service's name is refused, nothing written
for bad in "a/b" "../x" "x.socket" "-x" ""; do
        if $K enable "$bad" "$MNT/db" 2>/dev/null; then fail "enable took '$bad'"; fi
done
[ "$(ls "$TMP/state" | wc -l)" = 3 ] || { ls "$TMP/state"; fail "a refused name left a file"; }

# disable: the drop-in (and its directory), the paths, the snapshot and the
# status gone; the unit's own file left as it was
$K disable demo 2>/dev/null || fail "disable"
[ ! -e "$TMP/units/demo.service.d" ] || fail "the drop-in's directory is left"
[ -z "$(ls "$TMP/state")" ] || fail "disable left: $(ls "$TMP/state")"
cmp -s "$TMP/units/demo.service" "$TMP/units/demo.service.orig" || fail "the unit's own file changed"
if $K disable demo 2>/dev/null; then fail "disable of a unit not kept succeeded"; fi
if $K restore demo 2>/dev/null; then fail "restore of a unit not kept succeeded"; fi
echo "keep: ok"
