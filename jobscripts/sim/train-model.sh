#!/bin/sh
# train-model.sh BUILD OUTDIR [RANKS] [COMPUTE_S]: the training-iteration model
# for GossipGraD's compute efficiency on the P100/IB platform: a ResNet-50-sized
# gradient (25.6M floats, 102.4 MB) reduced after COMPUTE_S seconds of modelled
# forward/backward (--compute, charged to simulated time).
# Default COMPUTE_S = 0.14 s: ResNet-50 fp32, batch 32 per P100 at ~230 img/s
# (NVIDIA's published P100 training throughput, not measured here: this
# machine has no P100).  Compute efficiency = time(none) / time(reducer).
# Buffers are shared (values garbage, unchecked); the reducers' own buffers
# are shared by smpi/auto-shared-malloc-thresh: ONLY for dense and gossip,
# which receive values, never indices.
#SBATCH --job-name=rb-sim-train --ntasks=1 --time=2:00:00
set -eu
build=${1:?BUILD}; out=${2:?OUTDIR}; np=${3:-128}; sec=${4:-0.14}
here=$(cd "$(dirname "$0")" && pwd); mkdir -p "$out"
export RB_SIM_CALIBRATION="--compute $sec s per iteration: ResNet-50 fp32 batch 32 on P100 (~230 img/s, NVIDIA published); host-speed 1Gf"
export RB_SMPIRUN_OPTS="--cfg=smpi/auto-shared-malloc-thresh:16777216"
"$here/rb-smpirun" p100-ib-edr "$np" "$build/benchmarks/rb_micro" --reducer none,gossip,dense \
  --shape 1x25600000 -i "${RB_SIM_ITERS:-3}" -x 1 --no-check --compute "$sec" -d host \
  -o "$out/train-p100-$np.h5" --force >"$out/train-p100-$np.txt" 2>&1
awk '/^# Reducer:/ {r=$3} /^ *[0-9]/ {t[r]=$4} END {for (r in t) printf "%s %.1f us, efficiency %.3f\n", r, t[r], t["none:"]/t[r]}' \
  "$out/train-p100-$np.txt" | tee "$out/train-p100-$np.summary"
