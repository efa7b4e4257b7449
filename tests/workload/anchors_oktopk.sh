#!/bin/sh
# Ok-Topk's authors' anchor: benchmarks/anchors/oktopk-authors runs their
# AllReducer (VGG/allreducer.py, the oktopk branch, ported to the CPU on
# the fly) under mpirun + mpi4py beside rb_micro's oktopk with
# oktopk_select=topk on the same gradient: rb_micro's synthetic gradient
# (element layout, density 0.01) on 2 and 3 ranks, and a wordlm trace
# recorded by rb_train on 2.  RB_OKTOPK_AUTHORS names a checkout of
# github.com/Shigangli/Ok-Topk (never committed); skipped, saying why,
# without it, without PyTorch, mpi4py, h5py or scipy.  Asserted (the
# anchor's exit status 0 and its lines): the same kept index set on the
# re-estimating call 0 and on the last threshold call, bytes per rank
# within 5% on the threshold calls.
. "$top_srcdir/tests/workload/workload_lib.sh"
anchor="$top_srcdir/benchmarks/anchors/oktopk-authors"
[ -n "${RB_OKTOPK_AUTHORS:-}" ] ||
    { echo "SKIP: RB_OKTOPK_AUTHORS is not set (a checkout of github.com/Shigangli/Ok-Topk)" >&2; exit 77; }
[ -f "$RB_OKTOPK_AUTHORS/VGG/allreducer.py" ] ||
    { echo "SKIP: RB_OKTOPK_AUTHORS=$RB_OKTOPK_AUTHORS holds no VGG/allreducer.py" >&2; exit 77; }
need_torch
need_python mpi4py python3-mpi4py
need_python "h5py, numpy, scipy" python3-h5py/numpy/scipy
need_micro

run_anchor() {   # what, then the anchor's arguments
    what=$1; shift
    "$anchor" --authors "$RB_OKTOPK_AUTHORS" --rb-micro "$micro" --calls 4 --rounds 1 "$@" \
        >"$tmp/out" 2>&1
    rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] || { echo "FAIL: $what: oktopk-authors exited $rc"; fail=1; return; }
    [ "$(grep -c '^kept set, .*: same' "$tmp/out")" -eq 2 ] ||
        { echo "FAIL: $what: kept sets differ"; fail=1; }
    grep -q '^bytes/rank, .*(within 5%)' "$tmp/out" || { echo "FAIL: $what: bytes not within 5%"; fail=1; }
}
run_anchor "synthetic, 2 ranks" --synthetic 262144:0.01 --ranks 2
run_anchor "synthetic, 3 ranks" --synthetic 262144:0.01 --ranks 3
if [ -x "$train" ] && [ -r "$fo/fortunes" ]; then
    "$MPIRUN" 2 "$train" --model wordlm --data "$fo" --vocab 2000 --batch 32 --iterations 1 -o none \
        --record-gradients "$tmp/t.h5" >"$tmp/rec" 2>&1 || { echo "FAIL: recording"; cat "$tmp/rec"; exit 1; }
    run_anchor "wordlm trace, 2 ranks" --trace "$tmp/t.h5"
else
    echo "note: rb_train or $fo missing: the trace is not tried"
fi
exit $fail
