"""The claims table and its reading: one row per claim and setting with the
verdict, its interval and why (claims_table), what would change each
verdict, the headline of the report and the terminal, the values as text.
The claims themselves, their verdicts and points are claims.py's."""

import numpy as np
import pandas as pd

from . import frontier, stats
from .runmeta import is_emulated_platform

from .claims import (_missing, _row, CLAIMS, COLUMNS, S2_PAPER, SHORT, claim_verdict, gossip_model_rows,
                     gossip_o1_rows, gossip_points, parity_rows, s2_points, s2_train_points)


# ---------------------------------------------------------------- table


def _summarise(points, col, claim_id, why_missing, context=None, measure=None):
    """Claim rows: one per (setting, kind, platform, oversubscribed, busy,
    one launch) with points, and always one `paper` row (saying so when
    there is no paper point)."""
    value = CLAIMS[claim_id][2]
    rows = []
    have = points[points[col].notna()] if not points.empty and col in points else pd.DataFrame()
    keycols = ["setting", "kind", "platform", "oversubscribed", "busy", "one_launch"]
    keys = (sorted(set(have[keycols].itertuples(index=False, name=None)),
                   key=lambda k: (k[0] != "paper",) + tuple(str(x) for x in k[1:]))
            if not have.empty else [])
    for key in keys:
        setting, kind, plat, crowded, busy, one = key
        p = have[np.logical_and.reduce([have[c] == v for c, v in zip(keycols, key)])]
        exact = bool(p[col + "_exact"].fillna(False).astype(bool).all()) if col + "_exact" in p else False
        med, lo, hi = stats.median_range(p[col].tolist(), p[col + "_low"].tolist(),
                                         p[col + "_high"].tolist())
        if exact:
            lo = hi = med
        if col.startswith("tta") and not stats.has_interval(lo, hi):
            med, lo, hi = _tta_range(p, col)
        verdict, vclass = claim_verdict(claim_id, value, med, lo, hi, exact)
        verdict, vclass = _point_caveats(claim_id, value, p, col, med, exact, verdict, vclass)
        why = context(p) if context else ""
        if one and not exact:
            why = "; ".join(x for x in (stats.ONE_LAUNCH, why) if x)
        rows.append(_row(claim_id, measure=measure, setting=setting, platform=plat, data=kind,
                         oversubscribed="yes" if crowded else "no", busy=busy,
                         points=len(p), repetitions=int(p["n_repeats"].min()),
                         measured_median=med, measured_low=lo, measured_high=hi, exact=exact,
                         measured_min=float(p[col].min()), measured_max=float(p[col].max()),
                         verdict=verdict, verdict_class=vclass, why=why,
                         launches="one" if one else int(p["launches"].min()),
                         model=", ".join(sorted(set(p["model"]))) if "model" in p else ""))
    if not any(r["setting"] == "paper" for r in rows):
        why = why_missing if have.empty else "its points are outside the papers' setting"
        rows.insert(0, _missing(claim_id, why, measure))
    return rows


def _point_caveats(claim_id, value, p, col, med, exact, verdict, vclass):
    """A verdict from a median of points says when those points disagree,
    when there are fewer than 3 of them, when an efficiency above 100% is
    noise, and when an exact simulated efficiency rests on a modelled
    compute time."""
    if len(p) > 1 and not exact and vclass in ("meets", "inconclusive", "below"):
        lows = p.get(col + "_low", pd.Series(np.nan, index=p.index))
        highs = p.get(col + "_high", pd.Series(np.nan, index=p.index))
        above = int((lows >= value).sum())
        under = int((highs < value).sum())
        if (vclass != "below" and under) or (vclass != "meets" and above and under):
            vclass = "inconclusive"
            verdict = ("inconclusive: its points disagree (%d of %d lie wholly below the claim, "
                       "%d wholly above)" % (under, len(p), above))
    if 1 < len(p) < 3:
        verdict += " (the median of only %d points)" % len(p)
    if claim_id == "gossip_efficiency" and med > 1.0:
        verdict += ("; above 100%: gossip's step took less time than none's, which sends "
                    "nothing: the difference is noise between runs")
    if claim_id == "gossip_efficiency" and exact and "compute_s" in p and p["compute_s"].notna().all():
        exchange = (p["compute_s"] / p[col] - p["compute_s"]).median()
        verdict += ("; exact for the modelled %s s of compute per step, not a measured one: "
                    "90%% needs >= %.3g s" % ("/".join("%g" % c for c in sorted(set(p["compute_s"]))),
                                               9 * exchange))
    return verdict, vclass


