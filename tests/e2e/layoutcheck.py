#!/usr/bin/python3
"""Helpers of the layout tests: make a scattered tree, read extent maps (FIEMAP).

  layoutcheck.py scatter ROOT N SEED [--text]
                                       N files in a few directories, written
                                       interleaved in rounds, each chunk synced:
                                       every file in several extents, the files'
                                       extents mixed over the disk (--text: of
                                       random words, compressible, else bytes)
  layoutcheck.py order READSET TOP     the read set's regular files under TOP, in
                                       first-access order (the read set's order)
  layoutcheck.py maps FILE...          each file's extents (logical physical length)
  layoutcheck.py consecutive [--runs N] FILE...
                                       fail unless the files, in this order, lie in
                                       one run of consecutive blocks (at most N runs:
                                       the donor space may come in several, split by
                                       ext4's backup superblocks), each file whole
                                       where the donor is (on blocks smaller than a
                                       page: gaps of less than a page between files)
"""
import array, fcntl, json, os, random, struct, subprocess, sys

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 1
HEAD = struct.Struct("=QQIIII")        # struct fiemap
EXT = struct.Struct("=QQQQQIIII")      # struct fiemap_extent
LAST = 1


def fiemap(path):
    out, start = [], 0
    with open(path, "rb") as f:
        while True:
            count = 64
            buf = bytearray(HEAD.size + count * EXT.size)
            HEAD.pack_into(buf, 0, start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0, count, 0)
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
            mapped = HEAD.unpack_from(buf, 0)[3]
            if mapped == 0:
                return out
            last = False
            for i in range(mapped):
                lo, ph, ln, _, _, fl, _, _, _ = EXT.unpack_from(buf, HEAD.size + i * EXT.size)
                out.append((lo, ph, ln))
                last = last or bool(fl & LAST)
            if last:
                return out
            start = out[-1][0] + out[-1][2]


WORDS = [b"alpha", b"beta", b"gamma", b"delta", b"libc", b"python", b"module", b"init"]


def chunk(rnd, n, text):
    """n random bytes, or (text) n bytes of random words: compressible"""
    if not text:
        return rnd.randbytes(n)
    return b" ".join(rnd.choice(WORDS) for _ in range(n // 4 + 1))[:n]


def scatter(root, n, seed, text=False):
    rnd = random.Random(seed)
    paths = []
    for i in range(n):
        d = os.path.join(root, f"d{i % 7}", f"s{i % 3}")
        os.makedirs(d, exist_ok=True)
        paths.append(os.path.join(d, f"f{i:03d}"))
    fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for p in paths]
    for _ in range(5):
        for fd in rnd.sample(fds, len(fds)):
            os.write(fd, chunk(rnd, rnd.randint(1, 8) * 4096 + rnd.randint(0, 4095), text))
            os.fsync(fd)
    for fd in fds:
        os.close(fd)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "scatter":
        text = "--text" in args
        args = [a for a in args if a != "--text"]
        scatter(args[0], int(args[1]), int(args[2]), text)
    elif cmd == "order":
        d = json.loads(subprocess.run([os.environ["READSET"], "show", "--json", args[0]], check=True,
                                      capture_output=True).stdout)
        top = args[1].rstrip("/") + "/"
        for f in d["files"]:
            if f["kind"] == "file" and f["path"].startswith(top):
                print(f["path"])
    elif cmd == "maps":
        for p in args:
            print(p, " ".join(f"{lo}:{ph}:{ln}" for lo, ph, ln in fiemap(p)))
    elif cmd == "consecutive":
        # blocks smaller than a page are moved page-aligned: a file may start
        # up to a page minus a block after the previous one's end
        runs = 1
        if args[0] == "--runs":
            runs, args = int(args[1]), args[2:]
        slack = os.sysconf("SC_PAGE_SIZE") - os.statvfs(args[0]).f_frsize
        prev_end, bad = None, 0
        for p in args:
            m = fiemap(p)
            size = os.stat(p).st_size
            if not m:
                print(f"{p}: no extents", file=sys.stderr)
                bad += 1
                continue
            for i, (lo, ph, ln) in enumerate(m):
                if lo >= size:
                    break
                if prev_end is not None and not prev_end <= ph <= prev_end + slack:
                    what = "inside the file" if i else "after the previous file"
                    print(f"{p}: extent {i} at {ph}, not at {prev_end} ({what})", file=sys.stderr)
                    bad += 1
                prev_end = ph + ln
        if bad > runs - 1:
            sys.exit(f"{bad} breaks in the run ({runs} runs of donor space)")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
