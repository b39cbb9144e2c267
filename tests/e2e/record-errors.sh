#!/bin/sh
# Clear one-line errors and the right exit codes.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs

expect() {   # expected-rc grep-pattern cmd...
        want=$1; pattern=$2; shift 2
        rc=0
        "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
        [ "$rc" = "$want" ] || { cat "$TMP/err"; fail "'$*': exit $rc, expected $want"; }
        grep -q -- "$pattern" "$TMP/err" || { cat "$TMP/err"; fail "'$*': no '$pattern' on stderr"; }
}

cd "$TMP"
expect 127 "cannot run 'no-such-command-xyz'" "$READSET" record -o x.readset -- no-such-command-xyz
expect 126 "cannot run '$TMP'" "$READSET" record -o x.readset -- "$TMP"
expect 3 "wrote" "$READSET" record -o x.readset -- sh -c 'exit 3'
expect 2 "missing command" "$READSET" record -o x.readset
expect 2 "invalid --buffer-size" "$READSET" record --buffer-size 12abc -- true
# where the recording cannot be written: said before the command runs (its
# recording and its exit status would be lost after)
expect 1 "cannot write '/nonexistent/dir/x.readset'" "$READSET" record -o /nonexistent/dir/x.readset -- touch "$TMP/ran"
[ ! -e "$TMP/ran" ] || fail "record ran the command with nowhere to write its recording"
mkdir "$TMP/adir"
expect 1 "cannot write '$TMP/adir'" "$READSET" record -o "$TMP/adir" -- touch "$TMP/ran"
[ ! -e "$TMP/ran" ] && [ "$(ls -A "$TMP/adir")" = "" ] || fail "record -o a directory ran the command or left a file"
# --json: the summary as one JSON object, the last line of stderr
"$READSET" record -j -o x.readset -- sh -c 'echo out; echo err >&2' > "$TMP/out" 2>"$TMP/err" || fail "record --json"
[ "$(cat "$TMP/out")" = out ] || fail "record --json: stdout changed"
tail -n 1 "$TMP/err" | /usr/bin/python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
assert d['output'] == 'x.readset' and d['files'] > 0 and d['bytes'] > 0, d
" || { cat "$TMP/err"; fail "record --json: the last line of stderr"; }
# a full disk: one clear error, no half-written file left behind
mkdir -p "$TMP/full"
if ! mount -t tmpfs -o size=8k tmpfs "$TMP/full" 2>"$TMP/err"; then
        echo "  full disk: not checked, no tmpfs to fill here ($(cat "$TMP/err"))"
else
        dd if=/dev/zero of="$TMP/full/fill" bs=4k count=2 status=none 2>/dev/null || true
        expect 1 "cannot write '$TMP/full/x.readset': No space left on device" \
                "$READSET" record -o "$TMP/full/x.readset" -- true
        [ "$(ls "$TMP/full")" = fill ] || { ls -la "$TMP/full"; unmount "$TMP/full"; fail "leftovers on a full disk"; }
        unmount "$TMP/full"
fi
# the command's own output is untouched
out=$("$READSET" record -q -o x.readset -- sh -c 'echo to-stdout; echo to-stderr >&2' 2>/dev/null)
[ "$out" = to-stdout ] || fail "stdout of the command changed: '$out'"
echo in | "$READSET" record -q -o x.readset -- sh -c 'read l; [ "$l" = in ]' || fail "stdin not passed"
# default output name
"$READSET" record -q -- true && [ -s "$TMP/true.readset" ] || fail "default output true.readset"

# as a user: refused, or with --fallback-run the command runs all the same
# (a warning then, not an error)
expect 1 "error: recording needs root" user_readset record -o /tmp/x -- true
expect 5 "warning: recording needs root" user_readset record --fallback-run -o /tmp/x -- sh -c 'exit 5'
! grep -q "error:" "$TMP/err" || { cat "$TMP/err"; fail "record --fallback-run said an error and ran"; }
# run --stats and --auto record, which needs root: as a user they say so
# once, and the command runs all the same, its exit status run's
chmod 755 "$TMP"; mkdir -m 1777 "$TMP/nb"
expect 6 "warning: --stats records the command and needs root" user_readset run --stats "$TMP/x.readset" -- \
        sh -c "touch '$TMP/nb/ran'; exit 6"
[ -e "$TMP/nb/ran" ] || fail "run --stats as a user did not run the command"
rm -f "$TMP/nb/ran"
expect 4 "warning: --auto records the command and needs root" user_readset run --auto "$TMP/auto" -- \
        sh -c "touch '$TMP/nb/ran'; exit 4"
[ -e "$TMP/nb/ran" ] && [ ! -e "$TMP/auto" ] || fail "run --auto as a user did not run the command, or made its directory"
! grep -q "error:" "$TMP/err" || { cat "$TMP/err"; fail "run --auto as a user said an error"; }
echo "record-errors: ok"
