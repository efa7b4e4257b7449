#!/bin/sh
# Other p: global mean kept every step; spread shrinks per cycle by sigma_2 (docs/gossip.md).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 3 5 6 7 9 13 -- spread
