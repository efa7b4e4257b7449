"""The papers' headline claims, measured on the user's data (never assumed).

S2 Reducer: 81% less sparse communication and 1.8x speedup over the best of
the four sparse baselines (agsparse, sparcml, parallax, omnireduce).
GossipGraD: ~100% compute efficiency (ResNet50, 128 P100 GPUs).

Per point (a group and size of the microbenchmarks, or a training group):
  communication reduction = 1 - s2 wire bytes / fewest wire bytes of a baseline
  speedup                 = fastest baseline time / s2 time
  compute efficiency      = time per iteration of `none` / of gossip
each from the medians over repetitions, with an interval from theirs
(stats.ratio_interval).  Only baselines that validated (no wrong values)
count.

Each point has a *setting*: `paper` when it is in the regime the paper
claims (S2_PAPER, gossip_setting), `other` otherwise; and it is marked
oversubscribed when its ranks outnumbered the cores.  The headline comes
from `paper` points that are not oversubscribed; measured and simulated data
are summarised separately.  Verdicts: "meets the claim" when the whole
interval is at or above the claim (>= 0.9 for the ~100% efficiency claim),
"below the claim" when it is below, else "not significantly different";
without an interval only the median is compared, and the verdict says so.
An efficiency above 1.1 says the `none` reference ran slower than gossip,
which measures the machine, not gossip: "inconclusive".
"""

import numpy as np
import pandas as pd

from . import stats
from .micro import BASELINES, best_of, option_value, speedup_against, usable_baselines

CLAIMS = (
    ("s2_comm_reduction", "S2: sparse communication reduction vs best baseline", 0.81, "81%"),
    ("s2_speedup", "S2: speedup vs best baseline (reduce time)", 1.8, "1.8x"),
    ("s2_train_speedup", "S2: speedup vs best baseline (training time per iteration)", 1.8, "1.8x"),
    ("gossip_efficiency", "GossipGraD: compute efficiency", 0.9, "~100%"),
)
SHORT = {"s2_comm_reduction": "S2 communication reduction", "s2_speedup": "S2 speedup (reduce)",
         "s2_train_speedup": "S2 speedup (training)",
         "gossip_efficiency": "GossipGraD compute efficiency"}
# Largest plausible value of a claim's measure (None: no bound).
PLAUSIBLE_MAX = {"gossip_efficiency": 1.1}

# The S2 paper's regime: a row-sparse gradient (embedding) of at least 64
# columns with at most 5% of its rows non-zero per rank, and the authors'
# fixed sketch width c = rows x cols x density x ratio, i.e. rb's
# sketch_width_mode=fraction with sketch_width = density x ratio, the ratio
# within a factor of 2 of one the authors used (0.25 for GNMT, 0.001 for
# the LSTM).
S2_PAPER = {"layout": "row", "min_cols": 64, "max_density": 0.05,
            "ratios": (0.25, 0.001), "ratio_tolerance": 2.0}


def s2_setting(layout, cols, density, mode, width):
    """('paper', '') or ('other', why) for an s2 point."""
    p = S2_PAPER
    why = []
    if layout != p["layout"]:
        why.append("%s layout (paper: row-sparse)" % layout)
    if not (float(cols) >= p["min_cols"]):
        why.append("%s columns (paper: >= %d)" % (cols, p["min_cols"]))
    if not (0 < float(density) <= p["max_density"]):
        why.append("row density %g (paper: <= %g)" % (float(density), p["max_density"]))
    if str(mode) != "fraction":
        why.append("sketch_width_mode %s (paper: fraction)" % mode)
    elif not _authors_ratio(width, density):
        why.append("sketch_width %s = %.3g x density (paper: %s x density)"
                   % (width, float(width) / float(density) if float(density) > 0 else np.nan,
                      " or ".join("%g" % r for r in p["ratios"])))
    return ("other", "; ".join(why)) if why else ("paper", "")


def _authors_ratio(width, density):
    try:
        ratio = float(width) / float(density)
    except (TypeError, ValueError, ZeroDivisionError):
        return False
    tol = S2_PAPER["ratio_tolerance"]
    return any(r / tol <= ratio <= r * tol for r in S2_PAPER["ratios"])


def _verdict(claim_id, value, med, lo, hi):
    top = PLAUSIBLE_MAX.get(claim_id)
    if top is not None and med > top:
        return "inconclusive: the reference ran slower (more ranks than cores?)"
    if stats.has_interval(lo, hi):
        if lo >= value:
            return "meets the claim"
        if hi < value:
            return "below the claim"
        return "not significantly different from the claim"
    return ("%s the claim by its median only (no interval: n < %d)"
            % ("meets" if med >= value else "below", stats.MIN_REPETITIONS))


