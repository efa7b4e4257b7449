#!/bin/sh
# Every reducer at the edges of its values (NaN, inf, overflow, denormals,
# -0.0) and oktopk's top-k bounds, on 1 to 9, 11, 13 and 16 ranks
# (tests/lib/test_values.c).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_values 1 2 3 4 5 6 7 8 9 11 13 16
