#!/bin/sh
# Hostile but realistic use: every case ends in a named failure (non-zero
# exit, one stderr line with the reason) or a correct run; never a crash,
# a hang, a lost or overwritten result, or an impossible value in a
# report.  One line per case: "ok CASE" or "FAIL: CASE: why".
#   train data: test images of another size, FIFOs, an empty split,
#               divergence, --timeout; ranks reading different data of one
#               shape (images, a corpus);
#   full disk:  rb_micro (-o, --save-result, -J), rb_train, rb-archive merge on a
#               40 KiB tmpfs (root only);
#   writers:    two runs racing for one -o, -J naming the archive, long names;
#               --save-result, -J and -o naming one file, another run's
#               file, /proc, a missing directory, a read-only file system,
#               the trace replayed; rb_train -o naming its --record-gradients,
#               --write-corpus over a corpus or onto its own --data;
#   sizes:      -m 3, -b 4097 -e 8195, rows wider than the size, --shape 0x5,
#               more sizes than rb_micro holds, --timeout keeping the rows,
#               a reducer named twice, an unregistered sde:::reducerbench:: event,
#               --timeout in a long warm-up, the hard watchdog's line once;
#   archives:   NaN/Inf, ranks=-3, negative times, recall=7, #wrong=-1, a
#               non-integer `complete`, unknown tool, no /micro, /micro/results
#               not a table, conflicting copies, merge onto an input, a FIFO
#               named *.h5 (rb-archive list, merge, rb-report), merge -o /proc;
#   analysis:   rb_train archives with text for a number or an accuracy of -40;
#               rb-report's targets nan/-5/inf; rb-torch-trace --lr nan or
#               diverging, --text a device, -o in a missing directory or on a
#               full disk; rb-report -o on a full disk (new or earlier report);
#   environment: SLURM_JOB_ID with '/', bad SLURM_MEM_PER_NODE, -M 0, -P BOGUS;
#               a bad Slurm memory setting on one rank only (MPMD), 2 and 3 ranks;
#               ranks reading different --input traces, or one missing it.
. "$top_srcdir/tests/archive/archive_lib.sh"
train="$top_builddir/benchmarks/rb_train"
rbreport="$top_srcdir/analysis/rb-report"
small="--reducer dense -m 4K:4K -i 2 -x 0 -q -P none"
# Every program run is bounded: a hang is a failure, not a stuck suite.
T="timeout 60"
case_ok() { echo "ok $1"; }
# rb-report runs once, at the end, over every archive made here (it takes
# seconds to start): refused CASE PATTERN expects a refusal line.
: >"$tmp/expected-refusals"
refused() { printf '%s\t%s\n' "$1" "$2" >>"$tmp/expected-refusals"; }
# verdict CASE: count a case, failed with $why when a check before it set
# it (a case collects its reasons in why, empty when all held).
verdict() { if [ -z "$why" ]; then case_ok "$1"; else bad "$1: $why"; fi; }
# named OUT RC EXPECTED_RC PATTERN: exit as expected, one stderr line naming
# the reason, no crash (139/134) and no hang (124 unless expected).
named() {
    [ "$2" -eq "$3" ] || { echo "exit $2, expected $3"; return 1; }
    grep -q -- "$4" "$1" || { echo "no line matching '$4': $(head -c 600 "$1")"; return 1; }
    ! grep -q "Segmentation\|Traceback\|AddressSanitizer\|runtime error" "$1" ||
        { echo "crash: $(head -c 600 "$1")"; return 1; }
    return 0
}
expect() {   # expect CASE OUT RC EXPECTED_RC PATTERN
    why=$(named "$2" "$3" "$4" "$5") && case_ok "$1" || bad "$1: $why"
}

# ------------------------------------------------------------------ train data
if [ -x "$train" ]; then
    # IDX files: N images HxW (random pixels), labels 0..9.
    mkidx() {   # mkidx DIR PREFIX N H W
        $PY - "$@" <<'PY'
import struct, sys, os, random
d, prefix, n, h, w = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
os.makedirs(d, exist_ok=True)
rnd = random.Random(7)
with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "wb") as f:
    f.write(struct.pack(">IIII", 0x803, n, h, w))
    f.write(bytes(rnd.randrange(256) for _ in range(n * h * w)))
