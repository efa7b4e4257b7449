#!/bin/sh
# Every exact reducer (and the algorithm variants) against the exact
# average on 1 to 9 and 11 ranks; on 13 and 16 (oversubscribed) the
# --small part: shapes below 14 elements.  The 2^22-element case runs on 4
# ranks (non-powers of two are covered at small sizes).  See
# tests/lib/test_reducers.c for the cases and the tolerance.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_reducers 1 2 3 4:--big 5 6 7 8 9 11 13:--small 16:--small
