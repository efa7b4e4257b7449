"""The papers' seven headline claims, measured on the user's data (never
assumed).  docs/report.md, *Headline claims*, says how each is read.

S2 Reducer: converges to the same accuracy (s2_accuracy_parity); reduces
81% of the sparse communication (s2_comm_reduction); 1.8x speedup over the
best of the four sparse baselines, read on the reduce time (s2_speedup)
and on training, both per iteration and to a target accuracy
(s2_train_speedup).  GossipGraD: O(1) communication per step against
Theta(log p) for an allreduce (gossip_o1); ~100% compute efficiency on 128
P100s (gossip_efficiency); the top-1 accuracy of exact training
(gossip_accuracy_parity).

Per point (a group and size of the microbenchmarks, or a training group):
  communication reduction = 1 - s2 wire bytes / fewest wire bytes of a baseline
  speedup                 = fastest baseline time / s2 time
  compute efficiency      = time per iteration of `none` / of gossip
  accuracy parity         = final metric of the reducer - dense's, paired by seed
each from the medians over repetitions (over launches when a point has
several: stats.launch_median_ci), with an interval from theirs.

The table has one row per (claim, setting, platform), split further by
oversubscription, a busy machine and one-launch points (their intervals
leave out launch-to-launch variation).  The headline comes from `paper`
rows that are neither oversubscribed nor busy nor from one launch (a
deterministic value, `exact`, needs no interval and counts from one
launch); measured, simulated and model rows are summarised apart.
"""

import math

import numpy as np
import pandas as pd

from . import stats, training
from .runmeta import combine_busy, is_emulated_platform
from .micro import BASELINES, best_of, option_value, speedup_against, usable_baselines

# claim_id: (claim, the papers' words, the value the verdict is against,
# how the claim is read, unit of the value).
CLAIMS = {
    "s2_accuracy_parity": (
        "S2: same accuracy as exact training (s2 - dense)", "converges to the same accuracy", 0.0,
        "same accuracy read as: the 90% interval of the median paired difference s2 - dense "
        "(same steps, same seed, >= 5 seeds) inside +-0.5 accuracy points (+-2% of perplexity): "
        "two one-sided tests", "diff"),
    "s2_comm_reduction": (
        "S2: sparse communication reduction vs best baseline", "81%", 0.81,
        "1 - s2 bytes sent per rank / fewest bytes of a validated sparse baseline, >= 81%", "%"),
    "s2_speedup": (
        "S2: speedup vs best baseline (reduce time)", "1.8x", 1.8,
        "fastest validated sparse baseline's time per reduce call / s2's, >= 1.8x", "x"),
    "s2_train_speedup": (
        "S2: speedup vs best baseline (training time per iteration)", "1.8x", 1.8,
        "fastest sparse baseline's seconds per iteration / s2's, >= 1.8x", "x"),
    "gossip_o1": (
        "GossipGraD: O(1) communication per step (messages)", "O(1) (allreduce: Theta(log p))", 1.0,
        "O(1) read as: gossip's messages per rank per step do not grow with p (largest / "
        "smallest rank count <= 1.05) while dense allreduce's grow with log2 p; >= 3 rank counts",
        "x"),
    "gossip_efficiency": (
        "GossipGraD: compute efficiency", "~100%", 0.9,
        "~100% read as >= 90%: time per iteration without communication (`none`) / with gossip",
        "%"),
    "gossip_accuracy_parity": (
        "GossipGraD: same accuracy as exact training (gossip - dense)",
        "matching the top-1 accuracy", 0.0,
        "matching read as: the 90% interval of the median paired difference gossip - dense "
        "(same steps, same seed, >= 5 seeds) inside +-0.5 accuracy points (+-2% of perplexity): "
        "two one-sided tests", "diff"),
    "s2_joint": (
        "S2 jointly: same accuracy, 81% less communication and 1.8x at one setting",
        "same accuracy, 81% less sparse communication and 1.8x, together", 1.8,
        "at one sketch setting: accuracy equivalent to dense (as the parity claim), reduction vs "
        "the fewest-bytes validated baseline >= 81%, speedup vs the fastest >= 1.8x on the reduce "
        "and on training time per iteration; the value shown is the reduce speedup", "x"),
    "gossip_joint": (
        "GossipGraD jointly: matching accuracy at ~100% efficiency with O(1) communication",
        "matching top-1 accuracy, ~100% efficiency, O(1) communication, together", 0.9,
        "at one gossip setting: accuracy equivalent to dense on image classification, compute "
        "efficiency >= 90%, O(1) messages per step; the value shown is the efficiency", "%"),
}
ORDER = ("s2_accuracy_parity", "s2_comm_reduction", "s2_speedup", "s2_train_speedup", "s2_joint",
         "gossip_o1", "gossip_efficiency", "gossip_accuracy_parity", "gossip_joint")
