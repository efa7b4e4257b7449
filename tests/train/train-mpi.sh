#!/bin/sh
# rb_train end to end on small subsets: options, data errors, training at
# 1..3 ranks, reducers agreeing, ring shuffle, sparsification, time limit.
set -u
. "$top_srcdir/tests/train/train_lib.sh"
run() { np=$1; shift; "$MPIRUN" "$np" "$train" -o none "$@"; }
# small runs: 1920 training samples, 300 test samples, batch 32
small="--train-limit 1920 --test-limit 300 --batch 32 --lr-warmup 10 --lr 0.05"

# --- options ------------------------------------------------------------
run 1 --help > "$tmp/help" 2>&1 || bad "--help exits $?"
for o in --model --data --batch --lr --momentum --weight-decay --lr-warmup --schedule --epochs \
         --eval-every --target-accuracy --shuffle --sparsify --reducer -O --option --timeout --seed \
         -o --output --force \
         --bench-sgemm --train-limit "default"; do
    grep -q -- "$o" "$tmp/help" || bad "--help does not mention $o"
done
for args in "--batch 0" "--sparsify topk:2" "--shuffle zigzag" "--reducer nosuch" "-O nosuch=1" \
            "--model resnet" "--lr abc" "--frobnicate" "--device gpu" "--warmup 10" "-T 1"; do
    "$train" $args > "$tmp/out" 2>&1   # singleton MPI: faster than mpirun
    rc=$?
    opt=$(echo "$args" | cut -d' ' -f1 | sed 's/^-*//')
    [ $rc -eq 2 ] || bad "'$args' exits $rc, expected 2"
    grep -q -- "$opt" "$tmp/out" || bad "'$args': message does not name $opt: $(cat "$tmp/out")"
done
# The old spellings name their new ones (no silent reinterpretation).
"$train" --warmup 10 > "$tmp/out" 2>&1
grep -q -- "--warmup: .*--lr-warmup" "$tmp/out" || bad "--warmup: the message does not name --lr-warmup: $(cat "$tmp/out")"
"$train" -T 1 > "$tmp/out" 2>&1
grep -q -- "-T: .*--timeout" "$tmp/out" || bad "-T: the message does not name --timeout: $(cat "$tmp/out")"

# A bad option on one rank only: every rank stops with exit 2 (rb_train
# parsed before comparing command lines, so that rank stopped alone and the
# others waited for ever).
for extra in --frobnicate "--batch 0" --help; do
    timeout 60 mpirun --bind-to none --mca btl self,vader -np 1 "$train" -o none $small : \
        -np 1 "$train" -o none $small $extra > "$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "'$extra' on rank 1 only exits $rc, expected 2 (124: hung)"
    grep -q "different command lines" "$tmp/out" || bad "'$extra' on rank 1 only: no message: $(cat "$tmp/out")"
done

# --- data errors: exit 2 and the file named -------------------------------
mkdir "$tmp/broken"
for f in train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
    ln -s "$fm/$f" "$tmp/broken/$f"
done
head -c 5000 "$fm/train-images-idx3-ubyte.gz" > "$tmp/broken/train-images-idx3-ubyte.gz"
run 2 --data "$tmp/broken" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || bad "truncated data exits $rc, expected 2"
grep -q "train-images-idx3-ubyte.gz.*truncated\|train-images-idx3-ubyte.gz.*corrupt" "$tmp/out" ||
    bad "truncated data: $(cat "$tmp/out")"
[ "$(grep -c 'rb_train:.*train-images' "$tmp/out")" -eq 1 ] || bad "data error printed more than once"
# wordlm on a directory with no text files (qsort of none was undefined)
mkdir "$tmp/empty"
"$train" -o none --model wordlm --data "$tmp/empty" --iterations 1 > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "no fortune files" "$tmp/out" || bad "wordlm, empty --data: exit $rc: $(cat "$tmp/out")"

# --- none at 1 rank equals dense at 1 rank (serial SGD), bit for bit -------
run 1 $small --iterations 20 --reducer none > "$tmp/none" 2>&1 || bad "none exits $?"
run 1 $small --iterations 20 --reducer dense > "$tmp/dense1" 2>&1 || bad "dense exits $?"
a=$(grep '^final:' "$tmp/none" | sed 's/wall_s [^ ]* //') b=$(grep '^final:' "$tmp/dense1" | sed 's/wall_s [^ ]* //')
[ -n "$a" ] && [ "$a" = "$b" ] || bad "none and dense differ at 1 rank: '$a' vs '$b'"

