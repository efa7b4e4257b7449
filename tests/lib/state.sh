#!/bin/sh
# Reducer state for checkpoints (rb_state_save / rb_state_load) on 1, 2, 3
# and 5 ranks (tests/lib/test_state.c says what is checked).
exec sh "${top_srcdir:?}/tests/lib/ranks.sh" test_state 1 2 3 5
