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

# wait_jobs SECONDS JOBID...: until squeue no longer lists them.
wait_jobs() {
    local secs=$1 ids i
    shift
    ids=$(IFS=,; echo "$*")
    for ((i = 0; i < secs * 4; i++)); do
        [ -z "$(squeue -h -j "$ids" 2>/dev/null)" ] && return 0
        sleep 0.25
    done
    squeue >&2
    fail "jobs $ids still queued or running after ${secs}s"
}

# exit_codes JOBID: "ExitCode" of the job (or of every task of an array), one a line.
exit_codes() { scontrol show job "$1" | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p'; }
job_state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# h5attr FILE NAME: a root attribute (strings decoded).
h5attr() {
    /usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    v = f.attrs[sys.argv[2]]
    print(v.decode() if isinstance(v, bytes) else v)' "$1" "$2"
}

# procs_under DIR: pids (other than this shell) whose command line mentions
# DIR.  Without procps; the [x] in the pattern keeps grep from matching itself.
procs_under() {
    local pat p
    pat="[${1:0:1}]$(sed 's/\./[.]/g' <<<"${1:1}")"
    for p in $(grep -las -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
        [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || printf '%s ' "$p"
    done
}

# assert_no_partial DIR: every .h5 in DIR is complete, no .tmp is left.
assert_no_partial() {
    local f
    for f in "$1"/*.h5; do
        [ -e "$f" ] || continue
        [ "$(h5attr "$f" complete)" = 1 ] || fail "$f exists but is not complete"
    done
    ! ls "$1" | grep -q '\.tmp' || fail "temporary archive left in $1: $(ls "$1")"
}
