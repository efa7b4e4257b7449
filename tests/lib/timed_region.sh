#!/bin/sh
# What each reducer's timed call holds (tests/lib/test_timed.c) on 1, 2 and 3
# ranks: dense times no statistics pass, counts are reported only where
# the algorithm computes them.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_timed 1 2 3
