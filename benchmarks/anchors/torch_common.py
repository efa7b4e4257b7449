#!/usr/bin/python3
"""What torch_lenet.py and torch_wordlm.py share: rb_train's random numbers,
initial parameters, sample order, learning-rate schedule, options and its
training loop, so that both sides train the same model on the same samples
in the same order and time the same work (see docs/training.md, "PyTorch
anchors").

Imported by the two scripts; not run on its own.
"""
import argparse
import ctypes
import math
import os
import sys
import time

import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z):
    """splitmix64's output function on a numpy uint64 array."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class Rng:
    """rb_train's nn_rng_next / nn_rng_uniform (splitmix64): the k-th
    draw is a function of state + k * GOLDEN, so draws come out as arrays."""

    def __init__(self, state):
        self.state = state & MASK64

    def next_u64(self, n):
        k = np.arange(1, n + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = np.uint64(self.state) + k * np.uint64(GOLDEN)
        self.state = (self.state + n * GOLDEN) & MASK64
        return _mix(z)

    def uniform(self, n):
        """[0, 1) doubles, as nn_rng_uniform."""
        return (self.next_u64(n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def init_weights(rng, n, bound):
    """He-uniform weights as rb_train's init_params: (2u - 1) * bound, in
    double, rounded to float."""
    return ((2.0 * rng.uniform(n) - 1.0) * bound).astype(np.float32)


def param_rng(seed):
    return Rng(seed ^ 0x5EEDF00D)


def permutation(n, seed):
    """rb_train's permute(): Fisher-Yates from the top with splitmix64."""
    r = Rng(seed).next_u64(max(n - 1, 0))
    tops = np.arange(n, 1, -1, dtype=np.uint64)
    js = (r % tops).astype(np.int64).tolist()
    p = list(range(n))
    for i, j in zip(range(n, 1, -1), js):
        p[i - 1], p[j] = p[j], p[i - 1]
    return np.asarray(p, dtype=np.int64)


def epoch_seed(seed, epoch, rank=0):
    return (seed * 1000003 + epoch * 7919 + rank) & MASK64


