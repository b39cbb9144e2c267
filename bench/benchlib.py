# SPDX-License-Identifier: MIT
"""What the benchmarks share: running and timing commands, a cold page cache as BENCH.md defines it, the bench's small C tools,
and the inputs of the naive baselines and the sequential limit."""
import json, os, random, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = "/var/lib/readset-bench"   # root-only above it: read sets are trusted there (docs/SECURITY.md)
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


def median_ci(values, conf=0.95):
    """The median of values and a distribution-free interval around it at confidence conf or more: the order
    statistics whose ranks a binomial(n, 1/2) puts at (1 - conf) / 2 or less on either side (n >= 6 for 95%)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        raise ValueError("no values")
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    # k: the largest rank with P(B <= k - 1) <= (1 - conf) / 2; the interval is [v(k), v(n - k + 1)]
    tail, k, cdf = (1 - conf) / 2, 0, 0.0
    from math import comb
    while k < n // 2:
        cdf += comb(n, k) / 2 ** n
        if cdf > tail:
            break
        k += 1
    if k == 0:
        return med, v[0], v[-1]
    return med, v[k - 1], v[n - k]


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


# The modules python3 imports in the slow-device benchmarks
PY_IMPORTS = ("json csv email http.client urllib.request xml.etree.ElementTree sqlite3 decimal fractions "
              "statistics argparse logging asyncio unittest subprocess tarfile zipfile gzip bz2 lzma hashlib "
              "uuid datetime calendar typing dataclasses pathlib shutil tempfile glob pickle configparser "
              "socket ssl threading multiprocessing ctypes inspect ast traceback random html.parser mimetypes "
              "base64 smtplib ipaddress platform zoneinfo").split()


def ensure_python(dst):
    """python3 with its whole standard library under dst (bin/, lib/) and the import script."""
    if os.path.exists(os.path.join(dst, "imports.py")):
        return
    os.makedirs(os.path.join(dst, "bin"), exist_ok=True)
    os.makedirs(os.path.join(dst, "lib"), exist_ok=True)
    real = os.path.realpath("/usr/bin/python3")
    shutil.copy2(real, os.path.join(dst, "bin", "python3"))
    sh(["cp", "-a", f"/usr/lib/{os.path.basename(real)}", os.path.join(dst, "lib") + "/"])
    with open(os.path.join(dst, "imports.py"), "w") as f:
        f.write("import " + ", ".join(PY_IMPORTS) + "\n")


def age_fs(mnt, seed=11):
    """Years of use, quickly: files of all sizes to 55% of the file system,
    then half of them, at random, deleted."""
    rnd = random.Random(seed)
    st = os.statvfs(mnt)
    target = st.f_blocks * st.f_frsize * 0.55
    blk = os.urandom(1 << 20)
    made, total, i = [], 0, 0
    while total < target:
        d = os.path.join(mnt, "old", f"d{rnd.randrange(200):03d}")
        os.makedirs(d, exist_ok=True)
        size = int(min(8 << 20, rnd.lognormvariate(11.5, 1.6))) + 1
        p = os.path.join(d, f"o{i:06d}")
        with open(p, "wb") as f:
            left = size
            while left > 0:
                f.write(blk[:min(left, len(blk))])
                left -= min(left, len(blk))
        made.append(p)
        total += size
        i += 1
        if i % 500 == 0:
            os.sync()
    os.sync()
    for p in rnd.sample(made, len(made) // 2):
        os.unlink(p)
    os.sync()
