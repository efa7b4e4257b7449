#!/bin/sh
# docs/workloads.md's times on a quiet machine (2026-11-26, commit 9ceb304, 2-core
# VM, nothing else running: other processes' CPU <= 0.05 cores in every
# launch, load.csv): traces recorded once, then L launches, each running every
# workload at 2, 4 and 8 ranks.  Usage: run.sh BUILD_DIR OUT_DIR [LAUNCHES]
# Then: summarise_launches.py OUT_DIR OUT_DIR
B=$1 D=$2 L=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() { p=$1; shift; mpirun --bind-to none -np "$p" --mca btl self,vader "$@"; }
mkdir -p "$D"
for p in 2 4 8; do
  run $p "$B/benchmarks/rb_train" --model wordlm --iterations 20 --record-every 5 -o none \
     --record-gradients "$D/trace_p$p.h5" --force >/dev/null
done
for l in $(seq 1 "$L"); do
  mkdir -p "$D/L$l"
  for p in 2 4 8; do
    dens=$(/usr/bin/python3 -c "import h5py; g = h5py.File('$D/trace_p$p.h5', 'r')['layers/embedding']; print(g['counts'][()].mean() / g.attrs['rows'])")
    common="-q -i 20 -x 3 --repeat 5 --shape 10000x64 --layout row"
    run $p "$B/benchmarks/rb_micro" $common --density "$dens" --overlap random -o "$D/L$l/uniform_p$p.h5" --force >/dev/null
    run $p "$B/benchmarks/rb_micro" $common --density 0.0192 --overlap zipf:1.1 -o "$D/L$l/zipf_p$p.h5" --force >/dev/null
    run $p "$B/benchmarks/rb_micro" -q -i 20 -x 3 --repeat 5 --input "trace:$D/trace_p$p.h5" -o "$D/L$l/trace_p$p.h5" --force >/dev/null
  done
done
