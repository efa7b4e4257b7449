#!/usr/bin/python3
"""summarise.py RESULTS_DIR OUT_DIR (docs/workloads.md): per (ranks, workload, reducer): fastest call (min over calls and
repetitions of the slowest rank's time), median call, bytes sent, #wrong;
per (ranks, workload): the gradient's union and imbalance."""
import glob, sys
import h5py, numpy as np, pandas as pd
rows = []
for path in sorted(glob.glob(sys.argv[1] + "/*.h5")):
    f = h5py.File(path, "r")
    res = f["micro/results"][()]
    for i, r in enumerate(res):
        s = f["micro/samples/%d" % i][()]          # iters x ranks, us
        slow = s.max(axis=1)
        ov = r["overlap"].decode()
        rows.append(dict(ranks=int(r["ranks"]), workload={"random": "uniform"}.get(ov, ov),
                         reducer=r["reducer"].decode(), fastest=slow.min(), median=np.median(slow),
                         sent=r["bytes_sent_avg"], wrong=int(r["wrong"]), err=r["rel_l2_err"],
                         nnz=r["nnz_local_avg"], nnzmax=r["nnz_local_max"], union_rows=r["union_rows"],
                         union_ratio=r["union_ratio"], imbalance=r["imbalance"], step=int(r["step"])))
df = pd.DataFrame(rows)
# union and imbalance over every recorded step; times and bytes on the
# trace's first step only, so that each workload's minimum is over as many calls
first = df[df.workload == "trace"]["step"].min()
dt = df[(df.workload != "trace") | (df.step == first)]
out = sys.argv[2]
wl = df[df.reducer == "dense"].groupby(["ranks", "workload"]).agg(
    nnz_per_rank=("nnz", "median"), nnz_max=("nnzmax", "median"), union_rows=("union_rows", "median"),
    union_ratio=("union_ratio", "median"), imbalance=("imbalance", "median")).reset_index()
wl.to_csv(out + "/workload.csv", index=False, float_format="%.4g")
t = dt.groupby(["ranks", "workload", "reducer"]).agg(
    fastest_us=("fastest", "min"), median_us=("median", "median"), bytes_sent=("sent", "median"),
    wrong=("wrong", "max"), rel_l2_err=("err", "median")).reset_index()
t.to_csv(out + "/times.csv", index=False, float_format="%.4g")
pd.set_option("display.width", 250); pd.set_option("display.max_rows", 500)
print(wl.to_string(index=False))
wide = t.pivot_table(index=["ranks", "reducer"], columns="workload", values="fastest_us").round(1)
print(wide.to_string())
print(t.pivot_table(index=["ranks", "reducer"], columns="workload", values="median_us").round(1).to_string())
exact = t[t.reducer.isin(["agsparse", "sparcml", "parallax", "omnireduce", "oktopk", "zen"]) & (t.wrong == 0)]
win = exact.loc[exact.groupby(["ranks", "workload"])["fastest_us"].idxmin()][["ranks", "workload", "reducer", "fastest_us"]]
print(win.to_string(index=False))
print(t[t.reducer != "none"].pivot_table(index=["ranks","reducer"], columns="workload", values="bytes_sent").round(0).to_string())
print("max #wrong of exact reducers:", t[t.reducer.isin(["dense","agsparse","sparcml","parallax","omnireduce","oktopk","zen"])]["wrong"].max())
