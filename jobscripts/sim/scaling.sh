#!/bin/sh
# scaling.sh BUILD OUTDIR [PLATFORMS] [RANKS]: every reducer at 16..1024
# simulated ranks on each platform; one archive per (platform, ranks).
# Default: p100-ib-edr knl-aries eth1g x 16 32 64 128 256 512 1024.
# Sizes 64 KiB..4 MiB, validation off (large rank counts); buffers < 16 MiB
# stay real (RB_SIM_SHARED_MIN), so sparse reducers see true data.
# Runnable directly or via sbatch (one node, one task: SMPI is one process).
#SBATCH --job-name=rb-sim-scaling --ntasks=1 --time=12:00:00
set -eu
build=${1:?BUILD dir of an SMPI build}; out=${2:?OUTDIR}
plats=${3:-p100-ib-edr knl-aries eth1g}; ranks=${4:-16 32 64 128 256 512 1024}
here=$(cd "$(dirname "$0")" && pwd); mkdir -p "$out"
for plat in $plats; do for np in $ranks; do
  start=$(date +%s)
  "$here/rb-smpirun" "$plat" "$np" "$build/benchmarks/rb_micro" --reducer all \
    -m 64K:4M -f 4 -i "${RB_SIM_ITERS:-2}" -x 1 --no-check -o "$out/$plat-$np.h5" --force \
    >"$out/$plat-$np.txt" 2>&1 || echo "# exit $?" >>"$out/$plat-$np.txt"
  echo "$plat $np ranks: $(( $(date +%s) - start )) s wall" | tee -a "$out/walltime.txt"
done; done
