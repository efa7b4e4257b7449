#!/bin/sh
# benchmarks/anchors/osu-vs-dense: its argument checking, and whole runs
# against tests/anchors/osu_format_allreduce, a stand-in with osu_allreduce's
# options and output format (OSU Micro-Benchmarks is not packaged in
# Debian; tests/anchors/osu_vs_dense_real.sh runs the real one when RB_OSU_DIR
# names an OSU source tree or build).
script="${top_srcdir}/benchmarks/anchors/osu-vs-dense"
stub="${top_builddir}/tests/anchors/osu_format_allreduce"
[ -x "$stub" ] || { echo "osu_vs_dense.sh: $stub not built" >&2; exit 99; }
[ -x "${top_builddir}/benchmarks/rb_micro" ] || { echo "osu_vs_dense.sh: rb_micro not built" >&2; exit 99; }
RB_MPIRUN=mpirun RB_MPIRUN_ARGS="--bind-to none --mca btl self,vader"
export RB_MPIRUN RB_MPIRUN_ARGS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
bad() { echo "osu_vs_dense.sh: $*" >&2; status=1; }

# expect CODE PATTERN ARGS...: the script exits CODE and prints PATTERN
# (stdout or stderr).
expect() {
    code=$1 pat=$2
    shift 2
    "$script" -b "$top_builddir" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = "$code" ] || bad "'$*' exits $rc, expected $code: $(head -n 3 "$tmp/err")"
    grep -q -e "$pat" "$tmp/out" "$tmp/err" ||
        bad "'$*': no '$pat' in its output: $(head -n 3 "$tmp/out" "$tmp/err")"
}

# --- arguments --------------------------------------------------------------
expect 0 "Usage: osu-vs-dense" --help
expect 0 "max-ratio" -h
expect 2 "no OSU_DIR"
expect 2 "unknown option '--bogus'" --bogus "$tmp"
expect 2 "unexpected argument 'b'" a b
expect 2 "needs a value" "$tmp" -i
expect 2 "'1' is below 2" -n 1 "$tmp"
expect 2 "'2' is below 3" -r 2 "$tmp"
expect 2 "'0' is below 1" -i 0 "$tmp"
expect 2 "not a whole number" -x -1 "$tmp"
expect 2 "is not MIN:MAX" -m 4K "$tmp"
expect 2 "MIN 8192 > MAX 4096" -m 8K:4K "$tmp"
expect 2 "not a whole number of floats" -m 6:64 "$tmp"
expect 2 "is not MIN:MAX (bytes" -m 4X:8K "$tmp"
expect 2 "not keep, default or hugetlb" -a mmap "$tmp"
expect 2 "not mean or p50" -t p99 "$tmp"
expect 2 "not a number > 0" -R 0 "$tmp"
expect 2 "not a number > 0" -R x1 "$tmp"
expect 2 "is not a directory" "$tmp/none"
expect 2 "neither an OSU build" "$tmp"
# A source tree is never built inside the checkout (nothing of OSU is
# committed); the refusal comes before anything is created there.
mkdir -p "$tmp/src/c/mpi/collective/blocking"
: >"$tmp/src/c/mpi/collective/blocking/osu_allreduce.c"
printf '#!/bin/sh\nexit 1\n' >"$tmp/src/configure"
chmod +x "$tmp/src/configure"
expect 2 "inside the checkout" -s "$top_srcdir/osu-scratch" "$tmp/src"
[ ! -e "$top_srcdir/osu-scratch" ] || bad "created $top_srcdir/osu-scratch"
expect 1 "OSU configure failed" -s "$tmp/scratch" "$tmp/src"

# --- whole runs against the stand-in ------------------------------------------
osu="$tmp/osu/c/mpi/collective/blocking"
mkdir -p "$osu"
ln -s "$stub" "$osu/osu_allreduce"
expect 0 "worst ratio" -m 4K:16K -i 5 -x 1 -r 3 -o "$tmp/raw" "$tmp/osu"
rows=$(grep -c '^ *[0-9]' "$tmp/out")
[ "$rows" = 3 ] || bad "3 sizes expected, got $rows rows: $(cat "$tmp/out")"
awk '/^ *[0-9]/ && !($2 > 0 && $5 > 0 && ($8 - $5 / $2) ^ 2 < 1e-6) { exit 1 }' "$tmp/out" ||
    bad "a row without both medians, or a ratio that is not theirs: $(cat "$tmp/out")"
grep -q "^# rb: .*--no-phase-times" "$tmp/out" || bad "rb_micro runs with phase times"
grep -q "GLIBC_TUNABLES=glibc.malloc.mmap_max=0" "$tmp/out" || bad "no allocator policy line"
n=$(ls "$tmp/raw"/*.txt | wc -l) h=$(ls "$tmp/raw"/rb-*.h5 | wc -l)
[ "$n" = 6 ] && [ "$h" = 3 ] ||
    bad "--raw kept $n outputs and $h archives, expected 6 (3 rounds x 2 programs) and 3"
expect 0 "worst ratio" -t p50 -m 4K:16K -i 9 -x 1 -r 3 "$tmp/osu"
rows=$(awk '/^ *[0-9]/ && $2 > 0 && $5 > 0' "$tmp/out" | wc -l)
[ "$rows" = 3 ] || bad "-t p50: 3 sizes with both medians expected: $(cat "$tmp/out")"
expect 1 "2 above 0.000001" -m 4K:8K -i 3 -x 0 -r 3 -R 0.000001 "$tmp/osu"
expect 0 "0 above 1000" -m 4K:8K -i 3 -x 0 -r 3 -R 1000 -a default -p "$tmp/osu"
grep -q "^# rb: .*--no-phase-times" "$tmp/out" && bad "-p: rb_micro still without phase times"
exit $status
