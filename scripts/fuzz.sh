#!/bin/sh
# make fuzz [SECONDS=N] [RUNS=N] [TARGETS="format json ..."]: build the fuzz
# targets for libFuzzer (clang; the core library instrumented for coverage,
# AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer), run each
# for N seconds (default 60) or N executions, merge what grew the coverage
# into its corpus under tests/fuzz/corpus/, keep any finding in
# tests/fuzz/found/ and fail on a finding.  make check replays the corpora and
# the findings on every build.
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${SECONDS:-60}
RUNS=${RUNS:-}
TARGETS=${TARGETS:-format json tracer numbers squashfs}

sh scripts/install-deps.sh
if ! dpkg-query -W -f='${Status}\n' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed"; then
        [ "$(id -u)" = 0 ] || { echo "fuzz: needs libclang-rt-14-dev (libFuzzer); run as root to install it" >&2; exit 1; }
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libclang-rt-14-dev >/dev/null
fi
[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false --buildtype=debugoptimized >/dev/null
ninja -C build-fuzz >/dev/null
mkdir -p tests/fuzz/found
status=0
for t in $TARGETS; do
        work=$(mktemp -d)
        cp tests/fuzz/corpus/$t/* "$work/"
        if [ -n "$RUNS" ]; then limit="-runs=$RUNS"; what="$RUNS executions"; else
                limit="-max_total_time=$SECONDS_EACH"; what="${SECONDS_EACH} s"; fi
        echo "fuzz-$t: $what"
        rc=0
        start=$(date +%s)
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                build-fuzz/tests/fuzz-$t "$limit" -rss_limit_mb=2048 -timeout=10 \
                -artifact_prefix=tests/fuzz/found/$t- -print_final_stats=1 "$work" 2>"$work.log" || rc=$?
        grep -E "^#[0-9]+.*DONE" "$work.log" | tail -1
        grep -E "stat::number_of_executed_units" "$work.log" | tail -1
        echo "fuzz-$t: $(( $(date +%s) - start )) s"
        if [ "$rc" != 0 ]; then
                tail -40 "$work.log" >&2
                echo "fuzz-$t: a finding, kept in tests/fuzz/found/" >&2
                status=1
        else
                # what grew the coverage joins the committed corpus
                build-fuzz/tests/fuzz-$t -merge=1 tests/fuzz/corpus/$t "$work" >/dev/null 2>&1 || true
        fi
        rm -rf "$work" "$work.log"
done
exit $status
