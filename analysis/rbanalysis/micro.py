"""Microbenchmark tables from the tidy /micro/results rows.

Comparisons are made only inside a *group*: rows that share the kind
(measured or simulated), machine, tool version, allocator policy, device,
layout, overlap, density, ranks, columns, timing (iterations, warm-up,
modelled compute) and whether ranks outnumbered cores.  A *point* is a
group, reducer variant (reducer + options) and size; its rows are
repetitions (from several files, or rb_micro --repeat within one): summarised by
the median, its 95% confidence interval (stats.py: over launches when the
point has rows from two or more, else over the repetitions of its one
launch, marked), min, max and quartiles.  Speedups and ranks count only
significant differences beyond the 5% minimum effect.
"""

import numpy as np
import pandas as pd

from . import stats, wire
from .load import micro_frames
from .runmeta import combine_busy

GROUP_COLS = ["kind", "machine", "version", "malloc", "device", "input", "layout", "overlap",
              "density", "ranks", "cols", "timing", "oversubscribed"]
# Point values with a confidence interval of their median over repetitions.
CI_COLS = ("t_avg_us", "bytes_sent_avg")
BASELINES = ("agsparse", "sparcml", "parallax", "omnireduce")
EXACT = ("dense",) + BASELINES

MEDIAN_COLS = ["t_p50_us", "t_p99_us", "t_encode_us", "t_comm_us", "t_decode_us",
               "algbw_gbs", "busbw_gbs", "bytes_sent_avg", "bytes_sent_max",
               "bytes_recv_avg", "bytes_recv_max", "nnz_local_avg", "nnz_union", "bound_bytes",
               "wire_to_bound", "rel_l2_err", "recall", "max_abs_err", "consensus",
               "iter_q25_us", "iter_q75_us", "t_model_us", "model_ratio", "t_floor_us",
               "model_beta_s_per_byte",
               # a per-call message count, where a writer records one
               # (claims.MESSAGE_COLUMNS: the O(1) claim)
               "msgs_sent_avg", "msgs_sent_max", "messages_sent_avg", "msgs_avg", "messages_avg", "msgs_sent",
               "messages"]


def micro_rows(archive):
    frames = micro_frames(archive)
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True, sort=False)
    df["timing"] = [timing_label(i, w, c) for i, w, c in
                    zip(df["iters"], df["warmup"], df["compute_s"])]
    for col in GROUP_COLS:
        if col not in df.columns:
            df[col] = ""
    df["input"] = df["input"].replace("", "dense").fillna("dense")
    df["variant"] = short_variants(df["reducer"], df["options"])
    return df


def timing_label(iters, warmup, compute_s):
    """What each repetition timed: its calls, warm-up and modelled compute."""
    text = "%d iters + %d warm-up" % (int(iters), int(warmup))
    return text + (", compute %g s" % compute_s if compute_s else "")


def short_variants(reducers, options):
    """reducer[k=v,...] naming only the options (seed aside) that take more
    than one value for that reducer in these data; the full option list
    stays in the options column."""
    parsed = [dict(p.split("=", 1) for p in str(o).split(",") if "=" in p) for o in options]
    keys_of = {}
    for red, opts in zip(reducers, parsed):
        keys_of.setdefault(red, set()).update(opts)
    # An option some runs of a reducer lack (rb_train's sparsify) varies too.
    varying = {}
    for red, opts in zip(reducers, parsed):
        for k in keys_of[red]:
            varying.setdefault((red, k), set()).add(opts.get(k))
    out = []
    for red, opts in zip(reducers, parsed):
        keys = [k for k in opts if k != "seed" and len(varying[(red, k)]) > 1]
        out.append(red if not keys else "%s[%s]" % (red, ",".join("%s=%s" % (k, opts[k]) for k in keys)))
    return out


def group_label(key):
    d = dict(zip(GROUP_COLS, key))
    return ("%s | %s | v%s | %s%s | %s/%s | density %g | %d ranks | cols %s | %s | malloc: %s%s"
            % (d["kind"], d["machine"], d["version"], d["device"],
               " | rows input" if d.get("input") == "rows" else "", d["layout"],
               d["overlap"], float(d["density"]), int(d["ranks"]), d["cols"], d["timing"],
               d["malloc"], " | oversubscribed" if d["oversubscribed"] in (True,) else ""))


