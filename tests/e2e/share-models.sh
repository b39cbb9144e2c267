#!/bin/sh
# The share emulator's client models (bench/slowdev up share --client):
# what each answers from its caches and what it asks the server again once
# a lifetime has passed, seen in the emulator's request counters.  Lifetimes
# are set for the test: long ones (60 s) where a cached answer is expected,
# short ones (0.2 s, then a wait of 0.6 s) where an expired one is, so that
# no check depends on how fast this machine is.
. "$(dirname "$0")/lib.sh"
need_root; need_python
need_share

mkdir -p "$TMP/src/a/b/c" "$TMP/src/list"
echo original >"$TMP/src/a/b/c/file"   # 9 bytes, as each change below
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i >"$TMP/src/list/e$i"; done

up() {   # client lifetimes
        "$SLOWDEV" up share "$m" --source "$TMP/src" --rtt 0.2 --client "$1" --lifetimes "$2" 2>/dev/null ||
                fail "up share --client $1"
}
down() { "$SLOWDEV" down "$m" || fail "down share"; }
# counter NAME: the emulator's count of that kind of request
counter() { "$SLOWDEV" stats "$m" | awk -v k="$1" '$1 == k { print $2 }'; }
# how often any process dropped the page cache or the dentries (drop_caches)
drops() { awk '$1 == "drop_pagecache" || $1 == "drop_slab" { n += $2 } END { print n + 0 }' /proc/vmstat; }
# costs NAME EXPECTED WHAT COMMAND...: run it, check how many requests of that kind it made.
# A step relies on what the steps before left in the kernel's caches (names
# walked through, data read): where another process dropped them meanwhile
# (the e2e tests of other work do) and the count is not the one expected, the
# step before is run again and the step measured again.
costs() {
        k=$1; want=$2; what=$3; shift 3
        since=${prev_start:-$(drops)}   # (counted from the start of the step before)
        for try in 1 2 3 4 5; do
                start=$(drops); before=$(counter "$k")
                "$@" >/dev/null 2>&1 || true
                got=$(( $(counter "$k") - before ))
                [ "$got" != "$want" ] && [ "$(drops)" != "$since" ] && [ -n "${prev:-}" ] || break
                echo "$client: $what: the caches were dropped by another process meanwhile; measured again"
                since=$(drops)
                $prev >/dev/null 2>&1 || true
        done
        [ "$got" = "$want" ] || fail "$client: $what: $got $k requests, expected $want"
        echo "$client: $what: $got $k requests"
        prev="$*"; prev_start=$start
}
deep=$m/a/b/c/file

for client in strict smb nfs; do
        if [ $client = strict ]; then up $client 60:60:0; else up $client 60:60:60; fi
        prev=   # (the first step finds nothing cached: no step before it to run again)
        "$SLOWDEV" stats "$m" | grep -q "^client $client$" || fail "$client: stats name another client"
        costs names 4 "first stat of a/b/c/file" stat "$deep"
        costs names 0 "the same stat again" stat "$deep"
        costs names 1 "a missing name" stat "$m/a/nope"
        case $client in
        strict) costs names 1 "the missing name again (no negative cache)" stat "$m/a/nope" ;;
        *)      costs names 0 "the missing name again (negative entry)" stat "$m/a/nope" ;;
        esac
        # a listing: readdirplus primes names and attributes, or it does not
        costs listings 1 "listing 12 entries" ls "$m/list"
        costs listings 1 "the same listing again (listings are not kept)" ls "$m/list"
        case $client in
        strict) costs names 12 "stat of every listed entry" stat "$m"/list/e* ;;
        *)      costs names 0 "stat of every listed entry (primed by the listing)" stat "$m"/list/e* ;;
        esac
        # data is kept while the file is unchanged; every open asks the server
        costs reads 1 "first read" cat "$deep"
        costs opens 1 "second open" cat "$deep"
        costs reads 0 "second read (data kept)" cat "$deep"
        n=$((${n:-0} + 1))
        # (the same size: the emulator sees a new size only once attributes expire)
        printf '%-8s\n' "$client" >"$TMP/src/a/b/c/file"; touch -d "2001-01-0$n 00:00" "$TMP/src/a/b/c/file"
        costs reads 1 "a read after the file changed on the server" cat "$deep"
        [ "$(cat "$deep")" = "$(printf '%-8s' "$client")" ] || fail "$client: the changed file's old data was served"
        ls -a "$m" | grep -q slowdev-stats && fail "$client: the stats file is listed"
        # access(2): asked of the server, or answered from the attributes
        case $client in
        strict) costs access 1 "access()" test -r "$deep" ;;
        *)      costs access 0 "access() from the attributes" test -r "$deep" ;;
        esac
        down
done

# expired lifetimes: everything walked through is asked again (strict,
# smb), or, with names still trusted (nfs: directory attributes live 30 s,
# file attributes 3 s), only the last component's attributes
for client in strict smb nfs; do
        case $client in
        nfs) up $client 60:0.2:60; expect_stat=1 ;;
        strict) up $client 0.2:0.2:0; expect_stat=4 ;;
        *)   up $client 0.2:0.2:0.2; expect_stat=4 ;;
        esac
        # (the step before the first measured: what a retry runs again)
        prime() { stat "$deep" >/dev/null; stat "$m/a/nope" >/dev/null 2>&1 || true; sleep 0.6; }
        prev_start=$(drops); prime; prev=prime
        costs names $expect_stat "a/b/c/file after its lifetimes" stat "$deep"
        case $client in
        nfs) costs names 0 "the missing name, its directory still trusted" stat "$m/a/nope" ;;
        *)   costs names 1 "the missing name after its lifetime" stat "$m/a/nope" ;;
        esac
        down
done
mountpoint -q "$m" && fail "still mounted"
echo "share-models: ok"