# --- training lowers the loss at 2 ranks (mlp, archived) and 3 ranks (lenet,
# ring shuffle) ------------------------------------------------------------
check_learns() { # file label
    first=$(sed -n 's/^epoch .* loss \([^ ]*\) .*/\1/p' "$1" | head -n 1)
    last=$(field train_loss "$1") acc=$(field test_accuracy "$1")
    awk -v f="$first" -v l="$last" -v a="$acc" 'BEGIN { exit !(l < 0.75 * f && a > 60) }' ||
        bad "$2 did not learn: first loss $first, final train loss $last, accuracy $acc"
}
"$MPIRUN" 2 "$train" -o "$tmp/run.h5" $small --epochs 2 --eval-every 20 -O seed=5 \
    > "$tmp/mlp2" 2>&1 || bad "mlp 2 ranks exits $?"
check_learns "$tmp/mlp2" "mlp 2 ranks"
/usr/bin/python3 - "$tmp/run.h5" <<'PY' || bad "archive /train: see above"
import sys, h5py, pandas as pd
f = h5py.File(sys.argv[1], "r")
t = f["train"]
c = pd.DataFrame(t["curves"][:])
p = pd.DataFrame(t["phases"][:])
assert list(c.iteration) == [20, 40, 60], c
assert c.test_accuracy.between(10, 100).all() and c.val_perplexity.isna().all(), c
assert len(p) == 60 and (p[["forward_s", "backward_s", "reduce_s", "update_s"]] >= 0).all().all()
assert p.bytes_sent.gt(0).all() and p.embed_nnz.eq(0).all()
a = t.attrs
assert a["model"] == "mlp" and a["reducer"] == "dense" and a["ranks"] == 2
assert a["global_batch"] == 64 and a["iterations"] == 60 and abs(a["lr"] - 0.05) < 1e-12
assert len(a["blas_core"]) > 0, "blas_core: OpenBLAS's kernel set not recorded"
PY
run 3 $small --model lenet --epochs 2 --lr 0.1 --shuffle ring > "$tmp/lenet3" 2>&1 ||
    bad "lenet 3 ranks exits $?"
check_learns "$tmp/lenet3" "lenet 3 ranks, ring shuffle"

# --- every exact reducer agrees with dense (3 ranks, same seed) -------------
# Tolerance: relative 1e-4 on the final loss and the sum of squared
# parameters (float summation order may differ between reducers).
run 3 $small --iterations 20 > "$tmp/ref" 2>&1 || bad "dense 3 ranks exits $?"
ref_loss=$(field train_loss "$tmp/ref") ref_sq=$(field param_sq "$tmp/ref")
"$train" --list-reducers > "$tmp/reducers" || bad "--list-reducers exits $?"
while read -r name traits; do
    case " $traits " in *" exact "*) ;; *) continue ;; esac
    run 3 $small --iterations 20 --reducer "$name" > "$tmp/r-$name" 2>&1 < /dev/null
    rc=$?
    if grep -q "not supported\|unsupported" "$tmp/r-$name"; then
        echo "note: reducer $name not available yet (skipped)"
        continue
    fi
    [ $rc -eq 0 ] || { bad "reducer $name exits $rc: $(tail -n 3 "$tmp/r-$name")"; continue; }
    l=$(field train_loss "$tmp/r-$name") q=$(field param_sq "$tmp/r-$name")
    awk -v a="$l" -v b="$ref_loss" -v c="$q" -v d="$ref_sq" \
        'function rel(x, y) { return (x > y ? x - y : y - x) / (y < 0 ? -y : y) }
         BEGIN { exit !(rel(a, b) < 1e-4 && rel(c, d) < 1e-4) }' ||
        bad "reducer $name differs from dense: loss $l vs $ref_loss, param_sq $q vs $ref_sq"
    echo "reducer $name matches dense (loss $l)"
done < "$tmp/reducers"

