#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Which names in a directory a command opened (for I/O: opens with O_PATH
are not reported by inotify, and neither are lookups and stats).

  opens.py DIR -- CMD [ARGS...]   runs CMD; prints one name per line that was
                                  opened in DIR (IN_OPEN), then exits with
                                  CMD's exit status.
"""
import ctypes, os, struct, subprocess, sys

IN_OPEN = 0x20
IN_NONBLOCK = 0o4000


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_NONBLOCK)
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(sys.argv[1]), IN_OPEN) < 0:
        sys.exit(f"opens.py: inotify: {os.strerror(ctypes.get_errno())}")
    rc = subprocess.run(sys.argv[3:]).returncode
    names = set()
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            break
        off = 0
        while off < len(buf):
            _, mask, _, n = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + n].rstrip(b"\0")
            if mask & IN_OPEN and name:
                names.add(name)
            off += 16 + n
    for n in sorted(names):
        sys.stdout.buffer.write(n + b"\n")
    sys.exit(rc)


if __name__ == "__main__":
    main()
