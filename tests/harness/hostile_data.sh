#!/bin/sh
# Train data: test images of another size, FIFOs, an empty split,
# divergence, --timeout; ranks reading different data of one shape (images,
# a corpus); rb_train -o naming its --record-gradients, --write-corpus over
# a corpus or onto its own --data. The helpers and what a case must end in:
# tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
if [ -x "$train" ]; then
    # fifo_case CASE FIFO PATTERN ARGS...: a reader blocked opening the FIFO
    # is released after 20 s by a writer that opens and closes it (so a
    # hang ends, leaving no process behind); refusing takes no time.
    fifo_case() {
        name=$1 fifo=$2 pattern=$3
        shift 3
        $PY -c 'import os, sys, time
time.sleep(20)
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))
except OSError:
    pass' "$fifo" &
        helper=$!
        start=$(date +%s)
        $T "$MPIRUN" 2 "$train" "$@" -o none >"$tmp/o" 2>&1
        rc=$?
        took=$(($(date +%s) - start))
        kill $helper 2>/dev/null; wait $helper 2>/dev/null
        why=$(named "$tmp/o" $rc 2 "$pattern") || true
        [ $took -lt 15 ] || why="hung $took s, until a writer opened the FIFO; $why"
        verdict "$name"
    }
    tr="--train-limit 256 --test-limit 64 --batch 16 --iterations 4 --lr-warmup 0"
    for hw in 64 14; do
        d="$tmp/img$hw"
        mkidx "$d" train 256 28 28
        mkidx "$d" t10k 64 "$hw" "$hw"
        $T "$MPIRUN" 2 "$train" --model lenet --data "$d" $tr -o none >"$tmp/o" 2>&1
        expect "lenet: test images ${hw}x$hw, training 28x28" "$tmp/o" $? 2 "test images are 1x${hw}x$hw"
    done
    d="$tmp/fifo-idx"
    mkidx "$d" train 256 28 28
    mkidx "$d" t10k 64 28 28
    rm "$d/train-images-idx3-ubyte" && mkfifo "$d/train-images-idx3-ubyte"
    fifo_case "a FIFO as train-images-idx3-ubyte" "$d/train-images-idx3-ubyte" \
        "train-images-idx3-ubyte: not a regular file" --model lenet --data "$d" $tr
    # Word corpora: a FIFO as train.tokens; an empty valid.tokens.
    d="$tmp/fifo-tok"; mkdir "$d"
    words 200 >"$d/valid.tokens"; words 200 >"$d/test.tokens"; mkfifo "$d/train.tokens"
    fifo_case "a FIFO as train.tokens" "$d/train.tokens" "train.tokens: not a regular file" $lm --data "$d"
    d="$tmp/empty-valid"; mkdir "$d"
    words 400 >"$d/train.tokens"; : >"$d/valid.tokens"; words 100 >"$d/test.tokens"
    $T "$MPIRUN" 2 "$train" $lm --data "$d" -o none >"$tmp/o" 2>&1
    expect "wordlm: an empty valid.tokens" "$tmp/o" $? 2 "validation (valid.tokens) split holds no words"
    # Ranks reading different data of one shape (--data relative to each
    # rank's directory: node-local copies that differ) trained on different
    # data without a word; now each rank hashes what it read, a rank that
    # differs from rank 0 names the first difference, every rank exits 2.
    # Copies of the same data run.
    twodirs() {   # twodirs DIR-A DIR-B ARGS...: rank 0 in DIR-A, rank 1 in DIR-B
        a=$1 b=$2; shift 2
        $T mpirun --bind-to none --mca btl self,vader -np 1 -wdir "$a" "$train" "$@" -o none : \
            -np 1 -wdir "$b" "$train" "$@" -o none >"$tmp/o" 2>&1
    }
    for x in a b c; do mkdir -p "$tmp/d$x"; done
    mkidx "$tmp/da/img" train 256 28 28; mkidx "$tmp/da/img" t10k 64 28 28
    cp -r "$tmp/da/img" "$tmp/db/"; cp -r "$tmp/da/img" "$tmp/dc/"
    # one pixel of one training image differs
    $PY -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 1]))' \
        "$tmp/db/img/train-images-idx3-ubyte"
    twodirs "$tmp/da" "$tmp/db" --model mlp --data img $tr
    expect "rb_train: ranks reading different images of one shape" "$tmp/o" $? 2 \
        "rb_train: rank 1: data: --data img: img/train-images-idx3-ubyte has SHA-256 .* on this rank, .* on rank 0: every rank must train on the same data"
    twodirs "$tmp/da" "$tmp/dc" --model mlp --data img $tr
    rc=$?
    why=""; [ $rc -eq 0 ] || why="exit $rc: $(grep rb_train: "$tmp/o" | head -3)"
    verdict "rb_train: ranks reading copies of the same images"
    # The same words in another order: one vocabulary, other training text.
    mkdir "$tmp/da/w" "$tmp/db/w"
    words 400 >"$tmp/da/w/train.tokens"; words 100 >"$tmp/da/w/valid.tokens"; words 100 >"$tmp/da/w/test.tokens"
    cp "$tmp/da/w/valid.tokens" "$tmp/da/w/test.tokens" "$tmp/db/w/"
    tac "$tmp/da/w/train.tokens" >"$tmp/db/w/train.tokens"
    twodirs "$tmp/da" "$tmp/db" $lm --data w
    expect "rb_train: ranks reading one vocabulary in other training text" "$tmp/o" $? 2 \
        "rb_train: rank 1: data: --data w: the corpus's training split has SHA-256 .*every rank must train on the same data"
    # Rank 2 of 3 alone differs: it names it, once.
    $T mpirun --bind-to none --mca btl self,vader -np 2 -wdir "$tmp/da" "$train" $lm --data w -o none : \
        -np 1 -wdir "$tmp/db" "$train" $lm --data w -o none >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "rb_train: rank 2: data: --data w: the corpus's training split") || true
    [ "$(grep -c "^rb_train: rank" "$tmp/o")" -eq 1 ] || why="$why; not named once: $(grep "^rb_train: rank" "$tmp/o")"
    verdict "rb_train: rank 2 of 3 reading other training text"

    # Divergence: stopped, exit 1, named, archive marked; both tools say so.
    d="$tmp/img28"; mkidx "$d" train 256 28 28; mkidx "$d" t10k 64 28 28
    $T "$MPIRUN" 2 "$train" --model mlp --data "$tmp/img28" --train-limit 256 --test-limit 64 --batch 16 \
        --epochs 3 --lr 1e6 --lr-warmup 0 -o "$tmp/div.h5" >"$tmp/o" 2>&1
    why=$(named "$tmp/o" $? 1 "rb_train: rank 0: training: diverged: the .* loss is not finite") &&
        $PY -c 'import sys,h5py; sys.exit(0 if h5py.File(sys.argv[1]).attrs.get("diverged") == 1 else 1)' "$tmp/div.h5" ||
        why="$why; archive not marked diverged=1"
    "$rbarchive" list "$tmp/div.h5" | grep -q "DIVERGED" || why="$why; rb-archive list does not say DIVERGED"
    "$rbarchive" merge -o "$tmp/divm.h5" "$tmp/div.h5" >/dev/null 2>&1 && why="$why; rb-archive merged it"
    verdict "rb_train --lr 1e6: divergence (rb_train, rb-archive)"
    refused "rb-report: the diverged run" "div.h5: diverged"
    # An archive written before runs stopped on divergence: no mark, a final
    # training loss of NaN, a test accuracy that means nothing.
    cp "$tmp/div.h5" "$tmp/olddiv.h5"
    $PY - "$tmp/olddiv.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "a")