with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "wb") as f:
    f.write(struct.pack(">II", 0x801, n))
    f.write(bytes(rnd.randrange(10) for _ in range(n)))
PY
    }
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
    words() { $PY -c 'import random,sys; r=random.Random(3); print("\n".join(" ".join("w%d" % r.randrange(50) for _ in range(12)) for _ in range(int(sys.argv[1]))))' "$1"; }
    lm="--model wordlm --vocab 60 --batch 16 --iterations 4 --lr-warmup 0 --hidden 16 --embed-dim 8"
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

# ------------------------------------------------------------------ full disk
full=""
if [ "$(id -u)" -ne 0 ]; then
    echo "note: full-disk cases skipped: they mount a 40 KiB tmpfs, which needs root"
elif mkdir "$tmp/full" && mount -t tmpfs -o size=40k tmpfs "$tmp/full" 2>/dev/null; then
    full="$tmp/full"
    trap 'umount "$full" 2>/dev/null; rm -rf "$tmp"' EXIT
else
    echo "note: full-disk cases skipped: mount -t tmpfs refused here (a container without CAP_SYS_ADMIN?)"
fi
if [ -n "$full" ]; then
    $T "$MPIRUN" 2 "$micro" --reducer dense -m 4K:64K -i 2 -x 0 -q -P none -o "$full/m.h5" >"$tmp/o" 2>&1
    rc=$?
    # the flush after a row meets the full disk before the end does
    why=$(named "$tmp/o" $rc 1 "archive: cannot \(flush\|finish\) .*: No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
    verdict "rb_micro -o on a full disk"
    rm -f "$full"/*
    # --save-result and -J on a full disk: named with the system's reason
    # (it was "invalid argument"), no partial file left (a 4 KiB piece of
    # the 64 KiB result stayed).
    for opt in --save-result -J; do
        dd if=/dev/zero of="$full/filler" bs=1k count=64 2>/dev/null   # to the brim
        out=none; [ $opt = -J ] && out="$tmp/fullj.h5"
        $T "$MPIRUN" 2 "$micro" --reducer dense -m 64K:64K -i 2 -x 0 -q -P none -o "$out" \
            $opt "$full/r" >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb_micro: rank 0: .*: cannot write .*No space left on device") || true
        grep -q -- "-J: -J:\|invalid argument" "$tmp/o" && why="$why; message: $(grep "^rb_micro: " "$tmp/o")"
        [ "$(ls -A "$full")" = filler ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_micro $opt on a full disk"
        rm -f "$full"/*
    done
    if [ -x "$train" ]; then
        # 16 KiB taken: the metadata written at the start fits, the whole
        # archive (about 27 KiB) does not.
        dd if=/dev/zero of="$full/filler" bs=1k count=16 2>/dev/null
        $T "$MPIRUN" 2 "$train" --model mlp --data "$tmp/img28" --train-limit 256 --test-limit 64 \
            --batch 16 --iterations 8 -o "$full/t.h5" >"$tmp/o" 2>&1
        rc=$?
        # Exit 1 when the end does not fit, 2 if even the start did not.
        [ $rc -eq 2 ] && rc=1
        why=$(named "$tmp/o" $rc 1 "archive: .*No space left on device") || true
        [ "$(ls -A "$full")" = filler ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_train -o on a full disk"
        rm -f "$full"/*
        # --record-gradients on a full disk: HDF5's exit handler crashed
        # (SIGSEGV) on the trace whose close failed, its error stack was
        # printed, and a broken trace was left at the path.
        $T "$MPIRUN" 2 "$train" $lm --data "$tmp/words" --iterations 20 -o none \
            --record-gradients "$full/t.h5" >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb_train: rank 0: --record-gradients: .*t.h5: cannot finish the trace file") || true
        grep -q "HDF5-DIAG" "$tmp/o" && why="$why; HDF5's error stack printed"
        [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_train --record-gradients on a full disk"
        rm -f "$full"/*
    fi
fi

# ------------------------------------------------------------------ archives to abuse
good="$tmp/good.h5"
"$MPIRUN" 2 "$micro" --reducer dense,s2 -m 4K:8K -i 2 -x 0 -q -P none -o "$good" >"$tmp/o" 2>&1 ||
    { bad "no good archive: $(cat "$tmp/o")"; exit 1; }
if [ -n "$full" ]; then
    cp "$good" "$tmp/good2.h5"
    $PY -c 'import sys,h5py; h5py.File(sys.argv[1],"a").attrs["run_id"]="other"' "$tmp/good2.h5"
    "$rbarchive" merge -o "$full/merged.h5" "$good" "$tmp/good2.h5" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 1 "merge failed: cannot write .*: No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
    verdict "rb-archive merge onto a full disk"
fi

# A copy of the good archive with one change (python statements on f and r,
# the /micro/results rows).
spoil() {   # spoil NAME 'python'
    cp "$good" "$tmp/$1.h5"
    $PY - "$tmp/$1.h5" "$2" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "a")
f.attrs["run_id"] = sys.argv[1]          # not a copy of the good run
r = f["micro/results"][...]
exec(sys.argv[2])
if "micro/results" in f and isinstance(f["micro/results"], h5py.Dataset) and f["micro/results"].dtype.names:
    f["micro/results"][...] = r
PY
}
# abuse CASE NAME 'python' REASON: rb-archive list says why it is not
# complete, merge refuses, both naming REASON, no traceback; rb-report
# refuses it (checked at the end).
abuse() {
    spoil "$2" "$3"
    why=""
    refused "rb-report: $1" "$2.h5: .*$4"
    "$rbarchive" list "$tmp/$2.h5" >"$tmp/l" 2>&1
    grep -q "\(INVALID\|INCOMPLETE\|TIMED-OUT\|DIVERGED\).*$4" "$tmp/l" || why="$why; rb-archive list: $(tail -c 300 "$tmp/l")"
    "$rbarchive" merge -o "$tmp/m-$2.h5" "$good" "$tmp/$2.h5" >"$tmp/l" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "$4" "$tmp/l" || why="$why; rb-archive merge exit $rc: $(tail -c 300 "$tmp/l")"
    [ -e "$tmp/m-$2.h5" ] && why="$why; merge wrote $tmp/m-$2.h5"
    verdict "$1"
}
abuse "t_avg_us NaN" nan 'r["t_avg_us"][0] = np.nan' "t_avg_us = nan"
abuse "t_avg_us Inf" inf 'r["t_avg_us"][1] = np.inf' "t_avg_us = inf"
abuse "negative time" negt 'r["t_min_us"][0] = -5' "t_min_us = -5"
abuse "ranks = -3" ranks 'r["ranks"][:] = -3' "ranks = -3"
abuse "recall = 7" recall 'r["recall"][0] = 7' "recall = 7"
abuse "#wrong = -1" wrong 'r["wrong"][0] = -1' "wrong = -1"
abuse "complete not an integer" cstr 'f.attrs["complete"] = "yes"' "complete attribute is 'yes', not an integer"
abuse "tool = foo" tool 'f.attrs["tool"] = "foo"' "unknown tool 'foo'"
abuse "no /micro" nomicro 'del f["micro"]' "without /micro"
abuse "/micro/results not compound" flat 'del f["micro/results"]; f["micro/results"] = np.zeros(3)' "not a compound table"
abuse "rb_micro timed_out=1" mto 'f.attrs["timed_out"] = 1' "stopped by its time limit"

# Conflicting copies: one run_id, different contents: both named, neither used.
cp "$good" "$tmp/conflict.h5"
$PY -c 'import sys,h5py; f=h5py.File(sys.argv[1],"a"); r=f["micro/results"][...]; r["algbw_gbs"][0]*=2; f["micro/results"][...]=r' "$tmp/conflict.h5"
refused "rb-report: conflicting copies (the original)" "good.h5: conflicting copies: .*conflict.h5 has the same run_id"
refused "rb-report: conflicting copies (the changed one)" "conflict.h5: conflicting copies: .*good.h5 has the same run_id"
why=""
"$rbarchive" merge -o "$tmp/mc.h5" "$good" "$tmp/conflict.h5" >"$tmp/l" 2>&1
[ $? -eq 2 ] && grep -q "conflicting copies" "$tmp/l" || why="$why; merge: $(cat "$tmp/l")"
verdict "conflicting copies (one run_id, different contents)"

# A FIFO named *.h5 (in a directory, or given): named and skipped by
# rb-archive list, refused by merge; opening it waited for a writer forever.
mkdir "$tmp/withfifo"; cp "$good" "$tmp/withfifo/"; mkfifo "$tmp/withfifo/fifo.h5"
$T "$rbarchive" list "$tmp/withfifo" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 1 "fifo.h5: not a regular file (a FIFO)") || true
grep -q "complete .*good.h5" "$tmp/l" || why="$why; the good archive beside it not listed"
verdict "rb-archive list: a directory holding a FIFO named *.h5"
$T "$rbarchive" merge -o "$tmp/mfifo.h5" "$good" "$tmp/withfifo/fifo.h5" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 2 "fifo.h5: not a regular file (a FIFO)") || true
[ -e "$tmp/mfifo.h5" ] && why="$why; merge wrote $tmp/mfifo.h5"
verdict "rb-archive merge: a FIFO among the inputs"
refused "rb-report: a FIFO named *.h5 in a directory" "fifo.h5: not a regular file (a FIFO)"

# merge onto one of its inputs with --force: refused, the input unchanged.
cp "$good" "$tmp/self.h5"; cp "$good" "$tmp/self.copy"
"$rbarchive" merge -o "$tmp/self.h5" --force "$tmp/self.h5" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 2 "is the output (-o .*) too") || true
cmp -s "$tmp/self.h5" "$tmp/self.copy" || why="$why; the input was replaced"
verdict "merge -o x.h5 --force x.h5"

# ------------------------------------------------------------------ rb_micro
# Two runs racing for one -o (no --force): exactly one succeeds, the other
# names the path; the file is the winner's, whole.
race="$tmp/race.h5"
long="--reducer dense -m 4K:64K -i 300 -x 0 -q -P none"
"$MPIRUN" 2 "$micro" $long -o "$race" >"$tmp/ra" 2>&1 &
pa=$!
"$MPIRUN" 2 "$micro" $long -o "$race" >"$tmp/rb" 2>&1 &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
why=""
if [ $ra -eq 0 ] && [ $rb -eq 0 ]; then why="both exited 0 (one result lost)"
elif [ $ra -ne 0 ] && [ $rb -ne 0 ]; then why="both failed: $(cat "$tmp/ra" "$tmp/rb" | head -c 600)"
else
    loser="$tmp/ra"; [ $ra -eq 0 ] && loser="$tmp/rb"
    grep -q "refusing to overwrite existing archive $race" "$loser" || why="loser's message: $(head -c 400 "$loser")"
fi
$PY -c 'import sys,h5py; sys.exit(0 if h5py.File(sys.argv[1]).attrs["complete"] == 1 else 1)' "$race" 2>/dev/null ||
    why="$why; $race is not a complete archive"
ls "$race".tmp.* >/dev/null 2>&1 && why="$why; temporary left"
verdict "two runs racing for one -o"

for j in "$tmp/same.h5" "$tmp/./same.h5"; do
    "$MPIRUN" 2 "$micro" $small -o "$tmp/same.h5" -J "$j" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "-J .* and the archive .* are the same file") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured before refusing"
    [ -e "$tmp/same.h5" ] && why="$why; $tmp/same.h5 written"
    verdict "-o same.h5 -J $(basename "$(dirname "$j")")/same.h5"
done

# --save-result, -J and -o: the same file, a file another run wrote, a
# place no file can be made in, the trace being replayed -- each refused
# (exit 2) before anything is measured, nothing written or replaced.  They
# were found only after the sweep (exit 1), --save-result's raw floats left
# at the archive's path or over another run's archive, and -o --force
# replaced the trace it replayed.
# outputs CASE NP PATTERN ARGS...: refused, no row measured.
outputs() {
    name=$1 np=$2 pattern=$3
    shift 3
    $T "$MPIRUN" "$np" "$micro" $small "$@" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "$pattern") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured before refusing"
}
mkdir "$tmp/out"
outputs "--save-result x.h5 -o x.h5" 2 "--save-result .*x.h5 and the archive .*x.h5 are the same file" \
    -o "$tmp/out/x.h5" --save-result "$tmp/out/./x.h5"
[ -z "$(ls -A "$tmp/out")" ] || why="$why; left: $(ls -A "$tmp/out")"
verdict "--save-result x.h5 -o x.h5 (2 ranks)"
outputs "--save-result r -J r" 3 "--save-result .*r and -J .*r are the same file" \
    -o "$tmp/out/y.h5" -J "$tmp/out/r" --save-result "$tmp/out/r"
[ -z "$(ls -A "$tmp/out")" ] || why="$why; left: $(ls -A "$tmp/out")"
verdict "--save-result r -J r (3 ranks)"
cp "$good" "$tmp/out/other.h5"
outputs "--save-result onto another run's archive" 1 "--save-result: refusing to overwrite existing .*other.h5 (use --force)" \
    -o none --save-result "$tmp/out/other.h5"
cmp -s "$good" "$tmp/out/other.h5" || why="$why; the other run's archive was overwritten"
verdict "--save-result onto an existing file, no --force (1 rank)"
outputs "--save-result in a missing directory" 2 "--save-result: cannot write .*/nodir/r: directory .*nodir does not exist" \
    -o none --save-result "$tmp/nodir/r"
verdict "--save-result in a missing directory"
outputs "--save-result a directory" 2 "--save-result: .*out exists and is not a regular file" \
    -o none --save-result "$tmp/out"
verdict "--save-result naming a directory"
for opt in --save-result -J; do
    outputs "$opt /proc/x" 2 "$opt: cannot write /proc/x: No such file or directory" \
        -o "$tmp/out/p.h5" $opt /proc/x
    [ -e "$tmp/out/p.h5" ] && why="$why; the archive was written"
    verdict "$opt /proc/x (no file can be made there)"
done
$PY "$top_srcdir/tests/workload/gradgen_trace.py" "$tmp/out/t.h5" 100 4 0.1 2 7
cp "$tmp/out/t.h5" "$tmp/out/t.copy"
for opt in -o --save-result; do
    $T "$MPIRUN" 2 "$micro" -q -i 1 -x 0 -P none --input "trace:$tmp/out/t.h5" --force \
        $([ $opt = -o ] || echo "-o none") $opt "$tmp/out/t.h5" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "is the trace replayed (--input trace:.*t.h5)") || true
    cmp -s "$tmp/out/t.h5" "$tmp/out/t.copy" || why="$why; the trace was replaced"
    verdict "$opt naming the trace replayed, with --force"
