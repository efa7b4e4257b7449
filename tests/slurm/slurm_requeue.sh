#!/bin/bash
# A training job near its time limit on a real (local, single-node) Slurm:
# the generic train script, 2 tasks under srun; the time-limit warning
# (#SBATCH --signal=B:USR1@90, sent here with scancel --batch) stops
# rb_train, which writes its checkpoint, and the script requeues the job
# (#SBATCH --requeue).  Slurm runs it again under the same job id; it
# resumes from the checkpoint and ends complete: one archive, its curve
# whole, resumed_at_iteration > 0, no checkpoint or partial archive left,
# the final line bit for bit that of the same training never stopped
# (mpirun, outside Slurm), and the job's log (--open-mode=append) telling
# both halves.  With RB_REQUEUE=0 the same warning ends the job instead.
. "$top_srcdir/tests/slurm/slurm_lib.sh"
dict=/usr/share/dictd/gcide.dict.dz
[ -r "$dict" ] || { echo "SKIP: $dict missing (Debian package dict-gcide)" >&2; exit 77; }
slurm_start
train_args=(--iterations 900 --eval-every 300 --test-limit 4000 --log-every 20)
final() { grep '^final:' "$1" | sed 's/ wall_s [^ ]*//'; }

# wait_line FILE PATTERN SECONDS
wait_line() {
    local i
    for ((i = 0; i < $3 * 4; i++)); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.25
    done
    return 1
}

# The reference: the same training, never stopped.
"$MPIRUN" 2 "$top_builddir/benchmarks/rb_train" --model embedlm --reducer dense "${train_args[@]}" \
    -o "$T/whole.h5" >"$T/whole.out" 2>&1 || fail "the reference run failed: $(tail -3 "$T/whole.out")"

job=$(sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/train.sbatch" --reducers dense \
    --model embedlm -- "${train_args[@]}") || fail "sbatch generic/train.sbatch"
log="$W/results/rb-train-generic-$job.out"
wait_line "$log" "^epoch .* iter [1-9][0-9][0-9] " 120 || fail "no progress in $log: $(tail -5 "$log")"
scancel --batch --signal=USR1 "$job"
wait_line "$log" "requeued job $job" 60 || fail "not requeued: $(grep -v '^epoch' "$log" | tail -8)"
note "job $job warned (USR1) and requeued"
wait_line "$log" "^resume: .*: [0-9]* of 900 steps done" 120 ||
    fail "the requeued job did not resume: $(grep -v '^epoch' "$log" | tail -8)"
wait_jobs 180 "$job"
[ "$(exit_codes "$job")" = 0:0 ] || fail "job $job ended $(exit_codes "$job"): $(grep -v '^epoch' "$log" | tail -8)"
restarts=$(scontrol show job "$job" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
[ "${restarts:-0}" -ge 1 ] || fail "Slurm counts no restart of job $job"
name=train_embedlm_dense_N1_n2
out="$W/results/$job/$name.h5"
[ -f "$out" ] && [ "$(h5attr "$out" complete)" = 1 ] || fail "no complete $out: $(ls "$W/results/$job")"
at=$(h5attr "$out" resumed_at_iteration)
[ "$at" -gt 0 ] && [ "$at" -lt 900 ] || fail "resumed_at_iteration $at"
left=$(ls -a "$W/results/$job" | grep -v "^\.\.\?$\|^\.$name\.lock$\|^$name\.h5$\|^sweep\.txt$")
[ -z "$left" ] || fail "left beside the archive: $left"
resumed=$(final "$log" | tail -1)
[ "$resumed" = "$(final "$T/whole.out")" ] ||
    fail "the requeued training differs: $resumed vs never stopped $(final "$T/whole.out")"
/usr/bin/python3 - "$out" "$T/whole.h5" <<'PY' || fail "the archive's curve differs from the whole run's"
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r")["train/curves"][:] for f in sys.argv[1:])
assert len(a) == len(b) == 3
for k in ("iteration", "train_loss", "val_perplexity", "test_loss"):
    assert np.array_equal(a[k], b[k]), k
PY
note "resumed at step $at under the same job id; the archive and final line equal the run never stopped"

# RB_REQUEUE=0: the warning ends the job, the checkpoint kept for a resubmission.
job2=$(RB_REQUEUE=0 sbatch --parsable --chdir="$W" --ntasks-per-node=2 "$JS/generic/train.sbatch" \
    --reducers dense --model embedlm -- "${train_args[@]}") || fail "sbatch RB_REQUEUE=0"
log2="$W/results/rb-train-generic-$job2.out"
wait_line "$log2" "^epoch .* iter [1-9][0-9][0-9] " 120 || fail "no progress in $log2"
scancel --batch --signal=USR1 "$job2"
wait_jobs 60 "$job2"
! grep -q "requeued" "$log2" || fail "RB_REQUEUE=0 requeued: $(grep requeue "$log2")"
[ -f "$W/results/$job2/$name.h5.ckpt" ] || fail "RB_REQUEUE=0: no checkpoint kept: $(ls "$W/results/$job2")"
note "RB_REQUEUE=0: the job ended, its checkpoint kept"
exit 0
