#!/bin/sh
# record captures exactly the ranges a program reads (read(2) and mmap), with
# the right paths, through a symlink, and for a file deleted while recording.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop; need_python

make_ext4 256 128
RA=$((128 * 1024))
MiB=1048576
dd if=/dev/urandom of="$MNT/big.dat" bs=1M count=100 status=none
dd if=/dev/urandom of="$MNT/mapped.dat" bs=1M count=64 status=none
ln -s big.dat "$MNT/link-to-big"
# Remount: the filesystem's data and metadata leave the page cache.
unmount "$MNT"
mount -t ext4 "$LOOPDEV" "$MNT"

# Read [50 MiB, 51 MiB) of big.dat through the symlink; touch pages 1000,
# 5000 and 12000 of mapped.dat; then delete mapped.dat before recording ends.
"$READSET" record --cold -q -o "$TMP/r.readset" -- sh -c "
        '$TESTPROG' read '$MNT/link-to-big' $((50 * MiB)) $MiB &&
        '$TESTPROG' mmap '$MNT/mapped.dat' 1000 5000 12000 >/dev/null &&
        rm '$MNT/mapped.dat'" || fail "record failed"

B="'$MNT/big.dat'"
M="'$MNT/mapped.dat'"
# Every page read is in the read set, and as accessed but for at most one
# folio: where the kernel's readahead left the page a read needs out, it
# reads that one folio itself (filemap_create_folio), which raises
# add_to_page_cache and no mm_filemap_get_pages (seen about once in 70
# runs, the old code and this alike).  FOLIO: the largest this kernel uses
# for such a read here.
FOLIO=65536
json_check "$TMP/r.readset" \
        "$B in files and files[$B]['kind'] == 'file' and not files[$B]['deleted']" \
        "'$MNT/link-to-big' not in files" \
        "covered($B, 50*$MiB, 51*$MiB)" \
        "uncovered($B, 50*$MiB, 51*$MiB, 'accessed') <= $FOLIO" \
        "$MiB - $FOLIO <= total($B, 'accessed') <= $MiB" \
        "all(50*$MiB <= a and b <= 51*$MiB + $RA for a, b in ranges($B))" \
        "$M in files and files[$M]['deleted']" \
        "all(covered($M, p*4096, p*4096+4096, 'accessed') for p in (1000, 5000, 12000))" \
        "all(any(p*4096 - $RA <= a and b <= p*4096 + $RA for p in (1000, 5000, 12000)) for a, b in ranges($M))" \
        "all(f['ino'] < 11 for f in d['files'] if f['kind'] == 'unresolved')" \
        "d['lost_events'] == 0" \
        "files[$B]['size'] == 100*$MiB" \
        "any(f['kind'] == 'blockdev' and f['path'] == '$LOOPDEV' for f in d['files'])"

# The text reader (fallback when binary records cannot be decoded) agrees.
unmount "$MNT"; mount -t ext4 "$LOOPDEV" "$MNT"
READSET_TRACE_TEXT=1 "$READSET" record -q -o "$TMP/t.readset" -- "$TESTPROG" read "$MNT/big.dat" $((50 * MiB)) $MiB ||
        fail "record (text reader) failed"
json_check "$TMP/t.readset" \
        "$MiB - $FOLIO <= total($B, 'accessed') <= $MiB" \
        "covered($B, 50*$MiB, 51*$MiB)" \
        "uncovered($B, 50*$MiB, 51*$MiB, 'accessed') <= $FOLIO" \
        "all(50*$MiB <= a and b <= 51*$MiB + $RA for a, b in ranges($B))"
echo "record-ranges: ok"
