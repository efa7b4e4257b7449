# Shared by jobscripts/local/start and stop and by jobscripts/emulated/
# (sourced; needs $D).
# Messages name the tool that prints them (rb-slurm, rb-emulated).
say() { printf '%s: %s\n' "${RB_SAY_AS:-rb-slurm}" "$*" >&2; }
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

# Slurm and munge from Debian's packages when missing.
install_missing() {
    local missing=()
    [ -x /usr/sbin/munged ] || missing+=(munge)
    [ -x /usr/sbin/slurmctld ] || missing+=(slurmctld)
    [ -x /usr/sbin/slurmd ] || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    [ "${#missing[@]}" -eq 0 ] && return 0
    say "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >"${TMPDIR:-/tmp}/rb-slurm-apt.$$" 2>&1; then
        tail -5 "${TMPDIR:-/tmp}/rb-slurm-apt.$$" >&2
        rm -f "${TMPDIR:-/tmp}/rb-slurm-apt.$$"
        die "apt-get install ${missing[*]} failed (no network or no Debian mirror?); install them by hand"
    fi
    rm -f "${TMPDIR:-/tmp}/rb-slurm-apt.$$"
}

# munged of this cluster: its own key and socket in $D/munge, so clusters
# side by side never share credentials.
start_munged() {
    local key=$D/munge/munge.key
    if [ ! -s "$key" ]; then
        head -c 1024 /dev/urandom >"$key"
        chown munge:munge "$key"
        chmod 400 "$key"
    fi
    su -s /bin/sh munge -c "/usr/sbin/munged --socket=$D/munge/munge.socket \
        --key-file=$key --pid-file=$D/munge/munged.pid \
        --log-file=$D/munge/munged.log --seed-file=$D/munge/munged.seed" 3>&- 4>&- ||
        die "munged did not start; see $D/munge/munged.log"
    wait_for "munged socket" 10 test -S "$D/munge/munge.socket"
}
