#!/usr/bin/python3
"""The Python binding on every rank (python_binding.sh runs it on 2):
reducers on numpy arrays and torch tensors in place, equal to what the C
library computes (the exact average for exact reducers; s2's error
reported), the sparse embedding gradient through reduce_sparse equal to the
dense form's reduction, gossip parameter mixing, a reducer's state saved
and loaded (checkpoints), and every error as the exception it should be, on every rank.  Rank 0 prints "ok: N of P ranks passed"."""
import sys

import numpy as np
from mpi4py import MPI
import torch
import rbreducer

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("rank %d: FAIL: %s" % (rank, what), flush=True)


def expect(exc, status, fn, what):
    """fn() raises exc (and, for rbreducer.Error, with .status)."""
    try:
        fn()
    except exc as e:
        if status is not None:
            check(getattr(e, "status", None) == status, "%s: status %s, not %s" % (what, e.status, status))
        check(str(e) != "", "%s: empty message" % what)
        return str(e)
    except Exception as e:  # noqa: BLE001 - the wrong exception is the failure
        check(False, "%s: raised %s (%s), not %s" % (what, type(e).__name__, e, exc.__name__))
        return ""
    check(False, "%s: no exception" % what)
    return ""


rng = np.random.default_rng(7 + rank)
n = 4096
mine = np.where(rng.random(n) < 0.1, rng.standard_normal(n), 0).astype(np.float32)
allv = np.zeros((size, n), np.float32)
comm.Allgather(mine, allv)
exact = allv.astype(np.float64).mean(axis=0)

check(set(rbreducer.reducers()) >= {"dense", "agsparse", "s2", "gossip"}, "registry")
check(rbreducer.traits("dense") == {"exact"} and "lossy" in rbreducer.traits("s2"), "traits")
check("sketch_width" in rbreducer.default_options("s2"), "default_options")

# Exact reducers: numpy and torch, in place, the average.
exact_names = [n for n in rbreducer.reducers() if rbreducer.traits(n) == {"exact"}]
check(len(exact_names) >= 7, "exact reducers: %s" % exact_names)
for name in exact_names:
    for kind in ("numpy", "torch"):
        buf = mine.copy() if kind == "numpy" else torch.from_numpy(mine.copy())
        with rbreducer.Reducer(name, comm, n) as r:
            st = r.reduce(buf)
        got = buf if kind == "numpy" else buf.numpy()
        err = float(np.max(np.abs(got - exact)))
        check(err < 1e-5, "%s on %s: max error %g" % (name, kind, err))
        check(st.bytes_sent > 0 or size == 1, "%s: no bytes counted" % name)

# none: no communication, the buffer as it was.
buf = mine.copy()
with rbreducer.Reducer("none", comm, n) as r:
    st = r.reduce(buf)
check(np.array_equal(buf, mine) and st.bytes_sent == 0, "none changed the buffer or sent bytes")

# s2: lossy, its error reported against the exact average, bytes counted.
buf = mine.copy()
with rbreducer.Reducer("s2", comm, n, options={"sketch_width_mode": "fraction",
                                                "sketch_width": 0.25, "sketch_rows": 3}) as r:
    st = r.reduce(buf)
    opts = r.options()
rel = float(np.linalg.norm(buf - exact) / max(np.linalg.norm(exact), 1e-30))
check(np.all(np.isfinite(buf)) and st.sketch_cols > 0, "s2: sketch_cols %d" % st.sketch_cols)
check(opts["sketch_rows"] == "3" and opts["sketch_width_mode"] == "fraction", "s2 options %s" % opts)
if rank == 0:
    print("s2 at 1/4 width, 3 rows: relative error %.3f, %d B sent" % (rel, st.bytes_sent))

