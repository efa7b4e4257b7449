#!/bin/sh
# tests/arch/include_graph.py fails where it must: an empty or wrong top
# folder (it would otherwise read nothing, or the current folder, and pass),
# a tree with no source file, an upward include, an include circle and a
# program reaching a private header of the library in a small tree made
# here; and passes that tree once they are removed.
check="${top_srcdir:?}/tests/arch/include_graph.py"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# expect RC WHAT ARGS...: the checker's exit status is RC and, when it
# fails, it says why on a FAIL: line.
expect() {
    want=$1 what=$2; shift 2
    # From the top source folder: an empty path must not read it.
    out=$(cd "$top_srcdir" && /usr/bin/python3 "$check" "$@" 2>&1); rc=$?
    if [ "$rc" != "$want" ]; then
        bad "$what: exit $rc, expected $want"; printf '%s\n' "$out"
    elif [ "$want" != 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL: '; then
        bad "$what: failed without a FAIL: line saying why"; printf '%s\n' "$out"
    else
        echo "ok $what"
    fi
}

expect 1 "an empty path" ""
(cd "$top_srcdir" && top_srcdir='' /usr/bin/python3 "$check" >/dev/null 2>&1) &&
    bad "top_srcdir set to the empty string passed (it read the current folder)"
expect 1 "a path that does not exist" "$tmp/nowhere"
expect 1 "a folder without src/ and benchmarks/" "$tmp"
mkdir -p "$tmp/t/src" "$tmp/t/benchmarks/harness" "$tmp/t/benchmarks/micro"
expect 1 "src/ and benchmarks/ without a source file" "$tmp/t"

# A small tree: the library, the harness and one program, each including
# the rooms it may use.
printf '#include "lib.h"\n' >"$tmp/t/src/lib.c"
printf 'int lib_f(void);\n' >"$tmp/t/src/lib.h"
printf 'int priv_f(void);\n' >"$tmp/t/src/priv.h"
expect 1 "a library that installs no header" "$tmp/t"
printf 'include_HEADERS += src/lib.h\n' >"$tmp/t/src/local.mk"
printf '#include "lib.h"\n' >"$tmp/t/benchmarks/harness/h.c"
printf 'int h_f(void);\n' >"$tmp/t/benchmarks/harness/h.h"
printf '#include "harness/h.h"\n#include "lib.h"\n' >"$tmp/t/benchmarks/micro/m.c"
expect 0 "a clean tree" "$tmp/t"

printf '#include "harness/h.h"\n' >>"$tmp/t/src/lib.c"
expect 1 "the library including the harness (upward)" "$tmp/t"
/usr/bin/python3 "$check" "$tmp/t" | grep 'src/lib.c includes benchmarks/harness/h.h: library may not include harness' >/dev/null ||
    bad "the upward include is not named"
printf '#include "lib.h"\n' >"$tmp/t/src/lib.c"

printf '#include "b.h"\n' >"$tmp/t/src/a.c"; printf 'int a_f(void);\n' >"$tmp/t/src/a.h"
printf '#include "a.h"\n' >"$tmp/t/src/b.c"; printf 'int b_f(void);\n' >"$tmp/t/src/b.h"
expect 1 "a.c including b.h while b.c includes a.h (a circle)" "$tmp/t"
/usr/bin/python3 "$check" "$tmp/t" | grep 'include circle' >/dev/null || bad "the circle is not named"
rm "$tmp/t/src/a.c" "$tmp/t/src/b.c"
expect 0 "the tree again without the circle" "$tmp/t"

printf '#include "priv.h"\n' >>"$tmp/t/benchmarks/micro/m.c"
expect 1 "a program including a private header of the library" "$tmp/t"
/usr/bin/python3 "$check" "$tmp/t" | grep 'benchmarks/micro/m.c includes src/priv.h: a private header' >/dev/null ||
    bad "the private header is not named"
printf 'include_HEADERS += src/lib.h \\\n\tsrc/priv.h\n' >"$tmp/t/src/local.mk"
expect 0 "the same header once installed (on a continued line)" "$tmp/t"
exit $fail
