#!/bin/sh
# A real boot, reduced: a Debian guest (bench/guest: debootstrap minbase,
# systemd, the 6.12 cloud kernel) with readset installed from its .deb
# (make deb: lintian clean, see scripts/deb.sh), not enabled by that, and
# 'readset boot enable'd, booted twice under qemu (TCG): the first boot
# is recorded, the second replays it and records again.
# Each boot the guest says on its serial console what 'readset boot status
# --json' and 'systemctl --failed' say, and powers off.  Then the package
# is purged from the image and nothing of readset may be left.  No timing
# is asserted (bench/boot measures).
. "$(dirname "$0")/lib.sh"
need_root
command -v qemu-system-x86_64 >/dev/null || skip "needs qemu-system-x86 (make check installs it)"
command -v debootstrap >/dev/null || skip "needs debootstrap (make check installs it)"
GUEST=$SRCDIR/bench/guest

BUILD="$TMP/debbuild" sh "$SRCDIR/scripts/deb.sh" >"$TMP/deb.out" 2>&1 || fail "make deb: $(tail -200 "$TMP/deb.out")"
deb=$(tail -1 "$TMP/deb.out")
[ -s "$deb" ] || fail "make deb printed no package: $(cat "$TMP/deb.out")"

"$GUEST" root "$TMP/root" >"$TMP/root.out" 2>&1 || fail "guest root: $(cat "$TMP/root.out")"
cp "$deb" "$TMP/root/tmp/readset.deb"
chroot "$TMP/root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends /tmp/readset.deb' >"$TMP/install.out" 2>&1 ||
        fail "installing the .deb in the guest: $(tail -20 "$TMP/install.out")"
rm -f "$TMP/root/tmp/readset.deb"
wants=$TMP/root/etc/systemd/system/sysinit.target.wants/readset-boot.service
[ ! -e "$wants" ] && [ ! -L "$wants" ] || fail "installing the package enabled readset-boot.service"
# 'boot enable' enables it, offline here (systemctl in a chroot)
chroot "$TMP/root" readset boot enable >"$TMP/enable.out" 2>&1 || fail "boot enable: $(cat "$TMP/enable.out")"
[ -L "$wants" ] || fail "boot enable did not enable readset-boot.service: $(cat "$TMP/enable.out")"
# a service kept (readset keep), offline like boot enable: each boot the
# reporter stops it (its drop-in's ExecStopPost saves what is cached of
# its data), empties the cache and starts it again (the restore unit its
# drop-in wants reads it back); what keep status says then is checked
mkdir -p "$TMP/root/srv/keepdemo"
head -c $((2 * 1024 * 1024)) /dev/urandom > "$TMP/root/srv/keepdemo/data"
cat >"$TMP/root/etc/systemd/system/keepdemo.service" <<'UNIT'
[Unit]
Description=a service whose data readset keeps
[Service]
ExecStart=/bin/sh -c 'sleep 5; cat /srv/keepdemo/data >/dev/null; exec sleep infinity'
[Install]
WantedBy=multi-user.target
UNIT
ln -s ../keepdemo.service "$TMP/root/etc/systemd/system/multi-user.target.wants/keepdemo.service"
chroot "$TMP/root" readset keep enable keepdemo /srv/keepdemo >"$TMP/keep.out" 2>&1 || fail "keep enable: $(cat "$TMP/keep.out")"
# the guest's reporter: once the boot finished and readset's session ended
cat >"$TMP/root/etc/systemd/system/readset-test-report.service" <<'UNIT'
[Unit]
Description=report readset's boot status on the serial console, then power off
After=multi-user.target
[Service]
Type=simple
ExecStart=/bin/sh /usr/local/sbin/guest-report
[Install]
WantedBy=multi-user.target
UNIT
cat >"$TMP/root/usr/local/sbin/guest-report" <<'SCRIPT'
systemctl is-system-running --wait >/dev/null
while systemctl -q is-active readset-boot.service; do sleep 0.5; done
{
        systemd-analyze time
        # the kept service restarted on an empty cache (its data read
        # first, its working set; once started, it reads it only after 5 s,
        # so the restore's reads are the restore's); its restore waited for
        cat /srv/keepdemo/data >/dev/null
        systemctl stop keepdemo.service
        sync
        echo 3 >/proc/sys/vm/drop_caches
        systemctl start keepdemo.service
        r=readset-keep-restore@keepdemo.service.service
        i=0
        while [ $i -lt 120 ] && { [ "$(systemctl show -p ActiveState --value $r)" != inactive ] ||
                [ "$(systemctl show -p ExecMainExitTimestampMonotonic --value $r)" = 0 ]; }; do
                sleep 0.5
                i=$((i + 1))
        done
        echo BEGIN-KEEP; readset keep status --json; echo END-KEEP
        echo BEGIN-STATUS; readset boot status --json; echo END-STATUS
        echo BEGIN-FAILED; systemctl --failed --no-legend --plain; echo END-FAILED
        journalctl -b -u readset-boot.service -u keepdemo.service -u $r --no-pager -o short-monotonic |
                sed "s/^/journal: /"
} >/dev/ttyS0 2>&1
systemctl poweroff
SCRIPT
ln -s ../readset-test-report.service "$TMP/root/etc/systemd/system/multi-user.target.wants/readset-test-report.service"
"$GUEST" image "$TMP/root" "$TMP/guest.img" 1G >"$TMP/image.out" 2>&1 || fail "guest image: $(cat "$TMP/image.out")"
rm -rf "$TMP/root"

