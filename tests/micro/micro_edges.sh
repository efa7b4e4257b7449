#!/bin/sh
# rb_micro at the edges of its input, every reducer, on 1, 3 and 9 ranks
# (9 oversubscribed): one element, fewer elements than ranks with one
# support on every rank, one row of 13, nothing on any rank, disjoint
# supports, full blocks; dense and rows input and oktopk's two selections
# taken in turn.  Exact reducers validate with no wrong element (rb_micro
# exits 1 otherwise, checked here from the JSON rows too); s2 and oktopk
# with oktopk_select=topk report a finite rel_l2_err, gossip a finite
# consensus distance.  docs/values.md says what the edges must give.
micro="$top_builddir/benchmarks/rb_micro"
[ -x "$micro" ] || { echo "SKIP: $micro not built" >&2; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 120"
fail=0
run() {   # run NP NAME ARGS...: one launch, its rows into $tmp/NAME.json
    np=$1 name=$2; shift 2
    $limit "$MPIRUN" "$np" "$micro" -q -i 2 -x 1 -P none --alpha 1e-6 --beta 1e-9 --reducer all \
        -o "$tmp/$name.h5" -J "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: $name ($np ranks, $*): exit $rc"; tail -5 "$tmp/$name.out"; fail=1; }
}
for np in 1 3 9; do
    less=$((np > 1 ? np - 1 : 1))
    disjoint=$(awk "BEGIN { print 0.9 / $np }")
    run $np "one-$np" --shape 1x1 --density 1 --input dense
    run $np "fewer-$np" --shape ${less}x1 --density 1 --overlap all --input rows -O oktopk_select=topk
    run $np "row-$np" --shape 1x13 --layout row --density 1 --input dense -O oktopk_select=topk
    run $np "empty-$np" --shape 37x5 --layout row --density 0 --input rows
    run $np "disjoint-$np" --shape 37x5 --overlap none --density "$disjoint" --input dense
    run $np "blocks-$np" --shape 37x5 --layout block --density 0.5 --input rows -O block_size=4 \
        -O oktopk_select=topk
done
[ $fail -eq 0 ] || exit 1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import glob, json, math, sys
bad, seen = [], 0
lossy = {"s2"}
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for line in open(path):
        r = json.loads(line)
        seen += 1
        name, what = r["reducer"], "%s %s" % (path.rsplit("/", 1)[1], r["reducer"])
        topk = name == "oktopk" and "oktopk_select=topk" in r["command_line"]
        if name == "none":
            continue
        if r["checked"] != 1:
            bad.append(what + ": not validated")
        elif name == "gossip":
            if not math.isfinite(r["consensus"]):
                bad.append("%s: consensus %r" % (what, r["consensus"]))
        elif name in lossy or topk:
            if not math.isfinite(r["rel_l2_err"]):
                bad.append("%s: rel_l2_err %r" % (what, r["rel_l2_err"]))
        elif r["wrong"] != 0:
            bad.append("%s: %d wrong" % (what, r["wrong"]))
if seen < 18 * 10:   # 18 launches (3 rank counts x 6 shapes), a row per reducer of the 10
    bad.append("only %d rows in the JSON files, expected 18 launches x 10 reducers (a launch "
               "wrote none?)" % seen)
if bad:
    sys.exit("FAIL: " + "\nFAIL: ".join(bad[:20]))
print("ok: %d rows at the edges, exact ones without a wrong element" % seen)
PY
exit $fail
