#!/bin/sh
# collcheck.sh OUTDIR [PLATFORM] [RANKS]: build collcheck.c with smpicc and
# run it through rb-smpirun at each rank count: every collective at every
# size from 1 B to RB_COLLCHECK_MAX (default 2 MiB), results checked where
# all ranks' buffers fit RB_COLLCHECK_BUDGET bytes (default 2 GiB);
# RB_COLLCHECK_COLLS: a comma list of collectives (default: all 11).
# Default: knl-aries, 1-9 12 16 17 24 31 33 48 63 65 96 127 129 192 255 257 384.
# OUTDIR/collcheck-NP.txt per run; one summary line per run on stdout:
# NP exit wrong unchecked skipped wall_s.  Exit 1 if a run failed.
set -eu
out=${1:?OUTDIR}; plat=${2:-knl-aries}
ranks=${3:-1 2 3 4 5 6 7 8 9 12 16 17 24 31 33 48 63 65 96 127 129 192 255 257 384}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
smpicc -O2 -o "$out/collcheck" "$here/collcheck.c" 2>"$out/build.log" || { cat "$out/build.log" >&2; exit 1; }
want=$(echo "${RB_COLLCHECK_COLLS:-a,b,c,d,e,f,g,h,i,j,k}" | tr ',' '\n' | grep -c .)
failed=0
for np in $ranks; do
  log=$out/collcheck-$np.txt
  start=$(date +%s)
  rc=0
  "$here/rb-smpirun" "$plat" "$np" "$out/collcheck" "${RB_COLLCHECK_MAX:-2097152}" \
    "${RB_COLLCHECK_BUDGET:-2147483648}" ${RB_COLLCHECK_COLLS:+"$RB_COLLCHECK_COLLS"} >"$log" 2>&1 || rc=$?
  n=$(grep -c 'sizes checked' "$log" || true)
  [ "$rc" -eq 0 ] && [ "$n" -eq "$want" ] || failed=1
  awk -v np="$np" -v rc="$rc" -v n="$n" -v wall=$(( $(date +%s) - start )) \
    '/sizes checked/ {w += $11; u += $5; s += $9} END {print np, rc, n " collectives", w + 0 " wrong", u + 0 " unchecked", s + 0 " skipped", wall " s"}' "$log"
done
exit "$failed"