done
if [ -n "$full" ]; then
    # A read-only file system (a read-only tmpfs): named before measuring.
    mkdir "$tmp/ro"
    if mount -t tmpfs -o size=40k,ro tmpfs "$tmp/ro" 2>/dev/null; then
        trap 'umount "$full" 2>/dev/null; umount "$tmp/ro" 2>/dev/null; rm -rf "$tmp"' EXIT
        for opt in -J --save-result; do
            outputs "$opt on a read-only file system" 2 "$opt: cannot write .*ro/x: Read-only file system" \
                -o "$tmp/out/ro.h5" $opt "$tmp/ro/x"
            [ -e "$tmp/out/ro.h5" ] && why="$why; the archive was written"
            verdict "$opt on a read-only file system"
        done
        outputs "-o on a read-only file system" 2 "archive: cannot write .*ro/x.h5.*: Read-only file system" \
            -o "$tmp/ro/x.h5"
        verdict "-o on a read-only file system"
        umount "$tmp/ro"
    fi
fi

# Sizes that cannot be measured: refused naming the smallest legal size.
sizes() {   # sizes CASE ARGS PATTERN
    "$MPIRUN" 2 "$micro" --reducer dense -i 2 -x 0 -q -P none -o none $2 >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "$3") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured: $(table_rows "$tmp/o") row(s)"
    verdict "$1"
}
sizes "-m 3" "-m 3" "smallest size measurable is 4 bytes"
sizes "-b 4097 -e 8195" "-b 4097 -e 8195" "MIN 4097 bytes is not a whole number of 4-byte elements .*give 4096 or 4100"
sizes "--cols 3 -m 4K:6K" "--cols 3 -m 4K:6K" "MIN 4096 bytes is not a whole number of rows of --cols 4-byte elements (12 bytes each): give 4092 or 4104"
sizes "--layout row --cols 100000 -m 4K:16K" "--layout row --cols 100000 -m 4K:16K" "smallest size measurable with these --cols is 400000 bytes"
sizes "--shape 0x5" "--shape 0x5" "smallest shape is 1x5"
sizes "-m 4K:16K --stepfactor 1.0000001" "-m 4K:16K --stepfactor 1.0000001" "more than 64 sizes .* use --stepfactor"
sizes "-M 0" "-m 4K -M 0" "mem-limit: '0' is not a size of at least 1 byte"
sizes "-P BOGUS_EVENT" "-m 4K -P BOGUS_EVENT" "unknown PAPI event BOGUS_EVENT"
# A reducer named twice was measured twice (the report took the rows for
# repetitions); an sde:::reducerbench:: name not registered counted 0.
sizes "--reducer dense,s2,dense" "-m 4K --reducer dense,s2,dense" "--reducer: 'dense,s2,dense' names dense twice"
sizes "--layout row --cols 3 -m 4K" "--layout row --cols 3 -m 4K" "MIN 4096 bytes is not a whole number of rows of --cols 4-byte elements (12 bytes each): give 4092 or 4104"
if grep -q '^#define HAVE_PAPI_SDE 1' "$top_builddir/config.h"; then
    sizes "-P sde:::reducerbench::bogus" "-m 4K -P sde:::reducerbench::bogus" \
        "unknown PAPI event sde:::reducerbench::bogus (not one of reducerbench's counters"
