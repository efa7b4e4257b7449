#!/bin/sh
# rb-report's verdict: medians with 95% intervals over
# repetitions (within one file and across files), significance, the
# claims' `paper` / `other` settings and the headline, and --compare.
# Real rb_micro files on 2 ranks; verdict_check.py writes the repeated
# data sets from them (results/README.md) and checks every number.
micro="$top_builddir/benchmarks/rb_micro"
report="$top_srcdir/analysis/rb-report"
check="$top_srcdir/tests/analysis/verdict_check.py"
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

[ -x "$micro" ] || { echo "SKIP: $micro not built" >&2; exit 77; }
$py -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null ||
    { echo "SKIP: Debian python3-h5py/numpy/pandas/matplotlib missing" >&2; exit 77; }

micro2() {  # OUT ARGS...: rb_micro on 2 ranks, or FAIL
    out=$1; shift
    "$MPIRUN" 2 "$micro" -q -i 3 -x 1 -o "$out" "$@" >"$tmp/micro.out" 2>&1 ||
        { echo "FAIL: rb_micro $*:"; cat "$tmp/micro.out"; exit 1; }
}
# The S2 paper's setting, narrowed: a 32768 x 64 embedding, 2% of rows
# per rank, the authors' width rule for GNMT (0.02 x 0.25).
paper="--shape 32768x64 --layout row --density 0.02 -O sketch_width_mode=fraction -O sketch_width=0.005"
mkdir "$tmp/element" "$tmp/real" "$tmp/work"
# shellcheck disable=SC2086
micro2 "$tmp/row.h5" --reducer none,dense,agsparse,s2 $paper
micro2 "$tmp/gossip.h5" --reducer none,gossip --compute 0.001 -m 64K
micro2 "$tmp/element/e.h5" --reducer dense,agsparse,s2 -m 64K:128K --density 0.01
for i in 1 2 3 4 5 6; do
    # shellcheck disable=SC2086
    micro2 "$tmp/real/r$i.h5" --reducer dense,s2 $paper
done
$py "$check" "$report" "$tmp/row.h5" "$tmp/gossip.h5" "$tmp/element" "$tmp/real" "$tmp/work"
