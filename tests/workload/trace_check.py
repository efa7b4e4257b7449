#!/usr/bin/python3
"""trace_check.py TRACE ARCHIVE P [ARCHIVE Q ...]: the rows an rb_micro
replay archive reports are the trace's own, computed here from the file:
per step, the union of the ranks' row ids (run rank r of q summing trace
ranks r, r+q, ...), the per-rank non-zeros; exact reducers' #wrong 0; the
trace's provenance in the archive's root."""
import hashlib
import sys

import h5py
import numpy as np


def expected(trace, q):
    g = trace["layers/embedding"]
    steps, counts = g["steps"][()], g["counts"][()]
    ids, vals = g["ids"][()], g["values"][()]
    p, cols = counts.shape[1], vals.shape[1]
    off = np.concatenate([[0], np.cumsum(counts.ravel())])
    out = {}
    for s, step in enumerate(steps):
        per_rank = []
        union = set()
        for r in range(q):
            rows = {}
            for tr in range(r, p, q):
                c = s * p + tr
                for k in range(off[c], off[c + 1]):
                    rows[ids[k]] = rows.get(ids[k], 0) + vals[k].astype(np.float32)
            per_rank.append(sum(int(np.count_nonzero(v)) for v in rows.values()))
            union |= {i for i, v in rows.items() if np.any(v != 0)}
        out[int(step)] = (per_rank, len(union), cols)
    return out


def check(trace_path, archive_path, q):
    trace = h5py.File(trace_path, "r")
    a = h5py.File(archive_path, "r")
    res = a["micro/results"][()]
    exp = expected(trace, q)
    assert set(int(s) for s in res["step"]) == set(exp), (res["step"], list(exp))
    for row in res:
        per_rank, union_rows, cols = exp[int(row["step"])]
        name = row["reducer"].decode()
        assert row["overlap"].decode() == "trace" and row["layout"].decode() == "row", row["overlap"]
        assert row["union_rows"] == union_rows, (name, row["step"], row["union_rows"], union_rows)
        assert abs(row["nnz_local_avg"] - np.mean(per_rank)) < 1e-9, (row["nnz_local_avg"], per_rank)
        assert row["nnz_local_max"] == max(per_rank)
        assert row["rows"] == trace["layers/embedding"].attrs["rows"] and row["cols"] == cols
        assert row["wrong"] == 0, (name, row["wrong"])
        if name in ("dense", "agsparse", "sparcml", "zen"):
            assert row["rel_l2_err"] < 1e-6, (name, row["rel_l2_err"])
    at = a.attrs
    sha = hashlib.sha256(open(trace_path, "rb").read()).hexdigest()
    assert at["trace_sha256"] == sha, (at["trace_sha256"], sha)
    assert at["trace_file"] == trace_path
    assert at["trace_model"] == trace.attrs["model"]
    assert at["trace_ranks"] == trace.attrs["ranks"]
    assert list(at["trace_steps"]) == sorted(exp)
    print("%s: %d rows on %d ranks match the trace (steps %s, union rows %s), provenance ok"
          % (archive_path, len(res), q, sorted(exp), [exp[s][1] for s in sorted(exp)]))


def main(argv):
    trace = argv[1]
    pairs = argv[2:]
    for i in range(0, len(pairs), 2):
        check(trace, pairs[i], int(pairs[i + 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
