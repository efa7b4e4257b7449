# Sourced by the tests that submit jobs to a Slurm of their own (a local
# single-node one, tests/slurm/slurm_lib.sh, or an emulated cluster,
# tests/emulated/emulated_lib.sh): waiting for jobs, reading their exit
# codes, archive attributes and leftovers.  Needs fail().
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
