#!/bin/sh
# The cost model's bytes against real calls of every reducer on 1, 2, 3, 4,
# 5, 7 and 8 ranks (tests/lib/test_model.c).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_model 1 2 3 4 5 7 8
