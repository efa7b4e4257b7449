"""The /train group of rb-torch-train, laid out as rb_train writes it
(benchmarks/train/train_archive.c; results/README.md "/train: rb_train"),
so that analysis/rb-report's training analysis reads it unchanged, plus:

  /train@driver             "pytorch"
  /train@framework_version  torch.__version__
  /train/reducer_stats      one row per iteration, rank 0's reducer figures
                            summed over its reducer calls (dense buckets,
                            embedding, parameter mixing): what rb_stats says
                            beyond the bytes (lossy reducers' result sizes,
                            s2's sketch columns, gossip's partner, phase times)

write_train() takes rank 0's h5py.File of the open archive (Archive.file()).
"""
import numpy as np

CURVE_DTYPE = np.dtype([("iteration", "<i8"), ("epoch", "<f8"), ("wall_s", "<f8"),
                        ("train_loss", "<f8"), ("train_accuracy", "<f8"), ("test_loss", "<f8"),
                        ("test_accuracy", "<f8"), ("val_perplexity", "<f8")])
PHASE_DTYPE = np.dtype([("iteration", "<i8"), ("forward_s", "<f8"), ("backward_s", "<f8"),
                        ("reduce_s", "<f8"), ("update_s", "<f8"), ("loss", "<f8"),
                        ("bytes_sent", "<u8"), ("bytes_recv", "<u8"), ("embed_nnz", "<u8")])
STATS_DTYPE = np.dtype([("iteration", "<i8"), ("msgs_sent", "<u8"), ("nnz_local", "<u8"),
                        ("nnz_result", "<u8"), ("skipped", "<u8"), ("sketch_cols", "<u8"),
                        ("partner", "<i8"), ("t_encode", "<f8"), ("t_comm", "<f8"),
                        ("t_decode", "<f8"), ("t_wait", "<f8")])


# Attributes that rb_train writes unsigned (results/README.md, type uint).
UNSIGNED = {"seed", "train_samples", "test_samples", "dense_parameters",
            "embedding_parameters", "embed_rows"}


def _table(g, name, dtype, rows):
    arr = np.array([tuple(r) for r in rows], dtype=dtype) if rows else np.zeros(0, dtype=dtype)
    # fletcher32: as rb_train's datasets, a flipped bit fails the read
    return g.create_dataset(name, data=arr, maxshape=(None,), chunks=(max(1, min(len(arr), 1024)),),
                            fletcher32=True)


def _attr(g, k, v):
    """Types as rb_train writes them: str, int64 (uint64 for UNSIGNED),
    float64."""
    if isinstance(v, str):
        g.attrs[k] = str(v)
    elif isinstance(v, (bool, int, np.integer)):
        g.attrs[k] = np.uint64(v) if k in UNSIGNED else np.int64(v)
    else:
        g.attrs[k] = np.float64(v)


def write_train(f, attrs, options, curves, phases, stats):
    """Create /train in f: attrs {name: value}, options {key: text} (None:
    no /train/reducer_options), curves/phases/stats lists of tuples in the
    *_DTYPE column order."""
    g = f.create_group("train")
    for k, v in attrs.items():
        _attr(g, k, v)
    if options is not None:
        o = g.create_group("reducer_options")
        for k, v in sorted(options.items()):
            o.attrs[k] = str(v)
    _table(g, "curves", CURVE_DTYPE, curves)
    _table(g, "phases", PHASE_DTYPE, phases)
    if stats is not None:
        _table(g, "reducer_stats", STATS_DTYPE, stats)
    f.flush()
    return g


def embed_row_density(phases, n_embed):
    """Median over iterations of embed_nnz / embedding_parameters (as
    rb_train's embed_row_density); NaN without an embedding."""
    if not phases or not n_embed:
        return float("nan")
    return float(np.median([p[8] for p in phases])) / n_embed


class Archive:
    """The harness's results archive (_rbharness over
    benchmarks/harness/archive.c): the temporary file, every root attribute
    and /topology as rb_train writes them, complete = 1 and the rename at
    close.  Collective, as in C.  file() hands rank 0's open file to h5py
    (its own reference, dropped with the object: drop it before close())."""

    def __init__(self, comm, tool, path, force, argv):
        import h5py
        import _rbharness
        if h5py.version.hdf5_version != _rbharness.hdf5_version():
            raise RuntimeError("h5py runs on HDF5 %s, the harness on %s: the archive needs one "
                               "HDF5 library (Debian's python3-h5py)"
                               % (h5py.version.hdf5_version, _rbharness.hdf5_version()))
        self.rank = comm.rank
        self._a = _rbharness.Archive(comm, tool, path, force, list(argv))
        self.path = self._a.path

    def file(self):
        """Rank 0: an h5py.File on the open archive; None elsewhere or
        without an archive (-o none)."""
        fid = self._a.file_id()
        if fid < 0:
            return None
        import h5py
        return h5py.File(h5py.h5i.wrap_identifier(fid))

    def mark(self, what):
        """Root attribute what = 1 (diverged, timed_out); rank 0 writes it."""
        if self.rank == 0 and self.path:
            self._a.mark(what)

    def close(self, success):
        """Collective: True when the archive was finished (or removed, on
        failure) without error."""
        import gc
        gc.collect()   # the h5py objects of file() hold references to the file
        return self._a.close(bool(success)) == 0
