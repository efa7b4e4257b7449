#!/bin/sh
# benchmarks/anchors/osu-vs-dense against the real OSU Micro-Benchmarks:
# RB_OSU_DIR names an OSU 7.x source tree (built into a scratch directory)
# or build.  Skipped without it (OSU is not packaged in Debian, so CI has
# none): docs/anchors.md says how to get one.
if [ -z "${RB_OSU_DIR:-}" ]; then
    echo "osu_vs_dense_real.sh: SKIP: RB_OSU_DIR is not set (an OSU Micro-Benchmarks source tree or build)"
    exit 77
fi
script="${top_srcdir}/benchmarks/anchors/osu-vs-dense"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RB_MPIRUN_ARGS="--bind-to none --mca btl self,vader"
export RB_MPIRUN_ARGS
"$script" -b "$top_builddir" -m 4K:64K -i 20 -x 2 -r 3 -s "$tmp/scratch" "$RB_OSU_DIR" >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; echo "osu_vs_dense_real.sh: the run failed" >&2; exit 1; }
cat "$tmp/out"
rows=$(grep -c '^ *[0-9]' "$tmp/out")
[ "$rows" = 5 ] || { echo "osu_vs_dense_real.sh: 5 sizes expected, got $rows" >&2; exit 1; }
grep -q "^# OSU: .*osu_allreduce -T mpi_float" "$tmp/out" ||
    { echo "osu_vs_dense_real.sh: not OSU's osu_allreduce" >&2; exit 1; }