f.attrs["run_id"] = "old-diverged"
del f.attrs["diverged"]
f["train"].attrs["final_train_loss"] = float("nan")
f["train"].attrs["final_test_accuracy"] = 10.0
PY
    why=""
    "$rbarchive" list "$tmp/olddiv.h5" | grep -q "DIVERGED" || why="rb-archive list does not say DIVERGED"
    "$rbarchive" merge -o "$tmp/olddivm.h5" "$tmp/olddiv.h5" >/dev/null 2>&1 && why="$why; rb-archive merged it"
    verdict "an unmarked archive with a NaN final loss (rb-archive)"
    refused "rb-report: an unmarked archive with a NaN final loss" "olddiv.h5: diverged: the final training loss is nan"

    # --timeout: named line, exit 124, archive keeps the curve marked timed_out;
    # rb-archive and rb-report both treat it as timed out.
    $T "$MPIRUN" 2 "$train" --model mlp --data "$tmp/img28" --train-limit 256 --test-limit 64 --batch 16 \
        --epochs 100000 --lr 0.01 --timeout 1 -o "$tmp/tt.h5" >"$tmp/o" 2>&1
    why=$(named "$tmp/o" $? 124 "rb_train: rank 0: time limit: --timeout 1 s reached") || true
    "$rbarchive" list "$tmp/tt.h5" | grep -q "TIMED-OUT" || why="$why; rb-archive list does not say TIMED-OUT"
    "$rbarchive" merge -o "$tmp/ttm.h5" "$tmp/tt.h5" >/dev/null 2>&1 && why="$why; rb-archive merged it"
    verdict "rb_train --timeout 1 (rb_train, rb-archive)"
    refused "rb-report: the timed-out training" "tt.h5: stopped by its time limit"

    w="$tmp/words"; mkdir "$w" "$tmp/rec"
    words 400 >"$w/train.tokens"; words 100 >"$w/valid.tokens"; words 100 >"$w/test.tokens"
    # A diverging run records non-finite gradients: no trace is left (one
    # was, marked complete, which rb_micro then refused).
    $T "$MPIRUN" 2 "$train" $lm --data "$tmp/words" --iterations 50 --lr 1e6 -o none \
        --record-gradients "$tmp/divtrace.h5" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 1 "rb_train: rank 0: training: diverged") || true
    grep -q "trace: .*divtrace.h5 not written: the training diverged" "$tmp/o" || why="$why; no line saying the trace is not written"
    ls "$tmp"/divtrace.h5* >/dev/null 2>&1 && why="$why; left: $(ls "$tmp"/divtrace.h5*)"
    verdict "rb_train --lr 1e6 --record-gradients: no trace of a diverged run"

    # rb_train archives with text where the report reads a number (it
    # stopped with an internal error, exit 3) or a curve no run can have
    # (used silently): refused by rb-archive list and rb-report, named.
    $T "$MPIRUN" 2 "$train" --model mlp --data "$tmp/img28" --train-limit 256 --test-limit 64 --batch 16 \
        --iterations 4 --lr-warmup 0 -o "$tmp/trsrc.h5" >"$tmp/o" 2>&1 || bad "no rb_train archive: $(head -c 400 "$tmp/o")"
    $PY - "$tmp" <<'PY'
