#!/bin/sh
# Every failure names itself.  The library's error codes
# (src/reducer.h), and the programs' own failures, are induced through
# rb_micro, rb_train, rb_sketch (and rb_gpubench when built); each must exit
# non-zero with one stderr line "PROG: rank R: ..." -- once per job, not
# once per rank -- that quotes rb_strerror's text when a library code was
# involved.  Codes no command line reaches are listed with the reason, and
# checked by tests/lib/test_strerror (a distinct, non-empty text each).
set -u
bin="$top_builddir/benchmarks"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$top_builddir/tests/lib/test_strerror" >"$tmp/codes" || bad "test_strerror: rb_strerror texts"
text() { sed -n "s/^$1 //p" "$tmp/codes"; }   # RB_ERR_X -> rb_strerror(RB_ERR_X)
reached=""

# expect LABEL CODE PROG COMMAND...: CODE is an RB_ERR_* name, or - when no
# library code is involved.
expect() {
    label=$1 code=$2 prog=$3
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    grep "^$prog: rank [0-9][0-9]*: " "$tmp/err" >"$tmp/named"
    n=$(wc -l <"$tmp/named")
    if [ "$rc" -eq 0 ]; then
        bad "$label: exit 0"
    elif [ "$n" -eq 0 ]; then
        bad "$label: exit $rc without a '$prog: rank R: ...' line on stderr: $(cat "$tmp/err")"
    elif [ "$n" -gt 1 ]; then
        bad "$label: named $n times, not once: $(cat "$tmp/named")"
    elif [ "$code" != - ] && ! grep -q -F -- "$(text "$code")" "$tmp/named"; then
        bad "$label: the line lacks rb_strerror($code) = '$(text "$code")': $(cat "$tmp/named")"
    else
        echo "ok: $label (exit $rc): $(cat "$tmp/named")"
    fi
    grep -q "without naming the failure" "$tmp/err" && bad "$label: the generic line (nobody named it)"
    [ "$code" = - ] || reached="$reached $code"
}

cuda=0
grep -q '^#define HAVE_CUDA 1' "$top_builddir/config.h" && cuda=1
# Wider than any machine (3.6 PiB): refused before calloc is asked.
huge="-O sketch_width_mode=abs -O sketch_width=1e15"

# --- rb_micro, 2 ranks
m="$bin/rb_micro"
small="-o none -m 4K:4K -i 1 -x 0"
expect "rb_micro: bad -O value" RB_ERR_ARG rb_micro "$MPIRUN" 2 "$m" $small -O sketch_rows=2
expect "rb_micro: unknown reducer" RB_ERR_UNKNOWN_REDUCER rb_micro "$MPIRUN" 2 "$m" $small --reducer nosuch
# -M: past rb_micro's own memory check, to the library's.
expect "rb_micro: huge sketch" RB_ERR_NOMEM rb_micro "$MPIRUN" 2 "$m" $small --reducer s2 $huge -M 100000000G
if [ $cuda -eq 0 ]; then
    expect "rb_micro: -d cuda without CUDA" RB_ERR_UNSUPPORTED rb_micro "$MPIRUN" 2 "$m" $small -d cuda --reducer dense
else
    expect "rb_micro: -d cuda with no GPU visible" RB_ERR_DEVICE rb_micro \
        env CUDA_VISIBLE_DEVICES= "$MPIRUN" 2 -x CUDA_VISIBLE_DEVICES "$m" $small -d cuda --reducer dense
fi
expect "rb_micro: ranks that disagree (MPMD)" - rb_micro \
    mpirun --bind-to none --mca btl self,vader -np 1 "$m" $small -i 2 : -np 1 "$m" $small -i 3
expect "rb_micro: unwritable output" - rb_micro "$MPIRUN" 2 "$m" -m 4K:4K -i 1 -x 0 -o "$tmp/no/such/x.h5"
expect "rb_micro: wrong result" - rb_micro \
    env RB_TEST_CORRUPT_RESULT=1 "$MPIRUN" 2 -x RB_TEST_CORRUPT_RESULT "$m" $small --reducer dense

# --- rb_train, 2 ranks (the reducer is made after the data is read)
t="$bin/rb_train"
fm=/usr/share/datasets/fashion-mnist
tsmall="-o none --train-limit 640 --test-limit 100 --batch 32 --iterations 2"
expect "rb_train: bad -O value" RB_ERR_ARG rb_train "$MPIRUN" 2 "$t" $tsmall -O sketch_rows=2
expect "rb_train: unknown reducer" RB_ERR_UNKNOWN_REDUCER rb_train "$MPIRUN" 2 "$t" $tsmall --reducer nosuch
expect "rb_train: ranks that disagree (MPMD)" - rb_train \
    mpirun --bind-to none --mca btl self,vader -np 1 "$t" $tsmall --lr 0.1 : -np 1 "$t" $tsmall --lr 0.2
