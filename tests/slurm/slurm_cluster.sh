#!/bin/bash
# jobscripts/local/start and stop: start is idempotent (a second start keeps
# the same daemons), two clusters run side by side, stop ends only its own
# daemons (by pid) and leaves none behind.  Meanwhile the training and
# scaling scripts run once each, and submit --dry-run sizes arrays right.
. "$top_srcdir/tests/slurm/slurm_lib.sh"
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

# The other two kinds of job, small: training (2 steps) and scaling (1 node).
train=$(sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/train.sbatch" \
    --reducers dense -- --iterations 2 --train-limit 256 --test-limit 128) || fail "sbatch train"
scaling=$(sbatch --parsable --chdir="$W" -N 1 --ntasks-per-node=2 "$JS/p100/scaling.sbatch" \
    --reducers s2 --sizes 64K --iterations 2 --device host -- -P none) || fail "sbatch scaling"

# submit --dry-run: one array per node count, sized by the sweep.
dry=$("$JS/submit" knl micro --reducers dense,s2 --densities 0.01,0.1 --sizes 4K:8K,1M --nodes 1,2 --dry-run)
[ "$(grep -c -- '--array=0-7 ' <<<"$dry")" = 2 ] || fail "submit --dry-run: want 2 arrays of 8: $dry"
grep -q -- '--nodes=2 ' <<<"$dry" || fail "submit --dry-run: no 2-node array: $dry"
dry=$("$JS/submit" p100 scaling --nodes 1,2,4 --dry-run | tr -d "\\\\")
[ "$(wc -l <<<"$dry")" = 1 ] && grep -q -- '--nodes=4 .*--array=0-3 .*scaling.sbatch --node-counts 1,2,4' <<<"$dry" ||
    fail "submit scaling --dry-run: $dry"

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

# A daemon that cannot bind its port (here: a fixed one somebody holds)
# makes start fail at once with the reason, and leaves no daemon behind.
C=$T/cluster-c
# Two free ports below the ephemeral range, as start picks them: a port the
# kernel hands out (bind to 0) has neighbours any outgoing connection can
# take, which once made slurmctld fail first here.
read -r ctld busy < <(/usr/bin/python3 -c 'import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
def free(avoid):
    while True:
        p = random.randrange(10000, lo)
        s = socket.socket()
        try:
            s.bind(("0.0.0.0", p))
            if p != avoid:
                return p
        except OSError:
            pass
        finally:
            s.close()
a = free(0)
print(a, free(a))')
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$busy" &
holder=$!
sleep 0.5
t0=$SECONDS
RB_SLURM_PORTS="$ctld,$busy" RB_SLURM_DIR=$C "$JS/local/start" 2>"$T/busy.log" &&
    fail "start with slurmd's port taken succeeded"
kill "$holder" 2>/dev/null
grep -q 'slurmd exited while starting' "$T/busy.log" && grep -q 'Address already in use' "$T/busy.log" ||
    fail "start with a busy port did not say why: $(cat "$T/busy.log")"
[ $((SECONDS - t0)) -lt 30 ] || fail "start took $((SECONDS - t0)) s to notice slurmd died"
RB_SLURM_DIR=$C "$JS/local/stop" 2>/dev/null
[ -z "$(procs_under "$C/" | tr -d ' ')" ] || fail "daemons of the failed start left: $(procs_under "$C/")"
note "slurmd that cannot bind: start exits 1 in $((SECONDS - t0)) s with the reason"

wait_jobs 200 "$train" "$scaling"
[ "$(exit_codes "$train")" = 0:0 ] || fail "train job $train: $(exit_codes "$train")"
[ "$(exit_codes "$scaling")" = 0:0 ] || fail "scaling job $scaling: $(exit_codes "$scaling")"
f=$W/results/$train/train_lenet_dense_N1_n2.h5
[ "$(h5attr "$f" complete)" = 1 ] && [ "$(h5attr "$f" tool)" = rb_train ] || fail "no complete rb_train archive $f"
f=$W/results/$scaling/scaling_s2_d0.01_m64K_N1_n2.h5
[ "$(h5attr "$f" complete)" = 1 ] && [ "$(h5attr "$f" slurm_partition)" = p100 ] || fail "no complete scaling archive $f"

"$JS/local/stop" || fail "stop of cluster A failed"
dead "$a" || fail "cluster A daemons left after stop: $a"
left=$(procs_under "$T/")
[ -z "${left// /}" ] || fail "processes left: $left"
"$JS/local/stop" 2>/dev/null || fail "a second stop (nothing running) failed"
note "start idempotent, two clusters side by side, stop ends exactly its own daemons"
exit 0
