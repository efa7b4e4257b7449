#!/bin/sh
# rb_sketch (count-sketch benchmark): bad values exit 2 naming the option;
# a small run exits 0 and its error table is what the count-sketch analysis
# predicts: at r = 1 the relative L2 error is close to sqrt(U/c), more rows
# never make it worse at the same width, and every true row is recovered;
# a run that does not fit in memory is refused before it allocates.
sketch="$top_builddir/benchmarks/rb_sketch"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

expect_usage() {  # WORD-IN-MESSAGE ARGS...
    word=$1; shift
    "$sketch" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        echo "FAIL: rb_sketch $* exited $rc, expected 2"; fail=1
    elif ! grep -q -- "$word" "$tmp/err"; then
        echo "FAIL: rb_sketch $*: message does not name '$word':"; cat "$tmp/err"; fail=1
    fi
}

expect_usage "rows x cols" --rows 4294967296 --cols 4294967296    # the product wrapped to 0
expect_usage "rows x cols" --rows 100000 --cols 100000
expect_usage "rows x cols" --rows 0
expect_usage --ranks --ranks 4294967298                           # was truncated to 2
expect_usage --iterations --iterations 4294967297
expect_usage "iters: the repetitions are -i/--iterations" --iters 4    # the old spelling, named
expect_usage --rows --rows -5
expect_usage --density --density 0
expect_usage --density --density 1.5
expect_usage --ratio --ratio -1
expect_usage --seed --seed 12x
expect_usage "unknown option" --bogus 1
expect_usage "needs a value" --rows
# Memory need before anything is allocated: a sketch wider than
# the machine, and a run above -M, are refused with both numbers.
expect_usage "more than the .* GiB this process may hold (MemAvailable" --rows 1000 --cols 100 --ratio 1e9
expect_usage "needs 0.00112 GiB .* more than the 0.000977 GiB this process may hold (-M)" \
    --rows 1000 --cols 100 --no-error -M 1M

"$sketch" --help >"$tmp/help" 2>&1 || { echo "FAIL: --help exited non-zero"; fail=1; }
for opt in --rows --cols --density --ratio --ranks --iterations --seed --no-error --mem-limit; do
    grep -q -- "$opt" "$tmp/help" || { echo "FAIL: --help does not mention $opt"; fail=1; }
done

if ! "$sketch" --rows 2000 --cols 64 --ranks 4 -i 1 >"$tmp/run" 2>"$tmp/err"; then
    echo "FAIL: rb_sketch small run failed:"; cat "$tmp/err" "$tmp/run"; fail=1
fi
# Error table rows: c/nmd c r rel_l2_err sqrt(U/c) recall max_abs_err
awk '
    $1 ~ /^(encode|decode)$/ { phases++; if (!($4 > 0)) { print "FAIL: " $1 " r=" $2 ": " $4 " Melem/s"; bad = 1 } }
    NF == 7 && $1 ~ /^[0-9.]+$/ && $3 ~ /^[135]$/ {
        rows++
        if ($3 == 1) {
            one[$2] = $4
            if ($4 < 0.7 * $5 || $4 > 1.3 * $5) { print "FAIL: c=" $2 " r=1: error " $4 ", sqrt(U/c) " $5; bad = 1 }
        } else if ($4 > one[$2] * 1.05) { print "FAIL: c=" $2 " r=" $3 ": error " $4 " above r=1 (" one[$2] ")"; bad = 1 }
        if ($6 != 1) { print "FAIL: c=" $2 " r=" $3 ": recall " $6; bad = 1 }
    }
    END {
        if (phases != 6) { print "FAIL: " phases + 0 " encode/decode lines, want 6"; bad = 1 }
        if (rows != 12) { print "FAIL: " rows + 0 " error rows, want 12"; bad = 1 }
        exit bad
    }' "$tmp/run" || { cat "$tmp/run"; fail=1; }
exit $fail
