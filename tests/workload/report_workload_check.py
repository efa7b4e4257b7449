#!/usr/bin/python3
"""report_workload_check.py REPORT_DIR ARCHIVE...: the report's workload
section holds the three workloads, with the union, imbalance and fastest
time of each archive."""
import os
import sys

import h5py
import numpy as np
import pandas as pd


def main(rep, *archives):
    md = open(os.path.join(rep, "report.md")).read()
    assert "## Workload: uniform, Zipf and recorded gradients" in md, "no workload section"
    for f in ("workload_time.png", "workload_union.png"):
        assert os.path.getsize(os.path.join(rep, f)) > 1000, f
        assert f in md, f
    wl = pd.read_csv(os.path.join(rep, "tables", "workload.csv"))
    red = pd.read_csv(os.path.join(rep, "tables", "workload_reducers.csv"))
    wide = pd.read_csv(os.path.join(rep, "tables", "workload_time.csv"))
    assert set(wl["workload"]) == {"uniform", "zipf:1.1", "trace"}, set(wl["workload"])
    assert (wl["rows"] == 2000).all() and (red["rows"] == 2000).all(), "another shape compared"
    assert {"t_us[uniform]", "t_us[zipf:1.1]", "t_us[trace]"} <= set(wide.columns), wide.columns
    for path in archives:
        r = pd.DataFrame(h5py.File(path, "r")["micro/results"][()])
        ov = r["overlap"].iloc[0].decode()
        w = {"random": "uniform", "trace": "trace"}.get(ov, ov)
        row = wl[wl["workload"] == w].iloc[0]
        assert np.isclose(row["union_ratio"], r["union_ratio"].median()), (w, row["union_ratio"])
        assert np.isclose(row["imbalance"], r["imbalance"].median()), (w, row["imbalance"])
        for name, sub in r.groupby(r["reducer"].str.decode("ascii")):
            got = red[(red["workload"] == w) & (red["reducer"] == name)]["t_min_us"].iloc[0]
            assert np.isclose(got, sub["t_avg_us"].min()), (w, name, got)
    assert (red.groupby("workload")["fastest_exact"].apply(lambda s: (s == "fastest").sum()) == 1).all()
    z, u = (wl[wl["workload"] == k]["union_ratio"].iloc[0] for k in ("zipf:1.1", "uniform"))
    assert z < u, (z, u)
    print("workload section: %s; union/pn %s" % (
        ", ".join(sorted(wl["workload"])), dict(zip(wl["workload"], wl["union_ratio"].round(3)))))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
