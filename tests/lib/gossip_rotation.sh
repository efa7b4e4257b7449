#!/bin/sh
# Rotation: every rank meets more distinct partners over p*ceil(log2 p) steps.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 6 8 -- rotation
