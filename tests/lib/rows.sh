#!/bin/sh
# rb_reduce_rows against rb_reduce for every reducer on 1, 2, 3, 5, 6, 8 and 11
# ranks (tests/lib/test_rows.c says what is checked).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_rows 1 2 3 5 6 8 11
