#!/bin/sh
# Asynchronous mode equals synchronous mode shifted by one step.
exec sh "${top_srcdir:?}/tests/lib/gossip-run.sh" async 1 2 5 8
