#!/bin/sh
# rb_reduce_rows against rb_reduce for every reducer on 1, 2, 3, 5, 6, 8 and 11
# ranks (tests/lib/test_rows.c says what is checked).
prog="${top_builddir:-.}/tests/lib/test_rows"
[ -x "$prog" ] || { echo "rows.sh: $prog not built" >&2; exit 99; }
# Open MPI's libraries have no frame pointers: LeakSanitizer needs the slow
# unwinder to attribute their allocations (and match tests/lsan.supp).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export ASAN_OPTIONS
status=0
for np in 1 2 3 5 6 8 11; do
    if ! "$MPIRUN" "$np" "$prog"; then
        echo "rows.sh: test_rows failed on $np ranks" >&2
        status=1
    fi
done
exit $status
