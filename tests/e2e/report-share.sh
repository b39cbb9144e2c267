#!/bin/sh
# readset report judges a local recording for a share: a real program's
# recorded lookups costed through each client model, and the first finding
# names the pattern that multiplies them: a walk of every parent directory
# per file (stat of each parent, top down, then the file four times), or
# failed lookups along a search path (a name looked for in one directory
# after another).  On a local disk neither appears.  The JSON has each
# prediction's run and lookups, by client model.
. "$(dirname "$0")/lib.sh"
need_root; need_tracefs; need_bpf; need_python

T=$TMP/tree
mkdir -p "$T/proj"
# the parent walk: 40 files three directories down, each reached by a stat
# of every parent from the tree's top, then stat'ed four times
set --
for d in a b; do
        for e in c d; do
                mkdir -p "$T/proj/$d/$e"
                for i in 0 1 2 3 4 5 6 7 8 9; do
                        f=$T/proj/$d/$e/f$i
                        : > "$f"
                        set -- "$@" "$T" "$T/proj" "$T/proj/$d" "$T/proj/$d/$e" "$f" "$f" "$f" "$f"
                done
        done
done
"$READSET" record -q -o "$TMP/walk.readset" -- "$TESTPROG" stat "$@" > /dev/null || fail "record the walk"

# a search path: 12 modules looked for in 5 directories in turn, found in the
# 5th; the whole search made twice (a client that keeps failed lookups
# answers the second itself)
set --
for s in s1 s2 s3 s4 s5 s6; do mkdir -p "$T/path/$s"; done
for m in 0 1 2 3 4 5 6 7 8 9 10 11; do
        : > "$T/path/s5/mod$m.pm"
        for s in s1 s2 s3 s4 s5; do set -- "$@" "$T/path/$s/mod$m.pm"; done
done
"$READSET" record -q -o "$TMP/search.readset" -- "$TESTPROG" stat "$@" "$@" > /dev/null ||
        fail "record the search path"

for dev in share-2ms share-2ms-smb share-2ms-nfs hdd; do
        for rs in walk search; do
                "$READSET" report --no-probe --json --device $dev "$TMP/$rs.readset" > "$TMP/$rs-$dev.json" ||
                        fail "report --device $dev $rs"
                "$READSET" report --no-probe --device $dev "$TMP/$rs.readset" > "$TMP/$rs-$dev.txt" ||
                        fail "report --device $dev $rs (text)"
        done
done

"$PY" - "$TMP" "$T" <<'PYEOF' || FAILED=1
import json, sys
tmp, tree = sys.argv[1:]
bad = []

def check(ok, msg):
    if not ok:
        bad.append(msg)

for dev, client in (("share-2ms", "strict"), ("share-2ms-smb", "smb"), ("share-2ms-nfs", "nfs"), ("hdd", None)):
    for rs in ("walk", "search"):
        d = json.load(open(f"{tmp}/{rs}-{dev}.json"))
        ref = d["predictions"][-1]
        lk, find = ref["lookups"], d["findings"]
        text = open(f"{tmp}/{rs}-{dev}.txt").read()
        if client is None:
            # a local disk: lookups are its metadata blocks, no round trips
            check(not lk["costed"], f"{rs} on hdd: lookups costed")
            check(not any("parent directory" in f or "search path" in f for f in find),
                  f"{rs} on hdd: a share's finding: {find}")
            continue
        check(lk["costed"] and lk["client"] == client, f"{rs} on {dev}: lookups {lk}")
        check(lk["round_trips"] == sum(lk["asked"].values()), f"{rs} on {dev}: round trips by kind {lk}")
        check(lk["round_trips"] > 0 and abs(lk["seconds"] - lk["round_trips"] * 0.002) < 1e-6,
              f"{rs} on {dev}: {lk['round_trips']} round trips at 2 ms are not {lk['seconds']} s")
        check(ref["plain"]["seconds"] >= lk["seconds"], f"{rs} on {dev}: plain below its lookups")
        check(0 < ref["run"]["seconds"] < ref["plain"]["seconds"], f"{rs} on {dev}: run {ref['run']}")
        check(f"lookups ask its {client} client" in text, f"{rs} on {dev}: no lookups line in the text")
        if rs == "walk":
            # 40 files: 4 parents and the file 4 times each
            check(find and find[0].startswith("320 lookups reach 40 paths by walking every parent directory "
                                              "first (4.0 per path), each path then asked 4.0 times"),
                  f"walk on {dev}: first finding {find[:1]}")
            check("% of the predicted time" in find[0] and "actimeo" in find[0], f"walk on {dev}: {find[:1]}")
        else:
            # 120 lookups, 96 failed, in s1..s4 (24 each); nothing found in 4 of 5
            check(find and find[0].startswith("96 failed lookups along a search path of 4 directories "
                                              "(8.0 per name looked for"),
                  f"search on {dev}: first finding {find[:1]}")
            check(find and "in 4 of them no name was ever found; moving them to the end of the search path saves 96 "
                  "failed lookups" in find[0], f"search on {dev}: {find[:1]}")
            check(find and "/path/s1 (24)" in find[0], f"search on {dev}: {find[:1]}")
# the models differ where they should: strict keeps no failed lookup, nfs
# and smb answer the second search's themselves (the loader's one failed
# lookup, /etc/ld.so.preload, besides)
asked = {c: json.load(open(f"{tmp}/search-{d}.json"))["predictions"][-1]["lookups"]["asked"]
         for c, d in (("strict", "share-2ms"), ("smb", "share-2ms-smb"), ("nfs", "share-2ms-nfs"))}
check(96 <= asked["strict"]["failed"] <= 97, f"strict failed lookups: {asked['strict']}")
check(48 <= asked["nfs"]["failed"] <= 49 and 48 <= asked["smb"]["failed"] <= 49, f"smb, nfs failed lookups: {asked}")
for line in bad:
    print("FAIL:", line)
print("report-share:", "ok" if not bad else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
PYEOF
[ -z "$FAILED" ] || fail "report on a share"
echo "report-share: ok"
