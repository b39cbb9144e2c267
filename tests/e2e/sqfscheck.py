#!/usr/bin/python3
"""Where a squashfs image keeps each file's data, read from the image itself.

  sqfscheck.py starts IMG MOUNTPOINT FILE...
      for each FILE (a path below MOUNTPOINT, where IMG is mounted): the
      byte offset in IMG of its first data block, found by its inode number
      in the image's inode table (gzip-compressed metadata, or none)
  sqfscheck.py ordered IMG MOUNTPOINT FILE...
      fail unless those offsets increase in the order given

Files must have at least one whole data block (no fragment-only file).
Written from the squashfs 4.0 layout as the kernel's squashfs_fs.h gives it.
"""
import os, struct, sys, zlib

SUPER = struct.Struct("<IIIIIHHHHHHQQQQQQQQ")
MAGIC = 0x73717368
NO_FRAGMENT = 0xFFFFFFFF


def metadata(img, start, end):
    """The metadata blocks from start to end, decompressed and joined."""
    out, off = bytearray(), start
    while off < end:
        (hdr,) = struct.unpack_from("<H", img, off)
        size, raw = hdr & 0x7FFF, hdr & 0x8000
        body = img[off + 2:off + 2 + size]
        out += body if raw else zlib.decompress(body)
        off += 2 + size
    return bytes(out)


def data_starts(path):
    img = open(path, "rb").read()
    sb = SUPER.unpack_from(img, 0)
    magic, inodes, _, block_size, _, comp = sb[0:6]
    if magic != MAGIC:
        sys.exit(f"{path}: not a squashfs image")
    if comp != 1:
        sys.exit(f"{path}: metadata compressed with id {comp}; this checker reads gzip (1) only")
    inode_start, dir_start = sb[15], sb[16]
    t = metadata(img, inode_start, dir_start)
    starts, off = {}, 0
    while off < len(t):
        itype, _, _, _, _, number = struct.unpack_from("<HHHHII", t, off)
        off += 16
        if itype == 1:
            off += 16
        elif itype == 8:
            _, _, _, _, count, _, _ = struct.unpack_from("<IIIIHHI", t, off)
            off += 24
            for _ in range(count):
                name_size = struct.unpack_from("<III", t, off)[2]
                off += 12 + name_size + 1
        elif itype in (2, 9):
            if itype == 2:
                start, frag, _, size = struct.unpack_from("<IIII", t, off)
                off += 16
            else:
                start, size, _, _, frag, _, _ = struct.unpack_from("<QQQIIII", t, off)
                off += 40
            blocks = size // block_size if frag != NO_FRAGMENT else -(-size // block_size)
            off += 4 * blocks
            starts[number] = (start, size // block_size)
        elif itype in (3, 10):
            target = struct.unpack_from("<II", t, off)[1]
            off += 8 + target + (4 if itype == 10 else 0)
        elif itype in (4, 5):
            off += 8
        elif itype in (11, 12):
            off += 12
        elif itype in (6, 7):
            off += 4
        elif itype in (13, 14):
            off += 8
        else:
            sys.exit(f"{path}: unknown inode type {itype} at {off - 16}")
    return starts


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("starts", "ordered"):
        sys.exit(__doc__)
    cmd, img, mnt, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    starts = data_starts(img)
    got = []
    for f in files:
        ino = os.lstat(os.path.join(mnt, f)).st_ino
        if ino not in starts:
            sys.exit(f"{f}: inode {ino} is no regular file of {img}")
        start, whole = starts[ino]
        if whole == 0:
            sys.exit(f"{f}: no whole data block (a fragment only): not checkable")
        got.append(start)
        if cmd == "starts":
            print(start, f)
    if cmd == "ordered":
        for i in range(1, len(got)):
            if got[i] <= got[i - 1]:
                sys.exit(f"{files[i]} lies at {got[i]}, before {files[i - 1]} at {got[i - 1]}")


main()
