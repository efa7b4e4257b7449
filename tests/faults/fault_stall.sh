#!/bin/bash
# The progress watchdog: a rank stuck inside a call ends in bounded time,
# named, without --timeout.  A peer that stops answering (rank 1 stopped
# with SIGSTOP: from rank 0's side, what a link down or a hung node looks
# like) leaves rank 0 inside the reducer's collective; with --stall-timeout
# 3 it exits 3 a few seconds later with one line naming where it is stuck
# ("no progress for N s inside dense at 4096 B ...: a network or peer
# fault?") and keeps the rows finished as FILE.h5.interrupted, the reason
# in its first bytes; rb_train's does the same inside its training loop.
# A legitimately slow call (--compute 0.5 with --stall-timeout 1: each
# call takes 0.5 s, the cost model says so) does not fire it.  Local ranks
# only: no root needed.
. "$top_srcdir/tests/faults/fault_lib.sh"
trap 'kill -CONT $(jobs -p) 2>/dev/null; kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT

# stall_case NAME PATTERN PROGRAM ARGS...: rank 1 stopped once 2 lines of
# progress (table rows, training progress lines) are out; rank 0 must end
# with exit 3 within 20 s, its one line matching PATTERN.  Sets $took, $rows.
stall_case() {
    local name=$1 pattern=$2 out="$tmp/$1.h5" job rc pid t0 progress
    shift 2
    "$MPIRUN" 2 "$@" --stall-timeout 3 -o "$out" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    job=$!
    progress='^ +[0-9]+ |^epoch '
    for ((i = 0; i < 400; i++)); do
        [ "$(grep -c -E "$progress" "$tmp/$name.out")" -ge 2 ] && break
        sleep 0.1
    done
    pid=$(rank_pid 1 $(descendants "$job")) || { bad "$name: no rank 1 (no progress in 40 s?)"; return; }
    kill -STOP "$pid"
    t0=$(now)
    rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/$name.out")
    for ((i = 0; i < 200; i++)); do
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    took=$(secs "$(now)" "$t0")
    kill -CONT "$pid" 2>/dev/null
    wait "$job"
    rc=$?
    [ "$rc" -eq 3 ] || bad "$name: exit $rc, not 3 (no progress), $took s after rank 1 stopped"
    [ "$took" -le 20 ] || bad "$name: ended $took s after rank 1 stopped (--stall-timeout 3)"
    [ "$(grep -c "^rb_micro: rank 0: no progress\|^rb_train: rank 0: no progress" "$tmp/$name.err")" = 1 ] ||
        bad "$name: not one line naming the stall: $(grep -v '^--\|^ \|^$' "$tmp/$name.err" | head -5)"
    grep -qE "$pattern" "$tmp/$name.err" || bad "$name: no line matching '$pattern': $(head -c 600 "$tmp/$name.err")"
    note "$name: rank 1 stopped after $rows row(s); rank 0 exited $rc $took s later"
}

stall_case micro 'rb_micro: rank 0: no progress for [0-9]+ s inside dense at 4096 B \((set-up|warm-up calls|timed calls|statistics, validation, archive)\): a network or peer fault\? .*; the [0-9]+ row\(s\) finished are kept in .*micro\.h5\.interrupted .*; exiting 3$' \
    "$micro" --reducer dense -m 4K:4K -i 20 -x 0 --repeat 100000 -P none
why=$(kept_ok "$tmp/micro.h5.interrupted" "$rows" "^reducerbench: interrupted: no progress for [0-9]+ s inside dense at 4096 B")
[ -z "$why" ] || bad "micro: $tmp/micro.h5.interrupted: $why"
[ -z "$(no_complete "$tmp")" ] || bad "micro: a file claims to be complete: $(no_complete "$tmp")"

if [ -x "$train" ] && [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    stall_case train 'rb_train: rank 0: no progress for [0-9]+ s inside the training loop \(model mlp, reducer dense\): a network or peer fault\?.*; exiting 3$' \
        "$train" --model mlp --reducer dense --train-limit 2048 --test-limit 64 --batch 16 --epochs 100000 --log-every 4 --eval-every 100000
    ls "$tmp" | grep -q '^train\.h5' && bad "train: rb_train keeps no archive of a stalled run: $(ls "$tmp" | grep '^train')"
else
    echo "note: no rb_train or no Fashion-MNIST (Debian: dataset-fashion-mnist): its case is not run"
fi

# A slow call is no stall: 0.5 s of modelled compute inside each call.
start=$(now)
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 3 -x 1 --compute 0.5 --stall-timeout 1 -P none -o none \
    >"$tmp/slow.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || bad "calls of 0.5 s with --stall-timeout 1: exit $rc: $(grep -v '^#' "$tmp/slow.out" | head -5)"
note "calls of 0.5 s with --stall-timeout 1: exit $rc in $(secs "$(now)" "$start") s"
exit $fail
