#!/bin/sh
# claims.sh BUILD OUTDIR [quick|full|paper]: the papers' claims at their scale on
# the simulated platforms (SimGrid SMPI), one rb_micro archive per point in
# OUTDIR, for rb-report's claims table.  BUILD: an SMPI build directory
# with benchmarks/rb_micro already made (docs/simgrid.md; nothing is built
# here).  Points, on each platform of RB_SIM_PLATFORMS (default p100-ib-edr
# knl-aries):
#   gossip-PLAT-NP.h5   GossipGraD's compute efficiency: none and gossip on
#                       a ResNet-50 gradient (25.6M floats) after --compute
#                       RB_SIM_COMPUTE s of modelled forward/backward (default
#                       0.14: ResNet-50 fp32, batch 32 on a P100 at ~230
#                       img/s, NVIDIA's published figure, not measured here),
#                       unchecked, shared buffers, only the modelled compute
#                       and the network charged (as train-model.sh);
#                       full mode adds gossip-async-PLAT-NP.h5 (gossip_async).
#   o1-PLAT-NP.h5       GossipGraD's O(1) messages per step: dense and gossip
#                       at 1 MiB, msgs_sent_avg per call, at each of the O(1)
#                       rank counts (first platform only in quick mode).
#   s2-PLAT-NP.h5       S2 against every exact baseline: --reducer all on the
#                       S2 authors' setting (rows of 256 floats, row density
#                       0.02, sketch width 0.005 of the elements), validated
#                       (-c); the 32768 rows of their GNMT embedding in full
#                       mode, 4096 rows in quick mode (same densities: see
#                       RB_CLAIMS_S2_ROWS).
#   s2paper-PLAT-NP.h5  the same at their 32768 rows (paper mode): dense,
#                       sparcml, parallax, omnireduce, oktopk, zen and s2 in
#                       one launch, agsparse in s2paper-PLAT-NP-agsparse.h5.
# Modes (RB_CLAIMS_* override each):
#   quick  128 ranks, -i 2 -x 1 --repeat 1 (gossip --repeat 2: its two repetitions
#          agree exactly, the sign of a deterministic value); O(1) at 2 8
#          32 128; S2 on 4096 rows: what the main job runs (every point's
#          values are deterministic but S2's, whose reducers' CPU time on
#          this host is replayed).
#   full   128 256 512 1024 ranks, -i 5 -x 1 --repeat 3; O(1) at 2 8 32 128 512
#          1024 on both platforms; S2 on 32768 rows, one launch per reducer
#          (every rank's 32 MiB work buffer and the reducers' state in the
#          one simulator process: up to 15 GB at 128 ranks, measured, about
#          8x that at 1024; run it on a big node).
#   paper  S2 alone at the authors' 32768 x 256 embedding, 128 ranks, -i 2
#          -x 1 --repeat 1, validated: two launches per platform, ~3 min and
#          < 16 GB per platform on a 23 GB VM (docs/simgrid.md); not in the
#          main job, whose quick mode has the 4096-row point.
# Both 32768-row modes (full, paper) hold each rank's input on demand (rb_micro under
# SMPI: only its non-zero rows' pages), give large freed buffers back
# (GLIBC_TUNABLES mmap_threshold: the 128 ranks' per-call SMPI temporaries
# are not kept) and run agsparse alone with its receive buffer, the same
# pairs of every rank on every rank, one SMPI local shared buffer
# (smpi/shared-malloc:local, smpi/auto-shared-malloc-thresh above 16 bytes
# per element): still validated, recorded in sim_smpi_options.
# Environment: RB_CLAIMS_RANKS, RB_CLAIMS_O1_RANKS, RB_CLAIMS_ITERS,
# RB_CLAIMS_REPEAT, RB_CLAIMS_GOSSIP_REPEAT, RB_CLAIMS_S2_ROWS, RB_CLAIMS_GRAD (floats of the gossip
# gradient), RB_CLAIMS_SKIP (space list of gossip o1 s2 to leave out),
# RB_SIM_COMPUTE, RB_SIM_PLATFORMS.  OUTDIR/claims.tsv: one line per
# launch (point platform ranks exit wall_s); exit 1 when a launch failed.
# Runnable directly or via sbatch (one node, one task: SMPI is one process).
#SBATCH --job-name=rb-sim-claims --ntasks=1 --time=24:00:00 --mem=120G
set -eu
case "${1:-}" in -h|--help) sed -n '2,/^#SBATCH/{/^#SBATCH/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
build=${1:?BUILD dir of an SMPI build}; out=${2:?OUTDIR}; mode=${3:-quick}
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
prog=$(cd "$build" 2>/dev/null && pwd || true)/benchmarks/rb_micro
[ -x "$prog" ] || { echo "claims.sh: no $build/benchmarks/rb_micro: build it first (docs/simgrid.md)" >&2; exit 2; }
case $mode in
  quick) ranks="128"; o1="2 8 32 128"; iters=2; reps=1; s2rows=4096 ;;
  full) ranks="128 256 512 1024"; o1="2 8 32 128 512 1024"; iters=5; reps=3; s2rows=32768 ;;
  paper) ranks="128"; o1=""; iters=2; reps=1; s2rows=32768 ;;
  *) echo "claims.sh: mode must be quick, full or paper, not '$mode'" >&2; exit 2 ;;
