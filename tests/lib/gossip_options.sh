#!/bin/sh
# Mismatched seed or gossip options: RB_ERR_MISMATCH on every rank; gossip_mix routing.
exec sh "${top_srcdir:?}/tests/lib/gossip-run.sh" options 3
