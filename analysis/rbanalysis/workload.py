"""The report's workload section: the same reducers and ranks on uniform
supports (rb_micro --overlap random), Zipf supports (--overlap zipf:S) and
gradients recorded from a model (--input trace:FILE.h5), side by side:
the workload itself (union, overlap, imbalance) and each reducer's time and
bytes on it.  section(doc, rows) is the hook report.build_report calls."""


import numpy as np
import pandas as pd

EXACT_TRAITS = ("dense", "agsparse", "sparcml", "parallax", "omnireduce", "oktopk", "zen")
# A reducer of that list can still run lossy under an option (oktopk with
# oktopk_select=topk): a row counts as exact only when it also measured no
# error beyond a float sum's rounding.
EXACT_MAX_REL_ERR = 1e-6
WORKLOAD_ORDER = {"uniform": 0, "zipf": 1, "trace": 2}


def workload_of(overlap):
    """The workload family and label of an overlap column value; None for
    the supports that are no workload of a model (all, none)."""
    if overlap == "random":
        return "uniform"
    if overlap.startswith("zipf:"):
        return overlap
    if overlap == "trace":
        return "trace"
    return None


def workload_rows(rows):
    """The micro rows of a workload (uniform, zipf:S, trace), labelled."""
    if rows.empty or "union_ratio" not in rows.columns:
        return pd.DataFrame()
    df = rows.copy()
    df["workload"] = [workload_of(str(o)) for o in df["overlap"]]
    df = df[df["workload"].notna()]
    if df.empty or df["workload"].nunique() < 2 and not (df["workload"] != "uniform").any():
        return pd.DataFrame()   # uniform alone: nothing to set beside it
    # only the shapes a Zipf or trace point was measured at: uniform sweeps
    # of other sizes are no comparison
    shapes = set(zip(df.loc[df["workload"] != "uniform", "rows"],
                     df.loc[df["workload"] != "uniform", "cols"]))
    df = df[[(r, c) in shapes for r, c in zip(df["rows"], df["cols"])]].copy()
    df["family"] = df["workload"].str.split(":").str[0]
    df["order"] = df["family"].map(WORKLOAD_ORDER)
    return df


def workload_table(df):
    """Per (kind, input, shape, ranks, workload): the gradient every reducer saw
    (the same for every reducer of a run: the median over its rows)."""
    key = ["kind", "input", "rows", "cols", "ranks", "order", "workload"]
    g = df.groupby(key, dropna=False)
    out = g.agg(size_bytes=("size_bytes", "first"), density=("density", "median"), nnz_local_avg=("nnz_local_avg", "median"),
                nnz_local_max=("nnz_local_max", "median"), nnz_union=("nnz_union", "median"),
                union_rows=("union_rows", "median"), union_ratio=("union_ratio", "median"),
                imbalance=("imbalance", "median"), points=("reducer", "size")).reset_index()
    return out.sort_values(key).drop(columns="order")


def exact_rows(df):
    """Mask of the rows of an exact reducer that delivered the exact sum."""
    return (df["reducer"].isin(EXACT_TRAITS) & (df["wrong"] == 0)
            & ~(df["rel_l2_err"].fillna(0) > EXACT_MAX_REL_ERR))


def reducer_table(df):
    """Per (kind, input, shape, ranks, workload, reducer): the fastest time over
    repetitions and steps (these VMs are noisy: minimums), the median bytes
    sent, the largest #wrong, the median error; and which exact reducer is
    the fastest on that workload."""
    key = ["kind", "input", "rows", "cols", "ranks", "order", "workload", "reducer"]
    out = df.groupby(key, dropna=False).agg(
        t_min_us=("t_avg_us", "min"), t_median_us=("t_avg_us", "median"),
        bytes_sent=("bytes_sent_avg", "median"), wrong=("wrong", "max"),
        rel_l2_err=("rel_l2_err", "median"), union_rows=("union_rows", "median"),
        imbalance=("imbalance", "median"), n=("t_avg_us", "size")).reset_index()
    out["fastest_exact"] = ""
    for _, sub in out.groupby(["kind", "input", "rows", "cols", "ranks", "workload"]):
        ex = sub[exact_rows(sub)]
        if len(ex):
            out.loc[ex["t_min_us"].idxmin(), "fastest_exact"] = "fastest"
    return out.sort_values(["kind", "input", "rows", "cols", "ranks", "reducer", "order"]).drop(
        columns="order")


def side_by_side(red):
    """Time per reducer with the workloads as columns (one table per
    (kind, input, ranks)): what the verdict changes to."""
    wide = red.pivot_table(index=["kind", "input", "rows", "cols", "ranks", "reducer"], columns="workload",
                           values="t_min_us", aggfunc="min")
    wide.columns = ["t_us[%s]" % c for c in wide.columns]
    return wide.reset_index()


def verdicts(red):
    """One line per (kind, input, ranks, workload): the fastest exact
    reducer; and where it differs from uniform's, say so."""
    lines = []
    for (kind, inp, rows, cols, ranks), sub in red.groupby(["kind", "input", "rows", "cols", "ranks"]):
        win = sub[sub["fastest_exact"] == "fastest"].set_index("workload")["reducer"].to_dict()
        if not win:
            continue
        parts = ["%s: %s" % (w, win[w]) for w in sorted(win, key=_order)]
        base = win.get("uniform")
        changed = [w for w in win if base and win[w] != base]
        lines.append("%s, %s input, %d x %d, %d ranks: fastest exact reducer on %s%s" % (
            kind, inp, rows, cols, ranks, "; ".join(parts),
            " (differs from uniform on %s)" % ", ".join(sorted(changed, key=_order))
            if changed else ""))
    return lines