def _tta_range(p, col):
    """One time-to-target point may have an infinite interval end: keep it."""
    if len(p) == 1:
        r = p.iloc[0]
        return float(r[col]), float(r[col + "_low"]), float(r[col + "_high"])
    return float(np.median(p[col])), np.nan, np.nan


def _s2_error_context(points):
    """The reduction only counts at an acceptable error: say what it was."""
    err = points["s2_rel_l2_err"].dropna() if "s2_rel_l2_err" in points else []
    if len(err) == 0:
        return ""
    return "at s2 relative L2 error %.3g (median; %.3g..%.3g)" % (err.median(), err.min(), err.max())


def _s2_error_link(s2p):
    """Why s2's accuracy is what it is: its error at the authors' width in
    the microbenchmarks (the same sketch rule), against count-sketch theory."""
    if s2p.empty or "s2_rel_l2_err" not in s2p:
        return ""
    err = s2p.loc[s2p["setting"] == "paper", "s2_rel_l2_err"].dropna()
    if err.empty:
        return ""
    return ("at the authors' width the microbenchmarks' s2 has relative L2 error %.3g (theory "
            "sqrt(union rows x cols / width)): the averaged embedding gradient it returns is "
            "%.3g times as much noise as signal, which the perplexity pays for" % (err.median(),
                                                                                   err.median()))


def _s2_train_context(points):
    """The paper claims the speedup at the same accuracy: show both."""
    parts = ["%s %s: s2 %.4g vs %s %.4g" % (r["model"], r["metric"], r["s2_final"],
                                          r["fastest_baseline"], r["baseline_final"])
             for _, r in points.head(3).iterrows()]
    return "final " + "; ".join(parts) if parts else ""


def _tta_context(targets):
    def context(points):
        parts = []
        for _, r in points.head(3).iterrows():
            metric, target, how = targets.get(r["tid"], ("?", np.nan, ""))
            parts.append("%s %s: target %s %.4g (%s); s2 reached it in %s of %d runs, vs %s"
                         % (r["model"], r["tid"], metric, target, how,
                            "%d" % r["s2_reached"] if np.isfinite(r["s2_reached"]) else "?",
                            r["n_repeats"], r["tta_baseline"]))
        return "; ".join(parts)
    return context


def _gossip_context(points):
    ranks = sorted(set(int(r) for r in points["ranks"]))
    computes = sorted(set(points["compute"]))
    return "at %s ranks, compute %s (paper: 128 P100s)" % (
        ", ".join(str(r) for r in ranks), ", ".join(computes))


def claims_table(agg, summ, truns=None, targets=None):
    """(the claims table, its per-point tables).  truns: training.runs()
    (per-run values: the parity claims need them); targets: the chosen
    time-to-target per training group."""
    s2p, s2t, gp = s2_points(agg), s2_train_points(summ), gossip_points(summ, agg)
    if truns is None:
        truns = pd.DataFrame()
    from . import crossover   # it reads this module's points: imported here
    s2x, g90 = crossover.rate_crossover(agg, s2p), crossover.compute_90(agg, gp)
    rows = []
    rows += parity_rows(summ, truns, "s2_accuracy_parity", "s2", _s2_error_link(s2p))
    rows += _summarise(s2p, "comm_reduction", "s2_comm_reduction",
                       "no microbenchmark group holds s2 and a validated baseline",
                       _s2_error_context)
    rows += _summarise(s2p, "speedup", "s2_speedup",
                       "no microbenchmark group holds s2 and a validated baseline",
                       _joined(_s2_error_context, crossover.s2_notes(s2x)))
    rows += _summarise(s2t, "speedup", "s2_train_speedup",
                       "no training group holds s2 and a sparse baseline", _s2_train_context)
    rows += _summarise(s2t, "tta_speedup", "s2_train_speedup",
                       "no training group holds s2 and a sparse baseline with a time to target",
                       _tta_context(targets or {}), measure="time to accuracy")
    fp = frontier.points(summ, truns)
    rows += frontier.s2_joint_rows(fp, s2p, summ, _row)
    o1 = gossip_o1_rows(agg)
    rows += o1
    rows += _summarise(gp, "compute_efficiency", "gossip_efficiency",
                       "no training group holds gossip and none, and no microbenchmark group "
                       "run with --compute does",
                       _joined(_gossip_context, crossover.gossip_notes(g90)))
    rows += gossip_model_rows(gp)
    rows += parity_rows(summ, truns, "gossip_accuracy_parity", "gossip")
    rows += frontier.gossip_joint_rows(fp, o1, _row)
    for r in rows:
        r["would_change"] = r.get("would_change") or would_change(r)
    return pd.DataFrame(rows, columns=COLUMNS), {"s2": s2p, "s2_train": s2t, "gossip": gp,
                                                 "s2_rate": s2x, "gossip_compute_90": g90,
                                                 "frontier": fp}