fi

# --timeout: a named line, exit 124, the rows measured kept (marked timed_out).
# The case needs a row finished before the limit and the sweep not: rows of
# 2 calls of 4 KiB, repeated 100000 times (idle, 2 s hold about 8000 rows
# here; with two busy loops on the 2 cores at least 15).  Its rows were 2000
# calls (-m 4K:4M -i 2000): on a loaded machine (the ranks busy-poll) a
# call sometimes took 1 ms or more, the first row all of the 2 s, and about
# one run in 20 ended with no row finished, so (as designed) no archive.
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 2 --repeat 100000 -x 0 --no-check -q -P none --timeout 2 \
    -o "$tmp/to.h5" >"$tmp/o" 2>&1
rc=$?
why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit: --timeout 2 s reached .* keeps the [1-9][0-9]* row") || true
$PY -c '
import sys, h5py
f = h5py.File(sys.argv[1])
sys.exit(0 if f.attrs["timed_out"] == 1 and len(f["micro/results"]) >= 1 else 1)' "$tmp/to.h5" 2>/dev/null ||
    why="$why; no archive with the rows, marked timed_out=1"
"$rbarchive" list "$tmp/to.h5" | grep -q TIMED-OUT || why="$why; rb-archive list does not say TIMED-OUT"
verdict "rb_micro --timeout 2 keeps its rows"
refused "rb-report: rb_micro --timeout 2" "to.h5: stopped by its time limit"
# --timeout in a long warm-up (-x): stopped at the limit between calls, as
# in the timed calls, not 1.25 x SEC + 10 s later by the hard watchdog
# (which left the archive's temporary behind and the rows finished lost).
mkdir "$tmp/wu"
start=$(date +%s)
$T "$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 1 -x 100000000 -q -P none --timeout 2 \
    -o "$tmp/wu/x.h5" >"$tmp/o" 2>&1