def add_group(df):
    """Add a 'group' column (a readable label) and a short 'gid' (G1, G2...)."""
    if df.empty:
        df["group"], df["gid"] = [], []
        return df
    keys = list(df[GROUP_COLS].itertuples(index=False, name=None))
    ordered = sorted(set(keys), key=lambda k: tuple(str(x) for x in k))
    ids = {k: "G%d" % (i + 1) for i, k in enumerate(ordered)}
    df["group"] = [group_label(k) for k in keys]
    df["gid"] = [ids[k] for k in keys]
    return df


def groups_table(df):
    """One row per group: its id, label and what it holds."""
    if df.empty:
        return pd.DataFrame()
    g = df.groupby("gid", sort=False)
    out = g.agg(group=("group", "first"), runs=("run", "nunique"),
                rows=("row", "size"), reducers=("reducer", lambda s: " ".join(sorted(set(s)))),
                sizes=("size_bytes", "nunique"))
    out = out.reset_index()
    return out.sort_values("gid", key=lambda s: s.str[1:].astype(int)).reset_index(drop=True)


# compute_s is part of timing; kept as a number for the efficiency claim.
POINT_COLS = ["gid", "group"] + GROUP_COLS + ["compute_s", "reducer", "variant", "size_bytes"]


def summarise_repeats(df):
    """One row per point (group, variant, size): median, 95% interval of the
    median, min, max and quartiles over its repetitions."""
    if df.empty:
        return pd.DataFrame()
    # Repeats share the variant, not necessarily every option: runs with
    # different hash seeds are repeats of the same measurement.
    g = df.groupby(POINT_COLS, sort=True, dropna=False)
    t = g["t_avg_us"]
    out = pd.DataFrame({
        "n_repeats": g.size(),
        "n_runs": g["run_id"].nunique(),
        "n_samples": g["iters"].sum(),
        "options": g["options"].agg(lambda s: " | ".join(sorted(set(s)))),
        "t_avg_us_min": t.min(),
        "t_avg_us_max": t.max(),
        "t_avg_us_q25": t.quantile(0.25),
        "t_avg_us_q75": t.quantile(0.75),
        "wrong_max": g["wrong"].max() if "wrong" in df else np.nan,
        "checked_min": g["checked"].min() if "checked" in df else np.nan,
    })
    for col in CI_COLS:
        # Over launches when the point has two or more (stats.py).
        ci = g[[col, "run_id"]].apply(lambda d: stats.launch_median_ci(d[col].to_numpy(),
                                                                       d["run_id"].to_numpy()))
        out[col + "_median"] = [c["median"] for c in ci]
        out[col + "_ci_low"] = [c["low"] for c in ci]
        out[col + "_ci_high"] = [c["high"] for c in ci]
        out[col + "_spread"] = g[col].max() - g[col].min()
        if col == "t_avg_us":
            out["ci_coverage"] = [c["coverage"] for c in ci]
            out["n_units"] = [c["n"] for c in ci]
            out["interval_unit"] = [c["unit"] for c in ci]
    out["busy"] = g["busy"].agg(combine_busy) if "busy" in df else "unknown"
    out["platform"] = g["platform"].first() if "platform" in df else ""
    for col in MEDIAN_COLS:
        if col in df.columns and col + "_median" not in out:
            out[col + "_median"] = g[col].median()
    # An emulated network's link (one per group: the machine names it).
    for col in ("link_bps", "nodes"):
        out[col] = g[col].first() if col in df else np.nan
    return wire.add_floor(out.reset_index())


def usable_baselines(sub, col):
    """Rows of the exact sparse baselines that were not found wrong (an
    unvalidated row, wrong = NaN, counts) and have a value in col."""
    ok = sub["reducer"].isin(BASELINES) & (sub["wrong_max"].fillna(0) == 0) & sub[col].notna()
    return sub[ok]


def interval(row, col):
    return row[col + "_ci_low"], row[col + "_ci_high"]


def best_of(rows, col):
    """(the row with the smallest median of col, the interval of the
    smallest true value among rows): the fastest (fewest-bytes) baseline."""
    best = rows.loc[rows[col + "_median"].idxmin()]
    lo, hi = stats.min_interval(rows[col + "_ci_low"], rows[col + "_ci_high"])
    return best, lo, hi


