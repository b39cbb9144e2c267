#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The tree's structural rules (docs/HACKING.md, "Rules the code keeps"):

  cycle      no call cycle between files of src/
  cmd-call   no file of src/cmd/ creates a thread, forks, loads BPF or
             calls syscall()
  long       no function of src/ over 150 lines, but those in LONG_OK
  cmd-static no static function of src/cmd/ over 40 lines, but those in
             CMD_STATIC_OK (option parsing, help, output)
  fiemap     only src/fs/extents.c issues FS_IOC_FIEMAP
  mountinfo  only src/util/mounts.c opens mountinfo

usage: check-tree.py SRCDIR OBJDIR...   (OBJDIR: the core library's and
the verbs' object directories, e.g. build/libreadset-core.a.p and
build/readset.p)

Every violation is printed with file:line.  Those in KNOWN_VIOLATIONS are
reported but pass; a known one no longer found fails, so that the list
shrinks with the tree.  Exit 0 clean, 1 violations, 2 usage.
"""
import os
import re
import subprocess
import sys

FUNC_MAX = 150
CMD_STATIC_MAX = 40

# Functions that only write output field by field, allowed past FUNC_MAX.
LONG_OK = {
    ("src/report/svg.c", "write_svg"): "the disk access graph, written element by element",
}

# Static functions of src/cmd/ allowed past CMD_STATIC_MAX: option
# parsing or output only.  (file, function): reason.
CMD_STATIC_OK = {
    ("src/cmd/layout.c", "layout_help"): "help text",
    ("src/cmd/layout.c", "parse_args"): "option parsing",
    ("src/cmd/layout.c", "print_json"): "JSON output",
    ("src/cmd/pack.c", "parse_args"): "option parsing",
    ("src/cmd/run.c", "run_parse"): "option parsing",
    ("src/cmd/pack.c", "pack_help"): "help text",
    ("src/cmd/replay.c", "replay_help"): "help text",
    ("src/cmd/run.c", "run_help"): "help text",
    ("src/cmd/show.c", "print_json"): "JSON output",
    ("src/cmd/boot.c", "status_json"): "JSON output",
    ("src/cmd/show.c", "print_table"): "text output",
}

# What a file of src/cmd/ may not call: threads, processes, BPF, raw
# system calls (modules do that; the verbs call the modules).
CMD_BANNED = re.compile(r"^(pthread_create|fork|vfork|_Fork|clone3?|daemon|system|popen|"
                        r"posix_spawnp?|syscall|bpf|bpf_.*|libbpf_.*|bpf_object__.*|"
                        r"bpf_program__.*|bpf_map__.*|bpf_link__.*|ring_buffer__.*|"
                        r"perf_buffer__.*|btf__.*)$")

# Violations let through while they are being fixed: each a key as printed
# by this script ("kind: what").  None now; one added here must name the
# issue that fixes it, and the check fails once it no longer occurs.
KNOWN_VIOLATIONS = set()


def die(msg):
    print(f"check-tree: {msg}", file=sys.stderr)
    sys.exit(2)


def strip_comments(text):
    """text with its comments blanked (newlines kept, so lines stay where
    they were); strings and character constants kept as they are."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(srcdir):
    """src/**/*.c and *.h, relative to srcdir, sorted; the BPF program
    (compiled for the kernel, not linked) left out."""
    found = []
    for root, _, files in os.walk(os.path.join(srcdir, "src")):
        for f in files:
            if (f.endswith(".c") or f.endswith(".h")) and not f.endswith(".bpf.c"):
                found.append(os.path.relpath(os.path.join(root, f), srcdir))
    return sorted(found)


class Tree:
    def __init__(self, srcdir):
        self.srcdir = srcdir
        self.text = {}
        for rel in sources(srcdir):
            with open(os.path.join(srcdir, rel), encoding="utf-8", errors="replace") as f:
                self.text[rel] = strip_comments(f.read())

    def line_of(self, rel, *patterns):
        """first line of rel (comment-stripped) matching the first pattern
        that matches anywhere, or 0"""
        for pattern in patterns:
            for no, line in enumerate(self.text.get(rel, "").split("\n"), 1):
                if re.search(pattern, line) and not line.startswith("#"):
                    return no
        return 0


def functions(text):
    """(name, first line, last line, static) of every function of a C
    file written in the project's style: the signature starts at column 0
    and the body's braces are alone at column 0."""
    lines = text.split("\n")
    found = []
    head = []   # the lines since the last top-level declaration ended
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("{"):
            sig = " ".join(l for _, l in head)
            start = head[0][0] if head else i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            m = None
            if "(" in sig and "=" not in sig.split("(")[0]:
                m = re.search(r"([A-Za-z_]\w*)\s*\(", sig)
            if m:
                found.append((m.group(1), start + 1, j + 1, re.match(r"\s*static\b", sig) is not None))
            head = []
            i = j + 1
            continue
        stripped = line.strip()
        if not stripped or line.startswith("#") or (head and head[-1][1].rstrip().endswith("\\")):
            if not stripped:
                head = []
        elif line[0] not in " \t" or head:
            head.append((i, line))
            if stripped.endswith(";") or stripped.endswith("}"):
                head = []
        i += 1
    return found


def object_map(srcdir, objdirs):
    """{object path: source path}, meson's object names (src_cmd_run.c.o)
    matched against the tree's sources"""
    by_name = {rel.replace("/", "_") + ".o": rel for rel in sources(srcdir) if rel.endswith(".c")}
    objs = {}
    for d in objdirs:
        if not os.path.isdir(d):
            die(f"no object directory {d}")
        for f in sorted(os.listdir(d)):
            if f in by_name:
                objs[os.path.join(d, f)] = by_name[f]
    if not objs:
        die("no objects of src/ found in " + " ".join(objdirs))
    return objs


