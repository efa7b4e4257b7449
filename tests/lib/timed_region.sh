#!/bin/sh
# What each reducer's timed call holds (tests/lib/test_timed.c) on 1, 2 and 3
# ranks: dense times no statistics pass, counts are reported only where
# the algorithm computes them.
prog="${top_builddir}/tests/lib/test_timed"
[ -x "$prog" ] || { echo "timed_region.sh: $prog not built" >&2; exit 99; }
status=0
for np in 1 2 3; do
    if ! "$MPIRUN" "$np" "$prog"; then
        echo "timed_region.sh: FAILED on $np ranks" >&2
        status=1
    fi
done
exit $status
