#!/bin/sh
# make check: every test, in the configurations CI trusts:
#   1. a -Werror build, all suites;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build, all suites but
#      those of the plain build only (guest, plain);
#   3. valgrind over the unit tests and the verbs a user runs on untrusted files;
#   4. no new kernel BUG/WARNING lines in dmesg while the privileged tests ran.
# Ends with one line "N passed, N failed, N skipped", counted from the logs
# of exactly the runs above, and the name of every test that did not pass.
set -eu
cd "$(dirname "$0")/.."

sh scripts/install-deps.sh

dmesg_before=$(dmesg 2>/dev/null | wc -l || echo 0)
# What the tests mount and attach lies below these (tests/e2e/lib.sh's
# $TMP, bench/slowdev's state, the README and hostile tests' directories):
# anything of theirs still there after the runs was left behind, whatever
# else the machine has (other work shares it).
ours() {
        { findmnt -rn -o TARGET,SOURCE; losetup -n -l -O NAME,BACK-FILE 2>/dev/null; } |
                grep -E '(/var/lib|/tmp)/readset-(e2e|readme|hostile)\.|/run/readset-slowdev/' | sort || true
}
ours_before=$(mktemp)
ours > "$ours_before"
status=0
logs=

run_suite() {   # builddir logname [meson test args...]
        dir=$1; name=$2; shift 2
        ninja -C "$dir" >/dev/null
        # (meson names the log of a run under --wrapper LOGBASE-WRAPPER)
        case "$*" in *--wrapper\ valgrind*) log=$name-valgrind ;; *) log=$name ;; esac
        rm -f "$dir/meson-logs/$log.json"
        meson test -C "$dir" --print-errorlogs --logbase "$name" "$@" || status=1
        logs="$logs $dir/meson-logs/$log.json"
}

[ -f build/build.ninja ] || meson setup build --werror >/dev/null
run_suite build check --no-suite valgrind

if [ "${READSET_SKIP_ASAN:-0}" != 1 ]; then
        [ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
                --buildtype=debug >/dev/null
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                READSET_SLOWDEV_FUSE="$PWD/build/slowdev-fuse" run_suite build-asan check-asan --no-suite valgrind --no-suite guest \
                --no-suite plain
fi

if [ "${READSET_SKIP_VALGRIND:-0}" != 1 ]; then
        run_suite build check-unit --suite unit \
                --wrapper "valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
        run_suite build check-valgrind-verbs --suite valgrind
fi

left=$(ours | comm -13 "$ours_before" -)
rm -f "$ours_before"
if [ -n "$left" ]; then
        echo "the tests left these mounts or loop devices behind:" >&2
        echo "$left" >&2
        status=1
fi

new=$(dmesg 2>/dev/null | tail -n +"$((dmesg_before + 1))" | grep -E 'BUG:|WARNING:' || true)
if [ -n "$new" ]; then
        echo "kernel reported problems during the tests:" >&2
        echo "$new" >&2
        status=1
fi

# shellcheck disable=SC2086
/usr/bin/python3 - $logs <<'PYEOF' || status=1
import json, os, sys
p = f = s = 0
names = []
for name in sys.argv[1:]:
    if not os.path.exists(name):
        print(f"no test log {name}: that run did not happen", file=sys.stderr)
        f += 1
        continue
    run = os.path.basename(name)[:-5]
    for line in open(name):
        r = json.loads(line)
        res = r.get("result")
        if res in ("OK", "EXPECTEDFAIL"):
            p += 1
        elif res == "SKIP":
            s += 1
            names.append(f"  skipped  {run}: {r['name']}")
        else:
            f += 1
            names.append(f"  {res.lower():8} {run}: {r['name']}")
print("\n".join(names))
print(f"{p} passed, {f} failed, {s} skipped")
sys.exit(1 if f else 0)
PYEOF
exit $status
