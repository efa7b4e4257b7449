#!/bin/sh
# A trace holding rb_micro's own synthetic gradient (gradgen_trace.py
# writes gradgen.c's row-layout, --overlap random gradient of seed 1 as a
# one-step trace) replays to the same gradient as rb_micro generates in
# memory: on 3 ranks, every reducer's row reports the same non-zeros,
# union, bytes, #wrong (0) and errors (s2's sketch error included, bit for
# bit); only the times may differ.  The replay path changes what the
# reducers are given, nothing else.
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro
need_python "h5py, numpy" python3-h5py/numpy
gen="$top_srcdir/tests/workload/gradgen_trace.py"
$py "$gen" "$tmp/g.h5" 3000 32 0.03 3 1 || { echo "FAIL: cannot write the trace"; exit 1; }
opts="-q -i 2 -x 1 --reducer dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen,s2"
"$MPIRUN" 3 "$micro" $opts --shape 3000x32 --layout row --density 0.03 -o "$tmp/syn.h5" >"$tmp/s" 2>&1 ||
    { echo "FAIL: synthetic run"; cat "$tmp/s"; exit 1; }
"$MPIRUN" 3 "$micro" $opts --input "trace:$tmp/g.h5" -o "$tmp/rep.h5" >"$tmp/r" 2>&1 ||
    { echo "FAIL: replay"; cat "$tmp/r"; exit 1; }
$py - "$tmp/syn.h5" "$tmp/rep.h5" <<'PY'
import sys, h5py
a, b = (h5py.File(p, "r")["micro/results"][()] for p in sys.argv[1:])
assert len(a) == len(b) == 8, (len(a), len(b))
same = ("reducer", "rows", "cols", "nnz_local_avg", "nnz_local_max", "nnz_union", "union_rows",
        "union_ratio", "imbalance", "bytes_sent_avg", "bytes_recv_avg", "wrong", "rel_l2_err",
        "max_abs_err", "recall")
for x, y in zip(a, b):
    for c in same:
        assert x[c] == y[c], (x["reducer"], c, x[c], y[c])
    assert x["wrong"] == 0 or x["reducer"] == b"s2"
print("replayed = generated on", len(a), "reducers; s2 rel_l2_err", [float(x["rel_l2_err"]) for x in a if x["reducer"] == b"s2"])
PY
