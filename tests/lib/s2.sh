#!/bin/sh
# The s2 reducer on 1..8 ranks (tests/lib/test_s2.c says what is checked; it
# caps one rank's address space to make a growth fail).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_s2 1 2 3 4 5 6 7 8
