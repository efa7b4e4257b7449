#!/bin/sh
# benchmarks/torch/rb-torch-train (PyTorch data parallel, libreducer through
# the rbreducer binding or PyTorch's DDP) at 2 ranks, a few steps each:
# usage errors (one line, exit 2), every model, the reducers the main job
# uses (dense, gossip with parameter mixing, s2, agsparse), DDP's three
# hooks, the /train group rb-report reads (rb_train's columns), finite
# losses, and dense through the binding equal to DDP's allreduce step by
# step (relative 1e-4; same parameters, samples and averaging).
# SKIP (77) without torch or mpi4py for /usr/bin/python3, or when configure
# built no Python binding (the driver needs it and the harness module).
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-${builddir:-.}}
py=/usr/bin/python3
drv="$top_srcdir/benchmarks/torch/rb-torch-train"
export PYTHONPATH="$top_srcdir/src/python:$top_builddir/src/python/.libs:$top_builddir/benchmarks/torch/.libs${PYTHONPATH:+:$PYTHONPATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
"$py" -c 'import torch, torchvision' 2>/dev/null ||
    { echo "SKIP: $py cannot import torch and torchvision (Debian python3-torch, python3-torchvision)" >&2; exit 77; }
"$py" -c 'import mpi4py, h5py' 2>/dev/null ||
    { echo "SKIP: $py cannot import mpi4py and h5py (Debian python3-mpi4py, python3-h5py)" >&2; exit 77; }
[ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
    { echo "SKIP: /usr/share/datasets/fashion-mnist missing (dataset-fashion-mnist)" >&2; exit 77; }
[ -r /usr/share/dictd/gcide.dict.dz ] || { echo "SKIP: /usr/share/dictd/gcide.dict.dz missing (dict-gcide)" >&2; exit 77; }
"$py" -c 'import rbreducer, _rbharness' 2>/dev/null ||
    { echo "SKIP: no Python binding built (configure: Python binding no)" >&2; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
run2() {   # mpirun at 2 ranks, at most 60 s a run
    if [ -n "${MPIRUN:-}" ]; then timeout 60 "$MPIRUN" 2 "$py" "$drv" "$@"
    else timeout 60 mpirun --bind-to none -np 2 --mca btl self,vader "$py" "$drv" "$@"; fi
}

# --- usage: --help, and bad input refused with one line, exit 2 ---------
"$py" "$drv" --help >"$tmp/help" 2>&1 || bad "--help exits non-zero"
for o in --model --reducer --ddp -O --seed --batch --iterations --eval-every --lr --momentum \
         --threads --train-limit --test-limit --output --force --bucket-mb --powersgd-rank; do
    grep -q -- "$o" "$tmp/help" || bad "--help does not mention $o"
done
for args in "--model vgg --ddp allreduce|vgg" "--model resnet18 --reducer nosuch|nosuch" \
            "--model resnet18 --reducer dense --ddp allreduce|--reducer" \
            "--model resnet18|--ddp" "--model lstm --ddp fp16|sparse" "--model resnet18 --ddp x|--ddp"; do
    what=${args##*|} args=${args%|*}
    # shellcheck disable=SC2086
    "$py" "$drv" $args -o none >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || bad "'$args': exit $rc, expected 2"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "'$args': not one line: $(cat "$tmp/err")"
    grep -q -- "$what" "$tmp/err" || bad "'$args': the message does not name $what: $(cat "$tmp/err")"
done

# --- training runs ---------------------------------------------------------
small="--train-limit 1024 --test-limit 100 --seed 3 --force"
train() {   # NAME ARGS...: run, archive NAME.h5, log NAME.log
    name=$1; shift
    run2 "$@" $small -o "$tmp/$name.h5" >"$tmp/$name.log" 2>&1 ||
        { bad "$name ($*): exit $?: $(tail -3 "$tmp/$name.log")"; return; }
    echo "$name" >>"$tmp/runs"
}
: >"$tmp/runs"
train ddp-allreduce --model resnet18 --ddp allreduce --iterations 6
train ddp-fp16 --model resnet18 --ddp fp16 --iterations 3
train ddp-powersgd --model resnet18 --ddp powersgd --powersgd-start 2 --iterations 4
train dense --model resnet18 --reducer dense --iterations 6
train gossip --model resnet18 --reducer gossip -O gossip_mix=params --iterations 3
train googlenet --model googlenet --reducer dense --iterations 3
train lstm-s2 --model lstm --reducer s2 --dense-reducer dense --iterations 3
train lstm-agsparse --model lstm --reducer agsparse --iterations 3

# --- archives ---------------------------------------------------------------
# The harness's archive: every root attribute and /train as results/README.md
# documents them.
(cd "$tmp" && "$py" "$top_srcdir/tests/archive/archive_schema_check.py" "$top_srcdir/docs/archive-schema.json" \
    $(sed 's/$/.h5/' runs)) || bad "archives do not conform to results/README.md"
"$py" - "$tmp" $(cat "$tmp/runs") <<'PY' || bad "archives: see above"
import math, sys
import h5py
import numpy as np
d, names = sys.argv[1], sys.argv[2:]
CURVE = ["iteration", "epoch", "wall_s", "train_loss", "train_accuracy", "test_loss",
         "test_accuracy", "val_perplexity"]
PHASE = ["iteration", "forward_s", "backward_s", "reduce_s", "update_s", "loss", "bytes_sent",
         "bytes_recv", "embed_nnz"]
bad = 0
def fail(msg):
    global bad
    print("FAIL:", msg)
    bad = 1
loss = {}
for n in names:
    with h5py.File("%s/%s.h5" % (d, n), "r") as f:
        if f.attrs.get("complete") != 1:
            fail("%s: complete != 1" % n)
        g = f.get("train")
        if g is None:
            fail("%s: no /train" % n)
            continue
        c, p = g["curves"][...], g["phases"][...]
        if list(c.dtype.names) != CURVE:
            fail("%s: /train/curves columns %s" % (n, c.dtype.names))
        if list(p.dtype.names) != PHASE:
            fail("%s: /train/phases columns %s" % (n, p.dtype.names))
        a = g.attrs
        its = int(a["iterations"])
        if len(p) != its or len(c) != 1 or its < 1:
            fail("%s: %d phase rows, %d curve rows, iterations %d" % (n, len(p), len(c), its))
        if not np.all(np.isfinite(p["loss"])) or not math.isfinite(a["final_train_loss"]):
            fail("%s: losses not finite: %s" % (n, p["loss"]))
        if a["driver"] != "pytorch" or not str(a["framework_version"]):
            fail("%s: driver %r framework_version %r" % (n, a["driver"], a["framework_version"]))
        want = n if n.startswith("ddp-") else n.split("-")[-1] if n.startswith("lstm") else \
            "dense" if n == "googlenet" else n
        if a["reducer"] != want:
            fail("%s: /train@reducer %r, expected %r" % (n, a["reducer"], want))
        if n.startswith("ddp-") == ("reducer_options" in g):
            fail("%s: /train/reducer_options %s" % (n, "present" if "reducer_options" in g else "missing"))
        lstm = n.startswith("lstm")
        if lstm != math.isnan(a["final_test_accuracy"]) or lstm == math.isnan(a["final_val_perplexity"]):
            fail("%s: final_test_accuracy %s, final_val_perplexity %s" % (n, a["final_test_accuracy"],
                                                                          a["final_val_perplexity"]))
        if lstm and (a["embedding_parameters"] == 0 or not np.all(p["embed_nnz"] > 0)):
            fail("%s: embedding %d parameters, embed_nnz %s" % (n, a["embedding_parameters"], p["embed_nnz"]))
        if not np.all(p["bytes_sent"] > 0):
            fail("%s: bytes_sent %s" % (n, p["bytes_sent"]))
        if min(p["forward_s"].min(), p["backward_s"].min()) <= 0:
            fail("%s: phase times not positive" % n)
        loss[n] = p["loss"]
        if n == "ddp-powersgd" and not p["bytes_sent"][-1] < p["bytes_sent"][0] / 10:
            fail("ddp-powersgd: bytes per step %s: no compression after start_powerSGD_iter 2"
                 % p["bytes_sent"])
        if n == "ddp-fp16" and "ddp-allreduce" in loss and \
                not 2 * p["bytes_sent"][0] == loss_bytes:
            fail("ddp-fp16: %d bytes per step, not half of allreduce's %d" % (p["bytes_sent"][0], loss_bytes))
        if n == "ddp-allreduce":
            loss_bytes = int(p["bytes_sent"][0])
if "dense" in loss and "ddp-allreduce" in loss:
    a, b = loss["dense"], loss["ddp-allreduce"]
    rel = np.abs(a - b) / np.maximum(np.abs(b), 1e-30)
    if len(a) != len(b) or rel.max() > 1e-4:
        fail("dense vs DDP allreduce losses differ (max relative %.3g):\n  %s\n  %s" % (rel.max(), a, b))
sys.exit(bad)
PY
exit $fail