esac
ranks=${RB_CLAIMS_RANKS:-$ranks}; o1=${RB_CLAIMS_O1_RANKS:-$o1}
iters=${RB_CLAIMS_ITERS:-$iters}; reps=${RB_CLAIMS_REPEAT:-$reps}; s2rows=${RB_CLAIMS_S2_ROWS:-$s2rows}
greps=${RB_CLAIMS_GOSSIP_REPEAT:-$([ "$reps" -ge 2 ] && echo "$reps" || echo 2)}
grad=${RB_CLAIMS_GRAD:-25600000}; sec=${RB_SIM_COMPUTE:-0.14}; skip=" ${RB_CLAIMS_SKIP:-} "
[ "$mode" != paper ] || skip="$skip gossip o1 "
plats=${RB_SIM_PLATFORMS:-p100-ib-edr knl-aries}
mkdir -p "$out"
failed=0

# launch POINT PLAT NP NAME ARGS...: one simulation into OUTDIR/NAME.h5
# (its stdout table in NAME.txt), timed in wall seconds into claims.tsv;
# --repeat R (default RB_CLAIMS_REPEAT) before the ARGS.
launch() {
  point=$1 plat=$2 np=$3 name=$4; shift 4
  start=$(date +%s) rc=0
  "$here/rb-smpirun" "$plat" "$np" "$prog" --repeat "$reps" "$@" -o "$out/$name.h5" --force \
    >"$out/$name.txt" 2>&1 || rc=$?
  wall=$(( $(date +%s) - start ))
  [ "$rc" -eq 0 ] || { failed=1; echo "claims.sh: $name exited $rc (log $out/$name.txt)" >&2; }
  printf '%s\t%s\t%s\t%s\t%s\n' "$point" "$plat" "$np" "$rc" "$wall" | tee -a "$out/claims.tsv"
}

# GossipGraD's efficiency: as train-model.sh, the reducers' buffers shared
# (dense values only: gossip and none never receive indices) and this
# host's CPU time not charged (a P100 averages 102 MB in well under 1 ms;
# this host's page faults of the shared buffers take tens of ms).
gossip_point() {
  plat=$1 np=$2
  RB_SIM_CALIBRATION="--compute $sec s per step: ResNet-50 fp32 batch 32 on a P100 (~230 img/s, NVIDIA published, not measured here); host CPU off; host-speed 1Gf" \
  RB_SMPIRUN_OPTS="--cfg=smpi/auto-shared-malloc-thresh:16777216 --cfg=smpi/simulate-computation:no" \
    launch gossip "$plat" "$np" "gossip-$plat-$np" --repeat "$greps" --reducer none,gossip --shape "1x$grad" \
    -i "$iters" -x 1 --no-check --compute "$sec" -d host
  [ "$mode" = full ] || return 0
  RB_SIM_CALIBRATION="--compute $sec s per step: ResNet-50 fp32 batch 32 on a P100 (~230 img/s, NVIDIA published, not measured here); host CPU off; host-speed 1Gf" \
  RB_SMPIRUN_OPTS="--cfg=smpi/auto-shared-malloc-thresh:16777216 --cfg=smpi/simulate-computation:no" \
    launch gossip-async "$plat" "$np" "gossip-async-$plat-$np" --repeat "$greps" --reducer gossip -O gossip_async=on \
    --shape "1x$grad" -i "$iters" -x 1 --no-check --compute "$sec" -d host
}

