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
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
mkdir -p "$out"
export RB_SIM_CALIBRATION="--compute $sec s per iteration: ResNet-50 fp32 batch 32 on P100 (~230 img/s, NVIDIA published); host-speed 1Gf"
# RB_SIM_HOST_CPU=off (default): this host's CPU time between MPI calls is
# not charged, only the modelled compute and the network: on a P100 the
# reducers' arithmetic on 102 MB (an average, a copy) takes well under 1 ms,
# while this host's replayed CPU time is tens of ms and noisy (page faults of
# the shared buffers).  RB_SIM_HOST_CPU=replay charges it 1:1 instead.
case ${RB_SIM_HOST_CPU:-off} in
  off) cpu=--cfg=smpi/simulate-computation:no ;;
  replay) cpu= ;;
  *) echo "train-model.sh: RB_SIM_HOST_CPU must be off or replay" >&2; exit 2 ;;
esac
export RB_SIM_CALIBRATION="$RB_SIM_CALIBRATION; host CPU ${RB_SIM_HOST_CPU:-off}"
export RB_SMPIRUN_OPTS="--cfg=smpi/auto-shared-malloc-thresh:16777216 $cpu"
run() {   # run NAME ARGS...: one rb_micro sweep of the iteration model
  name=$1; shift
  "$here/rb-smpirun" p100-ib-edr "$np" "$build/benchmarks/rb_micro" "$@" \
    --shape 1x25600000 -i "${RB_SIM_ITERS:-3}" -x 1 --no-check --compute "$sec" -d host \
    -o "$out/train-p100-$np-$name.h5" --force >"$out/train-p100-$np-$name.txt" 2>&1
}
run sync --reducer none,gossip,dense
# Asynchronous gossip (GossipGraD's overlap): the exchange posted by one call
# completes during the next call's modelled compute.
run async --reducer gossip -O gossip_async=on
# Rows of the table: "# Reducer: NAME" then one line per size; p50(us) in $7
# (the median iteration of the slowest rank: one page-fault storm in a
# replayed run would dominate a mean of 3).
awk '/^# Reducer:/ {r=$3} /^#   option gossip_async = on/ {r=r "-async"}
     /^ *[0-9]/ {t[r]=$7}
     END {for (r in t) printf "%s %.1f us, efficiency %.3f\n", r, t[r], t["none"]/t[r]}' \
  "$out/train-p100-$np-sync.txt" "$out/train-p100-$np-async.txt" | sort | tee "$out/train-p100-$np.summary"
