#!/bin/sh
# The library (src/, libreducer) owns the rb_ prefix; the harness
# (benchmarks/harness, libbench.a) exports only bench_ names, so a name
# says which room it lives in and the two can never collide at link time.
# Fails on any other global symbol libbench.a defines.  Left out: names
# starting with __ (the compiler's: sanitizer and coverage instrumentation)
# and weak C++ copies (DW.ref., _Z: what a compiler puts in every object
# that needs them, as tests/arch/nn_exports.sh leaves them out).
# Usage: harness_symbols.sh [LIBRARY.a]  (default: the built libbench.a)
lib=${1:-$top_builddir/benchmarks/libbench.a}
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm to list the symbols of libbench.a"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib is not built"; exit 1; }
syms=$(nm -g --defined-only "$lib" |
    awk 'NF == 3 && !($2 ~ /^[VvWw]$/ && $3 ~ /^(DW\.ref\.|_Z)/) { print $3 }') ||
    { echo "FAIL: nm cannot read $lib"; exit 1; }
n=$(printf '%s\n' "$syms" | grep -c '^bench_')
# An empty list would pass the check below without checking anything.
[ "$n" -gt 0 ] || { echo "FAIL: nm lists no bench_ symbol in $lib"; exit 1; }
other=$(printf '%s\n' "$syms" | grep -v -e '^bench_' -e '^__' | sort -u)
if [ -n "$other" ]; then
    echo "FAIL: $lib exports names without the bench_ prefix (rb_ is the library's;"
    echo "      a program's own code belongs in its folder under benchmarks/):"
    printf '%s\n' "$other" | sed 's/^/  /'
    exit 1
fi
echo "PASS: $lib exports $n symbols, all bench_"
