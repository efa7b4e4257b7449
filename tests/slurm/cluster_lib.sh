# Sourced first by tests/slurm/slurm_lib.sh and tests/emulated/emulated_lib.sh:
# what a test with a private cluster of its own needs before it starts one.
# test_cluster KIND STATE_VAR STOP WHY_ROOT: skip (77) unless root, with
# WHY_ROOT; a unique scratch directory T (several test runs may share the
# machine), the cluster's state directory in $T/cluster exported as
# STATE_VAR, a work directory W with results/; on exit the cluster is
# stopped with STOP (a script under jobscripts/), and T removed unless the
# test failed, when the jobs' outputs and the daemons' logs are shown and
# kept.
set -u
: "${top_srcdir:?run under make check}" "${top_builddir:?run under make check}"
JS=$top_srcdir/jobscripts
# The reason is said again after the logs that cleanup shows, so that a log
# cut to its tail (CI shows the last lines) still names what failed.
FAIL_WHY=
fail() { FAIL_WHY=$*; echo "FAIL: $*" >&2; exit 1; }
note() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

test_cluster() {   # KIND STATE_VAR STOP WHY_ROOT
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: $4" >&2
        exit 77
    fi
    /usr/bin/python3 -c 'import h5py' 2>/dev/null ||
        { echo "FAIL: /usr/bin/python3 cannot import h5py (apt-get install python3-h5py)" >&2; exit 99; }
    T=$(mktemp -d "${TMPDIR:-/tmp}/rb-$1-test.XXXXXX")
    chmod 755 "$T"
    CLUSTER_DIR=$T/cluster
    CLUSTER_STOP=$JS/$3
    export "$2=$CLUSTER_DIR"
    W=$T/work
    mkdir -p "$W/results"
    export RB_BUILD=$top_builddir
    trap test_cluster_cleanup EXIT
    trap 'exit 1' TERM INT HUP
}

test_cluster_cleanup() {
    local rc=$?
    trap - EXIT
    "$CLUSTER_STOP" >"$T/stop.log" 2>&1 || { cat "$T/stop.log" >&2; rc=1; }
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        echo "--- job outputs, daemon logs (kept in $T) ---" >&2
        tail -n 30 "$W"/results/*.out >&2 2>/dev/null
        tail -n 20 "$CLUSTER_DIR"/log/*.log >&2 2>/dev/null
        [ -z "$FAIL_WHY" ] || echo "FAIL (said above, before the logs): $FAIL_WHY" >&2
    else
        rm -rf "$T"
    fi
    exit "$rc"
}