# Messages per call do not depend on the size: 1 MiB, no validation.
o1_point() {
  launch o1 "$1" "$2" "o1-$1-$2" --reducer dense,gossip -m 1M:1M -i "$iters" -x 1 --no-check
}

# S2's setting, validated: private real buffers (never shared: the sparse
# reducers receive indices, but for agsparse's below).  Quick mode keeps
# freed memory (glibc tunables, recorded in the archive): page faults of 128
# ranks' buffers dominate its wall time.  At 32768 rows large freed buffers
# go back instead (mmap_threshold): the per-call SMPI temporaries of 128
# ranks (allreduce's in-place copy and Rabenseifner buffer) kept made
# omnireduce peak past 16 GB; their page faults are inside MPI calls, which
# SMPI does not charge to simulated time.
s2_launch() {
  name=$1 r=$2
  GLIBC_TUNABLES=${tunables:-glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=281474976710655} \
    launch "$point" "$plat" "$np" "$name" --reducer "$r" --shape "${s2rows}x256" --layout row \
    --density 0.02 -O sketch_width_mode=fraction -O sketch_width=0.005 -i "$iters" -x 1 -c
}

# agsparse alone: its receive buffer holds every rank's pairs, the same on
# every rank (p x 1.3 MB at 32768 rows, 22 GB for 128 ranks in the one
# simulator process).  SMPI's local shared malloc gives every rank the one
# buffer of rb_calloc's line for allocations above 16 bytes per element
# (4x the input, work and rank 0's double sums; the pairs of 128 ranks at
# row density 0.02 are ~20): each rank's own block copied in by
# MPI_Allgatherv, SimGrid skips the copies into shared memory, and every
# rank sums what it would have received, validated.
s2_agsparse() {
  RB_SMPIRUN_OPTS="${RB_SMPIRUN_OPTS:+$RB_SMPIRUN_OPTS }--cfg=smpi/shared-malloc:local --cfg=smpi/auto-shared-malloc-thresh:$((s2rows * 256 * 16))" \
  RB_SIM_CALIBRATION="host-speed 1Gf (CPU time replayed 1:1); bw/lat factors 1; no --compute; agsparse's receive buffer (every rank's pairs, the same on every rank) one SMPI local shared buffer, values validated" \
    s2_launch "$1" agsparse
}

s2_point() {
  plat=$1 np=$2 point=s2 tunables=
  [ "$mode" = quick ] || tunables=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304
  case $mode in
    quick) s2_launch "s2-$plat-$np" all ;;
    full)
      for r in $("$here/rb-smpirun" thismachine 2 "$prog" --reducer all -m 4K:4K -i 1 -x 0 \
                 -o none 2>/dev/null | sed -n 's/^# Reducer: \([^ ]*\) .*/\1/p'); do
        if [ "$r" = agsparse ]; then s2_agsparse "s2-$plat-$np-$r"; else s2_launch "s2-$plat-$np-$r" "$r"; fi
      done ;;
    paper)
      point=s2paper
      s2_launch "s2paper-$plat-$np" dense,sparcml,parallax,omnireduce,oktopk,zen,s2
      s2_agsparse "s2paper-$plat-$np-agsparse" ;;
  esac
}

first=1
for plat in $plats; do
  for np in $ranks; do
    case $skip in *" gossip "*) ;; *) gossip_point "$plat" "$np" ;; esac
  done
  if [ "$mode" = full ] || [ "$first" = 1 ]; then
    case $skip in *" o1 "*) ;; *) for np in $o1; do o1_point "$plat" "$np"; done ;; esac
  fi
  for np in $ranks; do
    case $skip in *" s2 "*) ;; *) s2_point "$plat" "$np" ;; esac
  done
  first=0
done
exit "$failed"