# What would change a verdict, by claim and verdict class (the joint rows
# say it themselves).  Inconclusive rows say what data would settle them.
WOULD_CHANGE = {
    ("s2_accuracy_parity", "below"):
        "a wider sketch: s2's error falls as sqrt(union rows x cols / width), and the frontier "
        "shows the narrowest width that trains as well as dense",
    ("s2_accuracy_parity", "equivalent"):
        "a narrower sketch raises the error (sqrt(union / width)) until accuracy falls",
    ("s2_comm_reduction", "below"):
        "a narrower sketch, or a gradient whose ranks share fewer rows (the bitmap and the "
        "union set s2's bytes)",
    ("s2_comm_reduction", "meets"):
        "a wider sketch (the width accuracy parity needs) or denser rows lower the reduction",
    ("s2_speedup", "below"):
        "a slower link or more ranks: s2 wins where the wire, not the CPU, sets the time "
        "(see the link-rate crossover)",
    ("s2_speedup", "meets"):
        "a faster link, where the CPU's encode and decode set the time, or a wider sketch",
    ("s2_train_speedup", "below"):
        "a step whose reduce is a larger share of it (slower link, larger embedding); "
        "compute-bound steps hide any reducer",
    ("gossip_o1", "meets"): "a partner schedule with more than one exchange per step",
    ("gossip_o1", "below"): "one exchange per step (gossip_mix=grad or params, not both)",
    ("gossip_efficiency", "below"):
        "more compute per step or a faster link: the exchange of the whole model must hide "
        "behind compute (see the compute gossip needs for 90%)",
    ("gossip_efficiency", "meets"):
        "less compute per step or a slower link (see the compute gossip needs for 90%)",
    ("gossip_accuracy_parity", "below"):
        "more steps (the ranks' consensus distance shrinks with them) or gossip_mix=both",
    ("gossip_accuracy_parity", "equivalent"):
        "more ranks: gossip's consensus distance grows with p (measured here at few ranks)",
}
SETTLE = {
    "s2_accuracy_parity": "more seeds paired with dense (>= 5; the interval narrows as 1/sqrt(n))",
    "gossip_accuracy_parity": "more seeds paired with dense (>= 5; the interval narrows as "
                              "1/sqrt(n))",
}


def would_change(r):
    """What would change row r's verdict, or settle it when inconclusive."""
    cid, cls = r["claim_id"], r["verdict_class"]
    if cls == "missing":
        return "a run at the papers' setting: %s" % CLAIMS[cid][3]
    if cls == "inconclusive":
        if "points disagree" in str(r.get("verdict", "")):
            return ("settle the point that lies apart: its own launches (>= 6), or the same compute "
                    "per step for every point (see the per-point table)")
        if r.get("points", 0) and not _has_ends(r) and str(r.get("exact", "")).lower() != "true":
            return ("an interval: >= %d launches of each point (RB_LAUNCHES) or >= 3 points"
                    % stats.MIN_REPETITIONS)
        return SETTLE.get(cid, "more launches: the interval straddles the claim's value")
    cls = {"not-equivalent": "below", "equivalent": cls if "parity" in cid else "meets"}.get(cls, cls)
    return WOULD_CHANGE.get((cid, cls), "")


def _joined(*contexts):
    """One context of several: their texts, '; '-separated."""
    def context(points):
        return "; ".join(x for x in (c(points) for c in contexts) if x)
    return context


def headline_rows(ctab):
    """The rows the headline is made of: the papers' setting, measured or
    simulated on ranks that had a core each, on a machine not busy, with
    intervals across launches (or an exact value)."""
    if ctab.empty:
        return ctab
    return ctab[(ctab["setting"] == "paper") & (ctab["oversubscribed"] == "no")
                & (ctab["points"] > 0) & (ctab["busy"] != "yes") & (ctab["data"] != "model")
                & ((ctab["launches"].astype(str) != "one") | _exact(ctab))]


def _exact(ctab):
    return ctab["exact"].astype(str).str.lower() == "true"


