"""rb-torch-train's training loop and its two ways of aggregating
gradients:

ReducerSync (--reducer): every dense parameter lives in a flat float32
buffer (param.data is a view of it) and so does its gradient (param.grad a
view of another, zeroed each step, never set to None, so autograd adds into
it in place); buffers hold at most --bucket-mb MiB of parameters, in the
reverse order of model.parameters() (DDP's bucket order); one
rbreducer.Reducer per buffer reduces it in place after backward.  lstm's
embedding gradient (sparse COO) goes to its own reducer (rows = vocab, cols
= embed_dim) through reduce_sparse.  A gossip reducer with gossip_mix=params
(or both) mixes the parameter buffers after the update (mix_params).

DDPSync (--ddp): torch.nn.parallel.DistributedDataParallel over gloo with
bucket_cap_mb = --bucket-mb and DDP's own allreduce, fp16_compress_hook or
powerSGD_hook.  The allreduce runs inside backward (DDP overlaps it with
the gradient computation), so backward_s holds it and reduce_s is 0.

Both paths: the same initial parameters (models.build with --seed), the
same samples (each step a global batch of batch x ranks samples of a
per-epoch permutation seeded by (seed, epoch); rank r takes its r-th slice),
the same mean loss per rank, gradients averaged over the ranks, and the
same update (torch.optim.SGD, foreach=False, on the dense parameters; the
embedding: momentum SGD with a dense momentum buffer and sparse gradient).
"""
import math
import socket
import time

import numpy as np


STAT_FIELDS = ("bytes_sent", "bytes_recv", "msgs_sent", "nnz_local", "nnz_result", "skipped",
               "sketch_cols", "t_encode", "t_comm", "t_decode", "t_wait")


class StepStats:
    """rb_stats of one step summed over a rank's reducer calls."""

    def __init__(self):
        for k in STAT_FIELDS:
            setattr(self, k, 0)
        self.partner = -1

    def add(self, st):
        for k in STAT_FIELDS:
            setattr(self, k, getattr(self, k) + (getattr(st, k, 0) or 0))
        p = getattr(st, "partner", -1)
        if p is not None and p >= 0:
            self.partner = p


def _options_dict(pairs):
    return dict(kv.split("=", 1) for kv in pairs)


def _gossip_mixes_params(rb, name, options):
    return ("gossip" in rb.traits(name, options)
            and options.get("gossip_mix", "grad") in ("params", "both"))