def _order(w):
    return (WORKLOAD_ORDER.get(w.split(":")[0], 9), w)


def figures(wl, red, outdir):
    """workload_time.png: each reducer's fastest time per workload, one
    panel per rank count; workload_union.png: union / (p x per-rank) and
    imbalance per workload against the ranks."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .plotting import SERIES_HATCHES, series_colour
    out = []
    sub = red[red["kind"] == red["kind"].iloc[0]] if len(red) else red
    ranks = sorted(sub["ranks"].unique())[:4]
    if ranks:
        fig, axes = plt.subplots(1, len(ranks), figsize=(2.6 * len(ranks) + 1.0, 3.0), squeeze=False)
        for ax, p in zip(axes[0], ranks):
            s = sub[sub["ranks"] == p]
            reducers = sorted(s["reducer"].unique())
            works = sorted(s["workload"].unique(), key=_order)
            width = 0.8 / max(len(works), 1)
            for i, w in enumerate(works):
                t = s[s["workload"] == w].groupby("reducer")["t_min_us"].min()
                # workloads are not reducers: colours of their own, and hatches
                ax.bar(np.arange(len(reducers)) + i * width, [t.get(r, np.nan) for r in reducers],
                       width, label=w, color=series_colour(i),
                       hatch=SERIES_HATCHES[i % len(SERIES_HATCHES)], edgecolor="#333", linewidth=0.3)
            ax.set_xticks(np.arange(len(reducers)) + 0.4 - width / 2)
            ax.set_xticklabels(reducers, rotation=60, fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("time per call (us, min)")
            ax.set_title("%d ranks" % p, fontsize=8)
            ax.grid(True, axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=6)
        out.append(_save(fig, outdir, "workload_time.png",
                         "Each reducer's time per call on each workload (minimum over "
                         "repetitions and steps), one panel per rank count."))
    if len(wl):
        fig, axes = plt.subplots(1, 2, figsize=(6.6, 3.0))
        for i, (w, s) in enumerate(sorted(wl.groupby("workload"), key=lambda kv: _order(kv[0]))):
            s = s.groupby("ranks")[["union_ratio", "imbalance"]].median().reset_index()
            style = dict(marker="osD^v<>"[i % 7], label=w, color=series_colour(i))
            axes[0].plot(s["ranks"], s["union_ratio"], **style)
            axes[1].plot(s["ranks"], s["imbalance"], **style)
        axes[0].set_ylabel("union / (ranks x per-rank non-zeros)")
        axes[1].set_ylabel("max / mean non-zeros per rank")
        for ax in axes:
            ax.set_xlabel("ranks")
            ax.set_xscale("log", base=2)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
        out.append(_save(fig, outdir, "workload_union.png",
                         "How far the ranks' supports overlap (1/p: identical, 1: disjoint) and "
                         "how uneven their loads are, per workload."))
    return out


def _save(fig, outdir, name, caption):
    """Laid out and checked for cut text as every figure (plotting._save)."""
    from . import figures as figs
    return figs._save(fig, outdir, name), caption


def section(doc, rows):
    """The workload section (nothing when the data hold no Zipf or trace
    point); the figures drawn, as [(file, caption)]."""
    df = workload_rows(rows)
    if df.empty:
        return []
    wl, red = workload_table(df), reducer_table(df)
    doc.heading(2, "Workload: uniform, Zipf and recorded gradients")
    doc.para("The same reducers on the same rank counts, on uniform supports (`--overlap "
             "random`), Zipf supports (`--overlap zipf:S`: each rank draws its own batch of "
             "units from a Zipf law) and gradients recorded from a model (`--input trace:`, "
             "the `trace_*` attributes of the run name the file and its SHA-256). "
             "union/pn = union / (ranks x per-rank non-zeros): 1/p when every rank holds the "
             "same support, 1 when they are disjoint; imbalance = max / mean non-zeros per "
             "rank. Times are the minimum over repetitions (and a trace's steps).")
    doc.table(wl, "workload", columns={
        "kind": "kind", "input": "input", "ranks": "ranks", "workload": "workload",
        "rows": "rows", "cols": "cols", "density": "density", "nnz_local_avg": "nnz/rank",
        "union_rows": "union rows", "union_ratio": "union/pn", "imbalance": "imbalance"})
    doc.table(side_by_side(red), "workload_time")
    doc.table(red, "workload_reducers", columns={
        "ranks": "ranks", "reducer": "reducer", "workload": "workload", "t_min_us": "t min (us)",
        "bytes_sent": "bytes sent", "wrong": "#wrong", "rel_l2_err": "rel. L2 err",
        "fastest_exact": "fastest exact"})
    doc.bullets(verdicts(red))
    figs = []
    try:
        drawn = figures(wl, red, doc.outdir)
    except Exception as e:  # noqa: BLE001 -- a figure is never the end of the report
        doc.para("_(workload figures could not be drawn: %s: %s)_" % (type(e).__name__, e))
        drawn = []
    from .plotting import CLIPPED
    for name, caption in drawn:
        doc.figure(name, caption, CLIPPED.get(name))
        figs.append((name, caption))
    return figs
