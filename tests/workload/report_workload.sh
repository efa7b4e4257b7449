#!/bin/sh
# rb-report's workload section on archives with uniform, Zipf and trace
# points (a trace recorded by rb_train, replayed on the same 2 ranks by
# the same reducers at its shape and about its density): the section, its
# tables and figures are there and report_workload_check.py finds the
# archives' union, imbalance and fastest times in them.
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro
need_train
need_python "h5py, numpy, pandas, matplotlib" python3-h5py/numpy/pandas/matplotlib
report="$top_srcdir/analysis/rb-report"
check="$top_srcdir/tests/workload/report_workload_check.py"

"$MPIRUN" 2 "$train" --model wordlm --data "$fo" --vocab 2000 --batch 16 --iterations 2 -o none \
    --record-gradients "$tmp/t.h5" >"$tmp/rec" 2>&1 || { echo "FAIL: recording"; cat "$tmp/rec"; exit 1; }
mkdir "$tmp/res"
reds=dense,agsparse,sparcml,zen
opts="-q -i 2 -x 1 --reducer $reds"
for w in random zipf:1.1; do
    "$MPIRUN" 2 "$micro" $opts --shape 2000x64 --density 0.02 --overlap $w \
        -o "$tmp/res/$(echo $w | tr : _).h5" >"$tmp/m" 2>&1 || { echo "FAIL: --overlap $w"; cat "$tmp/m"; fail=1; }
done
"$MPIRUN" 2 "$micro" $opts --input "trace:$tmp/t.h5" -o "$tmp/res/trace.h5" >"$tmp/m" 2>&1 ||
    { echo "FAIL: trace replay"; cat "$tmp/m"; fail=1; }
# uniform points of another shape (a sweep) are no comparison: left out
mkdir "$tmp/res/other"
"$MPIRUN" 2 "$micro" $opts -m 64K:64K -o "$tmp/res/other/sweep.h5" >"$tmp/m" 2>&1 ||
    { echo "FAIL: the sweep"; cat "$tmp/m"; fail=1; }
# the trace beside its results (as jobscripts/main.sh keeps it) is an
# input, skipped by rb-report, not a refused result
mkdir "$tmp/res/traces" && cp "$tmp/t.h5" "$tmp/res/traces/"
"$report" "$tmp/res" -o "$tmp/rep" >"$tmp/r" 2>&1 || { echo "FAIL: rb-report"; cat "$tmp/r"; exit 1; }
grep -q ", 0 refused" "$tmp/rep/report.md" || { echo "FAIL: the trace file was refused"; cat "$tmp/r"; fail=1; }
$py "$check" "$tmp/rep" "$tmp/res/"*.h5 || fail=1
exit $fail
