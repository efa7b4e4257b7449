"""libreducer for Python: gradient reducers over an mpi4py communicator.

    from mpi4py import MPI
    import numpy as np, rbreducer
    g = np.ones(1 << 20, dtype=np.float32)
    with rbreducer.Reducer("s2", MPI.COMM_WORLD, g.size,
                           options={"sketch_width_mode": "fraction", "sketch_width": 0.01}) as r:
        st = r.reduce(g)          # g now holds the aggregate; st.bytes_sent ...

Buffers are reduced in place: contiguous float32 on the CPU, a numpy array
or a torch tensor (handed over as the numpy array sharing its memory, no
copy).  A sparse embedding gradient (torch sparse COO, as
nn.Embedding(sparse=True) leaves it) goes through reduce_sparse, or as
row ids and values through reduce_rows.  Every call is collective over the
communicator, as in C (src/reducer.h); every library error is raised as
rbreducer.Error with the library's message, .code and .status; ranks that
disagree on the reducer, its shape or its options are refused on every
rank (Error, status RB_ERR_MISMATCH).
"""
import numpy as np

from _rbreducer import Error, Stats, version  # noqa: F401  (re-exported)
import _rbreducer

__all__ = ["Error", "Stats", "Reducer", "reducers", "traits", "description",
           "default_options", "version"]

_TRAITS = (("exact", _rbreducer.TRAIT_EXACT), ("lossy", _rbreducer.TRAIT_LOSSY),
           ("gossip", _rbreducer.TRAIT_GOSSIP), ("nocomm", _rbreducer.TRAIT_NOCOMM))


def _option_list(options):
    """{"key": value} or ["key=value"] -> ["key=value"] (values as text;
    True/False as 1/0, as the C option table reads them)."""
    if options is None:
        return []
    if isinstance(options, dict):
        out = []
        for k, v in options.items():
            if isinstance(v, bool):
                v = int(v)
            out.append("%s=%s" % (k, v))
        return out
    if isinstance(options, str):
        raise TypeError("options: a dict or a list of 'key=value' strings, not one string")
    return [str(o) for o in options]


def reducers():
    """Names of libreducer's reducers, in registry order."""
    return _rbreducer.reducers()


def traits(name, options=None):
    """frozenset of 'exact', 'lossy', 'gossip', 'nocomm' for this reducer
    with these options (an option can make one lossy: oktopk_select=topk)."""
    bits = _rbreducer.traits(name, _option_list(options))
    return frozenset(t for t, b in _TRAITS if bits & b)


def description(name):
    return _rbreducer.description(name)


def default_options(name, options=None):
    """{key: text} of every option that applies to reducer `name`, with
    `options` applied over the defaults (what Reducer.options() returns)."""
    return _rbreducer.default_options(name, _option_list(options))


def _as_buffer(buf, what):
    """A numpy float32 view of buf's memory (torch tensors: .numpy(), which
    shares it); refuses what is not a contiguous CPU float32 buffer."""
    if type(buf).__module__.startswith("torch"):
        if buf.is_sparse or buf.device.type != "cpu" or not buf.is_contiguous():
            raise TypeError("%s: a dense, contiguous CPU tensor is needed (got %s on %s%s)"
                            % (what, buf.layout, buf.device,
                               "" if buf.is_contiguous() else ", not contiguous"))
        buf = buf.detach().numpy()
    return buf


class Reducer(_rbreducer.Reducer):
    """Reducer(name, comm, rows, cols=1, options=None): collective over comm
    (an mpi4py communicator, duplicated inside).  rows x cols float32 is the
    gradient's shape (a flat buffer of n is n x 1; an embedding table is
    vocabulary x width).  options: {"key": value} or ["key=value"]
    (rbreducer.default_options(name) lists them)."""

    def __init__(self, name, comm, rows, cols=1, options=None):
        super().__init__(name, comm, int(rows), int(cols), _option_list(options))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def reduce(self, buf):
        """Replace buf (rows*cols float32) by the aggregate: the average
        over ranks (exact and sketch reducers), the partner mix (gossip).
        Returns Stats (bytes_sent, t_comm, ...)."""
        return super().reduce(_as_buffer(buf, "reduce"))

    def mix_params(self, buf):
        """Gossip: mix the parameters buf with this step's partner."""
        return super().mix_params(_as_buffer(buf, "mix_params"))

    def flush(self, grad=None, params=None):
        """Asynchronous gossip: complete what is pending (end of training)."""
        return super().flush(None if grad is None else _as_buffer(grad, "flush"),
                             None if params is None else _as_buffer(params, "flush"))

    def reduce_rows(self, ids, values, dense=None, rows=True):
        """Row-sparse gradient: ids (int64, strictly increasing) and values
        (len(ids) x cols float32).  The aggregate goes to dense (rows*cols
        float32, if given) and, with rows=True, comes back as (ids, values)
        numpy arrays: the rows of the union.  Returns (Stats, ids, values)."""
        ids = np.ascontiguousarray(_as_buffer(ids, "reduce_rows ids"), dtype=np.int64)
        values = np.ascontiguousarray(_as_buffer(values, "reduce_rows values"), dtype=np.float32)
        st, out_ids, out_vals = super().reduce_rows(
            ids, values, None if dense is None else _as_buffer(dense, "reduce_rows dense"), rows)
        if not rows:
            return st, None, None
        cols = self.shape[1]
        return (st, np.frombuffer(out_ids, dtype=np.int64),
                np.frombuffer(out_vals, dtype=np.float32).reshape(-1, cols))

    def reduce_sparse(self, grad):
        """A torch sparse COO gradient [rows, cols] (nn.Embedding(sparse=True)
        .weight.grad) -> (the aggregate as a coalesced sparse COO tensor,
        Stats).  Duplicate rows are summed first (coalesce)."""
        import torch
        if not grad.is_sparse:
            raise TypeError("reduce_sparse: a sparse COO tensor is needed (got %s)" % grad.layout)
        rows, cols = self.shape
        if tuple(grad.shape) != (rows, cols):
            raise ValueError("reduce_sparse: shape %s, the reducer's is (%d, %d)"
                             % (tuple(grad.shape), rows, cols))
        g = grad.coalesce()
        ids = g.indices()[0].contiguous()
        vals = g.values().to(torch.float32).reshape(-1, cols).contiguous()
        st, out_ids, out_vals = self.reduce_rows(ids.numpy(), vals.numpy())
        out = torch.sparse_coo_tensor(torch.from_numpy(out_ids.copy()).unsqueeze(0),
                                      torch.from_numpy(out_vals.copy()), (rows, cols))
        return out._coalesced_(True), st
