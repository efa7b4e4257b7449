"""Synthetic result archives with known values, in the layout the real
writers use (results/README.md): root attributes as metadata.c writes
them, /micro/results with the columns of benchmarks/micro/micro_row.h
(micro_row.c's order and types), /train with rb_train's attributes and its
curves and phases tables (benchmarks/train/train_archive.c).  The tests
that use them know every value, so they can check the statistics exactly;
verdict.sh and report.sh check the same code on files the real
benchmarks write.
"""

import os
import secrets
import sys

import h5py
import numpy as np

ANALYSIS = os.path.join(os.environ.get("top_srcdir",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "analysis")
sys.path.insert(0, ANALYSIS)

NAME = "S16"
# benchmarks/micro/micro_row.c: rb_micro's columns, in order.
MICRO_COLUMNS = [
    ("reducer", NAME), ("layout", NAME), ("overlap", NAME), ("device", NAME),
    ("size_bytes", "<u8"), ("count", "<u8"), ("rows", "<u8"), ("cols", "<u8"),
    ("density", "<f8"), ("ranks", "<i4"), ("iters", "<i4"), ("warmup", "<i4"),
    ("t_avg_us", "<f8"), ("t_min_us", "<f8"), ("t_max_us", "<f8"), ("t_p50_us", "<f8"),
    ("t_p99_us", "<f8"), ("slowest_rank", "<i4"), ("t_encode_us", "<f8"), ("t_comm_us", "<f8"),
    ("t_decode_us", "<f8"), ("algbw_gbs", "<f8"), ("busbw_gbs", "<f8"),
    ("bytes_sent_avg", "<f8"), ("bytes_sent_max", "<f8"), ("bytes_recv_avg", "<f8"),
    ("bytes_recv_max", "<f8"), ("nnz_local_avg", "<f8"), ("nnz_union", "<f8"),
    ("bound_bytes", "<f8"), ("wire_to_bound", "<f8"), ("checked", "<i4"), ("wrong", "<i8"),
    ("rel_l2_err", "<f8"), ("recall", "<f8"), ("max_abs_err", "<f8"), ("consensus", "<f8"),
    ("repeat", "<i4"), ("t_model_us", "<f8"), ("model_ratio", "<f8"), ("input", NAME),
    ("t_floor_us", "<f8"),
]
CURVE = [("iteration", "<i8"), ("epoch", "<f8"), ("wall_s", "<f8"), ("train_loss", "<f8"),
         ("train_accuracy", "<f8"), ("test_loss", "<f8"), ("test_accuracy", "<f8"),
         ("val_perplexity", "<f8")]
PHASES = [("iteration", "<i8"), ("forward_s", "<f8"), ("backward_s", "<f8"),
          ("reduce_s", "<f8"), ("update_s", "<f8"), ("loss", "<f8"), ("bytes_sent", "<u8"),
          ("bytes_recv", "<u8"), ("embed_nnz", "<u8")]

QUIET = {"machine_cores": 2.0, "machine_load_before": 0.1, "machine_load_after": 0.2,
         "machine_other_cpu_before": 0.05, "machine_other_cpu_during": 0.1,
         "machine_steal_during": 0.0}
BUSY = dict(QUIET, machine_other_cpu_during=1.4)


def _root(f, tool, ranks, machine=None, extra=None):
    a = f.attrs
    a["tool"] = tool
    a["version"] = "0.1.0"
    a["schema_version"] = 1
    a["run_id"] = secrets.token_hex(16)
    a["hostname"] = "synth-host"
    a["ranks"] = ranks
    a["nodes"] = 1
    a["slurm"] = 0
    a["start_time"] = "2026-11-26T12:00:00Z"
    a["end_time"] = "2026-11-26T12:00:10Z"
    a["complete"] = 1
    a["command_line"] = "%s (synthetic)" % tool
    a["malloc_policy"] = "keep freed memory"
    for k, v in (machine or {}).items():
        a[k] = v
    for k, v in (extra or {}).items():
        a[k] = v
    topo = f.create_group("topology")
    topo.attrs["available"] = 1
    topo.attrs["pus"] = 64      # never oversubscribed unless a test says so


def write_micro(path, rows, ranks=2, machine=None, extra=None, columns=(), options=None):
    """rows: dicts with at least reducer, size_bytes, t_avg_us (repeat,
    bytes_sent_avg, density, layout... default to a dense element-layout
    row of 4-byte floats); columns: (name, type) beyond rb_micro's, as a
    later writer may add; options: the reducer options of the run
    (opt_<key> attributes of /micro/results)."""
    cols = MICRO_COLUMNS + list(columns)
    out = np.zeros(len(rows), np.dtype(cols))
    for i, r in enumerate(rows):
        size = int(r["size_bytes"])
        d = {"layout": "element", "overlap": "random", "device": "host", "count": size // 4,
             "rows": 1, "cols": size // 4, "density": 0.01, "ranks": ranks, "iters": 10,
             "warmup": 2, "checked": 1, "wrong": 0, "input": "dense", "repeat": 0,
             "bytes_sent_avg": float(size), "t_model_us": np.nan, "rel_l2_err": np.nan,
             "recall": np.nan, "max_abs_err": 0.0, "consensus": np.nan, "t_floor_us": 1.0}
        d.update(r)
        # Values a real row keeps in agreement (validate.check_micro_agreement):
        # the spread over ranks and iterations around the average.
        for t in ("t_min_us", "t_max_us", "t_p50_us", "t_p99_us"):
            d.setdefault(t, d["t_avg_us"])
        for name, _ in cols:
            if name in d:
                v = d[name]
                out[name][i] = v.encode() if isinstance(v, str) else v
    with h5py.File(path, "w") as f:
        _root(f, "rb_micro", ranks, machine, extra)
        g = f.create_group("micro")
        res = g.create_dataset("results", data=out)
        for k, v in (options or {}).items():
            res.attrs["opt_" + k] = v
    return path


def write_train(path, reducer, seed, iterations, wall_s, values, metric="test_accuracy",
                model="mlp", ranks=2, t_iter=0.01, machine=None, target=0.0, options=None,
                bytes_per_step=0, embedding=None, attrs=None):
    """One rb_train run: its curve (evaluations at iterations, wall times,
    metric values) and per-iteration phases summing to t_iter s.  options:
    the reducer's (/train/reducer_options); embedding: (rows, cols, nnz a
    step) of an embedding model; attrs: more /train attributes
    (dense_reducer, sparsify)."""
    curve = np.zeros(len(iterations), np.dtype(CURVE))
    curve["iteration"] = iterations
    curve["epoch"] = np.asarray(iterations, float) / max(iterations[-1], 1)
    curve["wall_s"] = wall_s
    curve["train_loss"] = 1.0
    for col in ("train_accuracy", "test_loss", "test_accuracy", "val_perplexity"):
        curve[col] = np.nan
    curve[metric] = values
    n = int(iterations[-1])
    phases = np.zeros(n, np.dtype(PHASES))
    phases["iteration"] = np.arange(1, n + 1)
    phases["forward_s"] = phases["backward_s"] = phases["update_s"] = t_iter / 4
    phases["reduce_s"] = t_iter / 4
    phases["bytes_sent"] = bytes_per_step
    if embedding:
        phases["embed_nnz"] = embedding[2]
    with h5py.File(path, "w") as f:
        _root(f, "rb_train", ranks, machine)
        g = f.create_group("train")
        for k, v in (("model", model), ("data_path", "/usr/share/datasets/synthetic"),
                     ("reducer", reducer), ("device", "host"), ("sparsify", "none"),
                     ("schedule", "constant")):
            g.attrs[k] = v
        g.attrs["ranks"] = ranks
        g.attrs["seed"] = np.uint64(seed)
        g.attrs["iterations"] = n
        g.attrs["embedding_parameters"] = np.uint64(embedding[0] * embedding[1] if embedding else 0)
        if embedding:
            g.attrs["embed_dim"] = embedding[1]
        g.attrs["target_accuracy"] = target
        g.attrs["target_perplexity"] = 0.0
        g.attrs["timed_out"] = 0
        for k, v in (attrs or {}).items():
            g.attrs[k] = v
        ro = g.create_group("reducer_options")
        for k, v in (options or {}).items():
            ro.attrs[k] = v
        g.create_dataset("curves", data=curve)
        g.create_dataset("phases", data=phases)
    return path


def load_tables(paths, targets=None):
    """(agg, summ, truns, chosen, ctab) as rb-report computes them."""
    from rbanalysis import claim_table, load, micro, training
    archive = load.load(paths)
    assert archive.runs, [r.message() for r in archive.refusals]
    rows = micro.add_group(micro.micro_rows(archive))
    agg = micro.summarise_repeats(rows)
    recs = training.records(archive)
    curv, phases = training.curves(recs), training.phase_times(recs)
    summ, chosen = training.summary(curv, phases, targets)
    truns, _ = training.runs(curv, phases, targets)
    ctab, _ = claim_table.claims_table(agg, summ, truns, chosen)
    return agg, summ, truns, chosen, ctab


class Checks:
    """ok / FAIL lines, exit status 1 when any failed."""

    def __init__(self):
        self.failed = []

    def __call__(self, cond, what):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            self.failed.append(what)

    def exit(self):
        print("%d check(s) failed" % len(self.failed) if self.failed else "all checks passed")
        return 1 if self.failed else 0
