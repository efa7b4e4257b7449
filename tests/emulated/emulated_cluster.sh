#!/bin/bash
# The users' multi-node job on an emulated cluster: 3 nodes at 1 Gbit, the
# unmodified p100 and knl micro scripts with sbatch -N 2 (srun, then
# mpirun as the launcher).  The bytes cross the two nodes' links and not
# the idle third's; the archives record the network and the allocation;
# start twice keeps the daemons; stop leaves no namespace, link or process,
# and a second stop is harmless.
. "$top_srcdir/tests/emulated/emulated_lib.sh"
emul_start 3 1gbit
pids=$(cluster_pids)
"$JS/emulated/start" -N 3 -r 1gbit 2>"$T/again.log" || fail "a second start failed: $(cat "$T/again.log")"
grep -q 'already running' "$T/again.log" || fail "second start: $(cat "$T/again.log")"
[ "$(cluster_pids)" = "$pids" ] || fail "a second start changed the daemons: $pids -> $(cluster_pids)"
[ "$(sinfo -h -N -o %N | sort -u | tr '\n' ' ')" = "node1 node2 node3 " ] || fail "nodes: $(sinfo -h -N -o '%N %T')"

declare -A before
for n in node1 node2 node3; do before[$n]=$(link_bytes "$n"); done
small=(--sizes 4M --iterations 5 --warmup 1 -- -P none)
j1=$(sbatch --parsable --chdir="$W" -N 2 --ntasks-per-node=1 "$JS/p100/micro.sbatch" --reducers dense "${small[@]}") ||
    fail "sbatch -N 2 p100/micro.sbatch"
wait_jobs 120 "$j1"
declare -A moved
for n in node1 node2 node3; do moved[$n]=$(($(link_bytes "$n") - ${before[$n]})); done
j2=$(RB_LAUNCHER=mpirun sbatch --parsable --chdir="$W" -N 2 --ntasks-per-node=1 "$JS/knl/micro.sbatch" --reducers s2 "${small[@]}") ||
    fail "sbatch -N 2 knl/micro.sbatch"
wait_jobs 120 "$j2"
note "jobs $j1 (p100, srun) and $j2 (knl, mpirun) done"

for spec in "$j1:p100:dense:srun" "$j2:knl:s2:mpirun"; do
    IFS=: read -r id part red launcher <<<"$spec"
    [ "$(exit_codes "$id")" = 0:0 ] || fail "$part job $id ended $(exit_codes "$id"): $(tail -5 "$W"/results/*-"$id".out)"
    f=$W/results/$id/micro_${red}_d0.01_m4M_N2_n2.h5
    [ -f "$f" ] || fail "$part job $id: no $f ($(ls "$W/results/$id"))"
    for kv in complete=1 network=emulated network_link_rate=1gbit network_link_bps=1000000000.0 \
        network_transport=tcp nodes=2 machines=1 ranks=2 hostlist=node1,node2 slurm_job_id="$id" \
        slurm_job_num_nodes=2 slurm_nodelist="node[1-2]" slurm_partition="$part" launcher="$launcher" \
        device=host; do
        got=$(h5attr "$f" "${kv%%=*}")
        [ "$got" = "${kv#*=}" ] || fail "$part job $id: ${kv%%=*} = '$got', want '${kv#*=}'"
    done
done
grep -q 'no GPU: RB_DEVICE=host' "$W/results/rb-micro-p100-$j1.out" ||
    fail "p100 job: the site profile's no-GPU line is missing"

# dense moves 4 MiB a rank and call (6 calls): each used node's link carried
# at least that, the idle node's a thousandth of it (Slurm's pings).
sent=$(( 4 * 1024 * 1024 * 6 ))
for n in node1 node2; do
    [ "${moved[$n]}" -ge "$sent" ] || fail "$n's link moved ${moved[$n]} B during the dense job, want >= $sent"
done
[ "${moved[node3]}" -lt $((sent / 1000)) ] || fail "idle node3's link moved ${moved[node3]} B"
note "links: node1 ${moved[node1]} B, node2 ${moved[node2]} B, idle node3 ${moved[node3]} B"

pids=$(cluster_pids)
"$JS/emulated/stop" 2>"$T/stop1.log" || fail "stop failed: $(cat "$T/stop1.log")"
assert_nothing_left "$pids"
"$JS/emulated/stop" 2>"$T/stop2.log" || fail "a second stop failed: $(cat "$T/stop2.log")"
grep -q 'not running' "$T/stop2.log" || fail "second stop: $(cat "$T/stop2.log")"
note "stopped: no namespace, link or process left"
