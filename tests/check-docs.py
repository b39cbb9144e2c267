#!/usr/bin/python3
"""Every file the docs cite is in the tree; no internal counter names the work.

usage: check-docs.py SRCDIR

In README.md, docs/*.md and the sources of profiles/*.json: every relative
link ([text](path), ![img](path)) and every file name mentioned
(docs/FOO.md, FOO.md, src/x/y.c, tests/e2e/z.sh ...) must name a file or
folder of the tree: relative to the citing file, to the top, to src/, or
as the tail of a path in the tree.  Absolute paths (/etc/..., the system's)
and URLs are not the tree's.  Names that stand for a user's own files in
examples are listed below; an entry no longer used fails too, so the list
only shrinks.  The work is named by its feature, never by a counter the
reader cannot look up ("stop 12", "issue 13").
"""
import glob
import json
import os
import re
import subprocess
import sys

# names that are not the tree's files: a user's in examples, a template's,
# another project's (the kernel's sources)
EXAMPLES = {
    "hello.c": "the README's program to compile",
    "clang.svg": "the README's report --svg output",
    "src/cmd/VERB.c": "HACKING.md's recipe for a verb",
    "tests/unit/test-MODULE.c": "HACKING.md's recipe for a verb",
    "tests/e2e/VERB.sh": "HACKING.md's recipe for a verb",
    "fs/ext4/move_extent.c": "Linux",
    "fs/smb/client/dir.c": "Linux",
    "inode.c": "Linux (fs/smb/client/)",
    "fs/smb/client/readdir.c": "Linux",
    "fs/nfs/dir.c": "Linux",
}

COUNTER = re.compile(r"\b(?:stop|issue)s? \d+\b", re.I)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
# a file name with one of the tree's extensions; not part of a longer path
# that starts with /, ~, $ or : (the system's, the user's); its last part
# has a letter; readset.1 the one name ending in .1 (libfoo.so.1 is not)
NAME = re.compile(r"(?<![\w/.~$:-])((?:\w[\w.-]*/)*[\w-]*[A-Za-z_][\w-]*(?:\.[\w-]+)*"
                  r"\.(?:md|json|c|h|sh|py|svg|png|service))(?![\w/-])|(?<![\w/.~$:-])(readset\.1)\b")


def tree_files(src):
    out = subprocess.run(["git", "-C", src, "ls-files"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        files = out.stdout.split()
    else:
        files = [os.path.relpath(os.path.join(d, f), src)
                 for d, _, fs in os.walk(src) for f in fs if "/.git" not in d]
    dirs = {os.path.dirname(f) for f in files}
    for d in list(dirs):
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
    return set(files), dirs


def found(name, citing, files, dirs):
    name = name.split("#")[0].rstrip("/")
    if not name:
        return True
    here = os.path.dirname(citing)
    for base in (here, "", "src"):
        p = os.path.normpath(os.path.join(base, name))
        if p in files or p in dirs:
            return True
    tail = "/" + name
    return any(f.endswith(tail) for f in files)


def texts(src):
    for f in ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=src)):
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            yield f, fp.read()
    for f in sorted(glob.glob("profiles/*.json", root_dir=src)):
        with open(os.path.join(src, f), encoding="utf-8") as fp:
            yield f, json.load(fp).get("source", "")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    files, dirs = tree_files(src)
    bad = []
    used = set()
    for f, text in texts(src):
        for ln, line in enumerate(text.splitlines(), 1):
            for m in COUNTER.finditer(line):
                bad.append(f"{f}:{ln}: '{m.group(0)}': name the work by its feature")
            for m in LINK.finditer(line):
                t = m.group(1)
                if re.match(r"[a-z]+:", t) or t.startswith("#"):
                    continue
                if not found(t, f, files, dirs):
                    bad.append(f"{f}:{ln}: link to '{t}', not in the tree")
            for m in NAME.finditer(LINK.sub(lambda m: " " * len(m.group(0)), line)):
                n = m.group(1) or m.group(2)
                if n in EXAMPLES:
                    used.add(n)
                    continue
                if not found(n, f, files, dirs):
                    bad.append(f"{f}:{ln}: cites '{n}', not in the tree")
    for n in sorted(set(EXAMPLES) - used):
        bad.append(f"check-docs.py: '{n}' is listed as an example name but no doc uses it: drop it")
    for b in bad:
        print(b)
    print(f"{len(bad)} problems" if bad else "every citation is in the tree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
