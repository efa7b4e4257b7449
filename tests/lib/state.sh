#!/bin/sh
# Reducer state for checkpoints (rb_state_save / rb_state_load) on 1, 2, 3
# and 5 ranks (tests/lib/test_state.c says what is checked).
prog="${top_builddir:-.}/tests/lib/test_state"
[ -x "$prog" ] || { echo "state.sh: $prog not built" >&2; exit 99; }
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export ASAN_OPTIONS
status=0
for np in 1 2 3 5; do
    "$MPIRUN" "$np" "$prog" || { echo "state.sh: test_state failed on $np ranks" >&2; status=1; }
done
exit $status
