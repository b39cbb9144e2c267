#!/bin/sh
# One set of device names for every option that takes a device or a
# profile (device/names.h): every name replay --device takes, run
# --device, report --device and --profile, and layout --profile take too
# (and a profile file); an unknown name is a usage error that lists them
# all, in each; every --help of those lists them, from the same table.
. "$(dirname "$0")/lib.sh"
need_python

# a small read set of files that are there (no root needed)
PYTHONPATH="$SRCDIR/tests/e2e" "$PY" -c '
import sys, mkreadset
mkreadset.write(sys.argv[1], [{"path": p, "identity": "stat"} for p in sys.argv[2:]])
' "$TMP/s.readset" "$READSET" "$SRCDIR/README.md" || fail "mkreadset"
cp "$SRCDIR/profiles/nvme.json" "$TMP/mine.json"

# the names, as the refusal of an unknown one says them
rc=0; "$READSET" replay -n --device floppy "$TMP/s.readset" 2> "$TMP/err" || rc=$?
[ "$rc" = 2 ] || fail "replay --device floppy: exit $rc: $(cat "$TMP/err")"
list=$(sed -n "s/^readset replay: unknown --device 'floppy' (\(.*\))\$/\1/p" "$TMP/err")
[ -n "$list" ] || fail "replay --device floppy does not list the names: $(cat "$TMP/err")"
names=$(echo "$list" | sed 's/, or a profile file.*//; s/[(),]/ /g')
for n in rotational solid hdd usb sd nvme share hdd-7200 usb2-bridge sd-card share-2ms share-2ms-smb share-2ms-nfs; do
        echo " $names " | grep -q " $n " || fail "'$n' not among the names: $list"
done

for n in $names "$TMP/mine.json"; do
        "$READSET" replay -n --device "$n" "$TMP/s.readset" > "$TMP/out" 2> "$TMP/err" ||
                fail "replay -n --device $n: $(cat "$TMP/err")"
        grep -q "^device: " "$TMP/out" || fail "replay -n --device $n: $(cat "$TMP/out")"
        "$READSET" run --device "$n" "$TMP/s.readset" -- true 2> "$TMP/err" ||
                fail "run --device $n: $(cat "$TMP/err")"
        ! grep -q "device" "$TMP/err" || fail "run --device $n: $(cat "$TMP/err")"
        "$READSET" report --no-probe --device "$n" "$TMP/s.readset" > /dev/null 2> "$TMP/err" ||
                fail "report --device $n: $(cat "$TMP/err")"
        "$READSET" report --no-probe --profile "$n" "$TMP/s.readset" > /dev/null 2> "$TMP/err" ||
                fail "report --profile $n: $(cat "$TMP/err")"
        # (layout -n asks the file system of the read set's files: on one it
        # cannot lay out, it says so, and that is no refusal of the name)
        rc=0; "$READSET" layout -n --profile "$n" "$TMP/s.readset" > /dev/null 2> "$TMP/err" || rc=$?
        [ "$rc" = 0 ] || { [ "$rc" = 1 ] && ! grep -q "profile" "$TMP/err"; } ||
                fail "layout -n --profile $n: exit $rc: $(cat "$TMP/err")"
done

# an unknown name: a usage error, before any work, listing the same names
for cmd in "replay -n --device" "run --device" "report --device" "report --profile" "layout -n --profile"; do
        opt=${cmd##* }
        rc=0; "$READSET" $cmd floppy "$TMP/s.readset" -- true 2> "$TMP/err" || rc=$?
        [ "$rc" = 2 ] || fail "$cmd floppy: exit $rc: $(cat "$TMP/err")"
        grep -qF "unknown $opt 'floppy' ($list)" "$TMP/err" || fail "$cmd floppy: $(cat "$TMP/err")"
done

# every --help that takes a device lists the names
for v in replay run report layout; do
        "$READSET" "$v" --help | tr -s ' \n' '  ' > "$TMP/help"
        grep -qF "$list" "$TMP/help" || fail "$v --help does not list the names ($list)"
done
echo "devices: ok ($names)"
