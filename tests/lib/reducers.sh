#!/bin/sh
# Every exact reducer (and the sparcml / parallax / omnireduce variants)
# against the exact average on 1, 2, 3, 4, 5, 7 and 8 ranks; the 2^22-element
# case runs on 4 ranks (non-powers of two are covered at small sizes).  See
# tests/lib/test_reducers.c for the cases and the tolerance.
prog="${top_builddir}/tests/lib/test_reducers"
[ -x "$prog" ] || { echo "reducers.sh: $prog not built" >&2; exit 99; }
# Open MPI's libraries have no frame pointers: LeakSanitizer needs the slow
# unwinder to attribute their allocations (and match tests/lsan.supp).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export ASAN_OPTIONS
status=0
for np in 1 2 3 4 5 7 8; do
    big=
    [ "$np" = 4 ] && big=--big
    if ! "$MPIRUN" "$np" "$prog" $big; then
        echo "reducers.sh: FAILED on $np ranks" >&2
        status=1
    fi
done
exit $status