# between the markers of the serial log $1: the status JSON or the failed units
# (kernel messages that come between are left out)
between() { tr -d '\r' <"$1" | sed -n "/^$2/,/^$3/p" | sed '1d;$d' | grep -v '^\[ *[0-9.]*\] ' || true; }
for n in 1 2; do
        "$GUEST" boot "$TMP/guest.img" "$TMP/serial$n.log" || fail "boot $n: $(tail -30 "$TMP/serial$n.log")"
        # the guest's kernel under TCG panicked once here, in __schedule from a
        # timer interrupt, its RIP inside an instruction: the emulator's, not
        # readset's; that boot is tried once more, and said
        if ! grep -q "Startup finished in" "$TMP/serial$n.log" && grep -q "Kernel panic" "$TMP/serial$n.log"; then
                echo "boot $n: the guest's kernel panicked ($(grep -m1 'RIP:' "$TMP/serial$n.log" | tr -d '\r')): booting it once more"
                "$GUEST" boot "$TMP/guest.img" "$TMP/serial$n.log" || fail "boot $n: $(tail -30 "$TMP/serial$n.log")"
        fi
        grep -q "Startup finished in" "$TMP/serial$n.log" || fail "boot $n never finished: $(tail -40 "$TMP/serial$n.log")"
        between "$TMP/serial$n.log" BEGIN-STATUS END-STATUS >"$TMP/status$n.json"
        between "$TMP/serial$n.log" BEGIN-FAILED END-FAILED >"$TMP/failed$n"
        between "$TMP/serial$n.log" BEGIN-KEEP END-KEEP >"$TMP/keep$n.json"
        [ -s "$TMP/status$n.json" ] || fail "boot $n: no status on the console: $(tail -40 "$TMP/serial$n.log")"
        [ ! -s "$TMP/failed$n" ] || fail "boot $n left failed units: $(cat "$TMP/failed$n")"
        grep "journal: " "$TMP/serial$n.log" | tr -d '\r'
        # the restore unit's sandbox lets it read as it means to (io_uring)
        ! grep -q "journal: .*io_uring is unavailable" "$TMP/serial$n.log" ||
                fail "boot $n: the keep restore had no io_uring: $(grep 'io_uring is unavailable' "$TMP/serial$n.log")"
done

$PY - "$TMP/status1.json" "$TMP/status2.json" <<'PYEOF' || fail "the boot status is not what two boots should leave: $(head -c 3000 "$TMP/status1.json" "$TMP/status2.json")"
import json, sys
s1, s2 = (json.load(open(p)) for p in sys.argv[1:3])
def check(c, what):
    if not c:
        print("status:", json.dumps(s2, indent=1), file=sys.stderr)
        sys.exit("FAIL: " + what)