def ratio_verdict(ratio, lo, hi, faster="faster", slower="slower"):
    """Words for a speedup and its interval (stats.ratio_verdict): faster /
    slower only when significant and beyond the 5% minimum effect."""
    if not stats.has_interval(lo, hi):
        return "no significant difference (n < %d)" % stats.MIN_REPETITIONS
    return stats.ratio_verdict(ratio, lo, hi, faster, slower)


def speedup_against(r, others, col="t_avg_us"):
    """(name, speedup, low, high, verdict) of r against the fastest of others
    (median time of it / of r; the interval from both intervals)."""
    if others.empty:
        return ("", np.nan, np.nan, np.nan, "")
    best, lo, hi = best_of(others, col)
    t = r[col + "_median"]
    ratio = best[col + "_median"] / t if t > 0 else np.nan
    rlo, rhi = stats.ratio_interval(lo, hi, *interval(r, col))
    return (best["variant"], ratio, rlo, rhi, ratio_verdict(ratio, rlo, rhi))


def ranks(sub):
    """Rank of each variant at a point: 1 + the number of variants that are
    significantly faster, by more than the 5% minimum effect (ties share a
    rank)."""
    med = sub["t_avg_us_median"].to_numpy()
    lo, hi = sub["t_avg_us_ci_low"].to_numpy(), sub["t_avg_us_ci_high"].to_numpy()
    return [1 + sum(stats.differ(med[j], lo[j], hi[j], med[i], lo[i], hi[i]) < 0
                    for j in range(len(sub)))
            for i in range(len(sub))]


def speedups(agg):
    """Per group and size: each variant's speedup vs dense and vs the
    fastest other exact sparse baseline that validated (wrong == 0), each
    with its interval and verdict, and its rank.  `none` (no communication)
    is not a choice for an exact average: left out."""
    if agg.empty:
        return pd.DataFrame()
    rows = []
    for (gid, size), sub in agg.groupby(["gid", "size_bytes"], sort=True):
        sub = sub[sub["reducer"] != "none"]
        sub = sub.assign(rank=ranks(sub))
        dense = sub[sub["reducer"] == "dense"]
        for idx, r in sub.iterrows():
            base = usable_baselines(sub.drop(index=idx), "t_avg_us_median")
            _, vd, vd_lo, vd_hi, vd_verdict = speedup_against(r, dense.drop(index=idx, errors="ignore"))
            bname, vb, vb_lo, vb_hi, vb_verdict = speedup_against(r, base)
            rows.append({
                "gid": gid, "group": r["group"], "kind": r["kind"], "size_bytes": size,
                "reducer": r["reducer"], "variant": r["variant"], "rank": r["rank"],
                "n_repeats": r["n_repeats"], "t_avg_us_median": r["t_avg_us_median"],
                "t_avg_us_ci_low": r["t_avg_us_ci_low"], "t_avg_us_ci_high": r["t_avg_us_ci_high"],
                "speedup_vs_dense": vd, "speedup_vs_dense_low": vd_lo,
                "speedup_vs_dense_high": vd_hi, "vs_dense": vd_verdict,
                "best_baseline": bname, "speedup_vs_best_baseline": vb,
                "speedup_vs_best_baseline_low": vb_lo, "speedup_vs_best_baseline_high": vb_hi,
                "vs_best_baseline": vb_verdict,
            })
    return pd.DataFrame(rows)


def fastest(sub):
    """(variants of rank 1, whether they are significantly ahead of all
    others): the reducers no other one is significantly faster than."""
    sub = sub[sub["t_avg_us_median"].notna()]
    if sub.empty:
        return [], False
    sub = sub.assign(rank=ranks(sub))
    top = sub[sub["rank"] == 1].sort_values("t_avg_us_median")
    return list(top["variant"]), len(top) == 1


def wire_bytes(agg):
    cols = ["gid", "kind", "machine", "layout", "overlap", "ranks", "density", "size_bytes",
            "variant", "reducer", "bytes_sent_avg_median", "bytes_sent_max_median",
            "bound_bytes_median", "wire_to_bound_median", "n_repeats"]
    cols = [c for c in cols if c in agg.columns]
    return agg[cols].sort_values(["kind", "layout", "overlap", "ranks", "size_bytes",
                                  "variant", "density"]).reset_index(drop=True)


