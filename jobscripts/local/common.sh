# Shared by jobscripts/local/start and stop (sourced; needs $D).
say() { printf 'rb-slurm: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# wait_for WHAT SECONDS COMMAND...: poll COMMAND every 0.2 s.
wait_for() {
    local what=$1 secs=$2 i
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    die "timed out after ${secs}s waiting for $what (logs in $D/log, $D/munge)"
}

# PID from FILE if that process is alive and its command line mentions $D
# (so a recycled pid is never taken for ours).
our_pid() {
    local f=$1 pid
    [ -s "$f" ] || return 1
    pid=$(tr -dc '0-9' <"$f")
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$D/" || return 1
    echo "$pid"
}

cluster_running() {
    our_pid "$D/munge/munged.pid" >/dev/null &&
        our_pid "$D/slurmctld.pid" >/dev/null &&
        our_pid "$D/slurmd.pid" >/dev/null &&
        SLURM_CONF=$D/slurm.conf scontrol ping >/dev/null 2>&1
}
