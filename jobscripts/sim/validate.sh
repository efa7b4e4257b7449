#!/bin/sh
# validate.sh REAL_BUILD SMPI_BUILD OUTDIR: the same rb_micro sweep at 2, 4, 8
# ranks run for real here (Open MPI) and simulated on platforms/thismachine.xml.
# Compare with rb-report (measured vs simulated side by side) or the awk below.
set -eu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
real=${1:?REAL_BUILD}; sim=${2:?SMPI_BUILD}; out=${3:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../.." && pwd); mkdir -p "$out"
args="--reducer all -m 64K:1M --stepfactor 4 -i 5 -x 2 --no-check"
for np in 2 4 8; do
  "$top/tests/mpirun.sh" "$np" "$real/benchmarks/rb_micro" $args -o "$out/real-$np.h5" --force >"$out/real-$np.txt" 2>&1
  "$here/rb-smpirun" thismachine "$np" "$sim/benchmarks/rb_micro" $args -o "$out/sim-$np.h5" --force >"$out/sim-$np.txt" 2>&1
done
