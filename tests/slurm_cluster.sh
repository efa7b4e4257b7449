#!/bin/bash
# jobscripts/local/start and stop: start is idempotent (a second start keeps
# the same daemons), two clusters run side by side, stop ends only its own
# daemons (by pid) and leaves none behind.
. "$top_srcdir/tests/slurm_lib.sh"
pids() { cat "$1/slurmctld.pid" "$1/slurmd.pid" "$1/munge/munged.pid" 2>/dev/null | tr '\n' ' '; }
alive() { local p; for p in $1; do kill -0 "$p" 2>/dev/null || return 1; done; }
dead() { local p; for p in $1; do ! kill -0 "$p" 2>/dev/null || return 1; done; }

slurm_start
A=$RB_SLURM_DIR
a=$(pids "$A")
[ "$(wc -w <<<"$a")" = 3 ] && alive "$a" || fail "want 3 live daemons, pid files give: $a"
grep -q "^export SLURM_CONF='$A/slurm.conf'" "$A/env" || fail "env file lacks SLURM_CONF"
scontrol show node localhost | grep -q 'Gres=gpu:p100:8' || fail "no fake GPU gres: $(scontrol show node localhost | grep Gres)"
"$JS/local/start" 2>"$T/again.log" || fail "second start failed"
grep -q "already running" "$T/again.log" || fail "second start did not say 'already running'"
[ "$(pids "$A")" = "$a" ] || fail "second start changed the daemons: $a -> $(pids "$A")"

B=$T/cluster-b
RB_SLURM_DIR=$B "$JS/local/start" 2>/dev/null || fail "start of a second cluster failed"
b=$(pids "$B")
alive "$b" || fail "second cluster's daemons not running: $b"
j=$(SLURM_CONF=$B/slurm.conf sbatch --parsable --chdir="$W" -p debug -n1 --wrap 'echo hello') || fail "sbatch to cluster B"
SLURM_CONF=$B/slurm.conf wait_jobs 60 "$j"

RB_SLURM_DIR=$B "$JS/local/stop" 2>/dev/null || fail "stop of cluster B failed"
dead "$b" || fail "cluster B daemons left after stop: $b"
alive "$a" || fail "stopping cluster B ended some of cluster A's daemons"
scontrol ping >/dev/null || fail "cluster A no longer answers"

"$JS/local/stop" || fail "stop of cluster A failed"
dead "$a" || fail "cluster A daemons left after stop: $a"
left=$(procs_under "$T/")
[ -z "${left// /}" ] || fail "processes left: $left"
"$JS/local/stop" 2>/dev/null || fail "a second stop (nothing running) failed"
note "start idempotent, two clusters side by side, stop ends exactly its own daemons"
exit 0
