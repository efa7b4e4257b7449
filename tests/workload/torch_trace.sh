#!/bin/sh
# analysis/rb-torch-trace: a PyTorch model's sparse embedding gradients
# (hooked on nn.Embedding(sparse=True)) recorded as 3 simulated ranks into
# a gradient trace, replayed by rb_micro through every reducer on 3 ranks
# (exact reducers' #wrong 0) and checked against the file
# (trace_check.py).  Skipped, saying why, without PyTorch or h5py.
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro
need_torch
need_python "h5py, numpy" python3-h5py/numpy
[ -d "$fo" ] || skip "no text to train on (Debian fortunes)"
exporter="$top_srcdir/analysis/rb-torch-trace"
check="$top_srcdir/tests/workload/trace_check.py"

"$exporter" -o "$tmp/t.h5" --ranks 3 --steps 3 --batch 16 >"$tmp/exp" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "3 steps of 3 ranks, embedding 2000 x 64" "$tmp/exp" ||
    { echo "FAIL: rb-torch-trace exited $rc"; cat "$tmp/exp"; exit 1; }
"$exporter" -o "$tmp/t.h5" --ranks 3 --steps 1 >"$tmp/again" 2>&1
[ $? -eq 2 ] && grep -q "refusing to overwrite existing .*t.h5 (use --force)" "$tmp/again" ||
    { echo "FAIL: an existing -o without --force: not refused as rb_micro and rb-archive refuse it"; cat "$tmp/again"; fail=1; }

"$MPIRUN" 3 "$micro" -q -i 2 -x 1 --input "trace:$tmp/t.h5" -o "$tmp/r3.h5" >"$tmp/r3" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: replay of the PyTorch trace exited $rc"; cat "$tmp/r3"; fail=1; }
grep -q "model torch-wordlm from rb-torch-trace" "$tmp/r3" ||
    { echo "FAIL: the preamble does not name the trace's model and source"; fail=1; }
$py "$check" "$tmp/t.h5" "$tmp/r3.h5" 3 || fail=1
# the gradient is PyTorch's own: rows = the distinct words of each batch
$py - "$tmp/t.h5" <<'PY' || fail=1
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["layers/embedding"]
c = g["counts"][()]
assert c.shape == (3, 3) and (c > 0).all() and (c <= 16 * 3).all(), c
assert np.isfinite(g["values"][()]).all() and np.abs(g["values"][()]).max() > 0
print("PyTorch trace: rows per (step, rank)", c.tolist())
PY
exit $fail
