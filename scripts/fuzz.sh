#!/bin/sh
# make fuzz SECONDS=N: build the fuzz targets for libFuzzer (clang, the core
# library instrumented, AddressSanitizer and UndefinedBehaviorSanitizer),
# run each for N seconds (default 60) on its corpus, keep what it finds in
# tests/fuzz/found/ and fail on a finding.  The corpora in tests/fuzz/corpus/
# are replayed by make check on every build.
set -eu
cd "$(dirname "$0")/.."
SECONDS_EACH=${SECONDS:-60}

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
for t in format json; do
        work=$(mktemp -d)
        cp tests/fuzz/corpus/$t/* "$work/"
        echo "fuzz-$t: ${SECONDS_EACH} s"
        rc=0
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build-fuzz/tests/fuzz-$t -max_total_time="$SECONDS_EACH" \
                -artifact_prefix=tests/fuzz/found/$t- -print_final_stats=1 "$work" 2>"$work.log" || rc=$?
        grep -E "^#[0-9]+.*(DONE|cov)|stat::number_of_executed_units|stat::peak_rss" "$work.log" | tail -3
        if [ "$rc" != 0 ]; then
                tail -40 "$work.log" >&2
                echo "fuzz-$t: a finding, kept in tests/fuzz/found/" >&2
                status=1
        fi
        rm -rf "$work" "$work.log"
done
exit $status
