#!/bin/sh
# The cost model's bytes against real calls of every reducer on 1, 2, 3, 4,
# 5, 7 and 8 ranks (tests/lib/test_model.c).
prog="${top_builddir}/tests/lib/test_model"
[ -x "$prog" ] || { echo "model.sh: $prog not built" >&2; exit 99; }
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export ASAN_OPTIONS
status=0
for np in 1 2 3 4 5 7 8; do
    if ! "$MPIRUN" "$np" "$prog"; then
        echo "model.sh: FAILED on $np ranks" >&2
        status=1
    fi
done
exit $status
