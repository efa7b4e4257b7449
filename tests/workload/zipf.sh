#!/bin/sh
# Zipf supports (--overlap zipf:S) on an odd rank count: every exact
# reducer validates (#wrong 0, exit 0); the workload columns say what the
# skew does (the union of Zipf batches is smaller than that of uniform
# draws at the same density, the ranks' loads are uneven); the same seed
# gives the same gradient, another seed another; the archive records them.
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro

common="-q -i 2 -x 1 --layout row --cols 16 -m 256K:256K --density 0.05"
"$MPIRUN" 3 "$micro" $common --overlap zipf:1.1 -o "$tmp/z.h5" >"$tmp/z" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: zipf run on 3 ranks exited $rc"; cat "$tmp/z"; fail=1; }
# Exact reducers: #wrong ($14) 0 on every row; the row count is every reducer.
exact=$(awk '/^# Reducer: .*\(exact\)/ {e = 1; next} /^# Reducer/ {e = 0}
             e && /^ +[0-9]+ / { n++; if ($14 != "0") bad = 1 } END { print (bad ? -1 : n) }' "$tmp/z")
[ "$exact" -ge 5 ] || { echo "FAIL: exact reducers' rows on zipf: $exact (-1: a #wrong > 0)"; cat "$tmp/z"; fail=1; }

"$MPIRUN" 3 "$micro" $common --overlap random --reducer dense -o none >"$tmp/u" 2>&1 ||
    { echo "FAIL: the uniform run failed"; cat "$tmp/u"; fail=1; }
"$MPIRUN" 3 "$micro" $common --overlap zipf:1.1 --reducer dense -o none >"$tmp/z2" 2>&1
"$MPIRUN" 3 "$micro" $common --overlap zipf:1.1 --reducer dense -o none --seed 7 >"$tmp/z3" 2>&1
# columns: 3 nnz/rank, 20 union_rows, 21 union/pn, 22 imbal
row() { awk '/^# Reducer: dense/ {d = 1} d && /^ +[0-9]+ / { print $3, $20, $21, $22; exit }' "$1"; }
set -- $(row "$tmp/u"); u_ratio=$3
set -- $(row "$tmp/z2"); z_nnz=$1 z_union=$2 z_ratio=$3 z_imbal=$4
set -- $(row "$tmp/z3"); z3_nnz=$1
echo "uniform union/pn $u_ratio; zipf:1.1 nnz/rank $z_nnz union_rows $z_union union/pn $z_ratio imbal $z_imbal"
awk -v u="$u_ratio" -v z="$z_ratio" 'BEGIN { exit !(z > 0 && z < u - 0.1) }' ||
    { echo "FAIL: zipf union/pn $z_ratio not well below uniform's $u_ratio"; fail=1; }
awk -v i="$z_imbal" 'BEGIN { exit !(i > 1.0 && i < 2.0) }' ||
    { echo "FAIL: zipf imbalance $z_imbal not in (1, 2)"; fail=1; }
# the same seed: the same gradient as the all-reducer run's; another seed differs
set -- $(row "$tmp/z"); [ "$1" = "$z_nnz" ] || { echo "FAIL: same seed, nnz/rank $1 vs $z_nnz"; fail=1; }
[ "$z3_nnz" != "$z_nnz" ] || { echo "FAIL: --seed 7 gave the same nnz/rank $z_nnz"; fail=1; }

# bad exponents are usage errors naming the option
for bad in zipf:0 zipf:-1 zipf: zipf:x zipf:1e9; do
    "$MPIRUN" 1 "$micro" -o none --overlap "$bad" >"$tmp/bad" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "--overlap" "$tmp/bad" ||
        { echo "FAIL: --overlap $bad exited $rc"; cat "$tmp/bad"; fail=1; }
done

$py -c 'import h5py' 2>/dev/null || { echo "note: no h5py, archive not read"; exit $fail; }
$py "$top_srcdir/tests/archive/archive_schema_check.py" "$top_srcdir/docs/archive-schema.json" "$tmp/z.h5" ||
    { echo "FAIL: the zipf archive does not match results/README.md"; fail=1; }
$py - "$tmp/z.h5" <<'PY' || fail=1
import sys, h5py, numpy as np
r = h5py.File(sys.argv[1], "r")["micro/results"][()]
ov = {x.decode() for x in r["overlap"]}
assert ov == {"zipf:1.1"}, ov
for c in ("union_rows", "union_ratio", "nnz_local_max", "imbalance", "step"):
    assert c in r.dtype.names, c
ok = r["nnz_union"] >= 0
assert np.all(r["union_rows"][ok] * 16 == r["nnz_union"][ok]), "row layout: union = rows x cols"
assert np.allclose(r["imbalance"], r["nnz_local_max"] / r["nnz_local_avg"])
assert np.allclose(r["union_ratio"][ok], r["nnz_union"][ok] / (3 * r["nnz_local_avg"][ok]))
assert np.all(r["step"] == -1)
print("archive: zipf:1.1, workload columns consistent on", len(r), "rows")
PY
exit $fail