# The variants of a claim with more than one measure: claim_id -> measure ->
# (claim text, reading, unit).
MEASURES = {
    ("s2_train_speedup", "time to accuracy"): (
        "S2: speedup vs best baseline (training time to accuracy)",
        "fastest sparse baseline's wall time to the target / s2's (DAWNBench, MLPerf), >= 1.8x; "
        "a run that never reaches the target counts as infinitely slow", "x"),
    ("gossip_o1", "bytes"): (
        "GossipGraD: O(1) communication per step (bytes)",
        "O(1) read on bytes too: gossip's bytes sent per rank per step do not grow with p "
        "(largest / smallest rank count <= 1.05); >= 3 rank counts", "x"),
}
SHORT = {"s2_accuracy_parity": "S2 accuracy parity", "s2_comm_reduction": "S2 communication reduction",
         "s2_speedup": "S2 speedup (reduce)", "s2_train_speedup": "S2 speedup (training)",
         "gossip_o1": "GossipGraD O(1)", "gossip_efficiency": "GossipGraD compute efficiency",
         "gossip_accuracy_parity": "GossipGraD accuracy parity", "s2_joint": "S2 jointly",
         "gossip_joint": "GossipGraD jointly"}
# Largest plausible value of a claim's measure (None: no bound).
PLAUSIBLE_MAX = {"gossip_efficiency": 1.1}
PAPER_RANKS = {"gossip_efficiency": 128}
MIN_RANK_COUNTS = 3
COLUMNS = ["claim_id", "claim", "paper", "paper_value", "reading", "setting", "platform", "data",
           "oversubscribed", "busy", "points", "repetitions", "measured_median", "measured_low",
           "measured_high", "exact", "verdict", "verdict_class", "why",
           # beyond the shared columns
           "measure", "unit", "model", "launches", "measured_min", "measured_max", "would_change"]

# The S2 paper's regime: a row-sparse gradient (embedding) of at least 64
# columns with at most 5% of its rows non-zero per rank, and the authors'
# fixed sketch width c = rows x cols x density x ratio, i.e. rb's
# sketch_width_mode=fraction with sketch_width = density x ratio, the ratio
# within a factor of 2 of one the authors used (0.25 for GNMT, 0.001 for
# the LSTM); and an embedding of their size: >= 32,000 rows (their GNMT's
# 32,317-word vocabulary, their LSTM's 33,278), since the union of the
# ranks' rows, and so what every reducer moves, depends on it.
S2_PAPER = {"layout": "row", "min_rows": 32000, "min_cols": 64, "max_density": 0.05,
            "ratios": (0.25, 0.001), "ratio_tolerance": 2.0}


def s2_setting(layout, cols, density, mode, width, rows=None):
    """('paper', '') or ('other', why) for an s2 point (rows None: not
    known, not judged)."""
    p = S2_PAPER
    why = []
    if layout != p["layout"]:
        why.append("%s layout (paper: row-sparse)" % layout)
    if rows is not None and not (float(rows) >= p["min_rows"]):
        why.append("%d rows (paper: >= %d)" % (int(rows), p["min_rows"]))
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


# ---------------------------------------------------------------- verdicts

def claim_verdict(claim_id, value, med, lo, hi, exact=False):
    """(verdict, verdict_class) of a value against a claim that it is at
    least `value`.  A shortfall within the 5% minimum effect is no
    difference worth reporting: "equivalent"."""
    top = PLAUSIBLE_MAX.get(claim_id)
    m = 1 + stats.MIN_EFFECT
    if not np.isfinite(med) and not med == np.inf:
        return "no value", "missing"
    if top is not None and med > top:
        return "inconclusive: the reference ran slower (more ranks than cores?)", "inconclusive"
    if exact:
        if med >= value:
            return "meets the claim (an exact value)", "meets"
        if med * m >= value:
            return "within 5% of the claim (an exact value)", "equivalent"
        return "below the claim (an exact value)", "below"
    if stats.has_interval(lo, hi) or (lo is not None and np.isfinite(lo) and hi == np.inf):
        if lo >= value:
            return "meets the claim", "meets"
        if hi < value:
            if med * m >= value:
                return "within 5% of the claim", "equivalent"
            return "below the claim", "below"
        return "not significantly different from the claim", "inconclusive"
    return ("%s the claim by its median only (no interval: fewer than %d launches or repetitions)"
            % ("meets" if med >= value else "below", stats.MIN_REPETITIONS), "inconclusive")


