#!/bin/sh
# The S2 authors' training step: benchmarks/anchors/s2-authors-train runs
# their Sketch_Embed_Optimizer step (their code, ported to the CPU on the
# fly) with their Sketch_Embed_Reducer as written, with its decoded result
# kept, and their Fp32Optimizer step with ExactReducer, on a small embedlm
# (fortunes corpus, 4096 rows, 8 steps, 2 ranks under gloo).  RB_S2_AUTHORS
# names a checkout of github.com/GeKeShi/Sparse_Sketch_Reducer (never
# committed); skipped, saying why, without it or without PyTorch.
# As written, the reducer's result is dropped: the embedding gradient after
# the call is the rank's own (distance 0) and the ranks' embeddings differ
# after step 1 while their dense layers (averaged) do not; with the result
# kept, and with the exact reducer, the ranks' parameters stay identical
# and the perplexities are finite.
. "$top_srcdir/tests/workload/workload_lib.sh"
anchor="$top_srcdir/benchmarks/anchors/s2-authors-train"
need_torch
[ -n "${RB_S2_AUTHORS:-}" ] ||
    { echo "SKIP: RB_S2_AUTHORS is not set (a checkout of github.com/GeKeShi/Sparse_Sketch_Reducer)" >&2; exit 77; }
[ -d "$RB_S2_AUTHORS/GNMT/seq2seq/train" ] ||
    { echo "SKIP: RB_S2_AUTHORS=$RB_S2_AUTHORS holds no GNMT/seq2seq/train" >&2; exit 77; }
need_train

"$train" --model wordlm --write-corpus "$tmp/corpus" -o none --iterations 1 >"$tmp/w" 2>&1 ||
    { echo "FAIL: writing the corpus"; cat "$tmp/w"; exit 1; }
"$anchor" --authors "$RB_S2_AUTHORS" --data "$tmp/corpus" --variants dropped,kept,exact \
    --steps 8 --vocab 4096 --batch 64 --test-limit 2000 --probe 2 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "FAIL: s2-authors-train exited $rc"; exit 1; }
# columns: variant ppl_r0 ppl_r1 step_s bytes own1 avg1 dEmb1 dDense1 dEmbEnd dDenseEnd
awk '$1 == "dropped" { d = 1; ok = ($6 == 0 && $7 > 0 && $8 > 0 && $9 == 0 && $10 > 0 && $11 == 0) }
     $1 == "kept" { k = 1; okk = ($6 > 0 && $8 == 0 && $9 == 0 && $10 == 0 && $11 == 0 &&
                                 $2 > 1 && $2 < 1e6 && $2 == $3) }
     $1 == "exact" { e = 1; oke = ($7 == 0 && $8 == 0 && $9 == 0 && $10 == 0 && $11 == 0 &&
                                  $2 > 1 && $2 < 1e6 && $2 == $3) }
     END { if (!d || !ok) print "FAIL: dropped: the own gradient and diverging embeddings expected";
           if (!k || !okk) print "FAIL: kept: identical ranks, a finite perplexity expected";
           if (!e || !oke) print "FAIL: exact: the exact average, identical ranks expected";
           exit !(d && ok && k && okk && e && oke) }' "$tmp/out" || exit 1
# a usage error is exit 2
"$anchor" --authors "$RB_S2_AUTHORS" --data "$tmp/corpus" --variants nosuch >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: an unknown variant is not exit 2"; exit 1; }
exit 0
