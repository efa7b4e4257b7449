#!/bin/sh
# The authors' anchors on a gradient trace: benchmarks/anchors/s2-authors
# runs the S2 authors' Sketch_Embed_Reducer and Exact_Embed_Reducer (their
# code, ported to the CPU on the fly) under torch.distributed/gloo beside
# rb_micro's s2 on the same recorded gradient.  RB_S2_AUTHORS names a
# checkout of github.com/GeKeShi/Sparse_Sketch_Reducer (never committed);
# skipped, saying why, without it, without PyTorch or h5py.  Their exact
# reducer must be exact, their sketch and rb's s2 within a factor 1.5 of
# each other's error at the same width (both near sqrt(U/c)).
# Ok-Topk's authors' anchor is tests/workload/anchors_oktopk.sh.
. "$top_srcdir/tests/workload/workload_lib.sh"
anchor="$top_srcdir/benchmarks/anchors/s2-authors"
need_torch
need_python "h5py, numpy" python3-h5py/numpy
[ -n "${RB_S2_AUTHORS:-}" ] ||
    { echo "SKIP: RB_S2_AUTHORS is not set (a checkout of github.com/GeKeShi/Sparse_Sketch_Reducer)" >&2; exit 77; }
[ -d "$RB_S2_AUTHORS/GNMT/seq2seq/train" ] ||
    { echo "SKIP: RB_S2_AUTHORS=$RB_S2_AUTHORS holds no GNMT/seq2seq/train" >&2; exit 77; }
need_micro
need_train

"$MPIRUN" 2 "$train" --model wordlm --data "$fo" --vocab 2000 --batch 32 --iterations 1 -o none \
    --record-gradients "$tmp/t.h5" >"$tmp/rec" 2>&1 || { echo "FAIL: recording"; cat "$tmp/rec"; exit 1; }
"$anchor" --authors "$RB_S2_AUTHORS" --trace "$tmp/t.h5" --rb-micro "$micro" --calls 3 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "FAIL: s2-authors exited $rc"; exit 1; }
awk '/authors Exact_Embed/ { ex = $3 } /authors Sketch_Embed/ { a = $3 } /rb_micro s2/ { r = $3 }
     END { exit !(ex < 1e-6 && a > 0 && r > 0 && a / r < 1.5 && r / a < 1.5) }' "$tmp/out" ||
    { echo "FAIL: errors out of line (exact ~0, sketches within 1.5x)"; exit 1; }
