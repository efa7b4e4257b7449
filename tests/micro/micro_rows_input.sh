#!/bin/sh
# rb_micro --input rows: the gradient handed as its non-zero
# rows (rb_reduce_rows) validates like the dense input for every exact
# reducer on 1, 2, 3, 5 and 8 ranks, and with no rows at all, with the
# same wire bytes; the archive says which input a row had and the report
# keeps the two inputs apart.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
exact=dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen
for np in 1 2 3 5 8; do
    for input in dense rows; do
        # No rows at all on any rank (the empty input), then rows on every rank.
        "$MPIRUN" "$np" "$micro" --reducer "$exact,s2" --shape 16x8 --layout row --density 0 \
            -i 2 -x 1 -P none --input "$input" -o "$tmp/$input-$np.h5" >"$tmp/$input-$np.out" 2>&1 ||
            { echo "FAIL: $np ranks, --input $input: exit $?"; tail -5 "$tmp/$input-$np.out"; fail=1; }
        "$MPIRUN" "$np" "$micro" --reducer "$exact" --shape 256x64 --layout row --density 0.1 \
            -i 2 -x 1 -P none --input "$input" -o "$tmp/$input-$np-big.h5" >"$tmp/$input-$np-big.out" 2>&1 ||
            { echo "FAIL: $np ranks, --input $input, 256x64: exit $?"; tail -5 "$tmp/$input-$np-big.out"; fail=1; }
    done
done
[ $fail -eq 0 ] || exit 1
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import sys, h5py, numpy as np, pandas as pd
d = sys.argv[1]
def rows(name):
    t = pd.DataFrame(h5py.File("%s/%s.h5" % (d, name), "r")["/micro/results"][...])
    for c in ("reducer", "input"):
        t[c] = t[c].str.decode("ascii").str.rstrip("\0")
    return t
bad, n, empty = [], 0, 0
for np_ in (1, 2, 3, 5, 8):
    for suffix in ("", "-big"):
        a, b = rows("dense-%d%s" % (np_, suffix)), rows("rows-%d%s" % (np_, suffix))
        if set(a["input"]) != {"dense"} or set(b["input"]) != {"rows"}:
            bad.append("%d ranks: input column %s / %s" % (np_, set(a["input"]), set(b["input"])))
        for (_, x), (_, y) in zip(a.iterrows(), b.iterrows()):
            n += 1
            if x["reducer"] == "s2":
                if not np.isclose(x["rel_l2_err"], y["rel_l2_err"], rtol=1e-6, equal_nan=True):
                    bad.append("%d ranks s2: error %r with rows, %r dense" % (np_, y["rel_l2_err"], x["rel_l2_err"]))
                continue
            if y["checked"] != 1 or y["wrong"] != 0:
                bad.append("%d ranks %s rows: checked %d wrong %d" % (np_, y["reducer"], y["checked"], y["wrong"]))
            if x["bytes_sent_avg"] != y["bytes_sent_avg"]:
                bad.append("%d ranks %s: sent %r with rows, %r dense" % (np_, x["reducer"],
                                                                          y["bytes_sent_avg"], x["bytes_sent_avg"]))
            if x["nnz_local_avg"] != y["nnz_local_avg"]:
                bad.append("%d ranks %s: nnz/rank differs" % (np_, x["reducer"]))
        empty += int(suffix == "" and (b["nnz_local_avg"] == 0).all())
if empty != 5:
    bad.append("the runs without rows had non-zeros")
if bad:
    sys.exit("FAIL: " + "\nFAIL: ".join(bad[:20]))
print("ok: %d rows with --input rows validated with the dense input's wire bytes" % n)
PY
mkdir "$tmp/in" && cp "$tmp/dense-2.h5" "$tmp/rows-2.h5" "$tmp/in/"
"$top_srcdir/analysis/rb-report" "$tmp/in" -o "$tmp/rep" >"$tmp/rep.out" 2>&1 || { echo "FAIL: rb-report: $?"; fail=1; }
grep -q "rows input" "$tmp/rep/tables/micro_groups.csv" || { echo "FAIL: the report pooled the two inputs"; fail=1; }
"$MPIRUN" 1 "$micro" --input rows -d cuda -o none >"$tmp/cuda" 2>&1
[ $? -eq 2 ] || { echo "FAIL: --input rows -d cuda not refused with exit 2"; fail=1; }
exit $fail
