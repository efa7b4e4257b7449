#!/bin/sh
# s2-eth.sh BUILD OUTDIR [RANKS]: S2 against every baseline at 16 simulated
# ranks on the 1 Gb/s Ethernet platform (the S2 authors' embedding setting:
# a row-sparse embedding gradient).  Real buffers (RB_SIM_SHARED_MIN large) so
# the sparse reducers see the true sparsity; unchecked.
#SBATCH --job-name=rb-sim-s2 --ntasks=1 --time=2:00:00
set -eu
build=${1:?BUILD}; out=${2:?OUTDIR}; np=${3:-16}
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
mkdir -p "$out"
export RB_SIM_SHARED_MIN=$((1 << 40))
"$here/rb-smpirun" eth1g "$np" "$build/benchmarks/rb_micro" --reducer all \
  -m 4M:16M --stepfactor 4 --cols 64 --layout row --density 0.01 -i "${RB_SIM_ITERS:-3}" -x 1 --no-check \
  -o "$out/s2-eth1g-$np.h5" --force >"$out/s2-eth1g-$np.txt" 2>&1
