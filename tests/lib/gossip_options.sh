#!/bin/sh
# Mismatched seed or gossip options: RB_ERR_MISMATCH on every rank; gossip_mix routing.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 3 -- options
