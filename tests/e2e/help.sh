#!/bin/sh
# Every verb answers --help on stdout with exit 0; usage errors exit 2.
. "$(dirname "$0")/lib.sh"

"$READSET" --help > "$TMP/h" && grep -q "^usage: readset" "$TMP/h" || fail "readset --help"
awk 'length($0) > 80 { print "readset --help: " length($0) " columns: " $0; bad = 1 } END { exit bad }' "$TMP/h" ||
        fail "readset --help wider than 80 columns"
"$READSET" --version | grep -q "^readset [0-9]" || fail "readset --version"
# $TMP/e is exactly "readset[ VERB]: MESSAGE" and "see 'readset[ VERB] --help'"
usage_error() {   # verb message
        _p="readset${1:+ $1}"
        printf '%s: %s\nsee '"'"'%s --help'"'"'\n' "$_p" "$2" "$_p" > "$TMP/e.want"
        cmp -s "$TMP/e" "$TMP/e.want" || fail "${1:-readset}: usage error: want
$(cat "$TMP/e.want")
got
$(cat "$TMP/e")"
}
# A help fits 80 columns; in its options, an option's letter is at column
# 3, a long-only option at 7 ("  -x, --name", "      --name"), and every
# description and its continuation lines start in one column (the one of
# "-h, --help"'s), or on the next line when the option is too long.
check_layout() {   # name file
        awk -v name="$1" '
        length($0) > 80 { printf "%s: %d columns: %s\n", name, length($0), $0; bad = 1 }
        /^options:$/ { opts = 1; next }
        opts && /^$/ { opts = 0 }
        opts { l[++n] = $0 }
        /^  -h, --help +show this help$/ { col = index($0, "show this help") }
        END {
                if (!col) { print name ": no \"-h, --help\" line"; exit 1 }
                for (i = 1; i <= n; i++) {
                        head = substr(l[i], 1, col - 1)
                        if (l[i] ~ /^(  |      )-/) {
                                if (head !~ /^(  -[^ ], |      )--[a-z][a-z0-9-]*( [A-Z]+)?( +|$)$/ ||
                                    substr(l[i], col, 1) == " ") {
                                        printf "%s: option line not in the columns (%d): %s\n", name, col, l[i]
                                        bad = 1
                                }
                        } else if (head ~ /[^ ]/ || substr(l[i], col, 1) == " ") {
                                printf "%s: continuation not at column %d: %s\n", name, col, l[i]
                                bad = 1
                        }
                }
                exit bad
        }' "$2" || fail "$1 --help: layout (above)"
}
verbs=$("$READSET" --help | awk '/^verbs:/{v=1; next} v && /^  [a-z]/{print $1} v && /^$/{v=0}')
[ -n "$verbs" ] || fail "no verbs listed"
for v in $verbs build; do
        "$READSET" "$v" --help > "$TMP/h" || fail "$v --help exit $?"
        grep -q "^usage: readset $v" "$TMP/h" || fail "$v --help: no usage line"
        check_layout "$v" "$TMP/h"
        # every option getopt reads is in the help, at the start of its line
        "$READSET" --list-options | awk -v v="$v" '$1 == v' > "$TMP/opts"
        while read -r _ s l _; do
                if [ "$s" = - ]; then re="^      $l( |\$)"; else re="^  $s, $l( |\$)"; fi
                grep -Eq -- "$re" "$TMP/h" || fail "$v --help: no line for $s $l"
        done < "$TMP/opts"
        "$READSET" help "$v" | grep -q "^usage: readset $v" || fail "help $v"
        rc=0; "$READSET" "$v" --no-such-option 2>"$TMP/e" || rc=$?
        [ "$rc" = 2 ] || fail "$v --no-such-option: exit $rc"
        grep -q "see 'readset $v --help'" "$TMP/e" || fail "$v: usage error does not point at --help"
        # one line, one prefix, naming the option; then the hint
        usage_error "$v" "unknown option '--no-such-option'"
        rc=0; "$READSET" "$v" -% 2>"$TMP/e" || rc=$?
        [ "$rc" = 2 ] || fail "$v -%: exit $rc"
        usage_error "$v" "unknown option '-%'"
        # an option that takes a value, given none (the last one listed)
        o=$("$READSET" --list-options | awk -v v="$v" '$1 == v && $4 == "=" { o = $3 } END { print o }')
        if [ -n "$o" ]; then
                rc=0; "$READSET" "$v" "$o" 2>"$TMP/e" || rc=$?
                [ "$rc" = 2 ] || fail "$v $o (no value): exit $rc"
                usage_error "$v" "option '$o' needs a value"
        fi
done
# a letter refused in a group after a long option whose val is that letter
# (replay's --max-bytes is 'B' inside, -B is no option of replay's)
rc=0; "$READSET" replay --max-bytes=1M -Bv x 2>"$TMP/e" || rc=$?
[ "$rc" = 2 ] || fail "replay --max-bytes=1M -Bv: exit $rc"
usage_error replay "unknown option '-B'"
rc=0; "$READSET" replay --quiet=x -q x 2>"$TMP/e" || rc=$?
[ "$rc" = 2 ] || fail "replay --quiet=x: exit $rc"
usage_error replay "option '--quiet' takes no value"
rc=0; "$READSET" frobnicate 2>"$TMP/e" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown verb 'frobnicate'" "$TMP/e" || fail "unknown verb"
rc=0; "$READSET" --bogus 2>"$TMP/e" || rc=$?
[ "$rc" = 2 ] || fail "--bogus: exit $rc"
usage_error "" "unknown option '--bogus'"
rc=0; "$READSET" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "no verb: exit $rc"
# a closed stdout is an error, not silence
if [ -w /dev/full ]; then
        rc=0; "$READSET" --help > /dev/full 2>/dev/null || rc=$?
        [ "$rc" = 1 ] || fail "--help > /dev/full: exit $rc"
else
        echo "  a closed stdout: not checked, no writable /dev/full here"
fi
echo "help: ok ($verbs)"
