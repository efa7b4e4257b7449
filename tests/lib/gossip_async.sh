#!/bin/sh
# Asynchronous mode equals synchronous mode shifted by one step.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_gossip 1 2 5 8 -- async