def scaling(agg):
    """Median time vs ranks at each size, for sets of groups that differ only
    in the rank count."""
    if agg.empty:
        return pd.DataFrame()
    keys = [c for c in GROUP_COLS if c != "ranks"]
    cols = keys + ["variant", "size_bytes", "ranks", "t_avg_us_median", "t_avg_us_ci_low",
                   "t_avg_us_ci_high", "t_avg_us_min", "t_avg_us_max", "n_repeats"]
    out = agg[cols].copy()
    nranks = out.groupby(keys + ["variant", "size_bytes"], dropna=False)["ranks"].transform("nunique")
    return out[nranks > 1].sort_values(keys + ["variant", "size_bytes", "ranks"]).reset_index(drop=True)


def _points_with_positive(agg, col):
    """The points of agg (a copy) where col is finite and > 0: the ones a
    ratio to col can be taken of; None when there are none (or no col)."""
    if agg.empty or col not in agg:
        return None
    d = agg[np.isfinite(agg[col]) & (agg[col] > 0)].copy()
    return None if d.empty else d


def model_fit(agg):
    """Per reducer variant: how far the measured median is from the cost
    model's time (rb_micro's t_model_us), over the points that have one."""
    d = _points_with_positive(agg, "t_model_us_median")
    if d is None:
        return pd.DataFrame()
    d["ratio"] = d["t_avg_us_median"] / d["t_model_us_median"]
    floor = d["t_floor_us_median"] if "t_floor_us_median" in d else np.nan
    d["floor_ratio"] = floor / d["t_model_us_median"]
    grp = d.groupby(["kind", "variant"], sort=True)
    g = grp["ratio"]
    out = pd.DataFrame({"points": g.size(), "ratio_median": g.median(), "ratio_min": g.min(),
                        "ratio_max": g.max(),
                        "within_0.5_2": g.agg(lambda r: float(((r >= 0.5) & (r <= 2)).mean())),
                        "floor_over_model": grp["floor_ratio"].median()})
    out = out.reset_index()
    out["explained"] = [_model_gap(r) for _, r in out.iterrows()]
    return out


def _model_gap(r):
    """Why a reducer is slower than its model, where the data say: the
    memory floor measured at run time (one read pass of the input) against
    the model's whole call.  The model's memory bandwidth is a calibration's;
    on a loaded VM one pass over a dense input can take longer than the
    model's whole call, and every reducer that scans its input pays it."""
    ratio, floor = r["ratio_median"], r["floor_over_model"]
    if not (ratio > 2 and np.isfinite(floor)):
        return ""
    if floor >= 0.5 * ratio:
        return ("the input's memory floor here alone is %.1fx the model's whole call: the pass "
                "over the dense input, slower on this machine than the model's bandwidth, sets "
                "the time" % floor)
    return ("the memory floor is %.1fx the model: the rest of the gap is local work the model "
            "leaves out (encode and decode phases)" % floor)


def memory_floor(agg):
    """Each point's median time over the memory floor of its rows (one read
    pass of the input, rb_micro's t_floor_us), and the same without the
    communication phase: how far a reducer's local work is from the
    traffic it cannot avoid."""
    d = _points_with_positive(agg, "t_floor_us_median")
    if d is None:
        return pd.DataFrame()
    d["t_over_floor"] = d["t_avg_us_median"] / d["t_floor_us_median"]
    comm = d["t_comm_us_median"] if "t_comm_us_median" in d else np.nan
    d["local_over_floor"] = (d["t_avg_us_median"] - comm) / d["t_floor_us_median"]
    return d[["gid", "input", "layout", "density", "ranks", "variant", "size_bytes",
              "t_avg_us_median", "t_floor_us_median", "t_over_floor",
              "local_over_floor"]].reset_index(drop=True)


def dense_crossover(agg):
    """Where each reducer crosses dense as the rank count grows: for
    configurations run at more than one rank count, the rank counts at which
    its median time is below dense's and the first at which it is not."""
    sc = scaling(agg)
    if sc.empty:
        return pd.DataFrame()
    keys = [c for c in GROUP_COLS if c != "ranks"] + ["size_bytes"]
    dense = sc[sc["variant"] == "dense"][keys + ["ranks", "t_avg_us_median"]]
    both = sc[sc["variant"] != "dense"].merge(dense, on=keys + ["ranks"], suffixes=("", "_dense"))
    if both.empty:
        return pd.DataFrame()
    rows = []
    for k, sub in both.groupby(keys + ["variant"], sort=True, dropna=False):
        sub = sub.sort_values("ranks")
        faster = sub["t_avg_us_median"] < sub["t_avg_us_median_dense"]
        slower_at = sub.loc[~faster, "ranks"]
        rows.append(dict(zip(keys + ["variant"], k), **{
            "ranks_run": " ".join(str(int(r)) for r in sub["ranks"]),
            "faster_than_dense_at": " ".join(str(int(r)) for r in sub.loc[faster, "ranks"]) or "none",
            "crosses_at": int(slower_at.iloc[0]) if len(slower_at) and faster.iloc[0] else
            ("never (faster at every rank count run)" if faster.all() else "slower from the start")}))
    return pd.DataFrame(rows)