rc=$?
took=$(($(date +%s) - start))
why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit: --timeout 2 s reached before the sweep ended") || true
[ $took -lt 12 ] || why="$why; took $took s (the hard watchdog's 12.5 s?)"
[ -z "$(ls -A "$tmp/wu")" ] || why="$why; left: $(ls -A "$tmp/wu")"
verdict "rb_micro -x 100000000 --timeout 2: stopped in the warm-up"
# The hard watchdog (a process stuck inside a call 1.25 x SEC + 10 s after
# the start) printed its line once per rank, P lines for one timeout; now
# rank 0's alone (the others fire 5 s later, by then ended with the job).
# Both ranks are stopped (SIGSTOP) in the sweep and continued once their
# alarms are due; stdbuf shows the first row as soon as it is measured.
if stdbuf -oL true 2>/dev/null; then
    # stdbuf preloads its library, which ASan refuses to come after unless
    # told (a sanitizer build aborted here, exit 134).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0" \
        "$MPIRUN" 2 stdbuf -oL "$micro" --reducer dense -m 4K:4K -i 20 --repeat 100000 -x 0 --no-check -P none \
        --timeout 4 -o none >"$tmp/o" 2>&1 &
    mpid=$!
    n=0
    until grep -q '^ *4096 ' "$tmp/o" || [ $n -gt 300 ]; do sleep 0.1; n=$((n + 1)); done
    ranks=$(ps -o pid= --ppid $mpid)
    kill -STOP $ranks
    sleep 15.5   # past rank 0's 4 x 1.25 + 10 = 15 s, before the others' 20 s
    kill -CONT $ranks
    wait $mpid
    rc=$?
    why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit (--timeout) exceeded inside a call; exiting 124") || true
    [ "$(grep -c "exceeded inside a call" "$tmp/o")" -eq 1 ] ||
        why="$why; not once: $(grep "exceeded inside a call" "$tmp/o" | tr '\n' '|')"
    verdict "the hard watchdog: one line for the job, rank 0's"
