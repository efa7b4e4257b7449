"""Training tables from the /train records of rb_train runs.

A training group shares kind, machine, version, model, dataset, ranks and
allocator policy;
runs of a group with the same reducer variant are repeats.  The quality
metric is test accuracy (higher is better) or validation perplexity (lower
is better), whichever the run recorded.
"""

import os

import numpy as np
import pandas as pd

from . import stats
from .options import options_from_attrs, options_text, variant_label
from .runmeta import (busy, combine_busy, malloc_policy, oversubscribed, platform, run_kind,
                      run_machine)

GROUP_COLS = ["kind", "machine", "version", "model", "dataset", "ranks", "malloc"]
METRICS = (("test_accuracy", True), ("accuracy", True),
           ("val_perplexity", False), ("perplexity", False))
PHASES = ("forward", "backward", "reduce", "update")


def _attr(attrs, *names, default=""):
    for n in names:
        if n in attrs and attrs[n] not in (None, ""):
            return attrs[n]
    return default


def records(archive):
    """[(run, record, info dict)] for every training record with a curve."""
    out = []
    for run in archive.runs:
        for rec in run.train:
            a = rec.attrs
            reducer = str(_attr(a, "reducer", default="?"))
            opts = options_text(rec.options if rec.options is not None else options_from_attrs(a))
            opts = _with_training_options(opts, a, reducer)
            data = str(_attr(a, "dataset", "data_path", "data", default=""))
            info = {
                "run": run.label, "file": run.path, "kind": run_kind(run.meta),
                "machine": run_machine(run.meta), "version": run.meta["version"] or "",
                "malloc": malloc_policy(run.meta),
                "host": run.meta["host"] or "", "job_id": run.meta["job_id"] or "",
                "partition": run.meta["partition"] or "", "cluster": run.meta["cluster"] or "",
                "nodes": run.meta["nodes"] or "", "date": run.meta["date"] or "",
                "model": model_label(a),
                "dataset": os.path.basename(data.rstrip("/")) or data,
                "target_accuracy": _attr(a, "target_accuracy", default=float("nan")),
                "target_perplexity": _attr(a, "target_perplexity", default=float("nan")),
                "ranks": int(_attr(a, "ranks", default=run.meta["ranks"] or 0)),
                "reducer": reducer, "options": opts,
                "variant": variant_label(reducer, opts),
                "oversubscribed": oversubscribed(run.meta),
                "busy": busy(run.meta), "platform": platform(run.meta),
                "seed": _seed(_attr(a, "seed", default=None)),
                "embedding_parameters": int(_attr(a, "embedding_parameters", default=0) or 0),
                "embed_dim": int(_attr(a, "embed_dim", default=0) or 0),
            }
            out.append((run, rec, info))
    infos = [info for _, _, info in out]
    _add_group_ids(infos)
    # A variant names the options that vary within its training group (an
    # option that only differs between models, s2's rows on lenet and
    # embedlm, says nothing about either).
    from .micro import short_variants
    for tid in sorted(set(i["tid"] for i in infos)):
        mine = [i for i in infos if i["tid"] == tid]
        for info, v in zip(mine, short_variants([i["reducer"] for i in mine],
                                                [i["options"] for i in mine])):
            info["variant"] = v
    return out


def model_label(attrs):
    """The model's name; "NAME (PyTorch)" for a run PyTorch drove
    (rb-torch-train: /train@driver), never pooled with rb_train's runs."""
    model = str(_attr(attrs, "model", default="?"))
    return model + " (PyTorch)" if str(_attr(attrs, "driver", default="")) == "pytorch" else model


def _with_training_options(opts, attrs, reducer):
    """rb_train's --dense-reducer (where it is not the reducer) and
    --sparsify (with its error feedback, on unless said) are part of what a
    run measured: runs that differ in them are other variants."""
    parts = [opts]
    dense = str(_attr(attrs, "dense_reducer", default=reducer))
    if dense != reducer:
        parts.append("dense_reducer=" + dense)
    how = str(_attr(attrs, "sparsify", default="none"))
    if how not in ("", "none"):
        parts.append("sparsify=" + how)
        if str(_attr(attrs, "error_feedback", default=1)) in ("0", "off"):
            parts.append("sparsify_feedback=off")
    return ",".join(p for p in parts if p)


