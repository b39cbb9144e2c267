#!/bin/sh
# make deb: build readset's Debian package with Debian's own tools, in a
# copy of the tree under build/, check it with lintian, print its path.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case ${BUILD:-build} in /*) OUT=$BUILD ;; *) OUT=$ROOT/${BUILD:-build} ;; esac
mkdir -p "$OUT"
# what debian/control's Build-Depends name (and build-essential), and lintian
missing=""
command -v lintian >/dev/null || missing="lintian"
if ! command -v dpkg-checkbuilddeps >/dev/null; then
        missing="$missing dpkg-dev"
elif ! unmet=$(cd "$ROOT" && dpkg-checkbuilddeps 2>&1); then
        missing="$missing $(echo "$unmet" | sed -n 's/.*Unmet build dependencies: //p')"
fi
if [ -n "$missing" ]; then
        [ "$(id -u)" = 0 ] || { echo "deb: missing:$missing (run as root to install them)" >&2; exit 1; }
        echo "deb: installing debian/control's build dependencies and lintian (missing:$missing)" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >&2
        apt-get install -y --no-install-recommends dpkg-dev lintian >&2
        apt-get build-dep -y "$ROOT" >&2
fi
version=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
work=$OUT/deb
rm -rf "$work"; mkdir -p "$work/readset-$version"
# the tracked tree only (git archive when it is a clone, else the files as they are)
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$work/readset-$version" -xf -
else
    (cd "$ROOT" && tar --exclude=./build --exclude=./build-asan --exclude=./build-fuzz -cf - .) | tar -C "$work/readset-$version" -xf -
fi
# (failed: the unit tests that failed, with their output, where that was
# it (--print-errorlogs, debian/rules), else the log's end)
failed() {
        if grep -q '^Summary of Failures' "$work/build.log"; then
                sed -n '/^=* [0-9]*\/[0-9]* =*$/,$p' "$work/build.log" | head -200
        else
                tail -30 "$work/build.log"
        fi
}
(cd "$work/readset-$version" && dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) \
    || { failed >&2; echo "deb: dpkg-buildpackage failed (log: $work/build.log)" >&2; exit 1; }
deb=$(ls "$work"/readset_"$version"_*.deb)
# no errors, no warnings, and no overrides to hide any (tests/e2e/boot-guest.sh builds through here)
[ -z "$(find "$work/readset-$version/debian" -name '*lintian-overrides*')" ] || { echo "deb: debian/ has lintian overrides" >&2; exit 1; }
lintian --fail-on error,warning "$deb" >"$work/lintian.log" 2>&1 || { cat "$work/lintian.log" >&2; echo "deb: lintian errors or warnings" >&2; exit 1; }
cp "$deb" "$OUT/"
echo "$OUT/$(basename "$deb")"
