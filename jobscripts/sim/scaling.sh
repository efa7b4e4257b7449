#!/bin/sh
# scaling.sh BUILD OUTDIR [PLATFORMS] [RANKS]: every reducer at 16..1024
# simulated ranks on each platform; one archive per (platform, ranks).
# Default: p100-ib-edr knl-aries eth1g x 16 32 64 128 256 512 1024.
# Sizes RB_SIM_SIZES (rb_micro -m, default 64K:4M, x4 steps), validation
# off (large rank counts); buffers < 16 MiB stay real (RB_SIM_SHARED_MIN), so
# sparse reducers see true data.
# At 512-1024 ranks use RB_SIM_SIZES=64K:256K: the allgather-based reducers
# hold p streams per rank, p^2 in this one process (1024 ranks at 4 MiB would
# need ~90 GB).
# From 1024 ranks alltoallv (parallax, sparcml's rsag) is pairwise
# (RB_SIM_ALLTOALLV=ring unless set: Open MPI's pairwise exchange, the same
# schedule as SimGrid's pair on a power of two, valid on any rank count):
# Open MPI's own choice for 256-1023 ranks; its basic linear at 1024+ makes
# one simulated call take > 15 min.
# Runnable directly or via sbatch (one node, one task: SMPI is one process).
#SBATCH --job-name=rb-sim-scaling --ntasks=1 --time=12:00:00 --mem=96G
set -eu
build=${1:?BUILD dir of an SMPI build}; out=${2:?OUTDIR}
plats=${3:-p100-ib-edr knl-aries eth1g}; ranks=${4:-16 32 64 128 256 512 1024}
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
mkdir -p "$out"
failed=0
for plat in $plats; do for np in $ranks; do
  start=$(date +%s)
  a2av=${RB_SIM_ALLTOALLV-}; [ "$np" -lt 1024 ] || a2av=${RB_SIM_ALLTOALLV-ring}
  RB_SIM_ALLTOALLV=$a2av "$here/rb-smpirun" "$plat" "$np" "$build/benchmarks/rb_micro" --reducer all \
    -m "${RB_SIM_SIZES:-64K:4M}" --stepfactor 4 -i "${RB_SIM_ITERS:-2}" -x 1 --no-check -o "$out/$plat-$np.h5" --force \
    >"$out/$plat-$np.txt" 2>&1 || { echo "# exit $?" >>"$out/$plat-$np.txt"; failed=1; }
  echo "$plat $np ranks: $(( $(date +%s) - start )) s wall" | tee -a "$out/walltime.txt"
done; done
[ "$failed" -eq 0 ] || echo "scaling.sh: some runs failed ('# exit' in their .txt)" >&2
exit "$failed"