def lr_at(a, t, total):
    """rb_train's lr_at: linear warm-up, then cosine / step / const."""
    lr = a.lr
    if a.warmup > 0 and t < a.warmup:
        lr *= (t + 1) / a.warmup
    f = t / total if total > 0 else 0.0
    if a.schedule == "cosine":
        lr *= 0.5 * (1.0 + math.cos(math.pi * f))
    elif a.schedule == "step":
        lr *= 0.01 if f >= 0.75 else 0.1 if f >= 0.5 else 1.0
    return lr


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line naming the problem, exit 2."""

    def error(self, message):
        sys.stderr.write("%s: %s (see --help)\n" % (self.prog, message))
        sys.exit(2)


class _Moved(argparse.Action):
    """An old option name, refused naming the new one (as rb_train does):
    never taken silently for something else."""

    def __init__(self, option_strings, dest, new_text, **kw):
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS, **kw)
        self.new_text = new_text

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error("%s: %s" % (option_string, self.new_text))


def integer_at_least(least):
    """An argparse type: an integer >= least (rb-torch-train's options too)."""
    return lambda s: _integer(s, least)


def _integer(s, least):
    try:
        v = int(s)
    except ValueError:
        v = least - 1
    if v < least:
        raise argparse.ArgumentTypeError("'%s' is not an integer >= %d" % (s, least))
    return v


def positive(s):
    return _integer(s, 1)


def _non_negative(s):
    return _integer(s, 0)


def non_negative_float(s):
    try:
        v = float(s)
    except ValueError:
        v = -1.0
    if not v >= 0.0 or math.isinf(v):
        raise argparse.ArgumentTypeError("'%s' is not a number >= 0" % s)
    return v


def parser(prog, description, data_default, lr_default, blas_threads, omp_wait):
    """Options with rb_train's names and defaults; blas_threads (0 = as
    --threads) and omp_wait: this model's fastest PyTorch setting here."""
    p = _Parser(prog=prog, description=description)
    p.add_argument("--data", default=data_default, help="default %(default)s")
    p.add_argument("--batch", type=positive, default=64, help="samples per step (default 64)")
    p.add_argument("--threads", type=positive, default=1,
                   help="torch.set_num_threads, as rb_train --threads (default 1)")
    p.add_argument("--blas-threads", type=positive, default=blas_threads or None,
                   help="OpenBLAS threads (torch.nn.Linear) (default %s)"
                   % (blas_threads or "as --threads"))
    p.add_argument("--omp-wait", choices=("active", "passive"), default=omp_wait,
                   help="OMP_WAIT_POLICY of torch's OpenMP threads (default %(default)s)")
    p.add_argument("--epochs", type=positive, default=1, help="(default 1)")
    p.add_argument("--iterations", type=_non_negative, default=0,
                   help="stop after N steps (default 0 = epochs decide)")
    p.add_argument("--lr", type=non_negative_float, default=lr_default,
                   help="(default %(default)s)")
    p.add_argument("--momentum", type=non_negative_float, default=0.9, help="(default 0.9)")
    p.add_argument("--weight-decay", type=non_negative_float, default=5e-4,
                   help="on dense parameters (default 5e-4)")
    p.add_argument("--lr-warmup", dest="warmup", metavar="N", type=_non_negative, default=100,
                   help="iterations of linear learning-rate warm-up (default 100)")
    p.add_argument("--warmup", action=_Moved, dest="moved_warmup",
                   new_text="the learning-rate warm-up is --lr-warmup N, as in rb_train")
    p.add_argument("--schedule", choices=("const", "cosine", "step"), default="cosine",
                   help="(default cosine)")
    p.add_argument("--seed", type=_non_negative, default=1, help="parameters, order (default 1)")
    p.add_argument("--train-limit", type=_non_negative, default=0,
                   help="first N training samples (default 0 = all)")
    p.add_argument("--test-limit", type=_non_negative, default=0,
                   help="first N evaluation samples (default 0 = all)")
    p.add_argument("--no-eval", action="store_true",
                   help="skip the evaluation at the end (timing runs)")
    return p


def _openblas():
    """The OpenBLAS that torch's BLAS calls reach (Debian: libblas.so.3 is a
    shim over libopenblas.so.0, which numpy loads too), or None."""
    try:
        ob = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        ob.openblas_get_corename.restype = ctypes.c_char_p
        ob.openblas_get_num_threads()
        return ob
    except (OSError, AttributeError):
        return None


def import_torch(prog, a):
    """torch, with OpenMP (oneDNN, ATen) at --threads threads, waiting as
    --omp-wait says, and OpenBLAS (torch.nn.Linear in Debian's build) at
    --blas-threads: torch.set_num_threads does not reach OpenBLAS, which
    otherwise runs one thread per core (2 here) beside OpenMP's."""
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OMP_WAIT_POLICY"] = a.omp_wait.upper()
    try:
        import torch
    except ImportError as e:
        sys.stderr.write("%s: PyTorch is not importable (%s); Debian: apt-get install "
                         "python3-torch, run with /usr/bin/python3\n" % (prog, e))
        sys.exit(1)
    torch.set_num_threads(a.threads)
    ob = _openblas()
    if ob:
        ob.openblas_set_num_threads(a.blas_threads or a.threads)
    return torch


def blas_threads():
    ob = _openblas()
    if not ob:
        return "not found"
    return "%d, %s" % (ob.openblas_get_num_threads(), ob.openblas_get_corename().decode())


def limited(n, limit):
    return min(n, limit) if limit else n


def train(torch, a, net, groups, n_train, batch_fn, loss_fn, evaluate, header):
    """rb_train's loop on 1 rank: per epoch a new permutation, per step the
    batch, forward, backward (timed together, as rb_train's forward_s +
    backward_s: the batch is built inside), then momentum SGD with the
    schedule's learning rate.  groups: optimizer param groups (weight decay
    per group).  Prints rb_train's timing: and final: lines."""
    steps = n_train // a.batch
    if steps < 1:
        sys.stderr.write("%s: --batch %d exceeds the %d training samples\n"
                         % (header["prog"], a.batch, n_train))
        sys.exit(2)
    total = steps * a.epochs
    if a.iterations and a.iterations < total:
        total = a.iterations
    print("%s: %s, torch %s, %d thread(s) (OpenMP wait %s; OpenBLAS: %s), batch %d, %d steps/epoch, %d steps, lr %g, "
          "momentum %g, weight decay %g, warmup %d, schedule %s"
          % (header["prog"], header["what"], torch.__version__, torch.get_num_threads(),
             a.omp_wait, blas_threads(), a.batch, steps, total, a.lr, a.momentum, a.weight_decay, a.warmup, a.schedule),
          flush=True)
    opt = torch.optim.SGD(groups, lr=a.lr, momentum=a.momentum)
    compute_s = steps_s = 0.0
    loss_sum = 0.0
    it = 0
    t_start = time.perf_counter()
    for epoch in range(a.epochs):
        if it >= total:
            break
        perm = torch.from_numpy(permutation(n_train, epoch_seed(a.seed, epoch)))
        for step in range(steps):
            if it >= total:
                break
            idx = perm[step * a.batch:(step + 1) * a.batch]
            t0 = time.perf_counter()
            x, y = batch_fn(idx)
            loss = loss_fn(net(x), y)
            loss.backward()
            t2 = time.perf_counter()
            lr = lr_at(a, it, total)
            for g in opt.param_groups:
                g["lr"] = lr
            opt.step()
            opt.zero_grad(set_to_none=True)
            t4 = time.perf_counter()
            compute_s += t2 - t0
            steps_s += t4 - t0
            loss_sum += loss.item()
            it += 1
    wall = time.perf_counter() - t_start
    print("timing: rank 0 forward+backward %.3f s, whole iterations %.3f s "
          "(%.3f s per epoch of %d steps)"
          % (compute_s, steps_s, steps_s / it * steps if it else 0.0, steps), flush=True)
    train_loss = loss_sum / it if it else float("nan")
    line = "final: iterations %d wall_s %.2f train_loss %.9g" % (it, wall, train_loss)
    with torch.no_grad():
        if not a.no_eval:
            line += " " + evaluate()
        # rb_train's checksums (sums in double over every parameter)
        ps = sum(q.double().sum().item() for q in net.parameters())
        pq = sum((q.double() ** 2).sum().item() for q in net.parameters())
    print(line + " param_sum %.9g param_sq %.9g" % (ps, pq), flush=True)
