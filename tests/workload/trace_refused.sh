#!/bin/sh
# rb_micro --input trace: refuses what it cannot replay, with one line on
# stderr naming the file and what is wrong, exit 2, no archive left:
# a missing file, a file that is not HDF5, a truncated trace, an HDF5
# file that is no trace, an incomplete recording, a row id out of range,
# ids out of order, a non-finite value, counts that do not add up, a
# missing layer, more ranks than the trace was recorded on, and rows x cols
# past 2^64 (2^62 x 4, which wrapped to 0 and crashed the replay).
. "$top_srcdir/tests/workload/workload_lib.sh"
need_micro
need_python "h5py, numpy" python3-h5py/numpy

# A valid 2-rank trace written by hand in the documented layout, and its
# broken variants (one defect each).
$py - "$tmp" <<'PY' || { echo "FAIL: cannot write the traces"; exit 1; }
import sys, h5py, numpy as np
d = sys.argv[1]
def write(name, defect=None):
    with h5py.File("%s/%s.h5" % (d, name), "w") as f:
        f.attrs["format"] = "reducerbench-gradient-trace" if defect != "format" else "something-else"
        f.attrs["format_version"] = np.int64(1)
        f.attrs["model"] = "hand"
        f.attrs["source"] = "trace_refused.sh"
        f.attrs["ranks"] = np.int64(2)
        f.attrs["complete"] = np.int64(0 if defect == "incomplete" else 1)
        g = f.create_group("layers/emb")
        g.attrs["rows"] = np.uint64(100)
        g.attrs["cols"] = np.uint64(4)
        g["steps"] = np.array([1, 2], "int64")
        g["counts"] = np.array([[2, 1], [1, 3 if defect == "counts" else 2]], "int64")
        ids = np.array([3, 7, 7, 50, 1, 99], "int64")
        if defect == "range":
            ids[5] = 100
        if defect == "order":
            ids[:2] = [7, 3]
        g["ids"] = ids
        v = np.linspace(-2, 2, 24, dtype="float32").reshape(6, 4) + 0.01
        if defect == "nan":
            v[2, 1] = np.nan
        g["values"] = v
write("good")
for defect in ("format", "incomplete", "range", "order", "nan", "counts"):
    write(defect, defect)
# rows x cols = 2^62 x 4 wraps to 0 in 64 bits (the replay crashed)
with h5py.File("%s/wrap.h5" % d, "w") as f:
    f.attrs.update({"format": "reducerbench-gradient-trace", "format_version": np.int64(1),
                    "model": "hand", "source": "trace_refused.sh", "ranks": np.int64(2),
                    "complete": np.int64(1)})
    g = f.create_group("layers/emb")
    g.attrs["rows"], g.attrs["cols"] = np.uint64(2**62), np.uint64(4)
    g["steps"] = np.array([1], "int64")
    g["counts"] = np.array([[1, 1]], "int64")
    g["ids"] = np.array([5, 2**61], "int64")
    g["values"] = np.ones((2, 4), "float32")
PY
head -c 3000 "$tmp/good.h5" >"$tmp/truncated.h5"
echo "not hdf5 at all" >"$tmp/text.h5"

"$MPIRUN" 2 "$micro" -q -i 1 -x 0 -o none --input "trace:$tmp/good.h5" >"$tmp/ok" 2>&1 ||
    { echo "FAIL: the valid hand-written trace was refused"; cat "$tmp/ok"; fail=1; }
awk '/^# Reducer: .*\(exact\)/ {e = 1; next} /^# Reducer/ {e = 0}
     e && /^ +[0-9]+ / && $14 != "0" { bad = 1 } END { exit bad }' "$tmp/ok" ||
    { echo "FAIL: #wrong on the valid trace"; cat "$tmp/ok"; fail=1; }

refused() {  # NP FILE EXPECTED [MORE ARGS]
    np=$1 f=$2 want=$3; shift 3
    rm -f "$tmp/arch.h5"
    "$MPIRUN" "$np" "$micro" -q -i 1 -x 0 -o "$tmp/arch.h5" --input "trace:$f" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    lines=$(grep -c "^rb_micro: " "$tmp/err")
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$want" "$tmp/err" || [ -e "$tmp/arch.h5" ]; then
        echo "FAIL: $f: exit $rc, $lines rb_micro lines, wanted '$want':"; cat "$tmp/err"; fail=1
    else
        echo "refused: $(grep '^rb_micro: ' "$tmp/err")"
    fi
}
refused 2 "$tmp/none.h5" "no such regular file"
refused 2 "$tmp/text.h5" "not an HDF5 file"
refused 2 "$tmp/truncated.h5" "not an HDF5 file"
refused 2 "$tmp/format.h5" "not a gradient trace"
refused 2 "$tmp/incomplete.h5" "incomplete trace"
refused 2 "$tmp/range.h5" "row id 100 outside 0..99"
refused 2 "$tmp/order.h5" "not ascending"
refused 2 "$tmp/nan.h5" "not finite"
refused 2 "$tmp/counts.h5" "counts sum to 7 rows, ids holds 6"
refused 2 "$tmp/wrap.h5" "4611686018427387904 x 4 exceeds 2^32 - 1 elements"
refused 2 "$tmp/good.h5" "no layer 'dense'" --trace-layer dense
refused 3 "$tmp/good.h5" "recorded on 2 ranks, cannot replay on 3"
"$MPIRUN" 1 "$micro" -o none --trace-layer emb >"$tmp/tl" 2>&1
[ $? -eq 2 ] && grep -q "only with --input trace" "$tmp/tl" ||
    { echo "FAIL: --trace-layer without a trace accepted"; cat "$tmp/tl"; fail=1; }
exit $fail
