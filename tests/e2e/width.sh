#!/bin/sh
# Every verb's text output fits 80 columns (docs/HACKING.md): a small read
# set, recorded as root, whose files lie below a directory nested 150
# characters deep on the test's own ext4, through show (-r, -l), report
# (--top), replay (--dry-run, plain, -v), run --stats, layout --dry-run,
# probe --quick, boot status (a history with a long note), boot enable and
# disable, build, pack (--portable, --image), layout --undo-leftovers, run
# --auto's first run, and record's own summary: no line of standard output or
# error wider than 80 columns.  Long paths are elided in their middle
# ("..."), the figures of their line kept.  (JSON, the sort file of pack
# --order and the --help texts are not looked at here.)
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_loop

make_ext4 200
D=$MNT
while [ ${#D} -lt $((${#MNT} + 150)) ]; do D=$D/a-directory-nested-deep; done
mkdir -p "$D"
for i in 1 2 3; do head -c 200000 /dev/urandom > "$D/file-with-a-long-name-$i.dat"; done
RS=$D/small.readset
sync; echo 3 > /proc/sys/vm/drop_caches

# each verb's output (stdout and stderr) kept, and every line wider than 80
# columns counted; the verbs that print one are named at the end
WIDE=
run_verb() {   # name command...
        name=$1; shift
        rc=0; "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?
        [ $rc = 0 ] || { cat "$TMP/out" "$TMP/err"; check_fail "$name: exit $rc"; return; }
        cat "$TMP/out" "$TMP/err" | awk -v n="$name" 'length > 80 { printf "%s: %d columns: %s\n", n, length, $0; bad = 1 }
                                                       END { exit bad }' >&2 || WIDE="$WIDE $name"
}

run_verb record "$READSET" record -o "$RS" -- sh -c "cat '$D/file-with-a-long-name-1.dat' '$D/file-with-a-long-name-2.dat' > /dev/null"
[ -f "$RS" ] || fail "record wrote no read set"
run_verb show "$READSET" show "$RS"
run_verb "show -r" "$READSET" show --ranges "$RS"
run_verb "show -l" "$READSET" show --lookups "$RS"
run_verb report "$READSET" report "$RS"
run_verb "report --top" "$READSET" report --top 3 "$RS"
run_verb "replay -n" "$READSET" replay --dry-run "$RS"
run_verb replay "$READSET" replay "$RS"
run_verb "replay -v" "$READSET" replay --verbose "$RS"
run_verb "run --stats" "$READSET" run --stats "$RS" -- sh -c "cat '$D/file-with-a-long-name-3.dat' > /dev/null"
run_verb "layout -n" "$READSET" layout --dry-run --profile hdd "$RS"
run_verb "layout -n --under" "$READSET" layout --dry-run --under "$D" "$RS"
run_verb "probe --quick" "$READSET" probe --quick --size 16M "$D"

# boot status: a state of the test's own, with a history of two boots, one
# with a long note
S=$TMP/state
"$READSET" boot enable --state "$S" 2>"$TMP/err" || fail "boot enable: $(cat "$TMP/err")"
cp "$RS" "$S/plan.readset"
now=$(date +%s)
printf '1 %s record 2500000 0 4000000 -1 0 3 0 first boot\n' $((now - 60)) > "$S/history"
printf '1 %s replay+record 2000000 4000000 4000000 934 0 3 2 %s\n' "$now" \
        "the replay read what the boot used; 2 files changed since they were recorded (recorded anew on the next boot)" >> "$S/history"
run_verb "boot status" "$READSET" boot status --state "$S"

# build: a trace whose paths file names the deep files
FIX=${SRCDIR:?}/tests/fixtures
sed "s|/usr/share/mapped.dat|$D/file-with-a-long-name-1.dat|" "$FIX/small.paths" > "$TMP/deep.paths"
run_verb build "$READSET" build --no-walk --paths "$TMP/deep.paths" -o "$D/built.readset" "$FIX/small.trace"
run_verb "pack --portable" "$READSET" pack --portable -o "$D/portable.readset" "$MNT" "$RS"
if command -v mksquashfs >/dev/null; then
        O=$TMP/o${D#$MNT}       # as deep, outside the tree packed
        mkdir -p "$O"
        run_verb "pack --image" "$READSET" pack --image squashfs -o "$O/small.img" "$MNT" "$RS"
fi
run_verb "layout --undo-leftovers" "$READSET" layout --undo-leftovers --under "$D" "$RS"
# run --auto: the first run records into a directory as deep
run_verb "run --auto" "$READSET" run --auto "$D/auto" -- sh -c "cat '$D/file-with-a-long-name-3.dat' > /dev/null"
run_verb "boot disable" "$READSET" boot disable --state "$S"
run_verb "boot enable" "$READSET" boot enable --state "$S"

[ -z "$WIDE" ] || fail "wider than 80 columns:$WIDE"
[ -z "$FAILED" ] || exit 1
echo "every verb's text output fits 80 columns"