# ---------------------------------------------------------------- points

def _launch_flags(rows):
    """(one launch?, busy) of a point made of agg rows."""
    units = [u for u in rows.get("interval_unit", pd.Series(dtype=object)) if u]
    one = any(u != "launch" for u in units)
    return one, combine_busy(rows["busy"] if "busy" in rows else ["unknown"])


def _launches(rows):
    n = rows["n_units"] if "n_units" in rows else rows["n_repeats"]
    return int(n.min()) if len(n) else 0


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
                                      option_value(r["options"], "sketch_width"),
                                      rows=_micro_rows(r))
            both = pd.concat([s2.loc[[r.name]], by_time], ignore_index=True)
            one, busy = _launch_flags(both)
            exact_bytes = (r.get("bytes_sent_avg_spread", np.nan) == 0
                           and fewest.get("bytes_sent_avg_spread", np.nan) == 0)
            rows.append({
                "gid": gid, "kind": r["kind"], "platform": r.get("platform", ""),
                "setting": setting, "why_other": why,
                "oversubscribed": bool(r["oversubscribed"]), "busy": busy, "one_launch": one,
                "launches": _launches(both), "layout": r["layout"],
                "cols": r["cols"], "density": r["density"], "ranks": r["ranks"],
                "size_bytes": size, "s2_variant": r["variant"], "n_repeats": r["n_repeats"],
                "s2_options": r["options"],
                "s2_bytes": s, "fewest_bytes_baseline": fewest["variant"], "baseline_bytes": b,
                "comm_reduction": 1.0 - s / b if b > 0 else np.nan,
                "comm_reduction_low": 1.0 - s_over_b[1], "comm_reduction_high": 1.0 - s_over_b[0],
                "comm_reduction_exact": bool(exact_bytes),
                "s2_t_us": r["t_avg_us_median"], "fastest_baseline": fastest,
                "baseline_t_us": by_time.loc[by_time["variant"] == fastest, "t_avg_us_median"].min(),
                "speedup": speedup, "speedup_low": sp_lo, "speedup_high": sp_hi,
                "speedup_verdict": sp_verdict,
                "s2_rel_l2_err": r.get("rel_l2_err_median", np.nan),
                **_wire_fields(r, by_time[by_time["variant"] == fastest]),
            })
    return pd.DataFrame(rows)


def _wire_fields(r, baseline):
    """An emulated network's link, and the wire's share of s2's time and
    of the fastest baseline's (wire.py; NaN elsewhere)."""
    b = baseline.iloc[0] if len(baseline) else {}
    return {"link_bps": r.get("link_bps", np.nan), "nodes": r.get("nodes", np.nan),
            "s2_wire_share": r.get("wire_share", np.nan),
            "baseline_wire_share": b.get("wire_share", np.nan) if len(baseline) else np.nan}


def _iter_interval(r):
    return r.get("t_iter_s_ci_low", np.nan), r.get("t_iter_s_ci_high", np.nan)


def s2_train_setting(r):
    """The S2 paper's regime in training: an embedding (row-sparse)
    gradient, reduced with the authors' fixed width for its row density."""
    if not r.get("embedding_parameters", 0) or not r.get("embed_density", 0) > 0:
        return "other", "no embedding (row-sparse) gradient: %s" % r.get("model", "?")
    dim = float(r.get("embed_dim", 0) or 0)
    return s2_setting("row", r.get("embed_dim", 0), r["embed_density"],
                      option_value(r.get("options", ""), "sketch_width_mode"),
                      option_value(r.get("options", ""), "sketch_width"),
                      rows=float(r["embedding_parameters"]) / dim if dim > 0 else None)


