#!/bin/sh
# Wire bytes per rank per step: 4n per exchange whatever p; p = 1 no-op.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 1 2 3 4 5 6 7 8 -- wire