# ---------------------------------------------------------------- points

def s2_points(agg):
    """Per group, size and s2 variant: reduction and speedup vs baselines."""
    rows = []
    if agg.empty:
        return pd.DataFrame()
    for (gid, size), sub in agg.groupby(["gid", "size_bytes"]):
        s2 = sub[sub["reducer"] == "s2"]
        # At one rank nothing is communicated: no point for either claim.
        if s2.empty or (sub["ranks"] < 2).all():
            continue
        by_bytes = usable_baselines(sub, "bytes_sent_avg_median")
        by_time = usable_baselines(sub, "t_avg_us_median")
        if by_bytes.empty or by_time.empty:
            continue
        fewest, b_lo, b_hi = best_of(by_bytes, "bytes_sent_avg")
        for _, r in s2.iterrows():
            b, s = fewest["bytes_sent_avg_median"], r["bytes_sent_avg_median"]
            s_over_b = stats.ratio_interval(r["bytes_sent_avg_ci_low"], r["bytes_sent_avg_ci_high"],
                                            b_lo, b_hi)
            fastest, speedup, sp_lo, sp_hi, sp_verdict = speedup_against(r, by_time)
            setting, why = s2_setting(r["layout"], r["cols"], r["density"],
                                      option_value(r["options"], "sketch_width_mode"),
                                      option_value(r["options"], "sketch_width"))
            rows.append({
                "gid": gid, "kind": r["kind"], "setting": setting, "why_other": why,
                "oversubscribed": bool(r["oversubscribed"]), "layout": r["layout"],
                "cols": r["cols"], "density": r["density"], "ranks": r["ranks"],
                "size_bytes": size, "s2_variant": r["variant"], "n_repeats": r["n_repeats"],
                "s2_bytes": s, "fewest_bytes_baseline": fewest["variant"], "baseline_bytes": b,
                "comm_reduction": 1.0 - s / b if b > 0 else np.nan,
                "comm_reduction_low": 1.0 - s_over_b[1], "comm_reduction_high": 1.0 - s_over_b[0],
                "s2_t_us": r["t_avg_us_median"], "fastest_baseline": fastest,
                "baseline_t_us": by_time.loc[by_time["variant"] == fastest, "t_avg_us_median"].min(),
                "speedup": speedup, "speedup_low": sp_lo, "speedup_high": sp_hi,
                "speedup_verdict": sp_verdict,
                "s2_rel_l2_err": r.get("rel_l2_err_median", np.nan),
            })
    return pd.DataFrame(rows)


def _iter_interval(r):
    return r.get("t_iter_s_ci_low", np.nan), r.get("t_iter_s_ci_high", np.nan)


def s2_train_setting(r):
    """The S2 paper's regime in training: an embedding (row-sparse)
    gradient, reduced with the authors' fixed width for its row density."""
    if not r.get("embedding_parameters", 0) or not r.get("embed_density", 0) > 0:
        return "other", "no embedding (row-sparse) gradient: %s" % r.get("model", "?")
    return s2_setting("row", r.get("embed_dim", 0), r["embed_density"],
                      option_value(r.get("options", ""), "sketch_width_mode"),
                      option_value(r.get("options", ""), "sketch_width"))


def s2_train_points(summ):
    rows = []
    if summ.empty or "t_iter_s_median" not in summ:
        return pd.DataFrame()
    for tid, sub in summ.groupby("tid"):
        s2 = sub[sub["reducer"] == "s2"]
        base = sub[sub["reducer"].isin(BASELINES) & sub["t_iter_s_median"].notna()]
        if s2.empty or base.empty or (sub["ranks"] < 2).all():
            continue
        fastest = base.loc[base["t_iter_s_median"].idxmin()]
        b_lo, b_hi = stats.min_interval(base["t_iter_s_ci_low"], base["t_iter_s_ci_high"])
        for _, r in s2.iterrows():
            lo, hi = stats.ratio_interval(b_lo, b_hi, *_iter_interval(r))
            setting, why = s2_train_setting(r)
            rows.append({"tid": tid, "kind": r["kind"], "setting": setting, "why_other": why,
                         "oversubscribed": bool(r.get("oversubscribed", False)),
                         "model": r["model"], "ranks": r["ranks"], "n_repeats": r["n_repeats"],
                         "s2_variant": r["variant"], "fastest_baseline": fastest["variant"],
                         "speedup": fastest["t_iter_s_median"] / r["t_iter_s_median"],
                         "speedup_low": lo, "speedup_high": hi,
                         "metric": r.get("metric", ""), "s2_final": r.get("final_median", np.nan),
                         "baseline_final": fastest.get("final_median", np.nan)})
    return pd.DataFrame(rows)


