#!/bin/sh
# make deb: build readset's Debian package with Debian's own tools, in a
# copy of the tree under build/, check it with lintian, print its path.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case ${BUILD:-build} in /*) OUT=$BUILD ;; *) OUT=$ROOT/${BUILD:-build} ;; esac
mkdir -p "$OUT"
PKGS="debhelper dpkg-dev fakeroot lintian meson ninja-build pkg-config libzstd-dev zlib1g-dev liburing-dev
      libssl-dev libbpf-dev bpftool clang systemd"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || { echo "deb: missing packages:$missing (run as root to install them)" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
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
(cd "$work/readset-$version" && dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1) \
    || { tail -30 "$work/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $work/build.log)" >&2; exit 1; }
deb=$(ls "$work"/readset_"$version"_*.deb)
lintian --fail-on error "$deb" >"$work/lintian.log" 2>&1 || { cat "$work/lintian.log" >&2; echo "deb: lintian errors" >&2; exit 1; }
cp "$deb" "$OUT/"
echo "$OUT/$(basename "$deb")"
