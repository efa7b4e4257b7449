#!/bin/sh
# A gradient trace recorded by rb_train (wordlm on 3 ranks: an odd count)
# and replayed by rb_micro through every reducer: exact reducers' #wrong 0
# on 3 ranks, and on 2 (run rank r sums trace ranks r, r+2) with rows
# input; 4 ranks refused; the replayed gradient is the recorded one
# (trace_check.py: nnz, union per step from the file itself), the
# provenance (file, sha256, model, steps) in the archive.  rb_train's own
# refusals: a model without an embedding, an existing file, and the cap.
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro
need_train
need_python "h5py, numpy" python3-h5py/numpy
check="$top_srcdir/tests/workload/trace_check.py"

lm="--model wordlm --data $fo --vocab 2000 --batch 16 --iterations 6 -o none"
"$MPIRUN" 3 "$train" $lm --record-gradients "$tmp/t.h5" --record-every 2 >"$tmp/rec" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "^trace: $tmp/t.h5 (3 steps of 3 ranks)" "$tmp/rec" ||
    { echo "FAIL: rb_train --record-gradients exited $rc"; cat "$tmp/rec"; exit 1; }

"$MPIRUN" 3 "$micro" -q -i 2 -x 1 --input "trace:$tmp/t.h5" -o "$tmp/r3.h5" >"$tmp/r3" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: replay on 3 ranks exited $rc"; cat "$tmp/r3"; fail=1; }
"$MPIRUN" 2 "$micro" -q -i 2 -x 1 --input "rows,trace:$tmp/t.h5" -o "$tmp/r2.h5" \
    --reducer dense,agsparse,sparcml,zen,s2 >"$tmp/r2" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: replay on 2 ranks (rows input) exited $rc"; cat "$tmp/r2"; fail=1; }
$py "$check" "$tmp/t.h5" "$tmp/r3.h5" 3 "$tmp/r2.h5" 2 || fail=1
# the new columns and the trace_* attributes are the documented ones
$py "$top_srcdir/tests/archive/archive_schema_check.py" "$top_srcdir/docs/archive-schema.json" "$tmp/r3.h5" ||
    { echo "FAIL: the replay's archive does not match results/README.md"; fail=1; }
# -J carries the provenance on every line
"$MPIRUN" 3 "$micro" -q -i 1 -x 0 --reducer dense --input "trace:$tmp/t.h5" -o "$tmp/j.h5" \
    -J "$tmp/j.jsonl" >"$tmp/j" 2>&1 && grep -q '"trace_sha256"' "$tmp/j.jsonl" ||
    { echo "FAIL: -J of a replay"; cat "$tmp/j"; fail=1; }

"$MPIRUN" 4 "$micro" -q -i 1 -x 0 --input "trace:$tmp/t.h5" -o none >"$tmp/r4" 2>"$tmp/r4.err"
rc=$?
[ $rc -eq 2 ] && grep -q "recorded on 3 ranks, cannot replay on 4" "$tmp/r4.err" ||
    { echo "FAIL: replay on 4 ranks of a 3-rank trace exited $rc"; cat "$tmp/r4.err"; fail=1; }

# rb_train's refusals
"$MPIRUN" 1 "$train" $lm --record-gradients "$tmp/t.h5" >"$tmp/ex" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "refusing to overwrite existing .*t.h5 (use --force)" "$tmp/ex" ||
    { echo "FAIL: an existing trace file: exit $rc"; cat "$tmp/ex"; fail=1; }
"$MPIRUN" 1 "$train" --model mlp --iterations 1 -o none --record-gradients "$tmp/m.h5" >"$tmp/mlp" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "has no embedding" "$tmp/mlp" && [ ! -e "$tmp/m.h5" ] ||
    { echo "FAIL: mlp with --record-gradients: exit $rc"; cat "$tmp/mlp"; fail=1; }
"$MPIRUN" 3 "$train" $lm --record-gradients "$tmp/c.h5" --record-max-bytes 40K >"$tmp/cap" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "capped" "$tmp/cap" ||
    { echo "FAIL: --record-max-bytes 40K: exit $rc, no cap said"; cat "$tmp/cap"; fail=1; }
$py - "$tmp/c.h5" <<'PY' || fail=1
import sys, h5py
f = h5py.File(sys.argv[1], "r")
g = f["layers/embedding"]
n = g["ids"].shape[0]
assert f.attrs["capped"] == 1 and f.attrs["complete"] == 1
assert 1 <= len(g["steps"]) < 6, len(g["steps"])
assert n * (8 + 4 * 64) <= 40 * 1024, n
print("cap: %d of 6 steps, %d rows recorded" % (len(g["steps"]), n))
PY
exit $fail
