#!/bin/sh
# The s2 reducer on 1..8 ranks (tests/lib/test_s2.c says what is checked).
prog="${top_builddir:-.}/tests/lib/test_s2"
[ -x "$prog" ] || { echo "s2.sh: $prog not built" >&2; exit 99; }
# test_s2 caps one rank's address space to make a growth fail: under ASan
# that must return NULL as malloc does, not end the process.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
status=0
for np in 1 2 3 4 5 6 7 8; do
    if ! "$MPIRUN" "$np" "$prog"; then
        echo "s2.sh: test_s2 failed on $np ranks" >&2
        status=1
    fi
done
exit $status
