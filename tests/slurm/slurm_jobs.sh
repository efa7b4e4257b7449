#!/bin/bash
# The real job scripts on a real (local, single-node) Slurm: the p100 and
# knl microbenchmark scripts with 4 tasks, a failing job, scancel and the
# time-limit warning (USR1 to the batch shell) during a
# run (the rows finished kept as NAME.h5.interrupted), then stopping the
# cluster leaves no daemon.  (Job arrays and resume:
# tests/slurm/slurm_array.sh.)
. "$top_srcdir/tests/slurm/slurm_lib.sh"
slurm_start
sinfo -h -o %P | tr '\n' ' ' | grep -q 'debug\* p100 knl' || fail "partitions: $(sinfo -h -o %P | tr '\n' ' ')"

small=(--sizes 4K:16K --iterations 2 --warmup 1 -- -P none)
# No GPU here: the p100 script's default device (cuda) is overridden by
# the environment; its --gres=gpu:4 is still allocated from the fake devices.
p100=$(RB_DEVICE=host sbatch --parsable --chdir="$W" --ntasks-per-node=4 "$JS/p100/micro.sbatch" --reducers dense "${small[@]}") ||
    fail "sbatch p100/micro.sbatch"
knl=$(sbatch --parsable --chdir="$W" --ntasks-per-node=4 "$JS/knl/micro.sbatch" --reducers s2 "${small[@]}") ||
    fail "sbatch knl/micro.sbatch"