def gossip_points(summ, agg=None):
    """Compute efficiency of gossip: training groups (a measured compute
    phase) and microbenchmark groups run with --compute (a modelled one).
    Both are the paper's setting; a microbenchmark without compute gives
    no point (`none` then costs nothing, so the ratio means nothing)."""
    rows = []
    if not summ.empty and "compute_efficiency" in summ:
        g = summ[(summ["reducer"] == "gossip") & summ["compute_efficiency"].notna()]
        for _, r in g.iterrows():
            rows.append({"where": r["tid"], "kind": r["kind"], "setting": "paper",
                         "why_other": "", "oversubscribed": bool(r.get("oversubscribed", False)),
                         "compute": "measured (%s)" % r["model"], "ranks": r["ranks"],
                         "n_repeats": r["n_repeats"], "variant": r["variant"],
                         "compute_efficiency": r["compute_efficiency"],
                         "compute_efficiency_low": r.get("compute_efficiency_low", np.nan),
                         "compute_efficiency_high": r.get("compute_efficiency_high", np.nan)})
    if agg is not None and not agg.empty:
        rows += _gossip_micro_points(agg)
    return pd.DataFrame(rows)


def _gossip_micro_points(agg):
    rows = []
    modelled = agg[agg["compute_s"] > 0] if "compute_s" in agg else agg.iloc[0:0]
    for (gid, size), sub in modelled.groupby(["gid", "size_bytes"]):
        none = sub[sub["reducer"] == "none"]
        if none.empty:
            continue
        n = none.iloc[0]
        for _, r in sub[sub["reducer"] == "gossip"].iterrows():
            lo, hi = stats.ratio_interval(n["t_avg_us_ci_low"], n["t_avg_us_ci_high"],
                                          r["t_avg_us_ci_low"], r["t_avg_us_ci_high"])
            rows.append({"where": "%s %s B" % (gid, size), "kind": r["kind"], "setting": "paper",
                         "why_other": "", "oversubscribed": bool(r["oversubscribed"]),
                         "compute": "modelled (%g s)" % r["compute_s"], "ranks": r["ranks"],
                         "n_repeats": min(r["n_repeats"], n["n_repeats"]), "variant": r["variant"],
                         "compute_efficiency": n["t_avg_us_median"] / r["t_avg_us_median"],
                         "compute_efficiency_low": lo, "compute_efficiency_high": hi})
    return rows


# ---------------------------------------------------------------- table

def _summarise(points, col, claim_id, why_missing, context=None):
    """Claim rows: one per (setting, kind, oversubscribed) with points, and
    always one `paper` row (saying so when there is no paper point)."""
    label, value, text = next((c[1], c[2], c[3]) for c in CLAIMS if c[0] == claim_id)
    rows = []
    have = points[points[col].notna()] if not points.empty else pd.DataFrame()
    keys = (sorted(set(zip(have["setting"], have["kind"], have["oversubscribed"])),
                   key=lambda k: (k[0] != "paper", k[1], k[2])) if not have.empty else [])
    for setting, kind, crowded in keys:
        p = have[(have["setting"] == setting) & (have["kind"] == kind)
                 & (have["oversubscribed"] == crowded)]
        med, lo, hi = stats.median_range(p[col].tolist(), p[col + "_low"].tolist(),
                                         p[col + "_high"].tolist())
        rows.append({"claim_id": claim_id, "claim": label, "paper": text, "setting": setting,
                     "data": kind, "oversubscribed": "yes" if crowded else "no",
                     "points": len(p), "repetitions": int(p["n_repeats"].min()),
                     "measured_median": med, "measured_low": lo, "measured_high": hi,
                     "measured_min": float(p[col].min()), "measured_max": float(p[col].max()),
                     "verdict": _verdict(claim_id, value, med, lo, hi),
                     "context": context(p) if context else ""})
    if not any(r["setting"] == "paper" for r in rows):
        why = why_missing if have.empty else "its points are outside the papers' setting"
        rows.insert(0, {"claim_id": claim_id, "claim": label, "paper": text, "setting": "paper",
                        "data": "-", "oversubscribed": "-", "points": 0, "repetitions": 0,
                        "measured_median": np.nan, "measured_low": np.nan,
                        "measured_high": np.nan, "measured_min": np.nan, "measured_max": np.nan,
                        "verdict": "not measured in these data at the papers' setting (%s)" % why,
                        "context": ""})
    return rows


def _s2_error_context(points):
    """The reduction only counts at an acceptable error: say what it was."""
    err = points["s2_rel_l2_err"].dropna() if "s2_rel_l2_err" in points else []
    if len(err) == 0:
        return ""
    return "at s2 relative L2 error %.3g (median; %.3g..%.3g)" % (err.median(), err.min(), err.max())