def _seed(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _add_group_ids(infos):
    """Give each info its training group: tid (T1, T2...) and a label."""
    keys = [tuple(str(i[c]) for c in GROUP_COLS) for i in infos]
    ids = {k: "T%d" % (n + 1) for n, k in enumerate(sorted(set(keys)))}
    for info, k in zip(infos, keys):
        info["tid"] = ids[k]
        info["group"] = "%s | %s | v%s | %s %s | %s ranks | malloc: %s" % k


def metric_of(curve):
    if curve is None:
        return None, True
    for name, higher in METRICS:
        if name in curve.columns and curve[name].notna().any():
            return name, higher
    return None, True


def curves(recs):
    """Tidy: one row per evaluation point."""
    frames = []
    for _, rec, info in recs:
        metric, higher = metric_of(rec.curve)
        if metric is None:
            continue
        c = rec.curve
        df = pd.DataFrame({
            "iteration": c["iteration"] if "iteration" in c else np.arange(len(c)),
            "epoch": c["epoch"] if "epoch" in c else np.nan,
            "wall_s": c["wall_s"] if "wall_s" in c else np.nan,
            "train_loss": c["train_loss"] if "train_loss" in c else np.nan,
            "metric": metric, "value": c[metric], "higher_is_better": higher,
        })
        df = df[df["value"].notna()]
        for k, v in info.items():
            df[k] = v
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def phase_times(recs):
    """Per record: median seconds per iteration of each phase and in total."""
    rows = []
    for _, rec, info in recs:
        p = rec.phases
        row = dict(info)
        if p is not None and len(p):
            total = 0.0
            for ph in PHASES:
                col = next((c for c in p.columns if str(c) in (ph, "t_" + ph, ph + "_s", "t_" + ph + "_s")), None)
                v = float(np.median(p[col])) if col is not None else np.nan
                row["t_" + ph + "_s"] = v
                total += 0.0 if np.isnan(v) else v
            tcol = next((c for c in p.columns if str(c) in ("iteration_s", "t_iter_s", "t_iteration_s", "total_s")), None)
            row["t_iter_s"] = float(np.median(p[tcol])) if tcol is not None else total
            row["embed_density"] = _embed_density(p, info["embedding_parameters"])
            # rank 0's payload bytes per step, every gradient together
            row["bytes_per_step"] = (float(np.median(p["bytes_sent"])) if "bytes_sent" in p.columns
                                     else np.nan)
        else:
            c = rec.curve
            if c is not None and "wall_s" in c and "iteration" in c and c["iteration"].max() > 0:
                row["t_iter_s"] = float(c["wall_s"].max() / c["iteration"].max())
            else:
                row["t_iter_s"] = np.nan
            for ph in PHASES:
                row["t_" + ph + "_s"] = np.nan
            row["bytes_per_step"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _embed_density(phases, embedding_parameters):
    """Row density of rank 0's embedding gradient: median non-zeros per
    iteration over the table's size (rows are touched whole); NaN without
    an embedding."""
    if not embedding_parameters or "embed_nnz" not in phases:
        return np.nan
    return float(np.median(phases["embed_nnz"])) / embedding_parameters


# Equivalence margins of the accuracy-parity claims: a reducer "converges
# to the same accuracy" as dense when the 90% interval of the median paired
# difference lies inside them.
ACCURACY_MARGIN_POINTS = 0.5     # accuracy points (percent)
PERPLEXITY_MARGIN_REL = 0.02     # relative


def margin_of(metric, higher, values):
    """(margin, unit text, relative?) of a metric: 0.5 accuracy points
    (0.005 when the runs store accuracy as a fraction), 2% of perplexity."""
    if higher:
        frac = len(values) and np.nanmax(np.asarray(values, dtype=float)) <= 1.0
        return (ACCURACY_MARGIN_POINTS / (100.0 if frac else 1.0),
                "%g accuracy points" % ACCURACY_MARGIN_POINTS, False)
    return PERPLEXITY_MARGIN_REL, "%g%% of perplexity" % (100 * PERPLEXITY_MARGIN_REL), True


def _default_target(sub, best, higher):
    """(target, how) when neither the command line nor the runs give one:
    a level dense reaches in every one of its runs (its lowest best
    accuracy, highest best perplexity) less the parity margin, as MLPerf
    sets a quality target a little below the reference's; without dense,
    the level every run of the group reaches."""
    dense_runs = sub.loc[sub["reducer"] == "dense", "run"].unique()
    if len(dense_runs):
        d = best[best.index.isin(dense_runs)]
        margin, unit, rel = margin_of(sub["metric"].iloc[0], higher, sub["value"])
        if higher:
            return (float(d.min()) - margin,
                    "dense's lowest best %.4g less the %s margin" % (d.min(), unit))
        return (float(d.max()) * (1 + margin),
                "dense's highest best %.4g plus the %s margin" % (d.max(), unit))
    if higher:
        return float(best.min()), "lowest best value of the group"
    return float(best.max()), "highest best value of the group"


# Run information carried from the curve to the per-run table.
RUN_INFO = ("reducer", "seed", "busy", "platform", "ranks", "kind", "model", "oversubscribed")


def runs(curv, phases, targets=None):
    """(one row per training run, {tid: (metric, target, how)}).  A run's
    time to target is the wall time of its first evaluation at or beyond
    the target, +inf when it never got there (censored: the
    order-statistic median and interval handle it), with `reached`."""
    if curv.empty and phases.empty:
        return pd.DataFrame(), {}
    per_run = []
    targets = dict(targets or {})
    chosen = {}
    # A run may hold phases and no evaluation point yet (empty curve).
    for tid, sub in (curv.groupby("tid") if not curv.empty else []):
        metric = sub["metric"].iloc[0]
        higher = bool(sub["higher_is_better"].iloc[0])
        best = sub.groupby("run")["value"].agg("max" if higher else "min")
        # Target: --target-*, else the one the runs were given (when they
        # agree), else _default_target.
        run_target = _common_target(sub, "target_accuracy" if higher else "target_perplexity")
        if metric in targets:
            target, how = targets[metric], "given on the command line"
        elif run_target is not None:
            target, how = run_target, "the runs' own target"
        else:
            target, how = _default_target(sub, best, higher)
        chosen[tid] = (metric, float(target), how)
        for run, r in sub.groupby("run"):
            r = r.sort_values("iteration")
            hit = r[r["value"] >= target] if higher else r[r["value"] <= target]
            per_run.append({
                "tid": tid, "run": run, "variant": r["variant"].iloc[0],
                "metric": metric, "higher_is_better": higher, "target": float(target),
                "final": float(r["value"].iloc[-1]),
                "best": float(r["value"].max() if higher else r["value"].min()),
                "iters": int(r["iteration"].max()),
                "reached": bool(len(hit)),
                "tt_target_s": float(hit["wall_s"].iloc[0]) if len(hit) else np.inf,
                "it_target": float(hit["iteration"].iloc[0]) if len(hit) else np.nan,
                **{c: r[c].iloc[0] for c in RUN_INFO if c in r},
            })
    pr = pd.DataFrame(per_run)
    keep = ["tid", "run", "variant", "group", "reducer", "ranks", "model", "kind", "dataset",
            "malloc", "options", "oversubscribed", "busy", "platform", "seed",
            "embedding_parameters", "embed_dim", "embed_density", "bytes_per_step", "t_iter_s"] + \
        ["t_%s_s" % p for p in PHASES]
    keys = ["tid", "run", "variant"]
    ph = (phases[[c for c in keep if c in phases and (c in keys or c not in pr.columns)]]
          if not phases.empty else pd.DataFrame())
    if pr.empty:
        pr = ph[["tid", "run", "variant"]].copy()
    merged = pr.merge(ph, on=["tid", "run", "variant"], how="outer") if not ph.empty else pr
    return merged, chosen


def summary(curv, phases, targets=None):
    """Per group and variant: final/best metric, time per iteration, time to
    target (median over repeats with its interval, +inf for runs that never
    reached it), compute efficiency vs none."""
    merged, chosen = runs(curv, phases, targets)
    if merged.empty:
        return pd.DataFrame(), {}
    g = merged.groupby(["tid", "variant"], dropna=False)
    agg = {"n_repeats": ("run", "nunique")}
    for col in ("final", "best", "it_target", "t_iter_s", "bytes_per_step",
                "t_forward_s", "t_backward_s", "t_reduce_s", "t_update_s"):
        if col in merged:
            agg[col + "_median"] = (col, "median")
    for col in ("tt_target_s", "t_iter_s"):
        if col in merged:
            agg[col + "_min"] = (col, "min")
            agg[col + "_max"] = (col, "max")
    if "reached" in merged:
        agg["n_reached"] = ("reached", "sum")
    for col in ("group", "reducer", "ranks", "model", "kind", "dataset", "malloc", "metric",
                "options", "oversubscribed", "platform",
                "embedding_parameters", "embed_dim"):
        if col in merged:
            agg[col] = (col, "first")
    if "embed_density" in merged:
        agg["embed_density"] = ("embed_density", "median")
    if "busy" in merged:
        agg["busy"] = ("busy", combine_busy)
    if "seed" in merged:
        agg["seeds"] = ("seed", lambda s: int(pd.Series(s).dropna().nunique()))
    out = g.agg(**agg).reset_index()
    _add_iter_interval(out, merged, g)
    _add_tta_interval(out, merged, g)
    _add_efficiency(out)
    return out, chosen


def _add_tta_interval(out, merged, g):
    """Median time to target over the runs, a run that never reached it
    counting as +inf, with its 95% interval (an end may be inf)."""
    for col in ("tt_target_s_median", "tt_target_s_ci_low", "tt_target_s_ci_high"):
        out[col] = np.nan
    if "tt_target_s" not in merged:
        return
    ci = g["tt_target_s"].agg(lambda s: stats.median_ci(s.to_numpy(), keep_inf=True))
    ci = ci.reset_index(drop=True)
    out["tt_target_s_median"] = [c[0] for c in ci]
    out["tt_target_s_ci_low"] = [c[1] for c in ci]
    out["tt_target_s_ci_high"] = [c[2] for c in ci]


def paired_differences(truns, tid, variant, reference="dense"):
    """Paired by seed: for each seed both variant and reference ran (same
    group, same number of iterations), the final metric of variant minus
    the reference's (relative to it for perplexity); a seed with several
    runs of one side counts once, with the median of them.  Returns
    (differences, seeds used, why some were left out)."""
    sub = truns[truns["tid"] == tid] if not truns.empty else truns
    if sub.empty or "seed" not in sub or "final" not in sub:
        return [], [], "no runs with a final accuracy"
    a = sub[sub["variant"] == variant]
    b = sub[sub["reducer"] == reference] if "reducer" in sub else sub.iloc[0:0]
    higher = bool(sub["higher_is_better"].dropna().iloc[0]) if sub["higher_is_better"].notna().any() else True
    diffs, seeds, notes = [], [], []
    for seed in sorted(set(a["seed"].dropna()) & set(b["seed"].dropna())):
        ra, rb = a[a["seed"] == seed], b[b["seed"] == seed]
        if set(ra["iters"]) != set(rb["iters"]) or len(set(ra["iters"])) != 1:
            notes.append("seed %d: different numbers of iterations" % seed)
            continue
        va, vb = float(ra["final"].median()), float(rb["final"].median())
        diffs.append(va - vb if higher else (va - vb) / vb)
        seeds.append(int(seed))
    unpaired = (set(a["seed"].dropna()) ^ set(b["seed"].dropna()))
    if unpaired:
        notes.append("%d seed(s) run by one side only" % len(unpaired))
    if a["seed"].isna().any() or b["seed"].isna().any():
        notes.append("runs without a recorded seed left out")
    return diffs, seeds, "; ".join(notes)


def parity(truns, tid, variant, metric, name=None):
    """Accuracy parity of variant against dense in group tid: two one-sided
    tests on the final metric's differences paired by seed.  A dict:
    diffs, seeds, notes, median, low, high (the 90% interval), n, coverage,
    class (equivalent, below, not-equivalent, inconclusive), words, unit
    (the margin's), relative (perplexity: differences relative to dense)."""
    name = name or variant
    diffs, seeds, notes = paired_differences(truns, tid, variant)
    tr = truns[truns["tid"] == tid]
    higher = bool(tr["higher_is_better"].iloc[0]) if "higher_is_better" in tr and len(tr) else True
    margin, unit, rel = margin_of(metric, higher, tr.get("final", []))
    med, lo, hi, n, cov, cls = stats.paired_equivalence(diffs, margin)
    worse = (hi < -margin) if higher else (lo > margin)
    if cls == "not-equivalent" and worse:
        cls = "below"
    words = {"equivalent": "equivalent within +-%s (90%% interval inside the margin)" % unit,
             "below": "below: %s worse than dense by more than %s" % (name, unit),
             "not-equivalent": "not equivalent: %s better than dense by more than %s" % (name, unit),
             "inconclusive": "inconclusive: the 90%% interval straddles +-%s" % unit}[cls]
    if n < stats.min_pairs():
        words = ("inconclusive: %d seed(s) paired with dense, need >= %d "
                 "(--seed of rb_train or rb-torch-train)" % (n, stats.min_pairs()))
    return {"diffs": diffs, "seeds": seeds, "notes": notes, "median": med, "low": lo, "high": hi,
            "n": n, "coverage": cov, "class": cls, "words": words, "unit": unit, "relative": rel,
            "higher": higher, "margin": margin}


def _add_iter_interval(out, merged, g):
    """95% interval of the median seconds per iteration over the runs."""
    out["t_iter_s_ci_low"] = out["t_iter_s_ci_high"] = np.nan
    if "t_iter_s" not in merged:
        return
    ci = g["t_iter_s"].agg(lambda s: stats.median_ci(s.to_numpy())).reset_index(drop=True)
    out["t_iter_s_ci_low"] = [c[1] for c in ci]
    out["t_iter_s_ci_high"] = [c[2] for c in ci]


def _add_efficiency(out):
    """Compute efficiency t_iter(none) / t_iter(reducer) per group, with its
    interval from the two intervals."""
    for col in ("compute_efficiency", "compute_efficiency_low", "compute_efficiency_high"):
        out[col] = np.nan
    if "t_iter_s_median" not in out:
        return
    for tid, sub in out.groupby("tid"):
        none = sub[sub["reducer"] == "none"]
        if not len(none) or not none["t_iter_s_median"].iloc[0] > 0:
            continue
        n = none.iloc[0]
        out.loc[sub.index, "compute_efficiency"] = n["t_iter_s_median"] / sub["t_iter_s_median"]
        for i, r in sub.iterrows():
            lo, hi = stats.ratio_interval(n["t_iter_s_ci_low"], n["t_iter_s_ci_high"],
                                          r["t_iter_s_ci_low"], r["t_iter_s_ci_high"])
            out.loc[i, ["compute_efficiency_low", "compute_efficiency_high"]] = [lo, hi]


def _common_target(sub, col):
    if col not in sub:
        return None
    vals = set(float(v) for v in sub[col] if v is not None and np.isfinite(float(v)) and float(v) > 0)
    return vals.pop() if len(vals) == 1 else None


def efficiency_vs_ranks(summ):
    """Compute efficiency (t_iter none / t_iter reducer) for each rank count,
    per model and kind."""
    if summ.empty or "compute_efficiency" not in summ:
        return pd.DataFrame()
    s = summ[summ["compute_efficiency"].notna()]
    cols = ["kind", "model", "variant", "ranks", "compute_efficiency", "compute_efficiency_low",
            "compute_efficiency_high", "t_iter_s_median", "n_repeats"]
    return s[[c for c in cols if c in s]].sort_values(["kind", "model", "variant", "ranks"]).reset_index(drop=True)
