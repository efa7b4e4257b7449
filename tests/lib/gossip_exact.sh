#!/bin/sh
# Power-of-two p: log2(p) synchronous steps give every rank the exact global mean.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 2 4 8 -- exact