check(s1["enabled"] and len(s1["boots"]) == 1, "after boot 1: enabled, one boot")
b1 = s1["boots"][0]
check(b1["mode"] == "record", f"boot 1 recorded ({b1['mode']}: {b1['note']})")
check(b1["seconds"] > 0, "boot 1's duration from systemd")
check(b1["used_bytes"] > 1 << 20, "boot 1 recorded what the boot read (more than 1 MB)")
check(s1["read_set"]["present"] and s1["read_set"]["files"] > 50, "a read set of the boot (more than 50 files)")
check(s1["next"] == "replay+record", f"boot 2 is to replay ({s1['next']}: {s1['why']})")
check(len(s2["boots"]) == 2, "after boot 2: two boots")
b2 = s2["boots"][1]
check(b2["mode"] == "replay+record", f"boot 2 replayed and recorded ({b2['mode']}: {b2['note']})")
check(b2["bytes_read"] > 1 << 20, "boot 2 replayed more than 1 MB")
check(0 < b2.get("hit_ratio", -1) <= 1, "boot 2's hit ratio")
check(b2["lost_events"] == 0, "nothing dropped in a small boot")
# the unit's sandbox let every part work: tracing, the lookups' BPF, the replay
bad = ("not recorded", "not replayed", "recording failed", "recording not kept", "cannot keep", "cannot tell")
for b in (b1, b2):
    check(not any(w in b["note"] for w in bad), f"the {b['mode']} boot's every part ran ({b['note']})")
print(f"boot 1: {b1['seconds']:.2f} s recorded, {b1['used_bytes']/1e6:.1f} MB; "
      f"boot 2: {b2['seconds']:.2f} s, {b2['bytes_read']/1e6:.1f} MB replayed, hit {b2['hit_ratio']:.0%}")
PYEOF

# keep under systemd: saved when the service stopped, read back (the
# restore unit ran, and ended well: no failed unit) when it started
$PY - "$TMP/keep1.json" "$TMP/keep2.json" <<'PYEOF' || fail "keep under systemd: $(cat "$TMP/keep1.json" "$TMP/keep2.json")"
import json, sys
for p in sys.argv[1:3]:
    k = json.load(open(p))
    if len(k) != 1 or k[0]["unit"] != "keepdemo.service":
        sys.exit(f"FAIL: {p}: not the one unit kept")
    k = k[0]
    if k["saved_bytes"] < 1 << 20 or k["saved_files"] != 1:
        sys.exit(f"FAIL: {p}: the stop did not save the service's 2 MiB: {k}")
    if not k["restored_unix"] or k["restored_bytes"] < 1 << 20:
        sys.exit(f"FAIL: {p}: the start did not read it back: {k}")
    print(f"keep: saved {k['saved_bytes'] / 1e6:.1f} MB at the stop, read back {k['restored_bytes'] / 1e6:.1f} MB "
          f"in {k['restore_us'] / 1e6:.2f} s at the start")
PYEOF

# purged from the image: no unit, no file, no read set
mkdir -p "$TMP/mnt"
mount -o loop "$TMP/guest.img" "$TMP/mnt" || fail "cannot mount the guest image"
MNT=$TMP/mnt
LOOPDEV=$(findmnt -n -o SOURCE "$TMP/mnt")
# a saved device profile ('probe --save') goes with the purge too
mkdir -p "$TMP/mnt/var/cache/readset" && echo '{}' >"$TMP/mnt/var/cache/readset/probe-8:0.json"
chroot "$TMP/mnt" sh -c 'dpkg --purge readset' >"$TMP/purge.out" 2>&1 || fail "dpkg --purge: $(cat "$TMP/purge.out")"
left=$(cd "$TMP/mnt" && find . -path ./proc -prune -o \( -name '*readset*' ! -name 'readset-test-report.service' \) -print |
        grep -v '^./var/lib/dpkg/' || true)
[ -z "$left" ] || fail "purging readset left: $left"
unmount "$TMP/mnt"; MNT=
echo "ok: two guest boots (recorded, replayed), no failed units, nothing left after purge"
