#!/bin/sh
# The neural-network library benchmarks/nn/libnn.a is a library of its own
# (docs/architecture.md): every name it exports starts with nn_, and it
# needs nothing that rb_train's own files or the harness (libbench.a)
# define.  tests/arch/include_graph.py checks the same layering in the source
# text; this reads what the compiler made of it.
lib="$top_builddir/benchmarks/nn/libnn.a"
if [ ! -f "$lib" ]; then
    echo "SKIP: $lib not built (configure found no BLAS)"; exit 77
fi
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP: no nm to read $lib"; exit 77
fi
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# Defined / undefined global names of the archives and objects given.
defined() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
undefined() { nm -g --undefined-only "$@" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u; }

# Weak C++ names (the personality routine's DW.ref., inline functions of
# the CUDA headers) are copies the compiler makes in every object that
# needs them, not names the library defines: left out.
nm -g --defined-only "$lib" 2>/dev/null |
    awk 'NF == 3 && !($2 ~ /^[VvWw]$/ && $3 ~ /^(DW\.ref\.|_Z)/) { print $3 }' | sort -u >"$tmp/exports"
n=$(wc -l <"$tmp/exports")
if [ "$n" -lt 50 ]; then
    echo "FAIL: $lib exports only $n names: not the library built from benchmarks/nn?"; fail=1
fi
if grep -v '^nn_' "$tmp/exports" >"$tmp/bad"; then
    echo "FAIL: $lib exports names without the nn_ prefix:"; cat "$tmp/bad"; fail=1
fi

# What libnn.a needs from outside, against what the program's objects and
# the harness define: none of it may be theirs.
set -- "$top_builddir"/benchmarks/train/*.o
if [ -f "$1" ] && [ -f "$top_builddir/benchmarks/libbench.a" ]; then
    defined "$@" "$top_builddir/benchmarks/libbench.a" >"$tmp/above"
    undefined "$lib" | comm -12 - "$tmp/above" >"$tmp/up"
    if [ -s "$tmp/up" ]; then
        echo "FAIL: $lib needs names that rb_train or the harness define:"; cat "$tmp/up"; fail=1
    fi
else
    echo "FAIL: rb_train's objects or libbench.a are missing beside $lib"; fail=1
fi
[ $fail -eq 0 ] && echo "$lib: $n exported names, all nn_; nothing of rb_train or the harness needed"
exit $fail
