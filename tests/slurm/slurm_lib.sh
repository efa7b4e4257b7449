# Sourced by tests/slurm_*.sh: a private single-node Slurm cluster per test
# run (jobscripts/local/start), always stopped on exit, and helpers to wait
# for jobs and read archive attributes.
set -u
: "${top_srcdir:?run under make check}" "${top_builddir:?run under make check}"
JS=$top_srcdir/jobscripts
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: starting munged/slurmctld/slurmd needs root" >&2
    exit 77
fi
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "FAIL: /usr/bin/python3 cannot import h5py (apt-get install python3-h5py)" >&2; exit 99; }

# A unique state directory per run; several test runs may share the machine.
T=$(mktemp -d "${TMPDIR:-/tmp}/rb-slurm-test.XXXXXX")
chmod 755 "$T"
export RB_SLURM_DIR=$T/cluster
W=$T/work
mkdir -p "$W/results"
export RB_BUILD=$top_builddir

slurm_cleanup() {
    local rc=$?
    trap - EXIT
    "$JS/local/stop" >"$T/stop.log" 2>&1 || { cat "$T/stop.log" >&2; rc=1; }
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        echo "--- job outputs, daemon logs (kept in $T) ---" >&2
        tail -n 30 "$W"/results/*.out >&2 2>/dev/null
        tail -n 20 "$RB_SLURM_DIR"/log/*.log >&2 2>/dev/null
    else
        rm -rf "$T"
    fi
    exit "$rc"
}
trap slurm_cleanup EXIT
trap 'exit 1' TERM INT HUP

slurm_start() {
    "$JS/local/start" || fail "jobscripts/local/start failed (slurmctld slurmd slurm-client munge installed? apt-get install -y slurmctld slurmd slurm-client munge)"
    # shellcheck disable=SC1091
    . "$RB_SLURM_DIR/env"
}

. "$top_srcdir/tests/slurm/jobs_lib.sh"