def _s2_train_context(points):
    """The paper claims the speedup at the same accuracy: show both."""
    parts = ["%s %s: s2 %.4g vs %s %.4g" % (r["model"], r["metric"], r["s2_final"],
                                          r["fastest_baseline"], r["baseline_final"])
             for _, r in points.head(3).iterrows()]
    return "final " + "; ".join(parts) if parts else ""


def _gossip_context(points):
    ranks = sorted(set(int(r) for r in points["ranks"]))
    computes = sorted(set(points["compute"]))
    return "at %s ranks, compute %s (paper: 128 P100s)" % (
        ", ".join(str(r) for r in ranks), ", ".join(computes))


def claims_table(agg, summ):
    s2p, s2t, gp = s2_points(agg), s2_train_points(summ), gossip_points(summ, agg)
    rows = []
    rows += _summarise(s2p, "comm_reduction", "s2_comm_reduction",
                       "no microbenchmark group holds s2 and a validated baseline",
                       _s2_error_context)
    rows += _summarise(s2p, "speedup", "s2_speedup",
                       "no microbenchmark group holds s2 and a validated baseline",
                       _s2_error_context)
    rows += _summarise(s2t, "speedup", "s2_train_speedup",
                       "no training group holds s2 and a baseline", _s2_train_context)
    rows += _summarise(gp, "compute_efficiency", "gossip_efficiency",
                       "no training group holds gossip and none, and no microbenchmark group "
                       "run with --compute does", _gossip_context)
    return pd.DataFrame(rows), {"s2": s2p, "s2_train": s2t, "gossip": gp}


def headline_rows(ctab):
    """The rows the headline is made of: the papers' setting, measured on
    ranks that had a core each."""
    if ctab.empty:
        return ctab
    return ctab[(ctab["setting"] == "paper") & (ctab["oversubscribed"] == "no")
                & (ctab["points"] > 0)]


def headline(ctab):
    """The report's first lines: one per kind of data with a headline row,
    or one saying that no point is at the papers' setting."""
    rows = headline_rows(ctab)
    if rows.empty:
        crowded = ctab[(ctab["setting"] == "paper") & (ctab["points"] > 0)]
        if not crowded.empty:
            return ["**Headline**: no number. The only points at the papers' setting ran more "
                    "ranks than cores (oversubscribed): their times measure waiting for a core."]
        other = (ctab["setting"] == "other") & (ctab["points"] > 0)
        return ["**Headline**: no number. These data hold no point at the papers' setting "
                "(S2: row-sparse gradient, >= %d columns, row density <= %g%%, "
                "sketch_width_mode=fraction with width = density x 0.25 or x 0.001; "
                "GossipGraD: compute efficiency with a measured or modelled compute phase).%s"
                % (S2_PAPER["min_cols"], 100 * S2_PAPER["max_density"],
                   " What they hold follows under *Where S2 is not designed to win*."
                   if other.any() else "")]
    lines = []
    for kind, sub in rows.groupby("data", sort=True):
        parts = ["%s %s (paper %s): %s" % (SHORT[r["claim_id"]], format_value(r, False), r["paper"],
                                            r["verdict"]) for _, r in sub.iterrows()]
        lines.append("**Headline** (%s, papers' setting, a core per rank): %s."
                     % (kind, "; ".join(parts)))
    return lines


# ---------------------------------------------------------------- text

def _formatter(row):
    if "%" in row["paper"]:
        return lambda v: "%.1f%%" % (100 * v)
    return lambda v: "%.2fx" % v


def format_value(row, say_missing=True):
    """'93.4% [93.1%, 93.6%]', or '1.08x (no interval)'."""
    f = _formatter(row)
    if stats.has_interval(row["measured_low"], row["measured_high"]):
        return "%s [%s, %s]" % (f(row["measured_median"]), f(row["measured_low"]),
                                f(row["measured_high"]))
    return f(row["measured_median"]) + (" (no interval)" if say_missing else "")


def format_measured(row):
    """'81.2% [79.0%, 83.3%] (12 points, >= 6 repetitions; min 70.1%, max
    90.0%)' or the not-measured text."""
    if not row["points"]:
        return "not measured in these data"
    f = _formatter(row)
    no_ci = not stats.has_interval(row["measured_low"], row["measured_high"])
    return "%s (%d point%s, %s%d repetition%s%s; min %s, max %s)" % (
        format_value(row, say_missing=False), row["points"], "" if row["points"] == 1 else "s",
        ">= " if row["points"] > 1 else "", row["repetitions"],
        "" if row["repetitions"] == 1 else "s", ": no interval" if no_ci else "",
        f(row["measured_min"]), f(row["measured_max"]))