def _micro_rows(r):
    """Rows of a microbenchmark point's gradient: its floats over its
    columns."""
    try:
        return float(r["size_bytes"]) / 4.0 / float(r["cols"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _tta_ratio(b, b_lo, b_hi, s, s_lo, s_hi):
    """Baseline time to target / s2's, with an interval from both (each
    end may be infinite: a run that never reached the target)."""
    def div(x, y):
        if not (x >= 0 and y >= 0) or (x == np.inf and y == np.inf):
            return np.nan
        return np.inf if y == 0 else x / y
    med = div(b, s)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (b_lo, b_hi, s_lo, s_hi)):
        return med, np.nan, np.nan
    return med, div(b_lo, s_hi) if s_hi != np.inf else 0.0, div(b_hi, s_lo)


def s2_train_points(summ):
    """Per training group and s2 variant, against the fastest sparse
    baseline: the speedup in seconds per iteration and in time to target."""
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
        tta = base[base["tt_target_s_median"].notna()] if "tt_target_s_median" in base else base.iloc[0:0]
        for _, r in s2.iterrows():
            lo, hi = stats.ratio_interval(b_lo, b_hi, *_iter_interval(r))
            setting, why = s2_train_setting(r)
            busy = combine_busy([r.get("busy", "unknown")] + list(base.get("busy", ["unknown"])))
            row = {"tid": tid, "kind": r["kind"], "platform": r.get("platform", ""),
                   "setting": setting, "why_other": why,
                   "oversubscribed": bool(r.get("oversubscribed", False)), "busy": busy,
                   "one_launch": False, "launches": int(min(r["n_repeats"], fastest["n_repeats"])),
                   "model": r["model"], "ranks": r["ranks"], "n_repeats": r["n_repeats"],
                   "s2_variant": r["variant"], "fastest_baseline": fastest["variant"],
                   "speedup": fastest["t_iter_s_median"] / r["t_iter_s_median"],
                   "speedup_low": lo, "speedup_high": hi,
                   "metric": r.get("metric", ""), "s2_final": r.get("final_median", np.nan),
                   "baseline_final": fastest.get("final_median", np.nan),
                   "tta_speedup": np.nan, "tta_speedup_low": np.nan, "tta_speedup_high": np.nan,
                   "tta_baseline": "", "s2_reached": r.get("n_reached", np.nan)}
            if len(tta) and not pd.isna(r.get("tt_target_s_median", np.nan)):
                fb = tta.loc[tta["tt_target_s_median"].idxmin()]
                row["tta_baseline"] = fb["variant"]
                row["tta_speedup"], row["tta_speedup_low"], row["tta_speedup_high"] = _tta_ratio(
                    fb["tt_target_s_median"], fb["tt_target_s_ci_low"], fb["tt_target_s_ci_high"],
                    r["tt_target_s_median"], r["tt_target_s_ci_low"], r["tt_target_s_ci_high"])
                row["launches"] = int(min(r["n_repeats"], fb["n_repeats"]))
                # s2 never reached the target while a baseline did: its time
                # to accuracy is infinite in every seed, the speedup exactly 0.
                row["tta_speedup_exact"] = bool(r.get("n_reached", np.nan) == 0
                                                and np.isfinite(fb["tt_target_s_median"]))
            rows.append(row)
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
            none = summ[(summ["tid"] == r["tid"]) & (summ["reducer"] == "none")]
            busy = combine_busy([r.get("busy", "unknown")] + list(none.get("busy", ["unknown"])))
            # GossipGraD's claims are on image classifiers, as its accuracy
            # parity is judged: a language model is another setting.
            image = str(r.get("metric", "")) in ("test_accuracy", "accuracy")
            rows.append({"where": r["tid"], "kind": r["kind"], "platform": r.get("platform", ""),
                         "setting": "paper" if image else "other",
                         "why_other": "" if image else "a language model (paper: image "
                                                        "classification)",
                         "oversubscribed": bool(r.get("oversubscribed", False)),
                         "busy": busy,
                         "one_launch": False, "launches": int(r["n_repeats"]),
                         "compute": "measured (%s)" % r["model"], "ranks": r["ranks"],
                         "n_repeats": r["n_repeats"], "variant": r["variant"],
                         "compute_efficiency": r["compute_efficiency"],
                         "compute_efficiency_low": r.get("compute_efficiency_low", np.nan),
                         "compute_efficiency_high": r.get("compute_efficiency_high", np.nan),
                         "compute_efficiency_exact": False})
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
            one, busy = _launch_flags(pd.concat([none.iloc[[0]], sub.loc[[r.name]]]))
            rows.append({"where": "%s %s B" % (gid, size), "kind": r["kind"],
                         "platform": r.get("platform", ""), "setting": "paper",
                         "why_other": "", "oversubscribed": bool(r["oversubscribed"]),
                         "busy": busy, "one_launch": one,
                         "launches": _launches(pd.concat([none.iloc[[0]], sub.loc[[r.name]]])),
                         "compute": "modelled (%g s)" % r["compute_s"], "ranks": r["ranks"],
                         "n_repeats": min(r["n_repeats"], n["n_repeats"]), "variant": r["variant"],
                         "compute_efficiency": n["t_avg_us_median"] / r["t_avg_us_median"],
                         "compute_efficiency_low": lo, "compute_efficiency_high": hi,
                         "compute_efficiency_exact": _deterministic(n, r),
                         "compute_s": r["compute_s"],
                         "t_model_us": r.get("t_model_us_median", np.nan),
                         "link_bps": r.get("link_bps", np.nan), "nodes": r.get("nodes", np.nan),
                         "wire_share": r.get("wire_share", np.nan), "gid": gid, "size_bytes": size,
                         "exchange_us": r["t_avg_us_median"] - n["t_avg_us_median"]})
    return rows


def _deterministic(*points):
    """A simulation repeats its simulated times exactly (the platform, not
    this host, times every message and the modelled compute): points of
    simulated data whose repetitions (two or more) agree to the last digit
    are an exact value, not a sample to take an interval over (the
    per-rank mean is a float sum: agreeing to 1e-9 of the value is
    agreeing exactly)."""
    return all(str(q.get("kind", "")) == "simulated" and q.get("n_repeats", 0) >= 2
               and q.get("t_avg_us_spread", np.nan) <= 1e-9 * abs(q.get("t_avg_us_median", np.nan))
               for q in points)


def gossip_model_rows(gp):
    """The cost model's prediction of the efficiency at the paper's 128
    ranks, from rb_micro's model column of the gossip --compute points, when
    no simulated point is at 128 ranks: gossip's model time is one exchange
    of 4n with the partner and a mix, the same for every power-of-two p (the
    hypercube partners every rank), so a point at a power-of-two p predicts
    128: compute / (compute + model time of the call), rb_micro's model
    column being compute + model time of the call."""
    p = PAPER_RANKS["gossip_efficiency"]
    if gp.empty or "t_model_us" not in gp:
        return []
    if ((gp["kind"] == "simulated") & (gp["ranks"] == p)).any():
        return []
    pts = gp[gp["t_model_us"].notna() & (gp["t_model_us"] > 0)
             & gp["ranks"].map(lambda r: r >= 2 and (int(r) & (int(r) - 1)) == 0)]
    if pts.empty:
        return []
    # An emulated network's points predict at their link rate: one row per
    # rate, never pooled with each other or with this machine's.
    rate = [_platform_name(x).split(", ", 1)[1] if is_emulated_platform(x) else ""
            for x in pts.get("platform", pd.Series("", index=pts.index))]
    return [_gossip_model_row(sub, r) for r, sub in pts.groupby(rate, sort=True)]


def _gossip_model_row(pts, rate):
    p = PAPER_RANKS["gossip_efficiency"]
    # rb_micro's model column includes the --compute phase (micro_model.c)
    eff = [c * 1e6 / t for c, t in zip(pts["compute_s"], pts["t_model_us"])]
    med = float(np.median(eff))
    verdict, vclass = claim_verdict("gossip_efficiency", CLAIMS["gossip_efficiency"][2], med,
                                    np.nan, np.nan, exact=True)
    where = " over an emulated network's %s links" % rate if rate else ""
    return _row("gossip_efficiency", setting="paper",
                platform="cost model, %d ranks%s (prediction)" % (p, where), data="model",
                oversubscribed="no", busy="no", points=len(pts), repetitions=1,
                measured_median=med, measured_low=med, measured_high=med, exact=True,
                measured_min=min(eff), measured_max=max(eff), launches="-",
                verdict="prediction: " + verdict, verdict_class=vclass,
                why="no simulated point at %d ranks: rb_micro's model time of gossip at "
                    "%s ranks%s (power-of-two p: the same at %d) with the --compute phase; a "
                    "prediction, not a measurement"
                    % (p, ", ".join(str(int(r)) for r in sorted(set(pts["ranks"]))), where, p))


# ---------------------------------------------------------------- O(1)

# Columns that would hold a measured per-call message count, if a writer
# adds one (rb_micro does not count messages today).
MESSAGE_COLUMNS = ("msgs_sent_avg_median", "messages_sent_avg_median", "msgs_avg_median",
                   "messages_avg_median", "msgs_sent_median", "messages_median")


def model_messages(reducer, p):
    """Messages per rank per call on the critical path, as src/model.c
    counts them: gossip one exchange with its partner (p >= 2); dense an
    allreduce, L = ceil(log2 p) steps by recursive doubling or 2L by
    reduce-scatter + allgather (the model takes the cheaper for the size;
    (L, 2L) is returned)."""
    p = int(p)
    if p < 2:
        return (0, 0)
    levels = (p - 1).bit_length()
    if reducer == "gossip":
        return (1, 1)
    if reducer == "dense":
        return (levels, 2 * levels)
    return (np.nan, np.nan)


def _platform_name(platform):
    """A platform without its rank count: 'this machine', 'p100-ib-edr';
    an emulated network without its node (and rank) count, keeping the
    link rate: 'emulated network, 1gbit'."""
    if not platform:
        return ""
    parts = str(platform).split(", ")
    if is_emulated_platform(platform) and len(parts) >= 3:
        return "%s, %s" % (parts[0], parts[2])
    return str(platform).rsplit(", ", 1)[0]


def gossip_o1_rows(agg):
    """Rows of the O(1) claim: per platform (this machine, or a simulated
    platform), from the gossip and dense points at >= 3 rank counts (>= 2
    ranks each) of configurations that differ only in the rank count."""
    claim_id = "gossip_o1"
    if agg.empty:
        return [_missing(claim_id, "no microbenchmark data"), _missing(claim_id, "no microbenchmark data",
                                                                         "bytes")]
    d = agg[agg["reducer"].isin(["gossip", "dense"]) & (agg["ranks"] >= 2)].copy()
    if d.empty or not (d["reducer"] == "gossip").any():
        why = "no rb_micro point holds gossip at 2 ranks or more"
        return [_missing(claim_id, why), _missing(claim_id, why, "bytes")]
    d["pname"] = [_platform_name(p) for p in d.get("platform", pd.Series([""] * len(d)))]
    keys = ["kind", "pname", "device", "layout", "overlap", "density", "cols", "input", "size_bytes"]
    keys = [k for k in keys if k in d]
    measured_col = next((c for c in MESSAGE_COLUMNS if c in d and d[c].notna().any()), None)
    out, seen_counts = [], []
    for (kind, pname), fam in d.groupby(["kind", "pname"]):
        g = fam[fam["reducer"] == "gossip"]
        counts = sorted(set(int(r) for r in g["ranks"]))
        seen_counts.append("%s: %s" % (pname, ", ".join(map(str, counts))))
        if len(counts) < MIN_RANK_COUNTS:
            continue
        # bytes per rank per step: per configuration, largest p / smallest p
        growth, dense_growth, sizes = [], [], 0
        for _, conf in fam.groupby([k for k in keys if k not in ("kind", "pname")], dropna=False):
            gs = conf[conf["reducer"] == "gossip"].groupby("ranks")["bytes_sent_avg_median"].median()
            if len(gs) < MIN_RANK_COUNTS or not gs.iloc[0] > 0:
                continue
            sizes += 1
            growth.append(float(gs.iloc[-1] / gs.iloc[0]))
            ds = conf[conf["reducer"] == "dense"].groupby("ranks")["bytes_sent_avg_median"].median()
            if len(ds) >= 2 and ds.iloc[0] > 0:
                dense_growth.append(float(ds.iloc[-1] / ds.iloc[0]))
        lo_p, hi_p = counts[0], counts[-1]
        plat = "%s, %d-%d ranks (%d counts)%s" % (
            pname, lo_p, hi_p, len(counts), " (simulated)" if kind == "simulated" else "")
        over = "yes" if fam["oversubscribed"].any() else "no"
        busy = combine_busy(fam["busy"] if "busy" in fam else ["unknown"])
        # messages
        if measured_col:
            gm = g.groupby("ranks")[measured_col].median()
            dm = fam[fam["reducer"] == "dense"].groupby("ranks")[measured_col].median()
            g_ratio = float(gm.iloc[-1] / gm.iloc[0]) if gm.iloc[0] > 0 else np.nan
            d_ratio = float(dm.iloc[-1] / dm.iloc[0]) if len(dm) >= 2 and dm.iloc[0] > 0 else np.nan
            data, mwhy = kind, "messages per rank per call from the archive's %s" % measured_col
        else:
            g_ratio = model_messages("gossip", hi_p)[0] / model_messages("gossip", lo_p)[0]
            d_ratio = model_messages("dense", hi_p)[0] / model_messages("dense", lo_p)[0]
            data = "model"
            mwhy = ("the archives hold no message count: messages per rank per step from the cost "
                    "model (src/model.c): gossip 1 at every p >= 2, dense allreduce L..2L with "
                    "L = ceil(log2 p) = %d at %d ranks, %d at %d ranks"
                    % (model_messages("dense", lo_p)[0], lo_p, model_messages("dense", hi_p)[0], hi_p))
        flat = g_ratio <= 1 + stats.MIN_EFFECT
        grows = d_ratio > 1 + stats.MIN_EFFECT
        if not np.isfinite(g_ratio):
            verdict, vclass = "no message count for gossip", "missing"
        elif flat and (grows or not np.isfinite(d_ratio)):
            verdict, vclass = ("meets the claim%s" % ("" if np.isfinite(d_ratio) else
                                                      " (dense not measured at these rank counts)"),
                               "meets")
        elif flat:
            verdict, vclass = "gossip flat, but dense's do not grow either", "inconclusive"
        else:
            verdict, vclass = "below the claim: gossip's messages grow with p", "below"
        if data == "model":
            verdict = "prediction: " + verdict
        out.append(_row(claim_id, setting="paper",
                        platform=plat if data != "model" else
                        "cost model at %s's %d-%d ranks (prediction)" % (pname, lo_p, hi_p),
                        data=data, oversubscribed=over, busy=busy, points=len(counts),
                        repetitions=int(g["n_repeats"].min()), measured_median=g_ratio,
                        measured_low=g_ratio, measured_high=g_ratio, exact=True,
                        measured_min=g_ratio, measured_max=g_ratio, launches="-",
                        verdict=verdict, verdict_class=vclass,
                        why="%s; dense grows %.2fx from %d to %d ranks" % (mwhy, d_ratio, lo_p, hi_p)
                        if np.isfinite(d_ratio) else mwhy))
        if growth:
            med = float(np.median(growth))
            v, c = (("meets the claim (an exact value)", "meets") if med <= 1 + stats.MIN_EFFECT
                    else ("below the claim: gossip's bytes per rank grow with p", "below"))
            out.append(_row(claim_id, measure="bytes", setting="paper", platform=plat, data=kind,
                            oversubscribed=over, busy=busy, points=sizes,
                            repetitions=int(g["n_repeats"].min()), measured_median=med,
                            measured_low=med, measured_high=med, exact=True,
                            measured_min=min(growth), measured_max=max(growth), launches="-",
                            verdict=v, verdict_class=c,
                            why="bytes sent per rank per step (rb_stats, exact counters) at %d "
                                "ranks / at %d ranks, median over %d configuration(s)%s"
                                % (hi_p, lo_p, sizes,
                                   "; dense's grow %.2fx (2(p-1)/p of the buffer: bounded, the "
                                   "log p of an allreduce is in its messages)"
                                   % float(np.median(dense_growth)) if dense_growth else "")))
    if not any(r["measure"] == "messages" for r in out):
        why = ("gossip points at fewer than %d rank counts of 2 or more (%s)"
               % (MIN_RANK_COUNTS, "; ".join(seen_counts)))
        out.insert(0, _missing(claim_id, why))
    if not any(r["measure"] == "bytes" for r in out):
        out.append(_missing(claim_id, "gossip points at fewer than %d rank counts of one "
                                      "configuration (%s)" % (MIN_RANK_COUNTS, "; ".join(seen_counts)),
                            "bytes"))
    return out


# ---------------------------------------------------------------- parity

def parity_rows(summ, truns, claim_id, reducer, paper_why=""):
    """Accuracy parity of reducer against dense, per training group where
    both ran: two one-sided tests on the differences paired by seed."""
    rows = []
    if summ.empty or truns is None or truns.empty or "reducer" not in summ:
        return [_missing(claim_id, "no training group holds %s and dense" % reducer)]
    for tid, sub in summ.groupby("tid"):
        mine = sub[sub["reducer"] == reducer]
        if mine.empty or not (sub["reducer"] == "dense").any():
            continue
        for _, r in mine.iterrows():
            par = training.parity(truns, tid, r["variant"], r.get("metric", ""), reducer)
            diffs, seeds, notes = par["diffs"], par["seeds"], par["notes"]
            med, lo, hi, n, cov = par["median"], par["low"], par["high"], par["n"], par["coverage"]
            cls, words, rel = par["class"], par["words"], par["relative"]
            if claim_id == "s2_accuracy_parity":
                setting, why_other = s2_train_setting(r)
            else:
                setting, why_other = (("paper", "") if par["higher"] else
                                      ("other", "a language model (paper: image classification)"))
            dense_busy = list(sub.loc[sub["reducer"] == "dense", "busy"]) if "busy" in sub else []
            busy = combine_busy([r.get("busy", "unknown")] + dense_busy)
            rows.append(_row(
                claim_id, setting=setting, platform=r.get("platform", ""), data=r["kind"],
                oversubscribed="yes" if r.get("oversubscribed") else "no",
                busy=busy,
                points=n, repetitions=n, measured_median=med, measured_low=lo, measured_high=hi,
                exact=False, verdict=words, verdict_class=cls, model=r.get("model", ""),
                unit="rel" if rel else "points", launches=n,
                measured_min=min(diffs) if diffs else np.nan,
                measured_max=max(diffs) if diffs else np.nan,
                why="; ".join(x for x in (
                    "%s %s: final %s of %s - dense, paired by seed (%s), %s interval of the median "
                    "difference at %.1f%%" % (r.get("model", "?"), tid, r.get("metric", ""),
                                             r["variant"], ", ".join(map(str, seeds)) or "none",
                                             "relative" if rel else "absolute",
                                             100 * cov if np.isfinite(cov) else 0),
                    why_other, notes, paper_why if setting == "paper" else "") if x)))
    if not rows:
        return [_missing(claim_id, "no training group holds %s and dense" % reducer)]
    if not any(r["setting"] == "paper" for r in rows):
        rows.insert(0, _missing(claim_id, "its training groups are outside the papers' setting"))
    return rows


# ---------------------------------------------------------------- rows

# How far a simulated figure can be trusted, said on every simulated row:
# SimGrid against a measured network (docs/simgrid.md, "SimGrid against
# the wire", 2026-11-28).
SIM_VALIDATION = ("simulated: against a measured 1 Gbit network (quiet run) SimGrid's median "
                  "|error| was 2.5% (worst 13%) on 2-node calls of >= 10 ms and 17% (worst 27%) "
                  "on 4-node ones, 10% and 30% over all 2- and 4-node calls (shorter calls: set "
                  "by the emulation's tbf burst and 2 shared cores, not the wire; docs/simgrid.md, "
                  "SimGrid against the wire)")


def _row(claim_id, measure=None, **fields):
    label, text, value, reading, unit = CLAIMS[claim_id]
    default_measure = {"s2_train_speedup": "time per iteration", "gossip_o1": "messages"}.get(
        claim_id, "")
    measure = measure or default_measure
    if (claim_id, measure) in MEASURES:
        label, reading, unit = MEASURES[(claim_id, measure)]
    row = {"claim_id": claim_id, "claim": label, "paper": text, "paper_value": value,
           "reading": reading, "setting": "paper", "platform": "-", "data": "-",
           "oversubscribed": "-", "busy": "-", "points": 0, "repetitions": 0,
           "measured_median": np.nan, "measured_low": np.nan, "measured_high": np.nan,
           "exact": False, "verdict": "", "verdict_class": "missing", "why": "",
           "measure": measure, "unit": unit, "model": "", "launches": "-",
           "measured_min": np.nan, "measured_max": np.nan, "would_change": ""}
    row.update(fields)
    if row["data"] == "simulated":
        row["why"] = "; ".join(x for x in (row["why"], SIM_VALIDATION) if x)
    return row


def _missing(claim_id, why, measure=None):
    return _row(claim_id, measure=measure,
                verdict="not measured in these data at the papers' setting (%s)" % why,
                verdict_class="missing", why=why)