# The sparse embedding gradient: reduce_sparse equals the dense form's reduction.
torch.manual_seed(1)
emb = torch.nn.Embedding(200, 8, sparse=True)
emb(torch.tensor([3, 17, 17, 50 + rank, 199])).pow(2).sum().backward()
dense = emb.weight.grad.to_dense().contiguous()
for name in ("agsparse", "dense", "s2"):
    opts = {"sketch_width_mode": "fraction", "sketch_width": 0.5} if name == "s2" else None
    with rbreducer.Reducer(name, comm, 200, 8, opts) as r:
        out, st = r.reduce_sparse(emb.weight.grad)
    with rbreducer.Reducer(name, comm, 200, 8, opts) as r:
        ref = dense.clone()
        r.reduce(ref)
    check(out.is_sparse and torch.equal(out.to_dense(), ref), "%s: reduce_sparse differs from reduce" % name)
    check(int(out.coalesce().indices().max()) < 200, "%s: row ids out of range" % name)

# Gossip: parameters mixed with the partner (2 ranks: the pair's average).
p = torch.full((64,), float(rank))
with rbreducer.Reducer("gossip", comm, 64, options={"gossip_mix": "params"}) as r:
    st = r.mix_params(p)
if size == 2:
    check(torch.allclose(p, torch.full((64,), 0.5)), "gossip mix_params: %s" % p[:3])

# Checkpoints: s2 with error feedback, its state saved after 3 calls and
# loaded into a new reducer; the next calls equal the first reducer's, bit
# for bit.  Another reducer's state is refused.
ef = {"sketch_width_mode": "fraction", "sketch_width": 0.1, "error_feedback": "on"}
steps = [np.where(rng.random(n) < 0.1, rng.standard_normal(n), 0).astype(np.float32) for _ in range(6)]
with rbreducer.Reducer("s2", comm, n, options=ef) as a, rbreducer.Reducer("s2", comm, n, options=ef) as b:
    for g in steps[:3]:
        a.reduce(g.copy())
    state = a.state_save()
    check(isinstance(state, bytes) and len(state) > 4 * n, "state_save: %d bytes" % len(state))
    b.state_load(state)
    for g in steps[3:]:
        ga, gb = g.copy(), g.copy()
        a.reduce(ga)
        b.reduce(gb)
        check(np.array_equal(ga, gb), "s2 after state_load differs from the reducer saved")
    with rbreducer.Reducer("dense", comm, n) as d:
        m = expect(rbreducer.Error, "RB_ERR_ARG", lambda: d.state_load(state), "another reducer's state")
        check("s2" in m, "state_load: message %r does not name the state's reducer" % m)

# Errors, each on every rank.
expect(rbreducer.Error, "RB_ERR_UNKNOWN_REDUCER", lambda: rbreducer.Reducer("nope", comm, 8), "unknown reducer")
m = expect(rbreducer.Error, "RB_ERR_ARG",
           lambda: rbreducer.Reducer("s2", comm, 8, options={"sketch_rows": 4}), "bad option")
check("sketch_rows" in m, "bad option: message %r does not name the option" % m)
expect(rbreducer.Error, "RB_ERR_MISMATCH", lambda: rbreducer.Reducer("dense", comm, 8 + rank),
       "ranks that disagree on the shape") if size > 1 else None
expect(rbreducer.Error, "RB_ERR_MISMATCH",
       lambda: rbreducer.Reducer("s2", comm, 64, options={"seed": rank}), "ranks that disagree on options") \
    if size > 1 else None
r = rbreducer.Reducer("dense", comm, 8)
expect(ValueError, None, lambda: r.reduce(np.zeros(9, np.float32)), "wrong length")
expect(TypeError, None, lambda: r.reduce(np.zeros(8, np.float64)), "float64")
expect(TypeError, None, lambda: r.reduce(np.zeros(16, np.float32)[::2]), "not contiguous")
expect(TypeError, None, lambda: r.reduce(torch.zeros(8).to_sparse()), "sparse tensor to reduce")
r.close()
expect(ValueError, None, lambda: r.reduce(np.zeros(8, np.float32)), "closed reducer")
expect(TypeError, None, lambda: rbreducer.Reducer("dense", "not a comm", 8), "not a communicator")

# One line from rank 0 for all: the ranks' lines can interleave in
# mpirun's output.
passed = comm.allreduce(0 if failures else 1)
if rank == 0:
    print("ok: %d of %d ranks passed" % (passed, size), flush=True)
sys.exit(1 if failures else 0)
