# SPDX-License-Identifier: MIT
"""What bench/coldstart and bench/slowdev-coldstart share: running and timing
commands, a cold page cache as BENCH.md defines it, the bench's small C tools,
and the inputs of the naive baselines and the sequential limit."""
import json, os, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = "/var/tmp/readset-bench"
READSET = os.path.join(ROOT, "build", "readset")   # bench/coldstart --readset changes it


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def tool(name):
    """bench/NAME.c, compiled into WORK when missing or older than its source."""
    os.makedirs(WORK, exist_ok=True)
    out = os.path.join(WORK, name)
    src = os.path.join(ROOT, "bench", name + ".c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        sh(["cc", "-O2", "-o", out, src])
    return out


def cold():
    """sync, drop the caches, then touch and free 2 GiB (BENCH.md's memory-return artifact)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")
    sh([tool("memtouch"), "2048"])


def timed(cmds, cwd):
    """Run the commands one after the other; seconds for all of them."""
    t0 = time.monotonic()
    for c in cmds:
        p = subprocess.run(c, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"bench: {' '.join(c)} failed ({p.returncode}): {p.stderr.decode()[-400:]}")
    return time.monotonic() - t0


def readset_info(rs):
    return json.loads(subprocess.run([READSET, "show", "--json", rs], capture_output=True, check=True).stdout)


def baseline_inputs(rs, lst):
    """The read set's files that still exist (for vmtouch -t) and its accessed
    ranges, written to lst (for par-readahead).  Returns (info, files,
    accessed bytes, bytes brought in, ranges); metadata counts in both."""
    info = readset_info(rs)
    files, lines, accessed, brought, nranges = [], [], 0, 0, 0
    for f in info["files"]:
        if f["kind"] == "file" and os.path.isfile(f["path"]):
            files.append(f["path"])
            for r in f["ranges"]:
                nranges += 1
                brought += r["length"]
                if r["accessed"]:
                    lines.append(f"{f['path']} {r['offset']} {r['length']}\n")
                    accessed += r["length"]
        elif f["kind"] == "blockdev":
            meta = sum(r["length"] for r in f["ranges"])
            nranges += len(f["ranges"])
            accessed += meta
            brought += meta
    with open(lst, "w") as f:
        f.writelines(lines)
    return info, files, accessed, brought, nranges


def write_seq(path, nbytes):
    """One contiguous file of nbytes of real data (the sequential limit), kept
    while its size is right."""
    if os.path.exists(path) and os.path.getsize(path) == nbytes:
        return path
    with open(path, "wb") as f:
        blk = os.urandom(1 << 20)
        left = nbytes
        while left > 0:
            f.write(blk[:min(left, len(blk))])
            left -= min(left, len(blk))
        f.flush()
        os.fsync(f.fileno())
    return path