def nm(args, objs):
    """{object: [fields of each line of nm's]}, one nm for all objects"""
    try:
        out = subprocess.run(["nm", "-A"] + args + sorted(objs), check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        die(f"nm: {e}")
    lines = {obj: [] for obj in objs}
    for line in out.splitlines():
        obj, sep, rest = line.partition(": ")
        if not sep:
            obj, _, rest = line.partition(":")
        if obj in lines and rest.strip():
            lines[obj].append(rest.split())
    return lines


def call_graph(objs):
    """{file: {file: [symbols]}}: who calls whom.  A symbol defined (global:
    code, or data such as a table of methods) in one object and undefined in
    another is a use of the first by the second.  Calls through function
    pointers (the fill methods' ops, callbacks) are not seen: a file that
    only calls a pointer passed in does not depend on the function's file;
    the file that names the function (to take its address) does."""
    defined, used = {}, {}
    for obj, fields in nm(["--defined-only"], objs).items():
        for f in fields:
            if len(f) == 3 and f[1] in "TWiDBRGSCV":
                defined[f[2]] = objs[obj]
    for obj, fields in nm(["-u"], objs).items():
        used[objs[obj]] = [f[1] for f in fields if len(f) == 2]
    graph = {rel: {} for rel in objs.values()}
    for rel, syms in used.items():
        for s in syms:
            to = defined.get(s)
            if to and to != rel:
                graph[rel].setdefault(to, []).append(s)
    return graph, used


def cycles(graph):
    """the strongly connected components of more than one file (Tarjan)"""
    index, low, on, stack, comps = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(comps)


def word(sym):
    return r"\b" + re.escape(sym) + r"\b"


def call_of(sym):
    return r"\b" + re.escape(sym) + r"\s*\("


def check(srcdir, objdirs):
    tree = Tree(srcdir)
    objs = object_map(srcdir, objdirs)
    graph, used = call_graph(objs)
    found = {}   # key: [lines of where]
    allowed = set()   # the allowances of LONG_OK and CMD_STATIC_OK needed

    def report(key, where):
        found.setdefault(key, []).extend(where)

    for comp in cycles(graph):
        where = []
        for a in comp:
            for b in comp:
                for s in sorted(set(graph[a].get(b, []))):
                    no = tree.line_of(a, call_of(s), word(s))
                    where.append(f"{a}:{no or 1}: uses {s} ({b}){'' if no else ' through a macro'}")
        report("cycle: " + " ".join(comp), where)

    for rel, syms in sorted(used.items()):
        if not rel.startswith("src/cmd/"):
            continue
        for s in sorted(set(syms)):
            if CMD_BANNED.match(s):
                report(f"cmd-call: {rel} {s}",
                       [f"{rel}:{tree.line_of(rel, call_of(s), word(s))}: calls {s}"])

    for rel, text in sorted(tree.text.items()):
        if not rel.endswith(".c"):
            continue
        for name, first, last, static in functions(text):
            n = last - first + 1
            if (rel, name) in LONG_OK and n > FUNC_MAX or (rel, name) in CMD_STATIC_OK and n > CMD_STATIC_MAX:
                allowed.add((rel, name))
            if n > FUNC_MAX and (rel, name) not in LONG_OK:
                report(f"long: {rel} {name}", [f"{rel}:{first}: {name} is {n} lines (at most {FUNC_MAX})"])
            elif (static and n > CMD_STATIC_MAX and rel.startswith("src/cmd/")
                  and (rel, name) not in CMD_STATIC_OK and (rel, name) not in LONG_OK):
                report(f"cmd-static: {rel} {name}",
                       [f"{rel}:{first}: static {name} is {n} lines (at most {CMD_STATIC_MAX} in src/cmd/"
                        f" but for option parsing and output)"])

    # (comments stripped: a comment may name them; mountinfo is opened by
    # a string naming it)
    for token, owner, kind in ((r"\bFS_IOC_FIEMAP\b", "src/fs/extents.c", "fiemap"),
                               (r'"[^"\n]*mountinfo[^"\n]*"', "src/util/mounts.c", "mountinfo")):
        for rel, text in sorted(tree.text.items()):
            if rel == owner:
                continue
            where = [f"{rel}:{no}: {line.strip()}" for no, line in enumerate(text.split("\n"), 1)
                     if re.search(token, line)]
            if where:
                report(f"{kind}: {rel}", where)

    status = 0
    for key in sorted(found):
        known = key in KNOWN_VIOLATIONS
        for w in found[key]:
            print(f"{w}{'   [known: ' + key + ']' if known else ''}")
        if not known:
            print(f"check-tree: new violation: {key}", file=sys.stderr)
            status = 1
    for key in sorted(set(KNOWN_VIOLATIONS) - set(found)):
        print(f"check-tree: known violation no longer found (remove it from KNOWN_VIOLATIONS): {key}",
              file=sys.stderr)
        status = 1
    for (rel, name) in sorted((set(LONG_OK) | set(CMD_STATIC_OK)) - allowed):
        print(f"check-tree: {rel}: {name} is allowed by name but is not that long, or gone "
              f"(remove it from the script and from docs/HACKING.md)", file=sys.stderr)
        status = 1
    print(f"check-tree: {len(objs)} objects, {len(tree.text)} sources; {len(found)} violations "
          f"({len(set(found) & set(KNOWN_VIOLATIONS))} known)")
    return status


if __name__ == "__main__":
    if len(sys.argv) < 3:
        die("usage: check-tree.py SRCDIR OBJDIR...")
    sys.exit(check(sys.argv[1], sys.argv[2:]))
