#!/usr/bin/python3
"""Run the README's examples (tests/e2e/readme.sh sets the stage).

usage: readme.py README WORKDIR

Every command line of the README's code blocks is an example: in a block
with prompts ("$ "), the prompted lines (the others are their output);
elsewhere every line.  For each example that calls readset:

- every option it gives is one its verb accepts (readset --list-options),
  run or not: a command line the README shows never stops being accepted;
- unless NOT_RUN below names it (with why), it runs, in WORKDIR/home: a
  line with sudo as root (SUDO_UID the user's, as sudo sets it), one
  without as the user (nobody), `readset` the built binary, the programs
  it starts small stand-ins (WORKDIR/stubs); it must exit as EXPECT says
  (default 0) and, exiting 0, say no "error:";
- where it shows a prompt ("$ ") and no output, it prints nothing;
- where the README shows its output, each line of it that the real output
  has too (the same words before its first number: "readset: recorded",
  "files:") has the real line's shape: the same words, numbers and units
  aside; lines that depend on what was recorded (files, findings, tables:
  checkable() below) are left out.

Lines of other programs run only where RUN_OTHER says (the mount of a
packed image); NOT_RUN and RUN_OTHER entries the README no longer has fail
the test, so the lists follow the README.
"""
import os
import re
import shlex
import subprocess
import sys

NOBODY = 65534

# examples not run, and why (each still has its options checked)
NOT_RUN = {
    "sudo readset probe /var/tmp":
        "measures for 12 s; its --quick form below runs",
    "sudo readset layout clang.readset":
        "would move the files of this machine's /usr on its disk",
    "sudo readset layout boot.readset":
        "would move files on this machine's disk (tests/e2e/layout.sh does it on a loop device)",
    "sudo readset layout --json boot.readset":
        "would move files on this machine's disk (tests/e2e/layout.sh does it on a loop device)",
    "sudo readset boot enable":
        "changes this machine's boot (tests/e2e/boot.sh, boot-guest.sh)",
    "sudo readset boot disable":
        "changes this machine's boot (tests/e2e/boot.sh, boot-guest.sh)",
    "sudo readset keep enable postgresql@15-main /var/lib/postgresql":
        "changes this machine's systemd units (tests/e2e/keep.sh; under systemd: boot-guest.sh)",
    "sudo readset keep disable postgresql@15-main":
        "changes this machine's systemd units (tests/e2e/keep.sh; under systemd: boot-guest.sh)",
    "sudo readset auto enable":
        "starts a daemon on this machine (tests/e2e/auto.sh runs it in the foreground)",
    "sudo readset auto disable":
        "changes this machine's units (tests/e2e/auto.sh)",
    "sudo readset auto start":
        "stays in the foreground until stopped (tests/e2e/auto.sh)",
    "sudo readset auto forget python3":
        "forgets what this machine learned (tests/e2e/auto.sh forgets a test's program)",
    "sudo readset probe --save /dev/sdb":
        "needs a /dev/sdb, and its saved profile would change every later plan here",
    "sudo readset probe --quick $(findmnt -n -o SOURCE /mnt/hdd)":
        "needs bench/slowdev's emulated disk (tests/e2e/slowdev.sh)",
}
# what an example that does not exit 0 exits with, and says on stderr
EXPECT = {
    "sudo readset replay /tmp/theirs.readset":
        (1, r"error: refusing '/tmp/readset-readme\.\w+-theirs\.readset': it is owned by uid 1, neither root nor you"),
    "readset run missing.readset -- make":
        (0, r"warning: cannot read 'missing.readset': .*the command runs without a replay"),
}
# lines of other programs that the examples after them need
RUN_OTHER = {
    "sudo mount -o loop,ro live.img /mnt/live",
}


