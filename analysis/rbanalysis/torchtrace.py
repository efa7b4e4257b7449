"""Record a PyTorch model's sparse embedding gradients into a reducerbench
gradient trace (the HDF5 layout of results/README.md, "Gradient traces"),
which rb_micro --input trace:FILE.h5 replays through every reducer.

Use it with your own model:

    rec = TraceRecorder(model, ranks=4, model_name="mymodel")
    for step in range(1, steps + 1):
        for rank in range(4):                 # one batch per simulated rank
            model.zero_grad()
            loss_fn(model(batch[rank])).backward()
            rec.capture(step, rank)           # the hooks saw the gradients
        ...                                   # the optimiser step
    rec.write("trace.h5")

Every nn.Embedding(sparse=True) of the model gets a hook on its weight that
keeps the gradient of the last backward pass; capture() stores it, coalesced
(row ids ascending, duplicates summed), as rank's rows at step (a gradient
that is not finite raises TraceError: the reader refuses such a trace).  Ranks here
are batches: p batches of one step recorded as p data-parallel ranks (what
p processes under torch.distributed would each hold before their
allreduce), so no process group is needed.  Only torch, numpy and h5py are
imported, and only when a recorder is made."""

import datetime

FORMAT = "reducerbench-gradient-trace"
VERSION = 1
MAX_BYTES = 1 << 30        # BENCH_TRACE_MAX_BYTES in benchmarks/harness/trace.h


class TraceError(Exception):
    pass


class TraceRecorder:
    def __init__(self, model, ranks, model_name="torch", record_every=1, max_bytes=64 << 20):
        import torch
        if ranks < 1:
            raise TraceError("ranks must be >= 1")
        if max_bytes > MAX_BYTES:
            raise TraceError("a trace holds at most %d bytes" % MAX_BYTES)
        self.ranks, self.model_name, self.record_every = ranks, model_name, record_every
        self.max_bytes, self.bytes, self.capped = max_bytes, 0, False
        self.layers = {}     # name -> {"rows", "cols", "steps": {step: [rows of each rank]}}
        self._last = {}
        for name, mod in model.named_modules():
            if isinstance(mod, torch.nn.Embedding) and mod.sparse:
                name = name or "embedding"
                self.layers[name] = {"rows": mod.num_embeddings, "cols": mod.embedding_dim,
                                     "steps": {}}
                mod.weight.register_hook(self._hook(name))
        if not self.layers:
            raise TraceError("the model has no nn.Embedding(sparse=True)")

    def _hook(self, name):
        def keep(grad):
            self._last[name] = grad
            return grad
        return keep

    def capture(self, step, rank):
        """The gradients of the last backward pass as rank's at step; False
        when the step is not recorded (record_every) or the trace is capped."""
        import numpy as np
        if step % self.record_every or self.capped:
            return False
        rows = {}
        size = 0
        for name, layer in self.layers.items():
            g = self._last.pop(name, None)
            if g is None:
                raise TraceError("no gradient reached embedding %s at step %d, rank %d"
                                 % (name, step, rank))
            g = g.coalesce() if g.is_sparse else g.to_sparse(1).coalesce()
            ids = g.indices()[0].cpu().numpy().astype("int64")
            vals = g.values().detach().cpu().numpy().astype("float32").reshape(len(ids),
                                                                               layer["cols"])
            if not np.isfinite(vals).all():
                # rb_micro refuses such a trace; one marked complete would
                # claim a recording that cannot be replayed
                raise TraceError("the gradient of embedding %s at step %d, rank %d is not finite "
                                 "(NaN or Inf: the training diverged; try a smaller learning rate)"
                                 % (name, step, rank))
            keep = (vals != 0).any(axis=1)   # rows whose gradient cancelled are not non-zero
            rows[name] = (ids[keep], vals[keep])
            size += int(keep.sum()) * (8 + 4 * layer["cols"])
        if self.bytes + size > self.max_bytes:
            self.capped = True
            return False
        self.bytes += size
        for name, r in rows.items():
            self.layers[name]["steps"].setdefault(step, [None] * self.ranks)[rank] = r
        return True

    def write(self, path, force=False):
        """Write the trace to path: to PATH.tmp.HOST.PID first, renamed when
        whole, so a failure (a full disk) leaves nothing at path."""
        import io
        import os
        from . import atomic
        if os.path.exists(path) and not force:
            raise TraceError("%s exists (force=True overwrites it)" % path)
        # Built in memory and written with plain file I/O, as rb-archive
        # merge does: HDF5 meeting a full disk crashed the process at exit
        # (SIGSEGV); a failing write() says ENOSPC and is cleaned up.
        image = io.BytesIO()
        try:
            self._write_file(image)
            atomic.write_bytes(path, image.getbuffer(), force)
        except atomic.AppearedMeanwhile:
            raise TraceError("%s appeared while recording (force=True overwrites it)" % path)
        except (OSError, ValueError) as e:
            raise TraceError("cannot write %s: %s" % (path, getattr(e, "strerror", None) or e))

    def _write_file(self, target):
        import h5py
        import numpy as np
        with h5py.File(target, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = np.int64(VERSION)
            f.attrs["model"] = self.model_name
            f.attrs["source"] = "rb-torch-trace"
            f.attrs["ranks"] = np.int64(self.ranks)
            f.attrs["record_every"] = np.int64(self.record_every)
            f.attrs["max_bytes"] = np.uint64(self.max_bytes)
            f.attrs["capped"] = np.int64(self.capped)
            f.attrs["created_utc"] = datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
            f.attrs["complete"] = np.int64(0)
            for name, layer in self.layers.items():
                steps = sorted(s for s, per in layer["steps"].items() if all(
                    r is not None for r in per))
                g = f.create_group("layers/" + name)
                g.attrs["rows"] = np.uint64(layer["rows"])
                g.attrs["cols"] = np.uint64(layer["cols"])
                g.attrs["kind"] = "embedding"
                cols = layer["cols"]
                per = [layer["steps"][s] for s in steps]
                g["steps"] = np.array(steps, dtype="int64")
                g["counts"] = np.array([[len(r[0]) for r in ranks] for ranks in per],
                                       dtype="int64").reshape(len(steps), self.ranks)
                g["ids"] = np.concatenate([r[0] for ranks in per for r in ranks]
                                          or [np.zeros(0, "int64")]).astype("int64")
                g["values"] = np.concatenate([r[1] for ranks in per for r in ranks]
                                             or [np.zeros((0, cols), "float32")]).astype(
                                                 "float32").reshape(-1, cols)
            f.attrs["complete"] = np.int64(1)   # last: a crash leaves an incomplete trace
