#!/bin/sh
# The reducers' wire bytes against docs/wire-bytes.md, per peer, and
# oktopk's balance, on 1 to 9 and 11 ranks (tests/lib/test_wire.c).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_wire 1 2 3 4 5 6 7 8 9 11
