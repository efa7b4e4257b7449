#!/bin/bash
# The signals that end a job keep what was measured, named: SIGTERM and
# SIGUSR1 to rank 0 of a running rb_micro (Slurm's time limit, scancel,
# preemption) leave the rows finished as FILE.h5.interrupted (complete = 0,
# the signal in its first bytes), one stderr line naming the signal and the
# file, the process dead by the signal (exit 128 + N), no archive that
# looks complete and no temporary; with -o none the signal is named all
# the same; rb_train stops every rank at the next step, keeping its curve
# (the signal to rank 0 or another).  (SIGKILL and the tools:
# fault_kill.sh.)  Local ranks only: no
# root needed.
. "$top_srcdir/tests/faults/fault_lib.sh"
# Every launch is this shell's job: whatever a failed case left is ended.
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
run="--reducer dense -m 4K:4K -i 20 -x 0 --repeat 100000 -P none --stall-timeout 0"

signal_case term TERM
signal_case usr1 USR1

# rb_train: every rank stops at the next step (the signal to any one
# rank), within 5 s, the curve and the steps so far kept in
# FILE.h5.interrupted, named in one line; the process dies by the signal.
train_signal_case() {   # NAME SIGNAL RANK
    local name=$1 sig=$2 rank=$3 out="$tmp/$1.h5" job rc pid evals t0 took why
    "$MPIRUN" 2 "$train" --model mlp --iterations 100000 --eval-every 20 --timeout 120 \
        -o "$out" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    job=$!
    for _ in $(seq 1 600); do
        [ "$(grep -c '^eval' "$tmp/$name.out")" -ge 2 ] && break
        sleep 0.1
    done
    pid=$(rank_pid "$rank" $(descendants "$job")) || { bad "$name: no rank $rank"; kill "$job"; wait "$job"; return; }
    evals=$(grep -c '^eval' "$tmp/$name.out")
    [ "$evals" -ge 2 ] || bad "$name: fewer than 2 evaluations in 60 s"
    t0=$(now)
    kill "-$sig" "$pid"
    wait "$job"
    rc=$?
    took=$(secs "$(now)" "$t0")
    [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || bad "$name: exit $rc, not 128 + SIG$sig"
    [ "$took" -le 5 ] || bad "$name: the run took $took s to end after SIG$sig, more than 5"
    [ "$(grep -c "rb_train: rank 0: signal SIG$sig (.*), at iteration [0-9]* after [0-9]* evaluation(s); the [0-9]* step(s) finished are kept in $out.interrupted" "$tmp/$name.err")" = 1 ] ||
        bad "$name: not one line naming SIG$sig and the kept file: $(grep -v '^--\|^ \|^$' "$tmp/$name.err" | head -5)"
    [ -e "$out" ] && bad "$name: $out exists: a run that did not finish under the final name"
    ls "$tmp" | grep -q "^$name.h5.tmp" && bad "$name: a temporary is left: $(ls "$tmp" | grep "^$name")"
    why=$($PY - "$out.interrupted" "$evals" "$sig" <<'PY'
import sys, h5py
path, least, sig = sys.argv[1], int(sys.argv[2]), sys.argv[3]
why = []
try:
    with h5py.File(path, "r") as f:
        if int(f.attrs["complete"]) != 0:
            why.append("complete = %s" % f.attrs["complete"])
        n = len(f["train/curves"])
        if n < least:
            why.append("%d evaluation(s), fewer than the %d printed before the signal" % (n, least))
        if len(f["train/phases"]) < f["train/curves"][-1]["iteration"]:
            why.append("fewer steps than the last evaluation's iteration")
except Exception as e:
    why.append("cannot be read: %s" % e)
note = open(path, "rb").read(512).rstrip(b"\0").decode("utf-8", "replace")
if not note.startswith("reducerbench: interrupted: signal SIG" + sig):
    why.append("its note %r" % note)
print("; ".join(why))
PY
)
    [ -z "$why" ] || bad "$name: $out.interrupted: $why"
    "$rbarchive" show "$out.interrupted" | grep -q "training: .* step(s) of mlp with dense; [0-9]* evaluation(s)" ||
        bad "$name: rb-archive show: $("$rbarchive" show "$out.interrupted" 2>&1 | head -8)"
    note "rb_train: SIG$sig to rank $rank after $evals evaluation(s): exit $rc in $took s, kept $(basename "$out").interrupted"
}
train_signal_case train-term TERM 1
train_signal_case train-usr1 USR1 0

# rb_train --record-gradients stopped by a signal: the curve is kept, the
# trace (an input to replay whole) is neither left as a temporary nor
# written as if whole.
"$MPIRUN" 2 "$train" --model embedlm --iterations 100000 --eval-every 50 --timeout 120 \
    --record-gradients "$tmp/rec-trace.h5" -o "$tmp/rec.h5" >"$tmp/rec.out" 2>"$tmp/rec.err" &
job=$!
for _ in $(seq 1 900); do
    grep -q '^eval' "$tmp/rec.out" && break
    sleep 0.1
done
if pid=$(rank_pid 0 $(descendants "$job")); then
    kill -TERM "$pid"
    wait "$job"
    [ -e "$tmp/rec.h5.interrupted" ] || bad "--record-gradients: no rec.h5.interrupted: $(ls "$tmp" | grep rec)"
    ls "$tmp" | grep -q "^rec-trace.h5" && bad "--record-gradients: the trace was left: $(ls "$tmp" | grep rec-trace)"
    grep -q "not written: a stop signal ended the training" "$tmp/rec.out" ||
        bad "--record-gradients: no line saying the trace was not written: $(grep trace "$tmp/rec.out")"
    note "rb_train --record-gradients: SIGTERM kept the curve and left no trace"
else
    bad "--record-gradients: no rank 0"
    kill "$job"
    wait "$job"
fi

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

# SIGTERM while -J turns the finished archive into JSON lines: the export
# ends first (the signal waits), so the lines are whole or absent, never a
# FILE.jsonl.tmp left; the signal is named and the archive stays complete.
# shellcheck disable=SC2086
"$MPIRUN" 2 stdbuf -oL "$micro" --reducer dense -m 4K:4K -i 2 -x 0 --repeat 4000 -P none \
    --stall-timeout 0 -q -o "$tmp/j.h5" -J "$tmp/j.jsonl" >"$tmp/j.out" 2>"$tmp/j.err" &
job=$!
if wait_rows "$tmp/j.out" 1 60 && pid=$(rank_pid 0 $(descendants "$job")); then
    for ((i = 0; i < 600; i++)); do
        grep -q "^# archive written" "$tmp/j.out" && break
        sleep 0.1
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$job"
    rc=$?
    left=$(ls "$tmp" | grep 'j\.jsonl\.tmp')
    [ -z "$left" ] || bad "-J: a temporary left after SIGTERM: $left"
    [ "$($PY -c 'import h5py, sys; print(int(h5py.File(sys.argv[1], "r").attrs["complete"]))' "$tmp/j.h5" 2>/dev/null)" = 1 ] ||
        bad "-J: the archive is not complete"
    if [ -e "$tmp/j.jsonl" ]; then
        $PY - "$tmp/j.jsonl" <<'PYJ' || bad "-J: the JSON lines are not whole"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines and all(json.loads(l) for l in lines), len(lines)
PYJ
    fi
    [ "$rc" -eq 0 ] || grep -q "signal SIGTERM" "$tmp/j.err" || bad "-J: exit $rc without naming the signal: $(head -3 "$tmp/j.err")"
    note "-J export under SIGTERM: exit $rc, $( [ -e "$tmp/j.jsonl" ] && wc -l <"$tmp/j.jsonl" || echo no) JSON lines, no temporary"
else
    bad "-J: no row in 60 s, or no rank 0"
    kill "$job"
    wait "$job"
fi

exit $fail
