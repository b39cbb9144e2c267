#!/bin/bash
# bash completion offers what readset takes: every verb (pack too), each
# verb's options as getopt reads them (readset --list-options), the words
# of an option's value, boot's subcommands once and only before one; and
# readset accepts every word it offers.  COMPLETION: the script to test
# (default: the one the build made).
. "$(dirname "$0")/lib.sh"

COMPLETION=${COMPLETION:-$BUILDDIR/completion/readset}
[ -r "$COMPLETION" ] || fail "no completion script at $COMPLETION"
PATH=$(dirname "$READSET"):$PATH    # a script that runs readset runs this one
export PATH
# shellcheck disable=SC1090
. "$COMPLETION"
declare -F _readset >/dev/null || fail "$COMPLETION defines no _readset"
# in an empty directory: a file name offered would be one of these
mkdir "$TMP/empty"
cd "$TMP/empty"

# The words offered for the last word of a command line, one a line.
offered() {   # words...
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        set +eu
        _readset readset "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        set -eu
        [ ${#COMPREPLY[@]} = 0 ] || printf '%s\n' "${COMPREPLY[@]}"
}
# readset with these arguments exits 0 and refuses no option
accepts() {   # args...
        local rc=0
        "$READSET" "$@" > /dev/null 2> "$TMP/err" || rc=$?
        [ "$rc" = 0 ] && ! grep -Eqi "unrecognized|invalid|unknown" "$TMP/err"
}

options=$("$READSET" --list-options)
verbs=$(echo "$options" | awk '{ print $1 }' | uniq)
echo "$verbs" | grep -qx pack || fail "--list-options names no pack"

# position 1: the verbs, --help, --version
top=$(offered readset "")
for v in $verbs; do
        echo "$top" | grep -qx -- "$v" || check_fail "readset <TAB>: $v not offered"
done
for w in $top; do
        case $w in
        -*) accepts "$w" || check_fail "readset <TAB> offers '$w': readset $w: $(cat "$TMP/err")" ;;
        *) accepts "$w" --help || check_fail "readset <TAB> offers '$w': readset $w --help: $(cat "$TMP/err")" ;;
        esac
done

# VERB -<TAB>: every option, each accepted (with a value, if it takes one)
for v in $verbs; do
        got=$(offered readset "$v" -)
        for l in $(echo "$options" | awk -v v="$v" '$1 == v && $3 != "-" { print $3 }'); do
                echo "$got" | grep -qx -- "$l" || check_fail "readset $v -<TAB>: $l not offered"
        done
        for o in $got; do
                arg=$(echo "$options" | awk -v v="$v" -v o="$o" '$1 == v && ($3 == o || $2 == o) { print $4 }')
                if [ -z "$arg" ]; then
                        check_fail "readset $v -<TAB> offers '$o': readset $v takes no such option"
                        continue
                fi
                if [ "$arg" = . ]; then
                        accepts "$v" "$o" --help ||
                                check_fail "readset $v -<TAB> offers '$o': readset $v $o --help: $(cat "$TMP/err")"
                        continue
                fi
                # the words offered for its value, each accepted; none (a
                # number, a file): one plausible value accepted
                words=$(offered readset "$v" "$o" "")
                for w in $words; do
                        accepts "$v" "$o" "$w" --help ||
                                check_fail "readset $v $o <TAB> offers '$w': readset $v $o $w --help: $(cat "$TMP/err")"
                done
                if [ -z "$words" ]; then
                        ok=
                        for w in 1 128M 128K 2048 hdd rotational / x; do
                                if accepts "$v" "$o" "$w" --help; then ok=1; break; fi
                        done
                        [ -n "$ok" ] || check_fail "readset $v -<TAB> offers '$o': refused with every value tried"
                fi
        done
done

# a device's value: every name of the one table (device/names.h), in every
# verb that takes one
for vo in "replay --device" "run --device" "report --device" "report --profile" "layout --profile"; do
        words=$(offered readset $vo "")
        for n in rotational solid hdd hdd-7200 usb sd nvme share share-2ms share-2ms-smb share-2ms-nfs; do
                echo "$words" | grep -qx -- "$n" || check_fail "readset $vo <TAB>: '$n' not offered"
        done
done

# boot <TAB>: its subcommands, each a real one; after one, none again
subs=$(offered readset boot "")
[ -n "$subs" ] || check_fail "readset boot <TAB>: nothing offered"
for s in $subs; do
        accepts boot "$s" --help || check_fail "readset boot <TAB> offers '$s': readset boot $s --help: $(cat "$TMP/err")"
done
for s in $subs; do
        again=$(offered readset boot "$s" "")
        for w in $again; do
                echo "$subs" | grep -qx -- "$w" && check_fail "readset boot $s <TAB> offers the subcommand '$w' again"
        done
        again=$(offered readset boot --json "$s" "")
        for w in $again; do
                echo "$subs" | grep -qx -- "$w" && check_fail "readset boot --json $s <TAB> offers the subcommand '$w' again"
        done
done
again=$(offered readset boot --state /x "")
[ "$again" = "$subs" ] || check_fail "readset boot --state /x <TAB>: not the subcommands: $again"

[ -z "$FAILED" ] || fail "completion (above)"
echo "completion: ok ($(echo $verbs))"
