#!/bin/sh
# readset layout killed (SIGKILL) at 24 different points of one layout --
# after the Nth extent exchange, a failpoint -- each time from the same
# scattered image: every file keeps its content (read cold, from the
# device), e2fsck of the unmounted image is clean, the donor's space is
# free again (nothing left behind), and the next layout finishes the job.
# Interrupted (SIGINT, as a Ctrl-C) it stops after the file it is moving,
# says so, exits 1, and leaves the same guarantees.
. "$(dirname "$0")/lib.sh"
need_layout
make_ext4 128
# files of several extents each, and two large ones: exchanges in chunks
$CHECK scatter "$MNT/tree" 30 3
head -c 3000000 /dev/urandom > "$MNT/tree/big1"
head -c 2500000 /dev/urandom > "$MNT/tree/big2"
find "$MNT/tree" -type f | sort -r > "$TMP/order"
record_reading "$TMP/t.readset" "$TMP/order"
( cd "$MNT/tree" && find . -type f | sort | xargs sha256sum ) > "$TMP/sums"
unmount "$MNT"
cp --sparse=always "$TMP/fs.img" "$TMP/pristine.img"
mount -t ext4 "$LOOPDEV" "$MNT"
free_pristine=$(stat -f -c %a "$MNT")

# how many exchanges the whole layout makes (one per piece of a file, and per
# 8 MiB of one: the kills land between two exchanges, each atomic)
layout() { "$READSET" layout --under "$MNT" --profile hdd --json "$TMP/t.readset"; }
layout > "$TMP/full.json" 2>"$TMP/full.err" || fail "layout: $(cat "$TMP/full.err")"
total=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["exchanges"])' "$TMP/full.json")
[ "$total" -ge 48 ] || fail "the layout made only $total exchanges: too few points to kill at"

restore() {   # the pristine image back on the same loop device (the read set names its device)
        unmount "$MNT"
        dd if="$TMP/pristine.img" of="$LOOPDEV" bs=1M conv=fsync status=none
        mount -t ext4 "$LOOPDEV" "$MNT"
}
verify() {   # what: content, fsck, no leftover
        echo 3 > /proc/sys/vm/drop_caches
        ( cd "$MNT/tree" && sha256sum --quiet -c "$TMP/sums" ) > "$TMP/sum.out" 2>&1 ||
                { check_fail "$1: content changed: $(cat "$TMP/sum.out")"; changed=$((changed + 1)); }
        free_now=$(stat -f -c %a "$MNT")
        [ $((free_pristine - free_now)) -le 16 ] ||
                check_fail "$1: $((free_pristine - free_now)) blocks fewer free than before: a donor stayed"
        unmount "$MNT"
        e2fsck -fn "$LOOPDEV" > "$TMP/fsck.out" 2>&1 ||
                { check_fail "$1: e2fsck: $(tail -5 "$TMP/fsck.out")"; fsck_bad=$((fsck_bad + 1)); }
        mount -t ext4 "$LOOPDEV" "$MNT"
}

changed=0 fsck_bad=0 kills=0
# 24 points spread over the whole layout, the first and the last included
for i in $(seq 0 23); do
        n=$((1 + i * (total - 1) / 23))
        restore
        rc=0
        READSET_LAYOUT_FAILPOINT=kill:$n layout > /dev/null 2>"$TMP/kill.err" || rc=$?
        [ "$rc" = 137 ] || check_fail "kill after exchange $n: exit $rc, not killed: $(cat "$TMP/kill.err")"
        kills=$((kills + 1))
        verify "killed after exchange $n of $total"
done
echo "killed $kills times: $changed with changed content, $fsck_bad with fsck errors"
[ -z "$FAILED" ] || fail "crash test"

# after a kill the next layout finishes the job
restore
READSET_LAYOUT_FAILPOINT=kill:$((total / 2)) layout > /dev/null 2>&1 && fail "the failpoint did not fire"
layout > "$TMP/after.json" 2>"$TMP/after.err" || fail "layout after a kill: $(cat "$TMP/after.err")"
runs=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["donor_runs"])' "$TMP/after.json")
$CHECK consecutive --runs "$runs" $(cat "$TMP/order") || fail "the layout after a kill did not finish the job"
verify "layout after a kill"

# interrupted: stops after the file being moved, exit 1, said
restore
rc=0
READSET_LAYOUT_FAILPOINT=interrupt:$((total / 3)) "$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset" \
        > "$TMP/int.out" 2>"$TMP/int.err" || rc=$?
[ "$rc" = 1 ] || fail "interrupted layout: exit $rc: $(cat "$TMP/int.err")"
grep -q "interrupted after .* files: every file keeps its content" "$TMP/int.err" ||
        fail "interrupted layout: $(cat "$TMP/int.err")"
verify "interrupted"
[ -z "$FAILED" ] || fail "crash test"

# a failed check (the failpoint takes the 5th file's read-back as differing):
# layout stops, exit 1, names the file; the old data stays pinned under a
# name with a note of where it lies; the next layout refuses until
# --undo-leftovers removes them; content and fsck as always
restore
rc=0
READSET_LAYOUT_FAILPOINT=corrupt:5 "$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset" \
        > "$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
[ "$rc" = 1 ] || fail "failed check: exit $rc: $(cat "$TMP/bad.err")"
grep -q "read back from the device after its move, it differs from before: layout stopped; its data from before is kept in" \
        "$TMP/bad.err" || fail "failed check: $(cat "$TMP/bad.err")"
set -- "$MNT"/readset-layout-rescue-*.txt
[ -f "$1" ] || fail "no rescue note: $(ls "$MNT")"
grep -q "at device byte" "$1" || fail "the rescue note says nowhere: $(cat "$1")"
[ -f "${1%.txt}" ] || fail "no rescue file beside the note"
rc=0; "$READSET" layout --under "$MNT" --profile hdd "$TMP/t.readset" > /dev/null 2>"$TMP/again.err" || rc=$?
[ "$rc" = 1 ] && grep -q "left .*readset-layout-rescue-\* there" "$TMP/again.err" ||
        fail "a layout after a failed check did not refuse: $rc $(cat "$TMP/again.err")"
"$READSET" layout --under "$MNT" --undo-leftovers --json "$TMP/t.readset" > "$TMP/undo.json" || fail "undo-leftovers"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["removed"]) == 2, d' "$TMP/undo.json" ||
        fail "undo-leftovers: $(cat "$TMP/undo.json")"
[ -z "$(ls "$MNT" | grep readset-layout-rescue)" ] || fail "rescue files left: $(ls "$MNT")"
verify "after a failed check and --undo-leftovers"
[ -z "$FAILED" ] || fail "crash test"
echo "ok"
