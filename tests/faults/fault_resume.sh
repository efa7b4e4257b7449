#!/bin/bash
# rb_train --checkpoint / --resume: a run stopped twice by SIGTERM to one
# rank (as Slurm's time limit or scancel stop it) and resumed twice ends bit for bit
# as the run that never stopped: the final line (training loss, validation
# perplexity, parameter sum and sum of squares) and every row of the curve
# but its wall times, for dense at 3 ranks, s2 with error feedback at 2
# and gossip at 3 (where the partner schedule follows the step).  Each
# stop writes a checkpoint and says how to go on; the complete run removes
# it and its archive says where it resumed.  Refused, exit 2, naming why:
# --resume without --checkpoint, another run's checkpoint (its --lr named),
# one byte flipped in a checkpoint's parameters (its fletcher32 checksum),
# a file that is not a checkpoint, --checkpoint with gossip_async=on.
set -u
. "$top_srcdir/tests/faults/fault_lib.sh"
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
dict=/usr/share/dictd/gcide.dict.dz
[ -r "$dict" ] || { echo "SKIP: $dict missing (Debian package dict-gcide)" >&2; exit 77; }
final() { grep '^final:' "$1" | sed 's/ wall_s [^ ]*//'; }
short=(--model embedlm --iterations 300 --eval-every 100 --test-limit 4000)

