#!/usr/bin/python3
"""gradgen_trace.py OUT.h5 ROWS COLS DENSITY RANKS SEED: rb_micro's own
synthetic gradient (benchmarks/harness/gradgen.c, row layout, --overlap
random) written as a gradient trace of one step, so that replaying it
(--input trace:) and generating it (--shape ROWSxCOLS --layout row) hand
the reducers the same gradient, bit for bit."""
import sys

import h5py
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(z):
    with np.errstate(over="ignore"):
        z = z + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(h):
    return (h >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def rank_rows(rows, cols, density, rank, seed):
    seed = np.uint64(seed)
    u = np.arange(rows, dtype=np.uint64)
    sel = uniform(mix64(seed ^ mix64(u ^ np.uint64((rank + 1) << 40)))) < density
    ids = np.nonzero(sel)[0].astype(np.int64)
    i = (ids[:, None] * cols + np.arange(cols)[None, :]).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = mix64(seed * np.uint64(31) + mix64(i + np.uint64(rank << 42) + np.uint64(0x5151)))
    v = (uniform(h) * 2.0 - 1.0).astype(np.float32)
    v[v == 0] = 0.5
    return ids, v


def main(out, rows, cols, density, ranks, seed):
    rows, cols, ranks, seed, density = int(rows), int(cols), int(ranks), int(seed), float(density)
    per = [rank_rows(rows, cols, density, r, seed) for r in range(ranks)]
    with h5py.File(out, "w") as f:
        f.attrs.update({"format": "reducerbench-gradient-trace", "format_version": np.int64(1),
                        "model": "gradgen", "source": "gradgen_trace.py", "ranks": np.int64(ranks),
                        "complete": np.int64(1)})
        g = f.create_group("layers/synthetic")
        g.attrs["rows"], g.attrs["cols"], g.attrs["kind"] = np.uint64(rows), np.uint64(cols), "synthetic"
        g["steps"] = np.array([1], "int64")
        g["counts"] = np.array([[len(p[0]) for p in per]], "int64")
        g["ids"] = np.concatenate([p[0] for p in per])
        g["values"] = np.concatenate([p[1] for p in per]).reshape(-1, cols)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
