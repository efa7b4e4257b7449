#!/bin/sh
# ranks.sh PROG NP[:ARG]... [-- ARGS...]: run tests/lib/PROG on each rank
# count NP, with ARGS, and ARG for that count alone (test_reducers' --big
# on 4 ranks).  Every run is bounded (300 s: a reducer whose ranks
# disagree, or a broken gossip schedule, hangs in a collective).  Exit 0
# when every run passed, 99 when the program is missing or a run says 99
# (a hard error), else 1, each failure named with its rank count.
prog=${1:?usage: ranks.sh PROG NP[:ARG]... [-- ARGS...]}
shift
path="${top_builddir:?run under make check}/tests/lib/$prog"
[ -x "$path" ] || { echo "ranks.sh: $path not built" >&2; exit 99; }
counts=
while [ $# -gt 0 ] && [ "$1" != -- ]; do counts="$counts $1"; shift; done
[ "${1:-}" = -- ] && shift
# Open MPI's libraries have no frame pointers: LeakSanitizer needs the slow
# unwinder to attribute their allocations (and match tests/lsan.supp).  A
# test that caps a rank's memory to make an allocation fail needs ASan to
# return NULL as malloc does, not end the process.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:allocator_may_return_null=1"
export ASAN_OPTIONS
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 300"
status=0
for spec in $counts; do
    np=${spec%%:*} one=
    [ "$np" = "$spec" ] || one=${spec#*:}
    # shellcheck disable=SC2086 # $one is one word or none
    $limit "$MPIRUN" "$np" "$path" "$@" $one
    rc=$?
    case $rc in
        0) ;;
        99) echo "ranks.sh: $prog $* $one on $np ranks: hard error" >&2; exit 99 ;;
        124) echo "ranks.sh: $prog $* $one on $np ranks: timed out (a hang?)" >&2; status=1 ;;
        *) echo "ranks.sh: $prog $* $one on $np ranks: FAILED (exit $rc)" >&2; status=1 ;;
    esac
done
exit $status
