#!/bin/sh
# The environment and paths: SLURM_JOB_ID with '/', bad SLURM_MEM_PER_NODE,
# -M 0, -P BOGUS; a bad Slurm memory setting on one rank only (MPMD), 2 and
# 3 ranks; ranks reading different --input traces, or one missing it. The
# helpers and what a case must end in: tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
hostile_img28
# ------------------------------------------------------------------ environment
mkdir -p "$tmp/cwd/a/b"
(cd "$tmp/cwd/a/b" && SLURM_JOB_ID=../../etc "$MPIRUN" 2 -x SLURM_JOB_ID "$micro" $small >"$tmp/o" 2>&1)
rc=$?
why=""
[ $rc -eq 0 ] || why="exit $rc: $(head -c 400 "$tmp/o")"
[ -e "$tmp/cwd/etc.h5" ] || [ -e "$tmp/cwd/a/etc.h5" ] && why="$why; written outside results/"
ls "$tmp"/cwd/a/b/results/*etc*.h5 >/dev/null 2>&1 || why="$why; nothing under results/: $(ls -R "$tmp/cwd")"
verdict "SLURM_JOB_ID=../../etc stays under results/"
for v in abc -5 1e30; do
    SLURM_MEM_PER_NODE=$v "$MPIRUN" 2 -x SLURM_MEM_PER_NODE "$micro" $small -o none >"$tmp/o" 2>&1
    expect "SLURM_MEM_PER_NODE=$v" "$tmp/o" $? 2 "SLURM_MEM_PER_NODE='$v' is not a memory size"
done
# One rank's environment differs (each node's Slurm; here an MPMD launch):
# that rank names it, every rank exits 2 -- none waits in a collective
# for a rank that already left (they hung until killed).
mpmd() { $T mpirun --bind-to none --mca btl self,vader "$@"; }
sketch="$top_builddir/benchmarks/rb_sketch"
tiny="--rows 100 --cols 10 -i 1 --no-error"
mpmd -np 1 "$micro" $small -o none : -np 1 -x SLURM_MEM_PER_NODE=abc "$micro" $small -o none >"$tmp/o" 2>&1
expect "rb_micro: SLURM_MEM_PER_NODE=abc on rank 1 of 2 only" "$tmp/o" $? 2 \
    "rb_micro: rank 1: memory limit: SLURM_MEM_PER_NODE='abc' is not a memory size"
mpmd -np 2 "$micro" $small -o none : -np 1 -x SLURM_MEM_PER_CPU=-5 "$micro" $small -o none >"$tmp/o" 2>&1
expect "rb_micro: SLURM_MEM_PER_CPU=-5 on rank 2 of 3 only" "$tmp/o" $? 2 \
    "rb_micro: rank 2: memory limit: SLURM_MEM_PER_CPU='-5' is not a memory size"
mpmd -np 1 -x SLURM_MEM_PER_CPU=100 -x SLURM_CPUS_PER_TASK=2x "$micro" $small -o none : \
    -np 1 -x SLURM_MEM_PER_CPU=100 "$micro" $small -o none >"$tmp/o" 2>&1
expect "rb_micro: SLURM_CPUS_PER_TASK=2x on rank 0 (was read as 2)" "$tmp/o" $? 2 \
    "rb_micro: rank 0: memory limit: SLURM_CPUS_PER_TASK='2x' is not a number of CPUs"
# --input trace:t.h5 read relative to each rank's directory: ranks reading
# different traces replayed different gradients (reported as the reducer's
# validation failure); a trace missing on one rank hung the others.
mkdir "$tmp/ta" "$tmp/tb" "$tmp/tc"
$PY "$top_srcdir/tests/workload/gradgen_trace.py" "$tmp/ta/t.h5" 100 4 0.1 3 7
$PY "$top_srcdir/tests/workload/gradgen_trace.py" "$tmp/tb/t.h5" 100 4 0.1 3 8
rt="-q -i 1 -x 0 -P none -o none --reducer dense --input trace:t.h5"
mpmd -np 1 -wdir "$tmp/ta" "$micro" $rt : -np 1 -wdir "$tmp/tb" "$micro" $rt >"$tmp/o" 2>&1
expect "--input trace: ranks reading different traces (2 ranks)" "$tmp/o" $? 2 \
    "rb_micro: rank 1: --input trace: t.h5: this rank read a file with SHA-256 .*every rank must replay the same trace"
mpmd -np 2 -wdir "$tmp/ta" "$micro" $rt : -np 1 -wdir "$tmp/tc" "$micro" $rt >"$tmp/o" 2>&1
expect "--input trace: the trace missing on rank 2 of 3" "$tmp/o" $? 2 \
    "rb_micro: rank 2: --input trace: t.h5: no such regular file"

# rb_sketch runs on one process: on 2 or 3 (each its own benchmark, the
# tables interleaved; with other options only rank 0's shown) refused.
mpmd -np 1 "$sketch" $tiny : -np 1 -x SLURM_MEM_PER_NODE=abc "$sketch" $tiny --rows 200 >"$tmp/o" 2>&1
expect "rb_sketch on 2 ranks, options and environment differing" "$tmp/o" $? 2 \
    "rb_sketch: rank 0: runs on one process .*started on 2"
$T "$MPIRUN" 3 "$sketch" $tiny >"$tmp/o" 2>&1
expect "rb_sketch on 3 ranks" "$tmp/o" $? 2 "rb_sketch: rank 0: runs on one process .*started on 3"
if [ -x "$train" ]; then
    tt="--model mlp --data $tmp/img28 --train-limit 256 --test-limit 64 --batch 16 --iterations 2 -o none"
    mpmd -np 1 "$train" $tt : -np 1 -x SLURM_MEM_PER_NODE=abc "$train" $tt >"$tmp/o" 2>&1
    expect "rb_train: SLURM_MEM_PER_NODE=abc on rank 1 of 2 only" "$tmp/o" $? 2 \
        "rb_train: rank 1: memory limit: SLURM_MEM_PER_NODE='abc'"
fi

# ------------------------------------------------------------------ paths
n250=$(printf 'n%.0s' $(seq 1 246)).h5
"$MPIRUN" 2 "$micro" $small -o "$tmp/$n250" >"$tmp/o" 2>&1
rc=$?
why=""
[ $rc -eq 0 ] || why="exit $rc: $(head -c 400 "$tmp/o")"
[ -f "$tmp/$n250" ] || why="$why; no file"
verdict "a 250-character file name"
deep="$tmp"
while [ ${#deep} -lt 1500 ]; do deep="$deep/dddddddddddddddddddddddddddddddddddddddddddddddd"; done
"$MPIRUN" 1 "$micro" $small -o "$deep/x.h5" >"$tmp/o" 2>&1
expect "a long directory that does not exist" "$tmp/o" $? 2 "cannot write .*x.h5: directory .* does not exist$"
exit $fail
