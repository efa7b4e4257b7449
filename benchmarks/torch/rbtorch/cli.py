"""Options of rb-torch-train: rb_train's names where they exist; usage
errors are one line on stderr (rank 0 only) and exit 2."""
import argparse
import math
import os
import sys

from torch_common import integer_at_least as _int, non_negative_float as _float

from . import PROG, models

# libreducer's registry (rbreducer.reducers() when the binding is there)
REDUCERS = ("none", "dense", "agsparse", "sparcml", "parallax", "omnireduce", "oktopk", "zen",
            "s2", "gossip")
DDP_HOOKS = ("allreduce", "fp16", "powersgd")


def world_rank():
    """This process's rank from the launcher's environment, before MPI."""
    for k in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        v = os.environ.get(k)
        if v is not None and v.isdigit():
            return int(v)
    return 0


def say_error(message):
    """One line naming the problem, on rank 0 only (every rank exits 2)."""
    if world_rank() == 0:
        sys.stderr.write("%s: %s\n" % (PROG, message))
        sys.stderr.flush()


class Parser(argparse.ArgumentParser):
    def error(self, message):
        say_error("%s (see --help)" % message)
        sys.exit(2)


def parser():
    p = Parser(prog=PROG, description=(
        "Data-parallel training in PyTorch, one process per rank (mpirun -np N / srun), with "
        "the gradients aggregated by a libreducer reducer through the rbreducer binding "
        "(--reducer) or by PyTorch's DistributedDataParallel over gloo with one of its "
        "communication hooks (--ddp). Writes rb_train's /train group to the results archive."),
        epilog="Example: mpirun -np 2 %s --model resnet18 --reducer dense --iterations 50 "
               "-o run.h5" % PROG)
    p.add_argument("--model", choices=models.MODELS, required=True,
                   help="lstm (dict-gcide language model, validation perplexity), resnet18 or "
                        "googlenet (Fashion-MNIST, test accuracy)")
    g = p.add_argument_group("aggregation (exactly one of --reducer, --ddp)")
    g.add_argument("--reducer", metavar="NAME",
                   help="libreducer reducer: %s" % " ".join(REDUCERS))
    g.add_argument("--dense-reducer", metavar="NAME",
                   help="reducer of the dense parameters beside lstm's embedding (default: "
                        "--reducer); image models have only dense parameters")
    g.add_argument("-O", "--option", dest="options", metavar="KEY=VALUE", action="append",
                   default=[], help="reducer option, repeatable (e.g. -O gossip_mix=params)")
    g.add_argument("--ddp", choices=DDP_HOOKS,
                   help="PyTorch DDP (gloo) with its default allreduce, fp16_compress_hook or "
                        "powerSGD_hook")
    g.add_argument("--powersgd-rank", type=_int(1), default=1,
                   help="PowerSGD's matrix_approximation_rank (default 1)")
    g.add_argument("--powersgd-start", type=_int(2), default=10,
                   help="PowerSGD's start_powerSGD_iter: plain allreduce before (default 10)")
    g.add_argument("--bucket-mb", type=_float, default=25.0,
                   help="dense bucket size in MiB: DDP's bucket_cap_mb, and the size of the "
                        "flat buffers (one reducer each) of --reducer (default 25)")
    t = p.add_argument_group("training")
    t.add_argument("--seed", type=_int(0), default=1,
                   help="initial parameters (the same on every rank and for --reducer and "
                        "--ddp) and sample order (default 1)")
    t.add_argument("--batch", type=_int(1), default=32, help="samples per rank per step (default 32)")
    t.add_argument("--iterations", type=_int(1), default=100, help="steps (default 100)")
    t.add_argument("--eval-every", type=_int(0), default=0,
                   help="evaluate every N steps (default 0: only after the last step)")
    t.add_argument("--lr", type=_float, default=None,
                   help="learning rate for the global batch (default: resnet18 0.05, googlenet 0.01, "
                        "lstm 0.5; at 2 ranks x 32, 200 steps: resnet18 76%%, googlenet 73%%)")
    t.add_argument("--momentum", type=_float, default=0.9, help="(default 0.9)")
    t.add_argument("--weight-decay", type=_float, default=0.0,
                   help="on dense parameters (default 0)")
    t.add_argument("--threads", type=_int(1), default=1,
                   help="torch.set_num_threads per rank (and OpenBLAS's threads) (default 1)")
    t.add_argument("--train-limit", type=_int(0), default=0,
                   help="first N training samples (lstm: windows) (default 0 = all)")
    t.add_argument("--test-limit", type=_int(0), default=None,
                   help="first N evaluation samples (lstm: validation windows) "
                        "(default: images all 10000, lstm 2000 windows)")
    d = p.add_argument_group("data")
    d.add_argument("--data", default=None,
                   help="Fashion-MNIST directory (default /usr/share/datasets/fashion-mnist) or "
                        "lstm's dictd dictionary (default /usr/share/dictd/gcide.dict.dz)")
    d.add_argument("--vocab", type=_int(3), default=10000,
                   help="lstm: <unk>, <eos> and the most frequent training words (default 10000)")
    d.add_argument("--context", type=_int(1), default=20,
                   help="lstm: words per window, a prediction at each (default 20)")
    d.add_argument("--embed-dim", type=_int(1), default=64, help="lstm (default 64)")
    d.add_argument("--hidden", type=_int(1), default=128, help="lstm: LSTM units (default 128)")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--output", metavar="FILE.h5", default=None,
                   help="results archive (default: rbreducer's default under results/; "
                        "'none' = no file)")
    o.add_argument("--force", action="store_true", help="replace an existing archive")
    return p


def parse(argv):
    p = parser()
    a = p.parse_args(argv)
    if (a.reducer is None) == (a.ddp is None):
        p.error("exactly one of --reducer NAME and --ddp {%s} is needed" % ",".join(DDP_HOOKS))
    if a.ddp is not None and (a.options or a.dense_reducer):
        p.error("--ddp takes no -O or --dense-reducer (they are libreducer's)")
    for opt, name in (("--reducer", a.reducer), ("--dense-reducer", a.dense_reducer)):
        if name is not None and name not in REDUCERS:
            p.error("%s: unknown reducer '%s' (one of: %s)" % (opt, name, " ".join(REDUCERS)))
    for kv in a.options:
        if "=" not in kv or kv.startswith("="):
            p.error("-O: '%s' is not KEY=VALUE" % kv)
    if a.ddp in ("fp16", "powersgd") and a.model == "lstm":
        p.error("--ddp %s: PyTorch's communication hooks take no sparse gradients (lstm's "
                "embedding); use --ddp allreduce" % a.ddp)
    if a.lr is None:
        a.lr = {"lstm": 0.5, "googlenet": 0.01}.get(a.model, 0.05)
    if a.test_limit is None:
        a.test_limit = 2000 if a.model == "lstm" else 0
    if a.dense_reducer is None:
        a.dense_reducer = a.reducer
    if a.data is None:
        from . import data
        a.data = data.GCIDE if a.model == "lstm" else data.FASHION_MNIST
    return a
