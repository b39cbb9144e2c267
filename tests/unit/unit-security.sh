#!/bin/sh
# Every unit the package ships, as built (bindir substituted): its
# exposure by 'systemd-analyze security --offline=yes' at most MAX (5.0;
# 10 is no hardening at all).  No root, no running systemd needed.
set -eu
MAX=${MAX:-5.0}
[ $# -gt 0 ] || { echo "usage: $0 UNIT..." >&2; exit 2; }
command -v systemd-analyze >/dev/null ||
        { echo "SKIP: needs systemd-analyze (Debian package systemd)"; exit 77; }
systemd-analyze --help 2>/dev/null | grep -q -- --offline ||
        { echo "SKIP: this systemd-analyze has no --offline (systemd 250 or later)"; exit 77; }
threshold=$(echo "$MAX" | awk '{ printf "%d", $1 * 10 + 0.5 }')
rc=0
for unit in "$@"; do
        [ -f "$unit" ] || { echo "FAIL: no unit '$unit'" >&2; exit 1; }
        out=$(systemd-analyze security --offline=yes --no-pager --threshold="$threshold" "$unit" 2>&1) || rc=$?
        level=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
        if [ -z "$level" ]; then
                echo "FAIL: no exposure for $unit: $out" >&2
                exit 1
        fi
        if [ "$rc" != 0 ] || ! awk -v l="$level" -v m="$MAX" 'BEGIN { exit !(l <= m) }'; then
                printf '%s\n' "$out" | grep '✗' >&2 || true
                echo "FAIL: $(basename "$unit"): exposure $level, above $MAX" >&2
                exit 1
        fi
        echo "ok: $(basename "$unit"): exposure $level (at most $MAX)"
done
