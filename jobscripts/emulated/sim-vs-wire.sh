#!/bin/bash
# sim-vs-wire.sh [--refit] BUILD SMPI_BUILD OUTDIR [RATES]: SimGrid against the wire
# (docs/simgrid.md).  For each link rate (default 1gbit; e.g. "100mbit
# 1gbit 10gbit"), as root: start an emulated cluster of the largest node
# count (jobscripts/emulated/start), measure it with a ping-pong
# (jobscripts/sim/pingpong.c) and write a platform fitted to it
# (jobscripts/sim/platform-from-wire; one per node count: the nodes share
# this machine's cores), then run the same rb_micro workloads
# measured on the cluster (BUILD, Open MPI over the veths) and simulated on
# that platform (SMPI_BUILD, jobscripts/sim/rb-smpirun); stop the cluster.
#   workloads: sweep  dense and every exact sparse reducer, 64K..16M,
#                     element layout, density 0.01;
#              s2     the same reducers on the S2 authors' setting
#                     (--shape 32768x256 --layout row --density 0.02).
# OUTDIR/RATE/ holds pingpong-npN-LK.txt (the raw ping-pongs, N ranks
# launched, ranks 0 and 1 measured), network (the cluster's description),
# platform-wire-npN.xml (the platform for N nodes), meas-W-npN-LK.h5,
# sim-W-npN-LK.h5 and log.txt (one line per launch: what, exit, seconds,
# load average before, other processes' CPU during as the archive records
# it).  rb-report OUTDIR gives the table and figure ("SimGrid against the
# wire").
# Launches: every measured configuration RB_WIRE_LAUNCHES times (default
# 5), in rounds (one launch of each configuration per round, so that the
# machine's load spreads over all); a launch on a busy machine (more than
# half a core of other processes during it, the archive's
# machine_other_cpu_during) is repeated, up to RB_WIRE_EXTRA more rounds
# (default as many) and within RB_WIRE_BUDGET seconds per rate (default
# 3600).  RB_WIRE_NODES (default "2 4"), RB_WIRE_ITERS (timed calls per
# size, default 5), RB_WIRE_SIM_LAUNCHES (default 3), RB_WIRE_PINGPONGS
# (ping-pong launches per rank count, default 3), RB_WIRE_REDUCERS.
# RB_EMUL_DIR: the cluster's state directory (default OUTDIR/cluster).
# --refit: no cluster and no measurement: the platform is fitted again to
# the ping-pongs OUTDIR/RATE holds and the simulations run again on it (for
# a change to platform-from-wire; the measured archives stay).
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
refit=0
[ "${1:-}" != --refit ] || { refit=1; shift; }
[ $# -ge 3 ] || { echo "usage: sim-vs-wire.sh [--refit] BUILD SMPI_BUILD OUTDIR [RATES] (--help)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
sim=$(cd "$here/../sim" && pwd)
build=$(cd "$1" && pwd) smpi=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
rates=${4:-1gbit}
nodes=${RB_WIRE_NODES:-2 4}
launches=${RB_WIRE_LAUNCHES:-5}
extra=${RB_WIRE_EXTRA:-$launches}
budget=${RB_WIRE_BUDGET:-3600}
iters=${RB_WIRE_ITERS:-5}
reducers=${RB_WIRE_REDUCERS:-dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen}
export RB_EMUL_DIR=${RB_EMUL_DIR:-$out/cluster}
for f in "$build/benchmarks/rb_micro" "$smpi/benchmarks/rb_micro"; do
    [ -x "$f" ] || { echo "sim-vs-wire: no $f (make benchmarks/rb_micro)" >&2; exit 2; }
done
maxn=$(printf '%s\n' $nodes | sort -n | tail -n 1)

workload() {   # NAME: rb_micro's arguments
    case $1 in
        sweep) echo "--reducer $reducers -m 64K:16M --layout element --density 0.01 -i $iters -x 1" ;;
        s2) echo "--reducer $reducers --shape 32768x256 --layout row --density 0.02 -i $iters -x 1" ;;
    esac
}