def examples(path):
    """(line number, command, output lines shown) of every command line of a
    code block; None for the output of a line with no prompt (not shown)."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out, block, start = [], [], 0
    for i, line in enumerate(lines + [""], 1):
        if line.startswith("    ") and (block or i == 1 or not lines[i - 2].strip()):
            if not block:
                start = i
            block.append(line[4:])
            continue
        if block and not line.strip() and i < len(lines) and lines[i].startswith("    "):
            block.append("")
            continue
        if block:
            prompted = any(b.startswith("$ ") for b in block)
            for j, b in enumerate(block):
                if prompted and b.startswith("$ "):
                    shown = []
                    for o in block[j + 1:]:
                        if o.startswith("$ "):
                            break
                        shown.append(o)
                    out.append((start + j, b[2:], shown))
                elif not prompted and b.strip():
                    out.append((start + j, b, None))
            block = []
    return out


def strip_comment(cmd):
    return re.split(r"\s+#\s", cmd, maxsplit=1)[0].strip()


def options_table(readset):
    table = {}
    out = subprocess.run([readset, "--list-options"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        verb, short, long_, arg = line.split()
        t = table.setdefault(verb, {})
        if short != "-":
            t[short] = arg
        t[long_] = arg
    return table


def check_options(words, table):
    """Why the readset command line `words` (after "readset") is refused, or None."""
    if not words or words[0].startswith("-"):
        return None if words and words[0] in ("--help", "--version") else "no verb"
    verb, opts = words[0], table.get(words[0])
    if opts is None:
        return f"unknown verb '{verb}'"
    i = 1
    while i < len(words):
        w = words[i]
        i += 1
        if w == "--" or w in (">", "&&", "|", ";", "&") or w.startswith("$("):
            break
        if w.startswith("--"):
            name = w.split("=", 1)[0]
            if name not in opts:
                return f"{verb}: no option {name}"
            if opts[name] == "=" and "=" not in w:
                i += 1
        elif w.startswith("-") and len(w) > 1:
            for k, c in enumerate(w[1:]):
                if "-" + c not in opts:
                    return f"{verb}: no option -{c}"
                if opts["-" + c] == "=":
                    if k == len(w) - 2:
                        i += 1
                    break
    return None


NUM = re.compile(r"\d[\d.,]*(?:\s?(?:B|KiB|MiB|GiB|TiB|us|ms|s|%|x))?(?![\w])")


def shape(line):
    return " ".join(NUM.sub("#", line).split())


def checkable(line):
    """A line whose shape a small recording reproduces: one that names no
    file (no '/'), begins with words, and is no table row, finding or
    wrapped continuation (indented 4 or more, or a "- " bullet)."""
    body = line.lstrip()
    return ("/" not in line and body and body != "..." and len(line) - len(body) < 4
            and not body.startswith("- ") and key(line) != "")


def key(shaped):
    """What a line is: its words before the first number ("readset: recorded")."""
    return shape(shaped).split("#", 1)[0].strip()


def main():
    readme, work = sys.argv[1], sys.argv[2]
    home = os.path.join(work, "home")
    readset = os.path.join(work, "bin", "readset")
    table = options_table(readset)
    tag = os.path.basename(work)     # readme.sh makes /tmp/TAG-theirs.readset, removes /tmp/TAG-*
    subst = {
        "/tmp/x.readset": f"/tmp/{tag}-x.readset",
        "/tmp/theirs.readset": f"/tmp/{tag}-theirs.readset",
        "/mnt/live": os.path.join(work, "live"),
    }
    env = {
        "PATH": f"{work}/bin:{work}/stubs:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": home, "LANG": "C.UTF-8", "READSET_CACHE_DIR": os.environ["READSET_CACHE_DIR"],
    }
    failed, ran, not_run, used = [], 0, [], set()
    can_pack = os.path.exists(os.path.join(work, "stubs", ".pack"))
    for ln, raw, shown in examples(readme):
        cmd = strip_comment(raw)
        if not can_pack and (" pack " in cmd or "live.img" in cmd):
            not_run.append((ln, cmd, "needs mksquashfs and loop devices"))
            used.update({cmd} & (set(NOT_RUN) | set(RUN_OTHER)))
            continue
        try:
            words = shlex.split(cmd)
        except ValueError:
            words = cmd.split()
        sudo = words[:1] == ["sudo"]
        words = words[1:] if sudo else words
        if words[:1] != ["readset"]:
            if cmd in RUN_OTHER:
                used.add(cmd)
                run = cmd[5:] if sudo else cmd
                for a, b in subst.items():
                    run = run.replace(a, b)
                r = subprocess.run(run, shell=True, cwd=home, env=env, capture_output=True, text=True)
                if r.returncode:
                    failed.append(f"README.md:{ln}: {cmd}: exit {r.returncode}: {r.stderr.strip()}")
            else:
                not_run.append((ln, cmd, "not readset"))
            continue
        why = check_options(words[1:], table)
        if why:
            failed.append(f"README.md:{ln}: {cmd}: {why} (readset --list-options)")
            continue
        if cmd in NOT_RUN:
            used.add(cmd)
            not_run.append((ln, cmd, NOT_RUN[cmd]))
            continue
        run = cmd[5:] if sudo else cmd
        for a, b in subst.items():
            run = run.replace(a, b)
        e = dict(env)
        if sudo:
            e.update(SUDO_UID=str(NOBODY), SUDO_GID=str(NOBODY), SUDO_USER="nobody")
            argv = ["sh", "-c", run]
        else:
            argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "sh", "-c", run]
        try:
            r = subprocess.run(argv, cwd=home, env=e, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            failed.append(f"README.md:{ln}: {cmd}: still running after 120 s")
            continue
        ran += 1
        print(f"README.md:{ln}: {'root' if sudo else 'nobody'}: {cmd}: exit {r.returncode}")
        code, say = EXPECT.get(cmd, (0, None))
        if cmd in EXPECT:
            used.add(cmd)
        if r.returncode != code:
            failed.append(f"README.md:{ln}: {cmd}: exit {r.returncode}, not {code}: {r.stderr.strip()[-600:]}")
            continue
        if say and not re.search(say, r.stderr):
            failed.append(f"README.md:{ln}: {cmd}: stderr does not say /{say}/: {r.stderr.strip()}")
        if code == 0 and "error:" in r.stderr:
            failed.append(f"README.md:{ln}: {cmd}: an error the user did not cause: {r.stderr.strip()}")
        if shown == [] and (r.stdout + r.stderr).strip():
            failed.append(f"README.md:{ln}: {cmd}: prints what the README does not show (show it, or '...'):\n"
                          + "\n".join("    " + x for x in (r.stdout + r.stderr).splitlines()[:10]))
        real = {shape(x) for x in (r.stdout + r.stderr).splitlines()}
        keys = {key(x) for x in real}
        for s in shown or []:
            if not checkable(s):
                continue
            if key(s) in keys and shape(s) not in real:
                failed.append(f"README.md:{ln}: {cmd}: the README shows\n    {s.strip()}\n  "
                              f"which nothing of the real output is shaped like:\n"
                              + "\n".join("    " + x for x in (r.stdout + r.stderr).splitlines()[:40]))
    for table_name, t in (("NOT_RUN", NOT_RUN), ("EXPECT", EXPECT), ("RUN_OTHER", RUN_OTHER)):
        for cmd in sorted(set(t) - used):
            failed.append(f"readme.py: {table_name} names '{cmd}', which the README no longer has")
    print(f"ran {ran} examples; not run:")
    for ln, cmd, why in not_run:
        print(f"  README.md:{ln}: {cmd}  ({why})")
    for f in failed:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
