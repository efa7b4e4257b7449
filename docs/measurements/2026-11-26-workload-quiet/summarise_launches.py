#!/usr/bin/python3
"""summarise_launches.py RESULTS_DIR OUT_DIR: the workload runs of several
launches (RESULTS_DIR/L*/{uniform,zipf,trace}_pP.h5).  Per launch and
(ranks, workload, reducer): the median call (slowest rank's time) and the
fastest call; over launches: the median of the launch medians with its
[min, max] over launches, and the fastest call of all.  The fastest exact
reducer per (ranks, workload) is named only when its launch range lies
wholly below the runner-up's; else 'tie'.  Also each launch's machine load."""
import glob, os, sys
import h5py, numpy as np, pandas as pd

EXACT = ["agsparse", "sparcml", "parallax", "omnireduce", "oktopk", "zen"]
rows, loads = [], []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "L*", "*.h5"))):
    launch = os.path.basename(os.path.dirname(path))
    with h5py.File(path, "r") as f:
        res = f["micro/results"][()]
        loads.append(dict(launch=launch, file=os.path.basename(path),
                          other_cpu=f.attrs.get("machine_other_cpu_during", np.nan),
                          steal=f.attrs.get("machine_steal_during", np.nan)))
        first_step = min(int(r["step"]) for r in res)
        for i, r in enumerate(res):
            if int(r["step"]) != first_step:      # a trace: its first step only
                continue
            slow = f["micro/samples/%d" % i][()].max(axis=1)
            ov = r["overlap"].decode()
            rows.append(dict(launch=launch, ranks=int(r["ranks"]),
                             workload={"random": "uniform"}.get(ov, ov), reducer=r["reducer"].decode(),
                             median=np.median(slow), fastest=slow.min(), wrong=int(r["wrong"])))
df = pd.DataFrame(rows)
per_launch = df.groupby(["ranks", "workload", "reducer", "launch"]).agg(
    median=("median", "median"), fastest=("fastest", "min"), wrong=("wrong", "max")).reset_index()
t = per_launch.groupby(["ranks", "workload", "reducer"]).agg(
    launches=("launch", "nunique"), median_us=("median", "median"), low_us=("median", "min"),
    high_us=("median", "max"), fastest_us=("fastest", "min"), wrong=("wrong", "max")).reset_index()
out = sys.argv[2]
t.to_csv(os.path.join(out, "times_launches.csv"), index=False, float_format="%.4g")
pd.DataFrame(loads).to_csv(os.path.join(out, "load.csv"), index=False, float_format="%.3g")
pd.set_option("display.width", 250); pd.set_option("display.max_rows", 500)
t["cell"] = t.apply(lambda r: "%.0f [%.0f, %.0f]" % (r.median_us, r.low_us, r.high_us), axis=1)
print(t.pivot(index=["ranks", "reducer"], columns="workload", values="cell").to_string())
win = []
for (p, w), sub in t[t.reducer.isin(EXACT)].groupby(["ranks", "workload"]):
    sub = sub.sort_values("median_us")
    a, b = sub.iloc[0], sub.iloc[1]
    clear = a.high_us < b.low_us
    win.append(dict(ranks=p, workload=w, fastest=a.reducer if clear else "tie: %s, %s" % (a.reducer, b.reducer),
                    median_us=round(a.median_us, 1), runner_up=b.reducer, runner_up_us=round(b.median_us, 1)))
print(pd.DataFrame(win).to_string(index=False))
print("max #wrong of exact reducers:", t[t.reducer.isin(EXACT + ["dense"])]["wrong"].max())
print(pd.DataFrame(loads).groupby("launch")[["other_cpu", "steal"]].max().to_string())