else
    echo "note: no stdbuf (coreutils): the hard watchdog's case is not run"
fi

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

# ------------------------------------------------------------------ analysis tools' arguments
# rb-report's targets: nan was taken (no run reached it), -5 reached by
# every run at its start; refused (exit 2) before anything is read.
for v in nan -5 101 abc; do
    $T "$rbreport" "$good" -o "$tmp/rep-t" --target-accuracy "$v" >"$tmp/o" 2>&1
    expect "rb-report --target-accuracy $v" "$tmp/o" $? 2 "argument --target-accuracy: '$v' is not a"
done
for v in nan inf 0.5; do
    $T "$rbreport" "$good" -o "$tmp/rep-t" --target-perplexity "$v" >"$tmp/o" 2>&1
    expect "rb-report --target-perplexity $v" "$tmp/o" $? 2 "argument --target-perplexity: '$v' is not a perplexity"
done
# rb-archive merge -o /proc/x.h5: root may "write" there by access(); the
# merge read every input, then failed (exit 1).  Now refused first.
$T "$rbarchive" merge -o /proc/m.h5 "$good" >"$tmp/o" 2>&1
expect "rb-archive merge -o /proc/m.h5" "$tmp/o" $? 2 "cannot write /proc/m.h5: No such file or directory"
# rb-torch-trace: a learning rate that is no number, a diverging one (the
# trace was written, marked complete, with NaN values rb_micro refuses), a
# --text that is a device (a traceback), an output in a missing directory
# (found after training, exit 1).
if $PY -c 'import torch' 2>/dev/null; then
    tt="$top_srcdir/analysis/rb-torch-trace"
    mkdir "$tmp/tt"
    $T $PY "$tt" -o "$tmp/tt/a.h5" --lr nan --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace --lr nan" "$tmp/o" $? 2 "--lr must be a finite number > 0"
    $T $PY "$tt" -o "$tmp/tt/b.h5" --lr 1e30 --steps 3 >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 1 "is not finite (NaN or Inf: the training diverged") || true
    [ -e "$tmp/tt/b.h5" ] && why="$why; a trace was written"
    verdict "rb-torch-trace --lr 1e30 (diverges)"
    $T $PY "$tt" -o "$tmp/tt/c.h5" --text /dev/null --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace --text /dev/null" "$tmp/o" $? 2 "--text /dev/null is neither a file nor a directory"
    $T $PY "$tt" -o "$tmp/tt/no/d.h5" --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace -o in a missing directory" "$tmp/o" $? 2 "cannot write .*d.h5: directory .*no does not exist"
    [ -z "$(ls -A "$tmp/tt")" ] || bad "rb-torch-trace: left behind: $(ls -A "$tmp/tt")"
    if [ -n "$full" ]; then
        # A full disk: HDF5 crashed the process at exit (SIGSEGV) and left a
        # partial trace; now named, nothing left.
        $T $PY "$tt" -o "$full/t.h5" --steps 2 >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb-torch-trace: cannot write .*t.h5: No space left on device") || true
        [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb-torch-trace -o on a full disk"
        rm -f "$full"/*
    fi
else
    echo "note: no PyTorch for /usr/bin/python3 (Debian python3-torch): rb-torch-trace's cases are not run"
fi

# ------------------------------------------------------------------ rb-report, once
# Over every archive above and one sound run: that run is reported, each
# other one refused with its reason, no traceback.
"$MPIRUN" 2 "$micro" $small -o "$tmp/sound.h5" >/dev/null 2>&1 || bad "no sound archive"
mkdir "$tmp/all"
for f in "$tmp"/*.h5; do ln -s "$f" "$tmp/all/"; done
mkfifo "$tmp/all/fifo.h5"
# Bounded: a FIFO it opened would wait for a writer until killed.
timeout 600 "$rbreport" "$tmp/all" -o "$tmp/rep" >"$tmp/r" 2>&1
rc=$?
why=""
[ $rc -eq 0 ] || why="exit $rc"
grep -q Traceback "$tmp/r" && why="$why; a traceback"
grep -q "rb-report: [0-9]* run(s) used" "$tmp/r" || why="$why; no report: $(tail -c 400 "$tmp/r")"
verdict "rb-report over all of them: runs, no traceback"
while IFS="$(printf '\t')" read -r name pattern; do
    grep -q "refused .*$pattern" "$tmp/r" && case_ok "$name" || bad "$name: no refusal matching '$pattern'"
done <"$tmp/expected-refusals"

# rb-report -o on a full disk: the report is written whole or not at all (it
# left a directory of some tables and no figure); a directory holding an
# earlier report, and a file of someone else, stays as it was.
if [ -n "$full" ]; then
    rm -rf "$full"/*
    $T "$rbreport" "$tmp/sound.h5" -o "$full/rep" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "rb-report: cannot write the report into .*rep: .*No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full" "$full"/* | tr '\n' ' ')"
    verdict "rb-report -o a new directory on a full disk"
    rm -rf "$full"/*
    mkdir -p "$full/old/tables"
    for f in report.md report.html latency_G1.png tables/runs.csv notes.txt; do echo "earlier $f" >"$full/old/$f"; done
    before=$(cd "$full/old" && find . | sort && cat report.md report.html latency_G1.png tables/runs.csv notes.txt)
    $T "$rbreport" "$tmp/sound.h5" -o "$full/old" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "rb-report: cannot write the report into .*old: .*No space left on device") || true
    after=$(cd "$full/old" && find . | sort && cat report.md report.html latency_G1.png tables/runs.csv notes.txt 2>&1)
    [ "$before" = "$after" ] || why="$why; the earlier report changed: $(cd "$full/old" && find . | tr '\n' ' ')"
    verdict "rb-report -o an earlier report on a full disk"
    rm -rf "$full"/*
fi

exit $fail
