#!/bin/bash
# The signals that end a job keep what was measured, named: SIGTERM and
# SIGUSR1 to rank 0 of a running rb_micro (Slurm's time limit, scancel,
# preemption) leave the rows finished as FILE.h5.interrupted (complete = 0,
# the signal in its first bytes), one stderr line naming the signal and the
# file, the process dead by the signal (exit 128 + N), no archive that
# looks complete and no temporary; with -o none the signal is named all
# the same.  (SIGKILL and the tools: fault_kill.sh.)  Local ranks only: no
# root needed.
. "$top_srcdir/tests/faults/fault_lib.sh"
# Every launch is this shell's job: whatever a failed case left is ended.
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
run="--reducer dense -m 4K:4K -i 20 -x 0 --repeat 100000 -P none --stall-timeout 0"

signal_case term TERM
signal_case usr1 USR1

# -o none: the signal is named, no archive.
# shellcheck disable=SC2086
"$MPIRUN" 2 "$micro" $run -o none >"$tmp/none.out" 2>"$tmp/none.err" &
job=$!
if wait_rows "$tmp/none.out" 1 40 && pid=$(rank_pid 0 $(descendants "$job")); then
    kill -TERM "$pid"
    wait "$job"
    rc=$?
    [ "$rc" -eq 143 ] || bad "-o none: exit $rc, not 143"
    grep -q "^rb_micro: rank 0: signal SIGTERM (scancel" "$tmp/none.err" || bad "-o none: no line naming SIGTERM: $(head -3 "$tmp/none.err")"
else
    bad "-o none: no row in 40 s, or no rank 0"
    kill "$job"
    wait "$job"
fi

exit $fail
