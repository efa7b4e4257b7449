#!/bin/sh
# Every invalid option value makes rb_micro exit 2 with a message naming the
# option; --help exits 0 and documents every option and reducer.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

expect_usage() {  # OPTION-NAME-IN-MESSAGE ARGS...
    name=$1; shift
    "$micro" -o none "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        echo "FAIL: rb_micro $* exited $rc, expected 2"; fail=1
    elif ! grep -q -- "$name" "$tmp/err"; then
        echo "FAIL: rb_micro $*: message does not name '$name':"; cat "$tmp/err"; fail=1
    fi
}

expect_usage --reducer --reducer nosuch
expect_usage --reducer --reducer dense,,s2
expect_usage --density --density 1.5
expect_usage --density --density -0.1
expect_usage --density --density abc
expect_usage --layout --layout diagonal
expect_usage --overlap --overlap some
expect_usage --cols --cols 0
expect_usage --layout --layout row
expect_usage --shape --shape 10y3
expect_usage --shape --shape 10x0
expect_usage --shape --shape 4294967296x4294967296      # the product wrapped to 0
expect_usage --shape --shape 9223372036854775808x2
expect_usage "output path is empty" --output ""
expect_usage gossip_mix -O gossip_mix=params
expect_usage sketch_rows -O sketch_rows=2
expect_usage --seed --seed -4
expect_usage -m -m 4Q
expect_usage -m -m ::
expect_usage -m -m 1M:4K
expect_usage -m -m 4X:8K
expect_usage -b -b xyz
expect_usage -e -e 1Q
expect_usage --stepfactor --stepfactor 1
expect_usage -i -i 0
expect_usage -i -i 3.5
expect_usage -x -x -1
expect_usage --check --check=2
expect_usage --timeout --timeout -5
# OSU's letters mean what they mean in osu_allreduce: -T is the data type
# (floats only), so a time limit given the old way is refused, naming its
# new spelling; -r (OSU's CUDA compute target) is no longer --repeat.
expect_usage "the time limit, -T before, is --timeout" -T 60
expect_usage "only mpi_float" -T mpi_char
expect_usage "only mpi_float" --type all
expect_usage "repetitions are --repeat" -r 3
# A number past an option's cap names the cap (it said "not an integer >= 1").
expect_usage "'200000' is more than the limit 100000" --repeat 200000
expect_usage "is more than the limit 1" --density 2
expect_usage "unexpected argument '2'" -f 2
expect_usage -d -d tpu
expect_usage block_size -O block_size=0
expect_usage sketch_rows -O sketch_rows=9
expect_usage gossip_schedule -O gossip_schedule=ring
expect_usage "unknown reducer option" -O nosuch=1
expect_usage "key=value" -O novalue
expect_usage "unknown option" --frobnicate
expect_usage "needs a value" --density
expect_usage "unexpected argument" stray

# A command line copied from osu_allreduce (docs/anchors.md) runs: -T
# mpi_float (any case), -f (full listing: always), -c, -v.
"$micro" -o none -q --reducer dense -T mpi_float -f -c -m 4K:8K -i 2 -x 1 -M 64M >"$tmp/out" 2>&1 ||
    { echo "FAIL: rb_micro with osu_allreduce's -T mpi_float -f -c -m -i -x -M exited $?"; cat "$tmp/out"; fail=1; }
"$micro" -o none -q --reducer dense --type mpi_float --full --validation --message-size 4K:8K \
    --iterations 2 --warmup 1 --mem-limit 64M >"$tmp/out" 2>&1 ||
    { echo "FAIL: rb_micro with osu_allreduce's long option names exited $?"; cat "$tmp/out"; fail=1; }
expect_usage "--accelerator: 'rocm'" --accelerator rocm
"$micro" -T MPI_FLOAT --version >"$tmp/out" 2>&1 && grep -q "^rb_micro (reducerbench) [0-9]" "$tmp/out" ||
    { echo "FAIL: rb_micro -T MPI_FLOAT --version:"; cat "$tmp/out"; fail=1; }

# OSU's -m MAX: from the default first size (4K) to MAX; below 4K, MAX alone.
sizes_of() {  # ARGS...: the size column of rb_micro's dense table
    "$micro" -o none -q --reducer dense -i 1 -x 0 "$@" 2>"$tmp/err" | awk '!/^#/ && NF { print $1 }' | tr '\n' ' '
}
got=$(sizes_of -m 16K)
[ "$got" = "4096 8192 16384 " ] || { echo "FAIL: -m 16K ran sizes '$got', want 4096 8192 16384"; cat "$tmp/err"; fail=1; }
got=$(sizes_of -m 1K)
[ "$got" = "1024 " ] || { echo "FAIL: -m 1K ran sizes '$got', want 1024"; cat "$tmp/err"; fail=1; }

"$micro" --help >"$tmp/help" 2>&1 || { echo "FAIL: --help exited non-zero"; fail=1; }
for word in --reducer --density --layout --overlap --cols --shape --seed --option \
            --message-size --minbytes --maxbytes --stepfactor --iterations --warmup \
            --check --validation --no-check --timeout --type --full --version --device --accelerator --output --force --help \
            none dense agsparse sparcml parallax omnireduce oktopk zen s2 gossip \
            block_size oktopk_balance oktopk_repartition oktopk_throttle zen_bitmap \
            sketch_rows sketch_width error_feedback gossip_schedule busbw; do
    grep -q -- "$word" "$tmp/help" || { echo "FAIL: --help does not mention $word"; fail=1; }
done
exit $fail