import shutil, sys, h5py
d = sys.argv[1]
for name in ("trranks", "trneg"):
    shutil.copy(d + "/trsrc.h5", "%s/%s.h5" % (d, name))
    with h5py.File("%s/%s.h5" % (d, name), "a") as f:
        f.attrs["run_id"] = name
        if name == "trranks":
            f["train"].attrs["ranks"] = "many"
        else:
            c = f["train/curves"][...]
            c["test_accuracy"][-1] = -40
            f["train/curves"][...] = c
PY
    for x in "trranks:/train attribute ranks = many is not a whole number" \
             "trneg:/train/curves row [0-9]*: test_accuracy = -40"; do
        "$rbarchive" list "$tmp/${x%%:*}.h5" 2>&1 | grep -q "INVALID.*${x#*:}" &&
            case_ok "rb-archive list: ${x%%:*}.h5" || bad "rb-archive list: ${x%%:*}.h5: $("$rbarchive" list "$tmp/${x%%:*}.h5" 2>&1 | tail -c 300)"
        refused "rb-report: ${x%%:*}.h5" "${x%%:*}.h5: ${x#*:}"
    done

    # -o x.h5 --record-gradients x.h5: refused before the data is read; the
    # whole training ran, then the archive was refused (the trace took its
    # place), or with --force replaced the trace.
    d="$tmp/words"
    for force in "" --force; do
        $T "$MPIRUN" 2 "$train" $lm --data "$d" --record-gradients "$tmp/rec/./x.h5" \
            -o "$tmp/rec/x.h5" $force >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 2 "--record-gradients .*x.h5 and the archive .*x.h5 are the same file") || true
        [ -z "$(ls -A "$tmp/rec" 2>/dev/null)" ] || why="$why; left: $(ls -A "$tmp/rec")"
        verdict "rb_train -o x.h5 --record-gradients x.h5 $force"
    done
    # --write-corpus: an existing corpus replaced silently; onto its own
    # --data, replaced by its --vocab-limited copy (every rarer word <unk>).
    $T "$MPIRUN" 2 "$train" $lm --data "$d" -o none --write-corpus "$tmp/wc" >"$tmp/o" 2>&1 ||
        bad "rb_train --write-corpus: $(head -c 400 "$tmp/o")"
    cat "$tmp/wc"/*.tokens >"$tmp/wc.before"
    $T "$MPIRUN" 2 "$train" $lm --data "$d" -o none --write-corpus "$tmp/wc" >"$tmp/o" 2>&1
    expect "rb_train --write-corpus onto an existing corpus, no --force" "$tmp/o" $? 2 \
        "--write-corpus: refusing to overwrite existing .*wc/train.tokens (use --force)"
    $T "$MPIRUN" 2 "$train" $lm --vocab 5 --data "$tmp/wc" -o none --write-corpus "$tmp/./wc" --force >"$tmp/o" 2>&1
    expect "rb_train --write-corpus onto its own --data, --force" "$tmp/o" $? 2 \
        "--write-corpus .*wc is the --data directory"
    cat "$tmp/wc"/*.tokens | cmp -s - "$tmp/wc.before" || bad "rb_train --write-corpus: the corpus was changed"
else
    echo "note: no rb_train (built without BLAS): its cases are not run"
fi

hostile_report
exit $fail
