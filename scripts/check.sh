#!/bin/sh
# make check: every test, in the configurations CI trusts:
#   1. a -Werror build, all suites;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build, all suites;
#   3. valgrind over the unit tests and the unprivileged verbs;
#   4. no new kernel BUG/WARNING lines in dmesg while the privileged tests ran.
# Ends with one line "N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")/.."

sh scripts/install-deps.sh

dmesg_before=$(dmesg 2>/dev/null | wc -l || echo 0)
status=0

run_suite() {   # builddir [meson test args...]
        dir=$1; shift
        ninja -C "$dir" >/dev/null
        meson test -C "$dir" --print-errorlogs "$@" || status=1
        cp "$dir/meson-logs/testlog.json" "$dir/meson-logs/testlog-$(echo "$*" | tr -c 'a-z' '_').json" 2>/dev/null || true
}

[ -f build/build.ninja ] || meson setup build --werror >/dev/null
run_suite build

if [ "${READSET_SKIP_ASAN:-0}" != 1 ]; then
        [ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
                --buildtype=debug >/dev/null
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                READSET_SLOWDEV_FUSE="$PWD/build/slowdev-fuse" run_suite build-asan
fi

if [ "${READSET_SKIP_VALGRIND:-0}" != 1 ]; then
        run_suite build --suite unit --wrapper "valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
        # the verbs a user runs on untrusted files
        vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
        tmp=$(mktemp -d)
        # valid or not, no file may make valgrind complain (its exit code: 99)
        for f in tests/fuzz/corpus/*; do
                rc=0; $vg build/readset show --json "$f" >/dev/null 2>&1 || rc=$?
                [ "$rc" = 0 ] || [ "$rc" = 1 ] || { echo "valgrind: show $f exited $rc" >&2; status=1; }
        done
        $vg build/readset build --no-walk -p tests/fixtures/small.paths -o "$tmp/x.readset" \
                tests/fixtures/small.trace 2>/dev/null || { echo "valgrind: build" >&2; status=1; }
        printf 'garbage' > "$tmp/bad"
        rc=0; $vg build/readset show "$tmp/bad" 2>/dev/null || rc=$?
        [ "$rc" = 1 ] || { echo "valgrind: show of a bad file exited $rc" >&2; status=1; }
        # report: text, JSON and SVG of the fixture, each reference profile, a bad profile
        for d in hdd usb sd nvme share; do
                $vg build/readset report --no-probe --device $d --svg "$tmp/x.svg" "$tmp/x.readset" >/dev/null 2>&1 ||
                        { echo "valgrind: report --device $d" >&2; status=1; }
        done
        $vg build/readset report --no-probe --json "$tmp/x.readset" >/dev/null 2>&1 ||
                { echo "valgrind: report --json" >&2; status=1; }
        printf '{"latency_qd1_us": [1, {"a": "\\u00' > "$tmp/bad.json"
        rc=0; $vg build/readset report --no-probe --device "$tmp/bad.json" "$tmp/x.readset" >/dev/null 2>&1 || rc=$?
        [ "$rc" = 1 ] || { echo "valgrind: report with a bad profile exited $rc" >&2; status=1; }
        rm -rf "$tmp"
fi

new=$(dmesg 2>/dev/null | tail -n +"$((dmesg_before + 1))" | grep -E 'BUG:|WARNING:' || true)
if [ -n "$new" ]; then
        echo "kernel reported problems during the tests:" >&2
        echo "$new" >&2
        status=1
fi

/usr/bin/python3 - build/meson-logs build-asan/meson-logs <<'PYEOF'
import json, sys, glob, os
p = f = s = 0
for d in sys.argv[1:]:
    for name in glob.glob(os.path.join(d, "testlog-*.json")):
        for line in open(name):
            r = json.loads(line)
            res = r.get("result")
            if res in ("OK", "EXPECTEDFAIL"): p += 1
            elif res == "SKIP": s += 1
            else: f += 1
print(f"{p} passed, {f} failed, {s} skipped")
PYEOF
exit $status
