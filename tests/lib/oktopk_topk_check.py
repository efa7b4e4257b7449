#!/usr/bin/python3
"""oktopk_topk_check.py TRACE.h5 RESULT.bin ARCHIVE.h5 P K RULE: rb_micro's
oktopk with oktopk_select=topk on a trace whose every rank holds fewer
than K non-zeros (so each rank sends them all: the algorithm is exact up
to the global selection).  RULE first: the first call (re-estimating)
keeps exactly the top-min(K, union) of the exact sum by magnitude; RULE
threshold: a later call on the same gradient keeps those above the K-th
largest (strictly), i.e. the top-(K-1).  The values are the sums / P, and
the archive's rel_l2_err is the one recomputed from RESULT, > 0 where
fewer than the union are kept."""
import sys

import h5py
import numpy as np


def exact_sum(trace, p):
    with h5py.File(trace, "r") as f:
        g = f["layers"][sorted(f["layers"])[0]]
        rows, cols = int(g.attrs["rows"]), int(g.attrs["cols"])
        counts = g["counts"][()]
        ids, vals = g["ids"][()], g["values"][()]
    q = counts.shape[1]
    off = np.concatenate([[0], np.cumsum(counts.ravel())])
    dense = np.zeros((p, rows, cols), dtype=np.float32)
    for tr in range(q):   # run rank r sums trace ranks r, r + p, ... (bench_trace_load)
        dense[tr % p, ids[off[tr]:off[tr + 1]]] += vals[off[tr]:off[tr + 1]]
    nnz = [int(np.count_nonzero(d)) for d in dense]
    return dense.reshape(p, -1), nnz


def main(trace, result, archive, p, k, rule):
    p, k = int(p), int(k)
    dense, nnz = exact_sum(trace, p)
    bad = []
    if max(nnz) >= k:
        bad.append("a rank holds %d non-zeros >= K = %d: not the exact case" % (max(nnz), k))
    total = dense.astype(np.float64).sum(axis=0)
    res = np.fromfile(result, dtype=np.float32)
    union = np.flatnonzero(total)
    order = union[np.argsort(-np.abs(total[union]), kind="stable")]
    want_n = min(k, union.size) if rule == "first" else min(k, union.size) - 1
    want = np.sort(order[:want_n])
    kept = np.flatnonzero(res)
    if kept.size != want_n:
        bad.append("kept %d elements, want %d (K = %d, union %d)" % (kept.size, want_n, k, union.size))
    elif not np.array_equal(kept, want):
        bad.append("kept set differs from the exact top-%d in %d places"
                   % (want_n, np.setxor1d(kept, want).size))
    want_vals = (dense.sum(axis=0, dtype=np.float32)[kept] / np.float32(p)).astype(np.float64)
    dev = np.max(np.abs(res[kept] - want_vals)) if kept.size else 0.0
    if dev > 8 * p * np.finfo(np.float32).eps * max(1.0, np.max(np.abs(want_vals), initial=0)):
        bad.append("kept values differ from sum / P by up to %g" % dev)
    avg = total / p
    err = np.linalg.norm(res - avg) / np.linalg.norm(avg)
    with h5py.File(archive, "r") as f:
        row = f["micro/results"][()][0]
    got = float(row["rel_l2_err"])
    lossy = want_n < union.size   # all kept (1 rank, union <= K): exact, error 0
    if not ((got > 0) == lossy and abs(got - err) <= 1e-6 * err):
        bad.append("rel_l2_err %g in the archive, %g recomputed from the result" % (got, err))
    print("P=%d K=%d rule=%s: union %d, kept %d, rel_l2_err %.6g (recomputed %.6g), recall %.4f"
          % (p, k, rule, union.size, kept.size, got, err, float(row["recall"])))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
