#!/bin/sh
# How docs/workloads.md's figures were measured (2026-11-26, 2-core VM,
# shared with other jobs: load average 10-13).  Usage: run.sh BUILD_DIR OUT_DIR
# Then: summarise.py OUT_DIR/res OUT_DIR  and  analysis/rb-report OUT_DIR/res -o OUT_DIR/rep
B=$1 D=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() { p=$1; shift; mpirun --bind-to none -np "$p" --mca btl self,vader "$@"; }
mkdir -p "$D/res"
for p in 2 4 8; do   # wordlm's own gradients: default model (vocab 10000 x 64, batch 64, context 3)
  run $p "$B/benchmarks/rb_train" --model wordlm --iterations 20 --record-every 5 -o none \
     --record-gradients "$D/trace_p$p.h5" --force
done
for p in 2 4 8; do
  # uniform rows at the trace's mean per-rank row density; Zipf with the
  # model's 64 x 3 = 192 token draws per rank (density 192 / 10000)
  dens=$(/usr/bin/python3 -c "import h5py; g = h5py.File('$D/trace_p$p.h5', 'r')['layers/embedding']; print(g['counts'][()].mean() / g.attrs['rows'])")
  common="-q -i 20 -x 3 --repeat 5 --shape 10000x64 --layout row"
  run $p "$B/benchmarks/rb_micro" $common --density "$dens" --overlap random -o "$D/res/uniform_p$p.h5" --force
  run $p "$B/benchmarks/rb_micro" $common --density 0.0192 --overlap zipf:1.1 -o "$D/res/zipf_p$p.h5" --force
  run $p "$B/benchmarks/rb_micro" -q -i 20 -x 3 --repeat 5 --input "trace:$D/trace_p$p.h5" -o "$D/res/trace_p$p.h5" --force
done