class ReducerSync:
    def __init__(self, torch, rb, comm, net, dense, sparse, reducer, dense_reducer, options,
                 bucket_mb):
        self.torch, self.net = torch, net
        opts = list(options)
        od = _options_dict(options)
        cap = max(1, int(bucket_mb * (1 << 20)) // 4)
        self.buckets = []        # (flat params, flat grads, reducer, mixes params?)
        group, n = [], 0
        for p in reversed(dense):
            if group and n + p.numel() > cap:
                self._bucket(rb, comm, group, dense_reducer, opts, od)
                group, n = [], 0
            group.append(p)
            n += p.numel()
        if group:
            self._bucket(rb, comm, group, dense_reducer, opts, od)
        self.embed = None
        if sparse:
            w = sparse[0]
            r = rb.Reducer(reducer, comm, w.shape[0], w.shape[1], opts)
            self.embed = (w, r, _gossip_mixes_params(rb, reducer, od))
        self.main = self.embed[1] if self.embed else self.buckets[0][2]

    def _bucket(self, rb, comm, params, name, opts, od):
        torch = self.torch
        n = sum(p.numel() for p in params)
        flat_p = torch.empty(n, dtype=torch.float32)
        flat_g = torch.zeros(n, dtype=torch.float32)
        off = 0
        with torch.no_grad():
            for p in params:
                k = p.numel()
                flat_p[off:off + k].copy_(p.data.reshape(-1))
                p.data = flat_p[off:off + k].view_as(p)
                p.grad = flat_g[off:off + k].view_as(p)
                off += k
        r = rb.Reducer(name, comm, n, 1, opts)
        self.buckets.append((flat_p, flat_g, r, _gossip_mixes_params(rb, name, od)))

    @property
    def dense_parameters(self):
        return sum(b[0].numel() for b in self.buckets)

    def model(self):
        return self.net

    def zero_grad(self):
        for _, g, _, _ in self.buckets:
            g.zero_()
        if self.embed:
            self.embed[0].grad = None

    def reduce(self, step):
        """Reduce every gradient in place; (StepStats, rank's embedding
        non-zeros before the reduction)."""
        s = StepStats()
        for _, g, r, _ in self.buckets:
            s.add(r.reduce(g))
        nnz = 0
        if self.embed:
            w, r, _ = self.embed
            g = w.grad.coalesce()
            nnz = g._nnz() * w.shape[1]
            out, st = r.reduce_sparse(g)
            w.grad = out
            s.add(st)
        return s, nnz

    def after_update(self, s):
        for p, _, r, mix in self.buckets:
            if mix:
                s.add(r.mix_params(p))
        if self.embed and self.embed[2]:
            s.add(self.embed[1].mix_params(self.embed[0].data))

    def shares_buffers(self):
        """True when every rank holds the same model (exact reducers): then
        rank 0's BatchNorm statistics are the model's, as DDP's broadcast."""
        return not any(b[3] for b in self.buckets) and self.buckets[0][2] is not None

    def close(self):
        for b in self.buckets:
            b[2].close()
        if self.embed:
            self.embed[1].close()


def _allreduce_bytes(p, nbytes):
    """libreducer's ring model of an allreduce of nbytes (docs/wire-bytes.md:
    rb_allreduce sends and receives 2(p-1)/p B)."""
    return int(round(2.0 * (p - 1) / p * nbytes)) if p > 1 else 0


def _one_bucket_at_a_time(torch, hook):
    """PowerSGD's hook, each bucket's chain of allreduces finished before
    the next bucket's starts.  Its later allreduces are submitted from
    gloo's callback threads, so two buckets' chains interleave in a
    different order on different ranks, and gloo, which matches
    collectives by order, mixes them up (seen here: "op.preamble.length <=
    op.nbytes" and an abort, whenever the timing shifted, e.g. after an
    evaluation).  Waiting costs the overlap with backward, which two CPU
    cores shared with the gradient computation hardly give anyway."""
    def serial(state, bucket):
        done = torch.futures.Future()
        done.set_result(hook(state, bucket).wait())
        return done
    return serial


class DDPSync:
    """DDP over gloo; bytes per step counted as libreducer counts its own
    (docs/wire-bytes.md), from what the hook hands to gloo:
      allreduce: one allreduce of the 4-byte gradients: 2(p-1)/p x 4 N
      fp16:      the same of 2-byte halves: 2(p-1)/p x 2 N
      powersgd:  before start_powerSGD_iter as allreduce; then per bucket an
                 allreduce of the uncompressed tensors (1-D ones and those
                 PowerSGD's _should_compress leaves: (rows + cols) r x 2 >=
                 rows x cols, the tensor seen as shape[0] x rest), one of the
                 P matrices (rows x r each) and one of the Q matrices
                 (cols x r each), all float32: 2(p-1)/p x 4 x their elements
      sparse (lstm's embedding, DDP's own sparse allreduce: gloo allgathers
                 every rank's coalesced rows): sent (p-1) x this rank's
                 rows x (8 B index + 4 B x dim), received counted the same
                 (rank 0 does not see the other ranks' row counts).
    N: the dense parameters' elements.  DDP's bucket broadcasts (BatchNorm
    buffers, broadcast_buffers=True) are not counted, as libreducer does not
    count what is not the gradient."""

    def __init__(self, torch, comm, net, dense, sparse, hook, rank, start, bucket_mb):
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        hosts = comm.allgather(socket.gethostname())
        port = None
        if comm.rank == 0:
            s = socket.socket()
            s.bind(("", 0))
            port = s.getsockname()[1]
            s.close()
        port = comm.bcast(port, root=0)
        host = "127.0.0.1" if len(set(hosts)) == 1 else hosts[0]
        import datetime
        dist.init_process_group("gloo", init_method="tcp://%s:%d" % (host, port),
                                rank=comm.rank, world_size=comm.size,
                                timeout=datetime.timedelta(minutes=10))
        self.torch, self.net, self.p, self.hook = torch, net, comm.size, hook
        self.ddp = DDP(net, bucket_cap_mb=bucket_mb)
        self.dense, self.sparse, self.start = dense, sparse, start
        self.n_dense = sum(q.numel() for q in dense)
        if hook == "fp16":
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            self.ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
        elif hook == "powersgd":
            from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps
            self.state = ps.PowerSGDState(process_group=None, matrix_approximation_rank=rank,
                                          start_powerSGD_iter=start)
            self.ddp.register_comm_hook(self.state, _one_bucket_at_a_time(torch, ps.powerSGD_hook))
            self.ps_elements = self._powersgd_elements(rank)

    def _powersgd_elements(self, r):
        """Elements PowerSGD allreduces per step once compressing."""
        total = 0
        for q in self.dense:
            if q.dim() <= 1:
                total += q.numel()
                continue
            rows = q.shape[0]
            cols = q.numel() // rows
            rank = min(rows, cols, r)
            if (rows + cols) * rank * 2 < rows * cols:       # _should_compress, rate 2
                total += (rows + cols) * rank
            else:
                total += q.numel()
        return total

    @property
    def dense_parameters(self):
        return self.n_dense

    def model(self):
        return self.ddp

    def zero_grad(self):
        for q in self.dense:
            q.grad = None
        for q in self.sparse:
            q.grad = None

    def reduce(self, step):
        s = StepStats()
        if self.hook == "fp16":
            b = _allreduce_bytes(self.p, 2 * self.n_dense)
        elif self.hook == "powersgd" and step >= self.start:
            b = _allreduce_bytes(self.p, 4 * self.ps_elements)
        else:
            b = _allreduce_bytes(self.p, 4 * self.n_dense)
        nnz = 0
        if self.sparse:
            w = self.sparse[0]
            rows = w.grad.coalesce()._nnz() if w.grad is not None else 0
            nnz = rows * w.shape[1]
            b += (self.p - 1) * rows * (8 + 4 * w.shape[1])
        s.bytes_sent = s.bytes_recv = b
        return s, nnz

    def after_update(self, s):
        pass

    def shares_buffers(self):
        return True      # broadcast_buffers: every rank runs with rank 0's

    def close(self):
        import torch.distributed as dist
        dist.destroy_process_group()


def _sgd_sparse(torch, w, v, lr, momentum):
    """Momentum SGD of an embedding table with a sparse gradient: v = mu v +
    g (v dense), w -= lr v."""
    g = w.grad
    if g is None:
        return
    g = g.coalesce()
    idx, vals = g.indices()[0], g.values()
    with torch.no_grad():
        if momentum:
            v.mul_(momentum)
            v.index_add_(0, idx, vals)
            w.add_(v, alpha=-lr)
        else:
            w.index_add_(0, idx, vals, alpha=-lr)


class Result:
    def __init__(self):
        self.curves, self.phases, self.stats = [], [], []
        self.iterations = 0
        self.wall_s = 0.0
        self.diverged = False
        self.final = {"train_loss": float("nan"), "test_accuracy": float("nan"),
                      "val_perplexity": float("nan")}
        self.forward_backward_s = 0.0


def train(torch, a, comm, net, sync, dense, sparse, ds, log):
    """Run a.iterations steps; ds: the data (see rb-torch-train).  Returns a
    Result (rank 0's phases and curves)."""
    from mpi4py import MPI
    F = torch.nn.functional
    rank, p = comm.rank, comm.size
    B = a.batch
    gb = B * p
    steps_per_epoch = ds.n_train // gb
    opt = torch.optim.SGD(dense, lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay,
                          foreach=False)
    vbuf = torch.zeros_like(sparse[0]) if sparse and a.momentum else None
    model = sync.model()
    res = Result()
    tally = np.zeros(3)      # loss sum, correct, samples since the last evaluation
    perm, epoch = None, -1
    t_start = time.perf_counter()
    for it in range(a.iterations):
        e, s = divmod(it, steps_per_epoch)
        if e != epoch:
            epoch = e
            perm = torch.from_numpy(np.random.default_rng([a.seed, e]).permutation(ds.n_train))
        idx = perm[s * gb + rank * B: s * gb + (rank + 1) * B]
        model.train()
        t0 = time.perf_counter()
        x, y = ds.batch(idx)
        sync.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        st, nnz = sync.reduce(it)
        t3 = time.perf_counter()
        opt.step()
        if sparse:
            _sgd_sparse(torch, sparse[0], vbuf, a.lr, a.momentum)
        sync.after_update(st)
        t4 = time.perf_counter()
        lv = loss.item()
        with torch.no_grad():
            correct = int((out.argmax(1) == y).sum())
        tally += (lv * y.numel(), correct, y.numel())
        res.forward_backward_s += t2 - t0
        if rank == 0:
            res.phases.append((it + 1, t1 - t0, t2 - t1, t3 - t2, t4 - t3, lv,
                               st.bytes_sent, st.bytes_recv, nnz))
            res.stats.append((it + 1, st.msgs_sent, st.nnz_local, st.nnz_result, st.skipped,
                              st.sketch_cols, st.partner, st.t_encode, st.t_comm, st.t_decode,
                              st.t_wait))
        res.iterations = it + 1
        last = it + 1 == a.iterations
        if last or (a.eval_every and (it + 1) % a.eval_every == 0):
            tot = comm.allreduce(tally, op=MPI.SUM)
            tally[:] = 0
            train_loss = tot[0] / tot[2]
            if sync.shares_buffers():
                for b in net.buffers():
                    comm.Bcast(b.detach().numpy(), root=0)
            test_loss, test_acc = ds.evaluate(net)
            wall = time.perf_counter() - t_start
            img = ds.kind == "images"
            ppl = float("nan") if img else (math.exp(test_loss) if test_loss < 700 else float("inf"))
            row = (it + 1, (it + 1) / steps_per_epoch, wall, train_loss,
                   100.0 * tot[1] / tot[2], test_loss, test_acc if img else float("nan"), ppl)
            res.curves.append(row)
            log("eval iter %d epoch %.3f wall %.1f s train_loss %.4f test_loss %.4f %s"
                % (it + 1, row[1], wall, train_loss, test_loss,
                   "test_accuracy %.2f%%" % test_acc if img else "val_perplexity %.2f" % ppl))
            res.final = {"train_loss": train_loss,
                         "test_accuracy": test_acc if img else float("nan"),
                         "val_perplexity": ppl}
            if not (math.isfinite(train_loss) and math.isfinite(test_loss)):
                res.diverged = True
                break
    res.wall_s = time.perf_counter() - t_start
    res.steps_per_epoch = steps_per_epoch
    return res