def s2_error(agg):
    sub = agg[agg["reducer"] == "s2"]
    cols = ["gid", "kind", "layout", "overlap", "density", "ranks", "size_bytes", "options",
            "rel_l2_err_median", "recall_median", "max_abs_err_median", "nnz_union_median",
            "bytes_sent_avg_median", "n_repeats"]
    cols = [c for c in cols if c in sub.columns]
    out = sub[cols].copy()
    out["sketch_width"] = [option_value(o, "sketch_width") for o in out["options"]]
    out["sketch_width_mode"] = [option_value(o, "sketch_width_mode") for o in out["options"]]
    out["sketch_rows"] = [option_value(o, "sketch_rows") for o in out["options"]]
    return out.reset_index(drop=True)


def gossip_consensus(agg):
    sub = agg[agg["reducer"] == "gossip"]
    cols = ["gid", "kind", "layout", "overlap", "density", "ranks", "size_bytes", "options",
            "consensus_median", "rel_l2_err_median", "bytes_sent_avg_median", "n_repeats"]
    cols = [c for c in cols if c in sub.columns]
    return sub[cols].reset_index(drop=True)


def option_value(options, key):
    for part in str(options).split(","):
        if part.startswith(key + "="):
            v = part.split("=", 1)[1]
            try:
                return float(v)
            except ValueError:
                return v
    return np.nan


def measured_vs_simulated(agg):
    """Side by side: the same configuration (device, layout, overlap,
    density, ranks, cols, reducer variant, size) measured and simulated.
    Machines differ by nature (a simulated platform), so they are listed."""
    if agg.empty or set(agg["kind"]) != {"measured", "simulated"}:
        return pd.DataFrame()
    key = ["device", "layout", "overlap", "density", "ranks", "cols", "variant", "size_bytes"]
    cols = key + ["machine", "version", "t_avg_us_median", "bytes_sent_avg_median", "n_repeats"]
    m = agg[agg["kind"] == "measured"][cols]
    s = agg[agg["kind"] == "simulated"][cols]
    both = m.merge(s, on=key, suffixes=("_measured", "_simulated"))
    both["time_sim_over_measured"] = both["t_avg_us_median_simulated"] / both["t_avg_us_median_measured"]
    return both.sort_values(key).reset_index(drop=True)


def comparability_warnings(df):
    """Say what differs between runs, since such rows are never compared."""
    warns = []
    if df.empty:
        return warns
    for col, what in (("kind", "measured and simulated results"),
                      ("version", "tool versions"), ("machine", "machines (cluster/host/partition)"),
                      ("ranks", "rank counts"), ("device", "devices"),
                      ("cols", "gradient shapes (columns)")):
        vals = sorted(set(str(v) for v in df[col]))
        if len(vals) > 1:
            where = ("compared with each other only in the scaling-with-ranks section"
                     if col == "ranks" else "never compared with each other")
            warns.append("the data mix %s (%s): they are kept in separate groups, %s"
                         % (what, ", ".join(vals), where))
    for gid, hosts in df.groupby("gid")["host"].agg(lambda s: sorted(set(map(str, s)))).items():
        if len(hosts) > 1:
            warns.append("%s pools runs whose rank 0 ran on different hosts (%s) of the same "
                         "partition" % (gid, ", ".join(hosts[:5]) + (" ..." if len(hosts) > 5 else "")))
    if "size_bytes" in df:
        sizes = df.groupby("gid")["size_bytes"].apply(lambda s: frozenset(s))
        by_red = df.groupby(["gid", "reducer"])["size_bytes"].apply(frozenset)
        for (gid, red), s in by_red.items():
            missing = sizes[gid] - s
            if missing:
                warns.append("%s: %s was not measured at sizes %s that others were; "
                             "comparisons there leave it out"
                             % (gid, red, ", ".join(str(x) for x in sorted(missing))))
    return warns
