#!/usr/bin/env python3
# ptyrun.py FILE CMD...: CMD with its standard error on a pseudo-terminal
# of COLUMNS columns (60), standard input and output as ours, all it wrote
# there into FILE, its exit status ours: what a user at a terminal sees.
# ptyrun.py --check FILE WHAT: FILE holds WHAT's progress line, redrawn in
# place (\r), never as wide as the terminal, cleared at the end.
import fcntl, os, pty, struct, subprocess, sys, termios

COLUMNS = 60

def run(out, cmd):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    p = subprocess.Popen(cmd, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:     # EIO: the last holder of the terminal is gone
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    with open(out, "wb") as f:
        f.write(seen)
    return p.wait()

def check(path, what):
    data = open(path, "rb").read().replace(b"\r\n", b"\n")
    head = b"\r" + what.encode() + b": "
    if head not in data:
        sys.exit("no progress line %r in %r" % (head, data[:300]))
    for line in data.split(b"\n"):
        for piece in line.split(b"\r"):
            if piece.startswith(head[1:]) and len(piece.rstrip(b" ")) >= COLUMNS:
                sys.exit("%d columns on a terminal of %d: %r" % (len(piece), COLUMNS, piece))
    # cleared: its last drawing blanked, the cursor back at the start
    last = data.rindex(head)
    tail = data[last + 1:]
    end = tail.find(b"\r")
    if end < 0 or not tail[end + 1:].startswith(b" ") or b"\r" not in tail[end + 1:]:
        sys.exit("the progress line was not cleared: %r" % tail[-200:])
    blank = tail[end + 1:end + 1 + tail[end + 1:].index(b"\r")]
    if blank.strip(b" ") or len(blank) < len(tail[:end].rstrip(b" ")):
        sys.exit("the progress line was not cleared: %r" % tail[-200:])
    print("%s: %d drawings of the progress line" % (what, data.count(head)))

if sys.argv[1] == "--check":
    check(sys.argv[2], sys.argv[3])
else:
    sys.exit(run(sys.argv[1], sys.argv[2:]))
