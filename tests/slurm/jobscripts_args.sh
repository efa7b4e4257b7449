#!/bin/bash
# The job scripts outside Slurm (mpirun fallback): script arguments work
# without a trailing "--" (they once all died with "missing value after the
# last option"), --help answers, a missing value is refused, rb_train gets
# the device, data and thread settings, and a training run stopped by its
# time limit is kept as NAME.h5.failed, which a resume runs again.
set -u
: "${top_srcdir:?run under make check}" "${top_builddir:?run under make check}"
JS=$top_srcdir/jobscripts
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
export RB_BUILD=$top_builddir RB_LAUNCHER="$top_srcdir/tests/mpirun.sh %n" RB_NTASKS=2

bash "$JS/generic/micro.sbatch" --reducers dense,s2 --sizes 4K --iterations 2 --warmup 0 \
    --out "$tmp/m" >"$tmp/m.log" 2>&1 || bad "micro without '--': exit $?: $(tail -5 "$tmp/m.log")"
[ "$(ls "$tmp"/m/micro_*.h5 2>/dev/null | wc -l)" -eq 2 ] || bad "micro: want 2 archives: $(ls "$tmp/m")"

bash "$JS/p100/micro.sbatch" --help >"$tmp/h" 2>&1 || bad "--help exits $?"
grep -q -- "--reducers" "$tmp/h" && grep -q "RB_LAUNCHER" "$tmp/h" || bad "--help: $(head -5 "$tmp/h")"
bash "$JS/generic/micro.sbatch" --sizes >"$tmp/e" 2>&1 && bad "a missing value was accepted"
grep -q -- "--sizes needs a value" "$tmp/e" || bad "missing value: $(cat "$tmp/e")"
bash "$JS/generic/micro.sbatch" --frobnicate 1 >"$tmp/e" 2>&1 && bad "an unknown argument was accepted"
grep -q "unknown script argument '--frobnicate'" "$tmp/e" || bad "unknown argument: $(cat "$tmp/e")"
# --iters was renamed --iterations (rb_micro's spelling): refused, naming it.
bash "$JS/generic/micro.sbatch" --iters 2 >"$tmp/e" 2>&1 && bad "the old --iters was accepted"
grep -q -- "--iters is now --iterations" "$tmp/e" || bad "--iters: $(cat "$tmp/e")"
# What rb_micro is given: -i, -x and --timeout (its -T is OSU's data type).
RB_LAUNCHER=echo bash "$JS/generic/micro.sbatch" --reducers dense --sizes 4K --iterations 7 --warmup 1 \
    --timeout 5 --out "$tmp/echo-m" >"$tmp/em.log" 2>&1
grep -q -- "-i 7 -x 1 .*--timeout 5" "$tmp/em.log" || bad "micro arguments: $(grep run "$tmp/em.log")"

# The other entry points answer --help and refuse stray arguments
# (main.sh --help used to start apt and a build).
sh "$JS/main.sh" --help >"$tmp/h" 2>&1 && grep -q RB_RANKS "$tmp/h" || bad "main.sh --help: $(head -3 "$tmp/h")"
grep -q "=== \[1\]" "$tmp/h" && bad "main.sh --help started the job"
# ... and names every RB_ variable main.sh reads (RB_SMPI_BUILD_DIR was once left out).
for v in $(grep -oE '\$\{RB_[A-Z_]+' "$JS/main.sh" | sed 's/^..//' | sort -u); do
    grep -qw "$v" "$tmp/h" || bad "main.sh reads $v, which its --help does not name"
done
sh "$JS/main.sh" --frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || bad "main.sh with an argument: not exit 2"
sh "$JS/sim/rb-smpirun" --help >"$tmp/h" 2>&1 && grep -q PLATFORM "$tmp/h" || bad "rb-smpirun --help"
sh "$JS/sim/rb-smpirun" eth1g >/dev/null 2>&1; [ $? -eq 2 ] || bad "rb-smpirun with too few arguments: not exit 2"
# submit passes the result directory as an argument (RB_OUT is lost under --export=NONE)
bash "$JS/submit" generic micro --reducers dense --sizes 4K --out results/x --dry-run >"$tmp/s" 2>&1
grep -q "micro.sbatch --out results/x --reducers dense --sizes 4K" "$tmp/s" || bad "submit --dry-run: $(cat "$tmp/s")"

# What rb_train is given (an echoing launcher writes no archive: FAILED is expected)
RB_LAUNCHER=echo SLURM_CPUS_PER_TASK=3 bash "$JS/p100/train.sbatch" --reducers dense --data /nowhere \
    --out "$tmp/echo" >"$tmp/t.log" 2>&1
grep -q "run train_lenet_dense_cuda_N1_n.*-d cuda --data /nowhere .*--threads 3\|run train_lenet_dense_cuda_N1_n.*--threads 3 -d cuda --data /nowhere" "$tmp/t.log" ||
    bad "p100 train arguments: $(grep run "$tmp/t.log")"

# A training run stopped by --timeout: kept aside, not taken as done
fm=/usr/share/datasets/fashion-mnist
if [ -r "$fm/train-images-idx3-ubyte.gz" ]; then
    for attempt in 1 2; do
        bash "$JS/generic/train.sbatch" --reducers dense --model mlp --timeout 2 --out "$tmp/t" -- \
            --epochs 1000 --train-limit 2000 --test-limit 128 >"$tmp/t$attempt.log" 2>&1
        rc=$?
        [ $rc -eq 124 ] || bad "timed-out training, attempt $attempt: exit $rc, want 124: $(tail -3 "$tmp/t$attempt.log")"
        grep -q "skip" "$tmp/t$attempt.log" && bad "attempt $attempt skipped the timed-out run"
        [ -e "$tmp/t/train_mlp_dense_N1_n2.h5" ] && bad "attempt $attempt left a .h5 that reads as done"
        [ -e "$tmp/t/train_mlp_dense_N1_n2.h5.failed" ] || bad "attempt $attempt: no .h5.failed kept"
    done
else
    echo "note: no Fashion-MNIST at $fm: the timed-out training case is not run"
fi
exit $fail
