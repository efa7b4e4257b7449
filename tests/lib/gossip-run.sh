#!/bin/sh
# gossip-run.sh MODE NP...: run test_gossip MODE on each rank count.
# Exit 0 when all pass, 99 when the program cannot run, else 1.
mode=$1; shift
prog="${top_builddir:?}/tests/lib/test_gossip"
[ -x "$prog" ] || { echo "missing $prog" >&2; exit 99; }
# A broken schedule deadlocks (partners that do not match): bound each run.
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout 300"
status=0
for np in "$@"; do
    $limit "$MPIRUN" "$np" "$prog" "$mode"
    rc=$?
    case $rc in
        0) ;;
        99) echo "test_gossip $mode on $np ranks: hard error" >&2; exit 99 ;;
        124) echo "test_gossip $mode on $np ranks: timed out (deadlock?)" >&2; status=1 ;;
        *) echo "test_gossip $mode on $np ranks: FAILED (rc $rc)" >&2; status=1 ;;
    esac
done
exit $status