# --- lossy, gossip and no-communication reducers train too (2 ranks) --------
while read -r name traits; do
    case " $traits " in *" exact "*) continue ;; esac
    opts=""
    [ "$name" = gossip ] && opts="-O gossip_mix=params"
    run 2 $small --reducer "$name" $opts > "$tmp/l-$name" 2>&1 < /dev/null ||
        { bad "reducer $name exits $?: $(tail -n 3 "$tmp/l-$name")"; continue; }
    first=$(sed -n 's/^epoch .* loss \([^ ]*\) .*/\1/p' "$tmp/l-$name" | head -n 1)
    last=$(field train_loss "$tmp/l-$name") acc=$(field test_accuracy "$tmp/l-$name")
    awk -v f="$first" -v l="$last" -v a="$acc" 'BEGIN { exit !(l < f && a > 40) }' ||
        { bad "reducer $name did not learn: first loss $first, final $last, accuracy $acc"; continue; }
    echo "reducer $name learns: loss $first -> $last, accuracy $acc"
done < "$tmp/reducers"

# --- top-k sparsification with error feedback ------------------------------
run 2 $small --epochs 2 --sparsify topk:0.05 > "$tmp/topk" 2>&1 || bad "topk exits $?"
check_learns "$tmp/topk" "mlp topk:0.05"

# --- wordlm on the fortunes corpus, 2 ranks ------------------------------
if [ -r "$fo/fortunes" ]; then
    run 2 --model wordlm --train-limit 4096 --test-limit 1000 --batch 32 --hidden 64 \
        --embed-dim 16 --vocab 2000 --lr 0.1 --epochs 2 -o "$tmp/lm.h5" > "$tmp/lm" 2>&1 || bad "wordlm exits $?"
    grep -q "vocabulary 2000" "$tmp/lm" || bad "wordlm corpus line: $(head -n 2 "$tmp/lm")"
    ppl=$(field val_perplexity "$tmp/lm")
    awk -v p="$ppl" 'BEGIN { exit !(p > 1 && p < 1000) }' || bad "wordlm perplexity $ppl (uniform: 2000)"
    # The embedding gradient touches at most batch x context rows of 16.
    /usr/bin/python3 - "$tmp/lm.h5" <<'PY' || bad "wordlm phases embed_nnz: see above"
import sys, h5py
e = h5py.File(sys.argv[1], "r")["train/phases"]["embed_nnz"]
assert len(e) > 0 and (e > 0).all() and (e <= 32 * 3 * 16).all() and e.min() < e.max(), e
PY
    # The embedding gradient handed as its touched rows (rb_reduce_rows, the
    # default) trains exactly as the dense table (rb_reduce) does.
    for red in agsparse s2 sparcml; do
        for inp in dense rows; do
            run 2 --model wordlm --train-limit 2048 --test-limit 500 --batch 32 --hidden 64 \
                --embed-dim 16 --vocab 2000 --lr 0.1 --iterations 40 --eval-every 20 --reducer $red \
                --embed-input $inp -o "$tmp/lm-$red-$inp.h5" > "$tmp/lm-$red-$inp" 2>&1 ||
                bad "wordlm --reducer $red --embed-input $inp exits $?"
        done
        /usr/bin/python3 - "$tmp/lm-$red-dense.h5" "$tmp/lm-$red-rows.h5" <<'PY' || bad "wordlm $red: rows and dense differ"
import sys, h5py, numpy as np
a, b = (h5py.File(f, "r") for f in sys.argv[1:3])
assert a["train"].attrs["embed_input"] == "dense" and b["train"].attrs["embed_input"] == "rows"
for col in ("train_loss", "test_loss", "val_perplexity"):
    x, y = a["train/curves"][col], b["train/curves"][col]
    assert len(x) == 2 and np.array_equal(x, y), (col, x, y)
pa, pb = a["train/phases"], b["train/phases"]
assert np.array_equal(pa["bytes_sent"], pb["bytes_sent"]), "wire bytes differ"
print("wordlm %s: rows and dense inputs give the same curve and bytes" % sys.argv[1].split("lm-")[1].split("-")[0])
PY
    done
fi

# --- time limit: exit 124 -----------------------------------------------
run 2 --train-limit 1920 --test-limit 100 --epochs 100000 --timeout 1 > "$tmp/tl" 2>&1
rc=$?
[ $rc -eq 124 ] || bad "--timeout 1 exits $rc, expected 124"

[ $fail -eq 0 ] || { for f in "$tmp"/*; do [ -f "$f" ] && { echo "== $f"; tail -n 5 "$f"; }; done; }
exit $fail
