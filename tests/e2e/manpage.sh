#!/bin/sh
# The man page documents every option of every verb (readset --list-options)
# as an item of that verb's section, as the verb's --help lists it; its
# source joins no two words (an alternating macro, .BR and the like, glues
# its arguments together); rendered at 80 columns it draws no warning from
# groff, joins no sentence to the next, and has no line over 80 columns.
. "$(dirname "$0")/lib.sh"
need_python

PAGE=$SRCDIR/docs/readset.1
"$READSET" --list-options > "$TMP/options"

# each option in its verb's --help, at the start of its line
while read -r v s l _; do
        [ "$l" != - ] || continue
        if [ "$s" = - ]; then re="^      $l( |\$)"; else re="^  $s, $l( |\$)"; fi
        "$READSET" "$v" --help | grep -Eq -- "$re" || check_fail "readset $v --help: no line for $s $l"
done < "$TMP/options"

"$PY" - "$PAGE" "$TMP/options" > "$TMP/page.out" <<'EOF' || check_fail "$(cat "$TMP/page.out")"
import re, shlex, sys

page, options = open(sys.argv[1]).read().split("\n"), open(sys.argv[2]).read().split("\n")
verbs = sorted({l.split()[0] for l in options if l})
bad = []

def plain(s):
    s = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\\||\\\^", "", s)
    return s.replace("\\-", "-").replace('\\(dq', '"')

# a verb's section: from ".TP" ".B VERB" in VERBS to the next verb's or the
# next .SH; its items: the lines after .TP and .TQ
start = {}
in_verbs = False
for i, line in enumerate(page):
    if line.startswith(".SH"):
        in_verbs = line.strip() == ".SH VERBS"
    elif in_verbs and i and page[i - 1] == ".TP" and line.startswith(".B ") and line[3:].strip() in verbs:
        start[line[3:].strip()] = i
for v in verbs:
    if v not in start:
        bad.append(f"{sys.argv[1]}: no section for the verb {v}")
ends = sorted(start.values()) + [min(i for i, l in enumerate(page) if l.startswith(".SH") and i > max(start.values()))]
items = {}
for v, s in start.items():
    e = ends[ends.index(s) + 1]
    items[v] = set()
    for i in range(s + 1, e):
        if page[i - 1] in (".TP", ".TQ"):
            items[v] |= set(re.split(r"[\s,\"]+", plain(page[i])))
# NAME names every verb
name = " ".join(page[page.index(".SH NAME") + 1:page.index(".SH SYNOPSIS")])
for v in verbs:
    if not re.search(r"\b" + v + r"\b", name):
        bad.append(f"NAME does not name the verb {v}")
# --help: once for every verb
if not re.search(r"every verb takes\W+-h\W+--help", " ".join(re.sub(r"^\.\w+", "", plain(l)) for l in page), re.I):
    bad.append("no line says that every verb takes -h, --help")
for l in options:
    if not l:
        continue
    v, short, long, _ = l.split()
    if long == "--help" or v not in items:
        continue
    for o in (short, long):
        if o != "-" and o not in items[v]:
            bad.append(f"{v}: {o} is no item of the man page's section for {v}")

# .BR a b: "ab"; two words glued when one ends and the next starts with a letter
alternating = (".BR", ".RB", ".BI", ".IB", ".IR", ".RI")
for no, line in enumerate(page, 1):
    if line.split(" ", 1)[0] not in alternating:
        continue
    try:
        args = shlex.split(line.split(" ", 1)[1].replace("\\", "\\\\"), posix=True)
    except ValueError as e:
        bad.append(f"{sys.argv[1]}:{no}: {e}: {line}")
        continue
    args = [plain(a) for a in args]
    for a, b in zip(args, args[1:]):
        # (a suffix glued on purpose: ".IR n th")
        if re.search(r"[A-Za-z0-9]$", a) and re.match(r"[A-Za-z0-9]", b) and b not in ("th", "s", "es"):
            bad.append(f"{sys.argv[1]}:{no}: '{a}' and '{b}' rendered as one word: {line}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# rendered
command -v man >/dev/null || skip "rendering not checked: needs man (man-db)"
command -v groff >/dev/null || skip "rendering not checked: needs groff"
MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$PAGE" > "$TMP/page.txt" 2> "$TMP/page.err" ||
        check_fail "man -l $PAGE: exit $?: $(cat "$TMP/page.err")"
[ ! -s "$TMP/page.err" ] || check_fail "man --warnings -l $PAGE: $(cat "$TMP/page.err")"
# a sentence's end glued to the next ("...leftovers).Files")
grep -nE '[a-z)]\.[A-Z][a-z]' "$TMP/page.txt" > "$TMP/joined" && check_fail "joined words:
$(cat "$TMP/joined")"
awk 'length($0) > 80 { print NR ": " length($0) ": " $0 }' "$TMP/page.txt" > "$TMP/wide"
[ ! -s "$TMP/wide" ] || check_fail "lines over 80 columns:
$(cat "$TMP/wide")"
[ -z "$FAILED" ] || fail "man page (above)"
echo "manpage: ok ($(wc -l < "$TMP/page.txt") lines rendered)"