bad=$(sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/micro.sbatch" --reducers no_such_reducer "${small[@]}") ||
    fail "sbatch generic/micro.sbatch"
note "submitted p100 $p100, knl $knl, bad reducer $bad"
wait_jobs 200 "$p100" "$knl" "$bad"

for pair in "$p100:p100:dense" "$knl:knl:s2"; do
    IFS=: read -r id part red <<<"$pair"
    [ "$(exit_codes "$id")" = 0:0 ] || fail "$part job $id ended with $(exit_codes "$id")"
    [ -f "$W/results/rb-micro-$part-$id.out" ] || fail "no output file results/rb-micro-$part-$id.out"
    files=("$W/results/$id"/*.h5)
    [ "${#files[@]}" = 1 ] && [ -f "${files[0]}" ] || fail "$part: want one archive in results/$id, got: $(ls "$W/results/$id")"
    f=${files[0]}
    [ "$(basename "$f")" = "micro_${red}_d0.01_m4K-16K_N1_n4.h5" ] || fail "$part: archive named $(basename "$f")"
    [ "$(h5attr "$f" complete)" = 1 ] || fail "$f not complete"
    [ "$(h5attr "$f" slurm_job_id)" = "$id" ] || fail "$f: slurm_job_id $(h5attr "$f" slurm_job_id), want $id"
    [ "$(h5attr "$f" slurm_partition)" = "$part" ] || fail "$f: slurm_partition $(h5attr "$f" slurm_partition)"
    [ "$(h5attr "$f" slurm_cluster_name)" = rblocal ] || fail "$f: slurm_cluster_name $(h5attr "$f" slurm_cluster_name)"
    [ "$(h5attr "$f" ranks)" = 4 ] || fail "$f: ranks $(h5attr "$f" ranks), want 4"
    /usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["/micro/results"][...]
    assert len(r) == 3 and {x.decode().rstrip("\0") for x in r["reducer"]} == {sys.argv[2]}, r["reducer"]' "$f" "$red" ||
        fail "$f: want 3 rows of $red"
done
# The fake GPUs were really allocated to the p100 job (Slurm sets
# CUDA_VISIBLE_DEVICES, the archive records it).
h5attr "$W/results/$p100"/*.h5 environment | grep -q '^CUDA_VISIBLE_DEVICES=0,1,2,3$' ||
    fail "p100 job: no CUDA_VISIBLE_DEVICES=0,1,2,3 in the recorded environment"
note "p100 and knl jobs: exit 0, complete archives with job id and partition"

ec=$(exit_codes "$bad")
[ "$ec" = 2:0 ] || fail "job $bad with a bad reducer name ended $ec, want 2:0 (rb_micro usage error)"
grep -q "FAILED" "$W/results/rb-micro-generic-$bad.out" || fail "job $bad: no FAILED line in its output"
[ -z "$(ls "$W/results/$bad" | grep '\.h5')" ] || fail "bad reducer left archives: $(ls "$W/results/$bad")"
note "bad reducer: exit $ec, no archive"

# wait_first_row JOB LOG: until the job's rb_micro has finished a row (its
# 4096-byte line in LOG), failing when the job ends first or after 100 s.
wait_first_row() {
    local i
    for ((i = 0; i < 400; i++)); do
        grep -q '^ *4096 ' "$2" 2>/dev/null && break
        [ -n "$(squeue -h -j "$1")" ] || fail "job $1 ended before it finished a row"
        sleep 0.25
    done
    grep -q '^ *4096 ' "$2" || fail "job $1 never finished a row"
}

# scancel while rb_micro measures, once rows are finished: the job is
# cancelled, no archive looks complete, no temporary is left, and the rows
# finished are kept as NAME.h5.interrupted (complete = 0, the signal named
# in its first bytes and in the job's log).
long=$(sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/micro.sbatch" \
    --reducers dense --sizes 4K --iterations 20 --warmup 0 --timeout 120 -- -P none --repeat 100000) ||
    fail "sbatch long job"
log="$W/results/rb-micro-generic-$long.out"
wait_first_row "$long" "$log"
sleep 1
scancel "$long"
wait_jobs 60 "$long"
[ "$(job_state "$long")" = CANCELLED ] || fail "job $long: state $(job_state "$long") after scancel"
assert_no_partial "$W/results/$long"
[ -z "$(ls "$W/results/$long" | grep '\.h5$')" ] || fail "cancelled job left an archive: $(ls "$W/results/$long")"
kept=$(ls "$W/results/$long"/*.h5.interrupted 2>/dev/null)
[ -n "$kept" ] || fail "scancel kept no NAME.h5.interrupted: $(ls "$W/results/$long"); $(tail -5 "$log")"
[ "$(h5attr "$kept" complete)" = 0 ] || fail "$kept: complete is not 0"
head -c 512 "$kept" | tr -d '\0' | grep -q '^reducerbench: interrupted: signal SIGTERM' ||
    fail "$kept: no note naming SIGTERM in its first bytes"
grep -q "rb_micro: rank 0: signal SIGTERM.*finished are kept in .*$(basename "$kept")" "$log" ||
    fail "the job's log does not name the signal and the kept file: $(grep -v '^ *[0-9]' "$log" | tail -5)"
note "scancel: job cancelled, no archive and no temporary left, the rows kept as $(basename "$kept")"

# The scripts' #SBATCH --signal=B:USR1@90: USR1 to the batch shell only
# (what Slurm sends 90 s before the time limit; scancel --batch here) stops
# the running rb_micro, which keeps its rows, and ends the job.
warned=$(sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/micro.sbatch" \
    --reducers dense --sizes 4K --iterations 20 --warmup 0 --timeout 120 -- -P none --repeat 100000) ||
    fail "sbatch warned job"
log="$W/results/rb-micro-generic-$warned.out"
wait_first_row "$warned" "$log"
for f in "$JS"/*/*.sbatch; do
    grep -q "^#SBATCH --signal=B:USR1@90$" "$f" || fail "$f asks for no time-limit warning (--signal=B:USR1@90)"
done
scancel --batch --signal=USR1 "$warned"
wait_jobs 60 "$warned"
kept=$(ls "$W/results/$warned"/*.h5.interrupted 2>/dev/null)
[ -n "$kept" ] || fail "USR1 to the batch shell kept no NAME.h5.interrupted: $(ls "$W/results/$warned"); $(tail -5 "$log")"
grep -q "signal USR1: stopping" "$log" && grep -q "kept the partial archive as .*interrupted" "$log" ||
    fail "the job's log does not say it stopped and kept: $(grep -v '^ *[0-9]' "$log" | tail -5)"
assert_no_partial "$W/results/$warned"
note "USR1 to the batch shell (the time-limit warning): rows kept as $(basename "$kept")"

daemons=$(for f in "$RB_SLURM_DIR/slurmctld.pid" "$RB_SLURM_DIR/slurmd.pid" "$RB_SLURM_DIR/munge/munged.pid"; do cat "$f"; done)
# slurmctld's helper (slurmscriptd) does not name the directory: by parent.
daemons="$daemons $(grep -lsE "^PPid:[[:space:]]+$(cat "$RB_SLURM_DIR/slurmctld.pid")\$" /proc/[0-9]*/status | cut -d/ -f3)"
[ "$(wc -w <<<"$daemons")" -ge 4 ] || fail "expected slurmctld, slurmd, munged and slurmscriptd, found pids: $daemons"
"$JS/local/stop" || fail "jobscripts/local/stop failed"
for p in $daemons; do
    ! kill -0 "$p" 2>/dev/null || fail "daemon $p still running after stop: $(tr '\0' ' ' </proc/$p/cmdline)"
done
left=$(procs_under "$RB_SLURM_DIR")
[ -z "${left// /}" ] || fail "processes of this cluster left: $left"
note "cluster stopped, no daemon left"
exit 0
