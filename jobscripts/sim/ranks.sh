#!/bin/sh
# ranks.sh BUILD OUTDIR [PLATFORMS] [RANKS]: every reducer, one simulation
# each, validated (-c) at each rank count on each platform, powers of two or
# not; a summary table of pass/fail, simulated time and wall time.
# Default: p100-ib-edr knl-aries x 24 48 96 192 384.
# Per run: rb_micro --reducer R -m RB_SIM_SIZES (default 4K:16K) -i
# RB_SIM_ITERS (2) -x 1 -c --density 0.05, archive OUTDIR/PLAT-NP-R.h5.
# OUTDIR/summary.tsv, one line per run: platform ranks reducer exit rows
# wrong avg_us (at the largest size) wall_s; pass = exit 0 and no wrong value.
# OUTDIR/table.md: per platform, reducer x ranks, "avg_us / wall_s" or FAIL,
# from every line of summary.tsv (runs appended by several invocations).
# Runnable directly or via sbatch (one node, one task: SMPI is one process).
#SBATCH --job-name=rb-sim-ranks --ntasks=1 --time=12:00:00 --mem=64G
set -eu
build=${1:?BUILD dir of an SMPI build}; out=${2:?OUTDIR}
plats=${3:-p100-ib-edr knl-aries}; ranks=${4:-24 48 96 192 384}
# sbatch runs a spooled copy of this script: look in RB_ROOT and the submit directory first.
here=$(for d in "${RB_ROOT:+$RB_ROOT/jobscripts/sim}" "${SLURM_SUBMIT_DIR:+$SLURM_SUBMIT_DIR/jobscripts/sim}" \
    "$(dirname "$0")"; do [ -n "$d" ] && [ -x "$d/rb-smpirun" ] && { cd "$d" && pwd; break; }; done; true)
[ -n "$here" ] || { echo "$0: cannot find jobscripts/sim; set RB_ROOT to the checkout" >&2; exit 1; }
prog=$build/benchmarks/rb_micro
mkdir -p "$out"
# The reducers "all" stands for, from a two-rank run.
reducers=${RB_SIM_REDUCERS:-$("$here/rb-smpirun" thismachine 2 "$prog" --reducer all -m 4K:4K -i 1 -x 0 \
    -o none 2>/dev/null | sed -n 's/^# Reducer: \([^ ]*\) .*/\1/p')}
[ -n "$reducers" ] || { echo "$0: no reducer listed by $prog" >&2; exit 1; }
sizes=${RB_SIM_SIZES:-4K:16K}
failed=0
for plat in $plats; do for np in $ranks; do for r in $reducers; do
  log=$out/$plat-$np-$r.txt
  start=$(date +%s)
  rc=0
  "$here/rb-smpirun" "$plat" "$np" "$prog" --reducer "$r" -m "$sizes" -i "${RB_SIM_ITERS:-2}" -x 1 -c \
    --density 0.05 -o "$out/$plat-$np-$r.h5" --force >"$log" 2>&1 || rc=$?
  wall=$(( $(date +%s) - start ))
  # Data rows: rows, wrong values (exact reducers' #wrong column), avg(us) of the last row.
  # shellcheck disable=SC2046 # three numbers
  set -- $(awk '/^ *[0-9]/ {n++; if ($14 ~ /^[0-9]+$/) w += $14; a = $4} END {print n+0, w+0, (a == "" ? "-" : a)}' "$log")
  [ "$rc" -eq 0 ] && [ "$2" -eq 0 ] && [ "$1" -gt 0 ] || failed=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$plat" "$np" "$r" "$rc" "$1" "$2" "$3" "$wall" | tee -a "$out/summary.tsv"
done; done; done
awk -F '\t' '
  { key = $1 SUBSEP $2 SUBSEP $3; if (!(key in cell)) { if (!($1 in seen)) { plat[++np] = $1; seen[$1] }
      if (!(($1, $2) in hasr)) { hasr[$1, $2]; nr[$1]++; rk[$1, nr[$1]] = $2 }
      if (!(($1, $3) in hasd)) { hasd[$1, $3]; nd[$1]++; rd[$1, nd[$1]] = $3 } }
    cell[key] = ($4 == 0 && $6 == 0 && $5 > 0) ? sprintf("%.0f / %d", $7, $8) : "FAIL (exit " $4 ", " $6 " wrong)" }
  END { for (i = 1; i <= np; i++) { p = plat[i]
      # rank counts ascending
      for (a = 1; a <= nr[p]; a++) for (b = a + 1; b <= nr[p]; b++)
        if (rk[p, b] + 0 < rk[p, a] + 0) { t = rk[p, a]; rk[p, a] = rk[p, b]; rk[p, b] = t }
      printf "\n%s: simulated us per call at the largest size / wall s of the run\n\n| reducer |", p
      for (a = 1; a <= nr[p]; a++) printf " %s |", rk[p, a]; printf "\n|---|"
      for (a = 1; a <= nr[p]; a++) printf "---|"; printf "\n"
      for (d = 1; d <= nd[p]; d++) { printf "| %s |", rd[p, d]
        for (a = 1; a <= nr[p]; a++) { k = p SUBSEP rk[p, a] SUBSEP rd[p, d]; printf " %s |", (k in cell) ? cell[k] : "-" }
        printf "\n" } } }' "$out/summary.tsv" >"$out/table.md"
[ "$failed" -eq 0 ] || echo "ranks.sh: some runs failed (summary.tsv: exit, wrong; logs in $out)" >&2
exit "$failed"
