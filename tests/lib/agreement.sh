#!/bin/sh
# Ranks that disagree (shape, options, name) and option values no parser
# gives, refused on every rank; rb_node_rank's choice (not on 13 and 16
# oversubscribed ranks).  tests/lib/test_agreement.c.
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_agreement 1 2 3 4 5 6 7 8 9 11 13:--small 16:--small
