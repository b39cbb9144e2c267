#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write read sets by hand (docs/FORMAT.md), for the hostile-input tests:
whatever a crafted file may hold -- any path bytes, any identity, any range
-- with correct checksums, so that it reaches readset's checks of values and
not only the format's.

  mkreadset.py OUT SPEC.json     SPEC: {"files": [FILE...], "lookups": [LOOKUP...], "command": "..."}
  FILE:   {"path": "...", or "path_hex": "2f746d70...", "kind": 0|1|2,
           "identity": "stat" (dev, ino, size, mtime from the path now) or "dev", "ino", "size", "mtime_ns",
           "ranges": [[offset, length], ...] (default [[0, 4096]]), "flags": 0}
  LOOKUP: {"path": "...", "op": 2, "result": 0, "time_us": 0 (default: the previous one's)}
Or from Python: import mkreadset; mkreadset.write(out, files, lookups).
"""
import json, os, sys, zlib

MAGIC = b"RDSET\r\n\x1a"


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(v):
    return varint((v << 1) ^ (v >> 63) if v >= 0 else ((-v - 1) << 1) | 1)


def string(b):
    if isinstance(b, str):
        b = os.fsencode(b)
    return varint(len(b)) + b


def file_entry(f):
    path = bytes.fromhex(f["path_hex"]) if "path_hex" in f else os.fsencode(f["path"])
    dev, ino, size, mtime = f.get("dev", 0), f.get("ino", 0), f.get("size", 0), f.get("mtime_ns", 0)
    if f.get("identity") == "stat":
        st = os.lstat(path)
        dev, ino, size, mtime = st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
    out = varint(f.get("kind", 0)) + varint(f.get("flags", 0)) + varint(dev) + varint(ino) + varint(size)
    out += zigzag(mtime) + string(path)
    ranges = f.get("ranges", [[0, 4096]])
    out += varint(len(ranges))
    end = 0
    for off, length in ranges:
        out += zigzag(off - end) + varint(length) + zigzag(0) + varint(1)
        end = off + length
    return out


def section(tag, body):
    return bytes([tag]) + varint(len(body)) + body


def write(out, files, lookups=(), command="crafted"):
    meta = varint(1700000000) + varint(1000) + varint(4096) + varint(2) + varint(0) + varint(0) + varint(0)
    meta += string(command)
    fbody = varint(len(files)) + b"".join(file_entry(f) for f in files)
    lbody = varint(len(lookups))
    last = 0
    for lk in lookups:
        t = lk.get("time_us", last)
        lbody += zigzag(t - last) + varint(lk.get("op", 2)) + zigzag(lk.get("result", 0)) + varint(1) + string(lk["path"])
        last = t
    payload = section(1, meta) + section(2, fbody) + section(3, lbody) + b"\0"
    hdr = MAGIC + (1).to_bytes(2, "little") + (0).to_bytes(2, "little") + (0).to_bytes(4, "little")
    hdr += len(payload).to_bytes(8, "little") + len(payload).to_bytes(8, "little")
    hdr += zlib.crc32(payload).to_bytes(4, "little")
    hdr += zlib.crc32(hdr).to_bytes(4, "little")
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(hdr + payload)
    os.chmod(tmp, 0o600)
    os.rename(tmp, out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        spec = json.load(f)
    write(sys.argv[1], spec.get("files", []), spec.get("lookups", []), spec.get("command", "crafted"))
