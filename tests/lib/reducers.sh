#!/bin/sh
# Every exact reducer (and the sparcml / parallax / omnireduce variants)
# against the exact average on 1 to 9 and 11 ranks; on 13 and 16
# (oversubscribed) the --small part: shapes below 14 elements, the value
# edges of every reducer, the agreement checks.  The 2^22-element case runs
# on 4 ranks (non-powers of two are covered at small sizes).  See
# tests/lib/test_reducers.c for the cases and the tolerance.
prog="${top_builddir}/tests/lib/test_reducers"
[ -x "$prog" ] || { echo "reducers.sh: $prog not built" >&2; exit 99; }
# Open MPI's libraries have no frame pointers: LeakSanitizer needs the slow
# unwinder to attribute their allocations (and match tests/lsan.supp).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export ASAN_OPTIONS
# A reducer whose ranks disagree hangs in a collective: bound each run.
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 300"
status=0
for np in 1 2 3 4 5 6 7 8 9 11 13 16; do
    arg=
    [ "$np" = 4 ] && arg=--big
    [ "$np" -ge 13 ] && arg=--small
    $limit "$MPIRUN" "$np" "$prog" $arg
    rc=$?
    if [ $rc = 124 ]; then
        echo "reducers.sh: timed out on $np ranks (a hang?)" >&2
        status=1
    elif [ $rc != 0 ]; then
        echo "reducers.sh: FAILED on $np ranks" >&2
        status=1
    fi
done
exit $status