def _excluded_reason(rows):
    """Why paper rows with points gave no headline number."""
    reasons = []
    if (rows["oversubscribed"] == "yes").all():
        return ("ran more ranks than cores (oversubscribed): their times measure waiting for "
                "a core")
    if (rows["oversubscribed"] == "yes").any():
        reasons.append("ran more ranks than cores (oversubscribed)")
    if (rows["busy"] == "yes").any():
        reasons.append("ran on a busy machine (other processes or stolen CPU time)")
    if (rows["launches"].astype(str) == "one").any():
        reasons.append("come from one launch each (their intervals leave out launch-to-launch "
                       "variation: run them in >= 6 launches)")
    if (rows["data"] == "model").any():
        reasons.append("are cost-model predictions")
    return " or ".join(reasons) or "cannot be used"


def headline(ctab):
    """The report's first lines: one per kind of data with a headline row,
    or one saying that no point is at the papers' setting."""
    rows = headline_rows(ctab)
    if rows.empty:
        paper = ctab[(ctab["setting"] == "paper") & (ctab["points"] > 0)]
        if not paper.empty:
            return ["**Headline**: no number. The only points at the papers' setting %s."
                    % _excluded_reason(paper)]
        other = (ctab["setting"] == "other") & (ctab["points"] > 0)
        return ["**Headline**: no number. These data hold no point at the papers' setting "
                "(S2: row-sparse gradient, >= %d columns, row density <= %g%%, "
                "sketch_width_mode=fraction with width = density x 0.25 or x 0.001; "
                "GossipGraD: compute efficiency with a measured or modelled compute phase).%s"
                % (S2_PAPER["min_cols"], 100 * S2_PAPER["max_density"],
                   " What they hold follows under *Where S2 is not designed to win*."
                   if other.any() else "")]
    lines = []
    # Measured over an emulated network is a line of its own, each value
    # naming its platform (nodes, link rate): never mixed with this machine.
    over = rows["platform"].map(is_emulated_platform).rename("emulated")
    for (kind, emulated), sub in rows.groupby([rows["data"], over], sort=True):
        parts = ["%s %s%s%s (paper %s%s): %s" % (
            _short_name(r), format_value(r, False),
            " [%s]" % r["model"] if r.get("model") else "",
            " on %s" % r["platform"] if emulated else "", r["paper"], _read_as(r), r["verdict"])
            for _, r in sub.iterrows()]
        lines.append("**Headline** (%s%s, papers' setting, a core per rank, machine not busy, "
                     "intervals over launches): %s." % (
                         kind, " over an emulated network" if emulated else "", "; ".join(parts)))
    return lines


# How a joint claim's row begins (its setting follows in parentheses).
JOINT_NAMES = ("S2 at parity", "S2 at the authors' width", "GossipGraD at parity")


def _short_name(r):
    """The claim's short name; a joint claim's says at which setting
    ('S2 at parity (width ..., embedlm)'), as two of them may stand side by side."""
    if r["claim_id"].endswith("_joint") and str(r.get("claim", "")).startswith(JOINT_NAMES):
        return str(r["claim"])
    return SHORT[r["claim_id"]]


def _read_as(r):
    """', read as >= 90%' for a loosely stated claim."""
    cid = r["claim_id"]
    if cid == "gossip_efficiency":
        return ", read as >= 90%"
    if cid.endswith("accuracy_parity"):
        return ", read as within +-%s" % ("2%" if r.get("unit") == "rel" else "0.5 points")
    if cid == "gossip_o1":
        return ", read as no growth with p (<= 1.05x)"
    return ""


# ---------------------------------------------------------------- text

def _formatter(row):
    unit = row.get("unit", "")
    if unit == "%" or (not unit and "%" in str(row["paper"])):
        return lambda v: "%.1f%%" % (100 * v)
    if unit == "points":
        return lambda v: "%+.2f points" % v
    if unit == "rel":
        return lambda v: "%+.2f%%" % (100 * v)
    return lambda v: "%.2fx" % v


def _has_ends(row):
    lo, hi = row["measured_low"], row["measured_high"]
    return (lo is not None and hi is not None and not pd.isna(lo) and not pd.isna(hi))


def format_value(row, say_missing=True):
    """'93.4% [93.1%, 93.6%]', or '1.08x (no interval)'."""
    f = _formatter(row)
    if str(row.get("exact", False)).lower() == "true":
        return f(row["measured_median"])
    if _has_ends(row):
        return "%s [%s, %s]" % (f(row["measured_median"]), f(row["measured_low"]),
                                f(row["measured_high"]))
    return f(row["measured_median"]) + (" (no interval)" if say_missing else "")