# busy ARCHIVE: other processes used more than half a core during the run.
busy() {
    /usr/bin/python3 - "$1" <<'PY'
import sys, h5py
try:
    v = float(h5py.File(sys.argv[1], "r").attrs.get("machine_other_cpu_during", -1))
except OSError:
    v = -1
sys.exit(0 if v > 0.5 else 1)
PY
}

# logged WHAT CMD...: run CMD, one line in log.txt; its exit status.
logged() {
    local what=$1 t0 rc=0 load
    shift
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    t0=$(date +%s)
    "$@" || rc=$?
    printf '%s exit %d %ds load %s\n' "$what" "$rc" $(( $(date +%s) - t0 )) "$load" >>"$dir/log.txt"
    return "$rc"
}

# The platforms of $dir, one per node count N (platform-wire-npN.xml: N
# hosts, their speed cores/N where N nodes share fewer cores), from its
# 2-rank ping-pongs and network description.
fit_platform() {
    local np
    for np in $nodes; do
        "$sim/platform-from-wire" -N "$np" --network-info "$dir/network" \
            --measured "$dir"/pingpong-np2-L*.txt -o "$dir/platform-wire-np$np.xml"
    done
}

measure_rate() {
    local rate=$1 np k w n t0
    dir=$out/$rate
    mkdir -p "$dir"
    "$here/start" -N "$maxn" -r "$rate"
    t0=$(date +%s)
    local pp=${RB_WIRE_PINGPONGS:-3}
    mpicc -O2 -o "$dir/pingpong" "$sim/pingpong.c"
    for np in $nodes; do
        for k in $(seq 1 "$pp"); do
            logged "pingpong np$np L$k" "$here/mpirun" -np "$np" "$dir/pingpong" 1 16777216 7 120 \
                >"$dir/pingpong-np$np-L$k.txt" || true
        done
    done
    cp "$RB_EMUL_DIR/network" "$dir/network"
    fit_platform
    declare -A quiet=() done_=()
    for _ in $(seq 1 $((launches + extra))); do
        for np in $nodes; do
            for w in sweep s2; do
                n=${done_[$w$np]:-0}
                [ "$n" -lt "$launches" ] || [ "${quiet[$w$np]:-0}" -lt "$launches" ] || continue
                [ $(( $(date +%s) - t0 )) -lt "$budget" ] || { echo "sim-vs-wire: $rate: budget of $budget s spent" >&2; return 0; }
                n=$((n + 1))
                done_[$w$np]=$n
                # shellcheck disable=SC2046
                logged "meas $w np$np L$n" "$here/mpirun" -np "$np" "$build/benchmarks/rb_micro" \
                    $(workload "$w") -o "$dir/meas-$w-np$np-L$n.h5" --force -q \
                    >"$dir/meas-$w-np$np-L$n.txt" 2>&1 || true
                busy "$dir/meas-$w-np$np-L$n.h5" || quiet[$w$np]=$(( ${quiet[$w$np]:-0} + 1 ))
            done
        done
    done
}

simulate_rate() {
    local rate=$1 np k w
    dir=$out/$rate
    rm -f "$dir"/sim-*.h5 "$dir"/sim-*.txt   # of an earlier platform
    for k in $(seq 1 "${RB_WIRE_SIM_LAUNCHES:-3}"); do
        for np in $nodes; do
            for w in sweep s2; do
                # shellcheck disable=SC2046
                logged "sim $w np$np L$k" "$sim/rb-smpirun" "$dir/platform-wire-np$np.xml" "$np" \
                    "$smpi/benchmarks/rb_micro" $(workload "$w") -o "$dir/sim-$w-np$np-L$k.h5" \
                    --force -q >"$dir/sim-$w-np$np-L$k.txt" 2>&1 || true
            done
        done
    done
}

if [ "$refit" = 1 ]; then
    for rate in $rates; do
        dir=$out/$rate
        [ -s "$dir/network" ] || { echo "sim-vs-wire: --refit: no $dir/network (measure first)" >&2; exit 2; }
        fit_platform
    done
else
    trap '"$here/stop" >/dev/null 2>&1 || "$here/stop"' EXIT
    for rate in $rates; do
        measure_rate "$rate"
    done
    "$here/stop"
    trap - EXIT
fi
for rate in $rates; do
    simulate_rate "$rate"
done
echo "sim-vs-wire: done: $out (rb-report $out)"
