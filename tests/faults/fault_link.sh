#!/bin/bash
# A link that goes down mid-run ends the job in bounded time, named, and
# keeps what was measured.  On a 2-node emulated cluster, the job script
# (jobscripts/generic/micro.sbatch, outside Slurm, launching with
# jobscripts/emulated/mpirun) runs rb_micro with --stall-timeout 4; once
# rows are finished, node2's link goes down (ip link set eth0 down): every
# rank waits inside MPI.  Rank 0's progress watchdog ends it (exit 3) with
# one line naming where it is stuck and keeps the rows as
# NAME.h5.interrupted (complete = 0, the reason in its first bytes); mpirun,
# which waits for node2's daemon as long as TCP retries, is stopped by the
# script RB_FAULT_GRACE (3) s later; the job ends non-zero naming the kept
# file, with no archive that claims to be complete and no temporary.
# Root and network namespaces, else skipped.
. "$top_srcdir/tests/faults/emul_lib.sh"
emul_start
out=$tmp/out
mkdir -p "$out"
RB_LAUNCHER="$E/mpirun -np %n" RB_NTASKS=2 RB_FAULT_GRACE=3 \
    bash "$top_srcdir/jobscripts/generic/micro.sbatch" --out "$out" --reducers dense --sizes 4K:256K \
    --iterations 20 --warmup 1 -- --repeat 100000 --stall-timeout 4 -P none >"$tmp/job.log" 2>&1 &
job=$!
wait_rows "$tmp/job.log" 4 40 || { bad "no 4 rows in 40 s: $(tail -5 "$tmp/job.log")"; exit 1; }
"$E/node" node2 ip link set eth0 down || { bad "cannot take node2's link down"; exit 1; }
t0=$(now)
rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/job.log")
name=micro_dense_d0.01_m4K-256K_N1_n2.h5
wait_file "$out/$name.interrupted" 25 || bad "no $name.interrupted 25 s after the link went down: $(ls "$out")"
kept=$(secs "$(now)" "$t0")
for ((i = 0; i < 400; i++)); do
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
done
wait "$job"
rc=$?
took=$(secs "$(now)" "$t0")
note "link down after $rows row(s): rows kept after $kept s, job ended after $took s (exit $rc)"
[ "$took" -le 40 ] || bad "the job ended $took s after the link went down (stall 4 s, grace 3 s)"
[ "$rc" -ne 0 ] || bad "the job exited 0"
job_kept "$tmp/job.log" "$out" "$name" "$rows" \
    "^rb_micro: rank 0: no progress for [0-9]* s inside dense at [0-9]* B .*: a network or peer fault?" \
    "^reducerbench: interrupted: no progress for [0-9]+ s inside dense at [0-9]+ B"
exit $fail
