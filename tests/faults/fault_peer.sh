#!/bin/bash
# A rank killed mid-job ends the job in bounded time, named, and keeps
# what was measured.  On a 2-node emulated cluster with its Slurm, sbatch
# -N 2 runs jobscripts/generic/micro.sbatch (srun, one rank per node);
# once rows are finished, rank 1's process on node2 is killed (SIGKILL).
# Rank 0 then meets the loss as a closed connection (SIGPIPE), srun ending
# the step (SIGTERM) or its progress watchdog (--stall-timeout 5, exit 3),
# whichever comes first; in every case it keeps the rows finished as
# NAME.h5.interrupted (complete = 0, the reason in its first bytes), the
# job ends within 40 s, FAILED, its log naming the kept file, with no
# archive that claims to be complete and no temporary, and rb-archive
# lists the file INTERRUPTED.  Root and network namespaces, else skipped.
. "$top_srcdir/tests/faults/emul_lib.sh"
emul_start
out=$tmp/out
mkdir -p "$out"
id=$(sbatch --parsable --no-requeue -N 2 --ntasks-per-node=1 -o "$tmp/job.log" --chdir "$top_srcdir" \
    "$top_srcdir/jobscripts/generic/micro.sbatch" --out "$out" --reducers dense --sizes 4K:256K \
    --iterations 20 --warmup 1 -- --repeat 100000 --stall-timeout 5 -P none) || { bad "sbatch failed"; exit 1; }
wait_rows "$tmp/job.log" 4 40 || { bad "job $id: no 4 rows in 40 s: $(tail -5 "$tmp/job.log")"; exit 1; }
name=micro_dense_d0.01_m4K-256K_N2_n2.h5
pid=$(rank_pid 1 $(node_pids node2)) || { bad "no rank 1 on node2"; exit 1; }
kill -KILL "$pid"
t0=$(now)
rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/job.log")
for ((i = 0; i < 600; i++)); do
    [ -z "$(squeue -h -j "$id" 2>/dev/null)" ] && break
    sleep 0.1
done
took=$(secs "$(now)" "$t0")
state=$(scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
note "rank 1 killed after $rows row(s): job $id $state after $took s"
[ "$took" -le 40 ] || bad "job $id still listed $took s after rank 1 was killed"
[ "$state" = FAILED ] || bad "job $id: state $state, not FAILED"
job_kept "$tmp/job.log" "$out" "$name" "$rows" \
    "^rb_micro: rank 0: .*; the [0-9]* row(s) finished are kept in .*$name.interrupted" \
    "^reducerbench: interrupted: (signal SIG(PIPE|TERM)|no progress)"
"$rbarchive" list "$out" >"$tmp/list.log" 2>&1
grep -q "INTERRUPTED .*$name.interrupted (interrupted: " "$tmp/list.log" || bad "rb-archive list: $(cat "$tmp/list.log")"
exit $fail