# until_line FILE PATTERN PID: wait (at most 120 s) for PATTERN in FILE
# while PID runs; 0 when it appeared.
until_line() {
    local i
    for ((i = 0; i < 2400; i++)); do
        grep -q "$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# A chunk of the resumable run: with STOP 1, stopped by SIGTERM to its last
# rank at the first progress line it prints (every 10 steps), with STOP 2
# at the first one after step 110 (past the first evaluation, so that the
# checkpoint holds a curve); 0 runs to the end.  Wherever a stop lands the
# resumed run must be the same.
chunk() {   # NAME NP STOP OUT ARGS...
    local name=$1 np=$2 stop=$3 out=$4
    shift 4
    "$MPIRUN" "$np" stdbuf -oL "$train" "${short[@]}" --log-every 10 "$@" \
        --checkpoint "$tmp/$name.ckpt.h5" --resume >"$out" 2>&1 &
    local job=$!
    if [ "$stop" != 0 ]; then
        local pid at='^epoch .* iter '
        [ "$stop" = 2 ] && at='^epoch .* iter \(1[1-9][0-9]\|2[0-9][0-9]\) '
        # To the last rank, as slurmstepd signals each task: the ranks
        # agree on it at the next step.
        if until_line "$out" "$at" $job &&
            pid=$(rank_pid $((np - 1)) $(descendants $job)); then
            kill -TERM "$pid"
        else
            bad "$name: no progress line: $(tail -3 "$out")"
        fi
    fi
    wait $job
}

resume_case() {   # NAME NP ARGS...
    local name=$1 np=$2 c
    shift 2
    "$MPIRUN" "$np" "$train" "${short[@]}" --log-every 10 "$@" -o "$tmp/$name-whole.h5" \
        >"$tmp/$name-whole.out" 2>&1 ||
        { bad "$name: the whole run failed: $(tail -3 "$tmp/$name-whole.out")"; return; }
    for c in 1 2 3; do
        chunk "$name" "$np" $((c < 3 ? c : 0)) "$tmp/$name-$c.out" -o "$tmp/$name-$c.h5" "$@"
        local rc=$?
        if [ "$c" -lt 3 ]; then
            local held
            held=$(sed -n 's/^checkpoint: .* holds \([0-9]*\) of 300 steps.*/\1/p' "$tmp/$name-$c.out")
            [ "$rc" -ne 0 ] || bad "$name chunk $c: exit 0 after SIGTERM"
            [ -n "$held" ] && [ "$held" -gt 0 ] && [ "$held" -lt 300 ] ||
                { bad "$name chunk $c: no checkpoint of a stopped run: $(tail -4 "$tmp/$name-$c.out")"; return; }
            [ -f "$tmp/$name.ckpt.h5" ] || bad "$name chunk $c: the checkpoint is not on disk"
            note "$name: chunk $c stopped at step $held"
        else
            [ "$rc" -eq 0 ] || { bad "$name: the last chunk exit $rc: $(tail -3 "$tmp/$name-3.out")"; return; }
        fi
    done
    grep -q "^resume: .*: [0-9]* of 300 steps done" "$tmp/$name-3.out" || bad "$name: the last chunk did not resume"
    [ ! -e "$tmp/$name.ckpt.h5" ] || bad "$name: the checkpoint was left after the complete run"
    [ "$(final "$tmp/$name-whole.out")" = "$(final "$tmp/$name-3.out")" ] ||
        bad "$name: resumed run differs: $(final "$tmp/$name-3.out") vs whole $(final "$tmp/$name-whole.out")"
    /usr/bin/python3 - "$tmp/$name-whole.h5" "$tmp/$name-3.h5" <<'PY' || bad "$name: the archives differ"
import sys, h5py, numpy as np
w, r = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
a, b = w["train/curves"][:], r["train/curves"][:]
assert len(a) == len(b) == 3, (len(a), len(b))
for k in a.dtype.names:
    if k != "wall_s":
        assert np.array_equal(a[k], b[k], equal_nan=True), (k, a[k], b[k])
pa, pb = w["train/phases"], r["train/phases"]
assert np.array_equal(pa["loss"], pb["loss"]) and len(pa) == 300, "phases"
assert int(w.attrs["resumed_at_iteration"]) == 0
assert 0 < int(r.attrs["resumed_at_iteration"]) < 300, r.attrs["resumed_at_iteration"]
PY
    note "$name: resumed twice, the same run bit for bit: $(final "$tmp/$name-3.out")"
}

resume_case dense 3 --reducer dense
resume_case s2-ef 2 --reducer s2 -O error_feedback=on -O sketch_width_mode=nnz -O sketch_width=4
resume_case gossip 3 --reducer gossip -O gossip_rotate=on

# --- refusals ---
refused() {   # WHAT TEXT ARGS...
    local what=$1 text=$2
    shift 2
    "$MPIRUN" 2 "$train" "${short[@]}" -o none "$@" >"$tmp/ref.out" 2>&1
    local rc=$?
    [ $rc -eq 2 ] && grep -q -- "$text" "$tmp/ref.out" ||
        bad "$what: exit $rc, want 2 and '$text': $(grep -v '^--\|^$' "$tmp/ref.out" | head -3)"
}
"$train" --resume -o none >"$tmp/ref.out" 2>&1
[ $? -eq 2 ] && grep -q "resume needs --checkpoint" "$tmp/ref.out" || bad "--resume alone: $(cat "$tmp/ref.out")"
refused "gossip_async" "gossip_async=on" --reducer gossip -O gossip_async=on --checkpoint "$tmp/a.h5"

# A checkpoint to refuse: one run stopped early.
chunk mine 2 1 "$tmp/mine.out" -o none --reducer dense
[ -f "$tmp/mine.ckpt.h5" ] || bad "no checkpoint to test the refusals with: $(tail -3 "$tmp/mine.out")"
refused "another run's checkpoint" "lr: 1 in the checkpoint, 0.5 here" --lr 0.5 \
    --checkpoint "$tmp/mine.ckpt.h5" --resume
cp "$tmp/mine.ckpt.h5" "$tmp/flip.h5"
/usr/bin/python3 - "$tmp/flip.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    off = f["rank_1/params"].id.get_chunk_info(0).byte_offset
with open(sys.argv[1], "r+b") as f:
    f.seek(off + 1000)
    b = f.read(1)
    f.seek(off + 1000)
    f.write(bytes([b[0] ^ 0x20]))
PY
refused "a flipped byte" "rank_1/params cannot be read" --checkpoint "$tmp/flip.h5" --resume
printf 'not hdf5\n' >"$tmp/text.h5"
refused "a text file" "text.h5: not a readable HDF5 file" --checkpoint "$tmp/text.h5" --resume
exit $fail
