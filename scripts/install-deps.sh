#!/bin/sh
# Install what readset needs to build, test, demo and benchmark, from
# Debian's archive.  Idempotent: does nothing when all is there.
set -eu

PKGS="meson ninja-build gcc pkg-config libzstd-dev zlib1g-dev liblz4-dev liblzma-dev liburing-dev libssl-dev
      libbpf-dev bpftool clang python3 libfuse3-dev fuse3 psmisc e2fsprogs btrfs-progs util-linux procps mount
      valgrind vmtouch strace coreutils time git chromium python3-pil
      qemu-system-x86 debootstrap systemd-container debhelper dpkg-dev fakeroot lintian
      squashfs-tools erofs-utils man-db postgresql"

missing=""
for p in $PKGS; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
        echo "install-deps: missing packages:$missing (run as root to install them)" >&2
        exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