[ $cuda -eq 1 ] || expect "rb_train: -d cuda without CUDA" - rb_train "$MPIRUN" 2 "$t" $tsmall -d cuda
# One command line, but --data relative to each rank's directory names two
# corpora of different vocabularies: refused when the data is loaded (the
# ranks compare the SHA-256 of the data read), before the library's
# rb_create would find gradients of different sizes.
for d in c1 c2; do
    mkdir -p "$tmp/$d/w"
    n=300; [ $d = c2 ] && n=600
    for sp in train valid test; do
        awk -v n=$n 'BEGIN { for (i = 0; i < 2000; i++) printf "w%d%s", i % n, (i % 12 == 11) ? "\n" : " " }' \
            >"$tmp/$d/w/$sp.tokens"
    done
done
lmw="--model wordlm --vocab 0 --data w --format tokens --batch 16 --iterations 2 -o none"
expect "rb_train: ranks reading different corpora (MPMD)" - rb_train \
    mpirun --bind-to none --mca btl self,vader -np 1 -wdir "$tmp/c1" "$t" $lmw : -np 1 -wdir "$tmp/c2" "$t" $lmw
if [ -r "$fm/train-images-idx3-ubyte.gz" ]; then
    # -M as for rb_micro: past rb_train's own memory check, to the library.
    expect "rb_train: huge sketch" RB_ERR_NOMEM rb_train "$MPIRUN" 2 "$t" $tsmall --reducer s2 $huge \
        -M 100000000G
    mkdir "$tmp/broken"
    for f in train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
        ln -s "$fm/$f" "$tmp/broken/$f"
    done
    head -c 5000 "$fm/train-images-idx3-ubyte.gz" >"$tmp/broken/train-images-idx3-ubyte.gz"
    expect "rb_train: corrupted dataset" - rb_train "$MPIRUN" 2 "$t" $tsmall --data "$tmp/broken"
    expect "rb_train: unwritable output" - rb_train "$MPIRUN" 2 "$t" --train-limit 640 --iterations 2 \
        -o "$tmp/no/such/x.h5"
else
    echo "note: $fm missing: rb_train's data, huge-sketch and output cases not run"
fi

# --- rb_sketch, one process (it runs on one core)
s="$bin/rb_sketch"
# -M: past rb_sketch's own memory check, to the library.
expect "rb_sketch: huge sketch" RB_ERR_NOMEM rb_sketch "$s" --rows 1000 --cols 100 --ratio 1e12 -i 1 --no-error \
    -M 100000000G
expect "rb_sketch: bad --density" - rb_sketch "$s" --density 2
expect "rb_sketch: no elements" - rb_sketch "$s" --rows 0

# --- rb_gpubench (CUDA builds only)
g="$bin/rb_gpubench"
if [ -x "$g" ]; then
    expect "rb_gpubench: bad -n" - rb_gpubench "$MPIRUN" 1 "$g" -n 0
    expect "rb_gpubench: no GPU visible" RB_ERR_DEVICE rb_gpubench \
        env CUDA_VISIBLE_DEVICES= "$MPIRUN" 1 -x CUDA_VISIBLE_DEVICES "$g"
else
    echo "note: rb_gpubench not built (no CUDA): not walked"
fi

# --- the codes no command line reached, and why
why() {
    case $1 in
    RB_ERR_MPI) echo "the reducers' MPI calls return errors (MPI_ERRORS_RETURN), but no option makes one fail" ;;
    RB_ERR_MISMATCH) echo "the programs compare command lines, RB_MALLOC and the data read (its SHA-256: rb_train's --data, rb_micro's --input trace) across ranks before rb_create" ;;
    RB_ERR_STATE) echo "calls out of order are a caller's bug; the programs call the library in order" ;;
    RB_ERR_DEVICE) echo "needs a CUDA build (this one has none)" ;;
    RB_ERR_UNSUPPORTED) echo "a CUDA build accepts -d cuda" ;;
    *) echo "no reason recorded: walk it above" ;;
    esac
}
for code in $(sed -n 's/^\(RB_ERR_[A-Z_]*\) .*/\1/p' "$tmp/codes"); do
    case " $reached " in
    *" $code "*) ;;
    *)
        r=$(why "$code")
        echo "not reached: $code ($(text "$code")): $r; its text is checked by test_strerror"
        case $r in "no reason recorded"*) bad "$code: reached by no case and no reason given" ;; esac
        ;;
    esac
done
exit $fail
