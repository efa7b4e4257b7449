#!/bin/sh
# s2-iteration.sh BUILD OUTDIR [RANKS] [COMPUTE_S] [ROW_DENSITY]: the
# training-iteration model behind S2's speedup claim, on the 1 Gb/s Ethernet
# platform: wordlm's gradient, an embedding of 10,000 x 64 (row-sparse) plus
# 2,619,408 dense parameters, after COMPUTE_S seconds of forward/backward/update.
#   iteration(R) = p50 of [compute + R on the embedding]   (rb_micro --compute)
#                + p50 of [MPI_Allreduce of the dense part] (same for every R)
# Every reducer R aggregates the embedding; the dense layers always go
# through dense allreduce, as in S2's setting (sparse reducers for the sparse
# embedding gradient).  Speedup = iteration(best exact baseline) /
# iteration(s2).  Defaults measured here (2026-11-23), wordlm, batch 64 per
# rank, 1 thread: COMPUTE_S 0.0277 = median forward + backward + update of
# /train/phases; ROW_DENSITY 0.012 = median embed_nnz / 64 / 10,000 (120
# rows).  Supports overlap at random (real words are Zipfian: they overlap
# more, which favours the union-based reducers).  Real buffers, unchecked.
#SBATCH --job-name=rb-sim-s2-iter --ntasks=1 --time=1:00:00
set -eu
build=${1:?BUILD}; out=${2:?OUTDIR}; np=${3:-16}; sec=${4:-0.0277}; dens=${5:-0.012}
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
mkdir -p "$out"
export RB_SIM_SHARED_MIN=$((1 << 40))
export RB_SIM_CALIBRATION="--compute $sec s per iteration: wordlm forward+backward+update, batch 64, 1 thread, measured on the reducerbench build host (/train/phases median); host-speed 1Gf"
emb=$out/s2-iter-eth1g-$np-embedding dns=$out/s2-iter-eth1g-$np-dense
"$here/rb-smpirun" eth1g "$np" "$build/benchmarks/rb_micro" --reducer all \
  --shape 10000x64 --layout row --density "$dens" --compute "$sec" \
  -i "${RB_SIM_ITERS:-5}" -x 1 --no-check -o "$emb.h5" --force >"$emb.txt" 2>&1
"$here/rb-smpirun" eth1g "$np" "$build/benchmarks/rb_micro" --reducer dense \
  --shape 2619408x1 -i "${RB_SIM_ITERS:-5}" -x 1 --no-check -o "$dns.h5" --force >"$dns.txt" 2>&1
# Rows: "# Reducer: NAME (TRAITS)" then one line; p50(us) in $7.
awk -v d="$(awk '/^ *[0-9]/ {print $7; exit}' "$dns.txt")" '
  /^# Reducer:/ {r = $3; exact[r] = ($4 == "(exact):")}
  /^ *[0-9]/ {t[r] = $7 + d}
  END {
    best = ""
    for (r in t) if (exact[r] && r != "none" && (best == "" || t[r] < t[best])) best = r
    for (r in t) printf "%-10s iteration %9.1f us\n", r, t[r]
    printf "dense part (MPI_Allreduce of 2619408 floats) %.1f us in every row\n", d
    printf "s2 speedup over the best exact baseline (%s): %.2fx\n", best, t[best] / t["s2"]
  }' "$emb.txt" | tee "$out/s2-iter-eth1g-$np.summary"
