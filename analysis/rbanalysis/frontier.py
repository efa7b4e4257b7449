"""Where each method holds: the accuracy-bytes-time frontier of every
method trained beside dense, and each paper's claims judged together at one
setting (docs/report.md, *Where each method holds*).

A frontier point is a reducer with its options (a variant) in a training
group that also ran dense: its accuracy difference to dense paired by seed
(the parity test of training.parity, with its verdict), rank 0's payload
bytes per step and its seconds per iteration (medians over the seeds).  A
point is on the front when no other point of its group is at least as
accurate with fewer bytes (or less time) -- "accurate" meaning its median
difference, the worse direction counted positive.

The joint claims:
- S2: "the same accuracy, 81% less sparse communication and a 1.8x
  speedup", all at once.  Its parity setting is the s2 variant of an
  embedding model (S2's regime) whose accuracy is equivalent to dense and
  that sends the fewest bytes per step.  At it: the reduction and the
  speedup of the microbenchmarks' s2 at the same sketch (same width mode,
  width, rows; a fraction width compared as a multiple of the row
  density) on every platform that ran it, and the training time per
  iteration against the fastest exact sparse baseline.  The authors' width
  is judged the same way beside it.
- GossipGraD: "matching accuracy at ~100% compute efficiency with O(1)
  communication".  Its parity setting is the gossip variant of an image
  classifier (its regime) equivalent to dense with the least time per
  iteration; at it the compute efficiency against `none` of that group.
"""

import os

import numpy as np
import pandas as pd

from . import stats, training, plotting
from .micro import BASELINES, option_value

# Reducers whose result is not the exact average (or no average at all);
# ddp-*: PyTorch DDP's compression hooks (rb-torch-train).
LOSSY = ("s2", "gossip", "none", "ddp-fp16", "ddp-powersgd")
S2_REDUCTION, S2_SPEEDUP, GOSSIP_EFFICIENCY = 0.81, 1.8, 0.9
# A fraction width matches another as a multiple of the row density within this.
RATIO_TOLERANCE = 1.25


def is_lossy(reducer, options):
    options = str(options)
    return (reducer in LOSSY or "sparsify=" in options
            or (reducer == "oktopk" and option_value(options, "oktopk_select") == "topk"))


# ---------------------------------------------------------------- points

def points(summ, truns):
    """One row per (training group with dense, variant)."""
    if summ is None or summ.empty or truns is None or truns.empty or "reducer" not in summ:
        return pd.DataFrame()
    rows = []
    for tid, sub in summ.groupby("tid"):
        if not (sub["reducer"] == "dense").any():
            continue
        for _, r in sub.iterrows():
            rows.append(_point(truns, tid, r))
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["front_bytes"] = _front(df, "bytes_per_step")
    df["front_time"] = _front(df, "t_iter_s")
    return df


def _point(truns, tid, r):
    dense = r["reducer"] == "dense"
    par = None if dense else training.parity(truns, tid, r["variant"], r.get("metric", ""))
    tr = truns[truns["tid"] == tid]
    higher = bool(tr["higher_is_better"].iloc[0]) if len(tr) and "higher_is_better" in tr else True
    _, unit, rel = training.margin_of(r.get("metric", ""), higher, tr.get("final", []))
    return {
        "tid": tid, "model": r.get("model", ""), "metric": r.get("metric", ""),
        "kind": r.get("kind", ""), "platform": r.get("platform", ""), "ranks": r.get("ranks"),
        "busy": r.get("busy", "unknown"), "reducer": r["reducer"], "variant": r["variant"],
        "options": r.get("options", ""), "lossy": is_lossy(r["reducer"], r.get("options", "")),
        "higher_is_better": higher, "unit": "rel" if rel else "points",
        "seeds": len(par["seeds"]) if par else int(r.get("n_repeats", 0)),
        "diff": 0.0 if dense else par["median"],
        "diff_low": 0.0 if dense else par["low"], "diff_high": 0.0 if dense else par["high"],
        "parity": "reference" if dense else par["class"],
        "parity_words": "the reference" if dense else par["words"],
        "final": r.get("final_median", np.nan),
        "bytes_per_step": r.get("bytes_per_step_median", np.nan),
        "t_iter_s": r.get("t_iter_s_median", np.nan),
        "t_iter_s_low": r.get("t_iter_s_ci_low", np.nan),
        "t_iter_s_high": r.get("t_iter_s_ci_high", np.nan),
        "t_iter_s_min": r.get("t_iter_s_min", np.nan), "t_iter_s_max": r.get("t_iter_s_max", np.nan),
        "compute_efficiency": r.get("compute_efficiency", np.nan),
        "compute_efficiency_low": r.get("compute_efficiency_low", np.nan),
        "compute_efficiency_high": r.get("compute_efficiency_high", np.nan),
        "embedding_parameters": r.get("embedding_parameters", 0),
        "embed_density": r.get("embed_density", np.nan),
    }


def worse_by(df):
    """The accuracy difference with the worse direction positive; a point
    equivalent to dense counts as dense (its difference is within the
    margin: noise, not a ranking)."""
    worse = np.where(df["higher_is_better"].astype(bool), -df["diff"], df["diff"])
    return np.where(df["parity"].isin(["equivalent", "reference"]), 0.0, worse)


def _front(df, cost):
    """True where no other point of the group is at least as accurate at no
    more cost, and better in one of the two."""
    worse = pd.Series(worse_by(df), index=df.index)
    on = pd.Series(False, index=df.index)
    for _, sub in df.groupby("tid"):
        ok = sub[np.isfinite(sub[cost]) & np.isfinite(worse[sub.index])]
        for i in ok.index:
            c, w = ok.at[i, cost], worse[i]
            beaten = ((ok[cost] <= c) & (worse[ok.index] <= w)
                      & ((ok[cost] < c) | (worse[ok.index] < w)))
            on[i] = not beaten.any()
    return on


# ---------------------------------------------------------------- S2 jointly

def sketch_of(options, density=np.nan):
    """(mode, width, rows, feedback) of an s2 variant; a fraction width as
    its multiple of the row density (the authors' rule: 0.25 x density)."""
    mode = str(option_value(options, "sketch_width_mode"))
    width = option_value(options, "sketch_width")
    rows = option_value(options, "sketch_rows")
    ef = str(option_value(options, "error_feedback"))
    if mode == "fraction" and density and np.isfinite(density) and density > 0:
        try:
            width = float(width) / float(density)
        except (TypeError, ValueError):
            pass
        mode = "x density"
    rows = 1 if not isinstance(rows, float) or np.isnan(rows) else int(rows)
    return (mode, width, rows, ef in ("1", "1.0", "on", "true"))


def describe_sketch(sk):
    mode, width, rows, ef = sk
    w = ("width %g x the largest rank's non-zeros" % width if mode == "nnz"
         else "width %.3g x the row density" % width if mode == "x density"
         else "width %s (%s)" % (width, mode))
    return "%s, %d row%s%s" % (w, rows, "" if rows == 1 else "s", ", error feedback" if ef else "")


def same_sketch(a, b):
    if a[0] != b[0] or a[2] != b[2] or a[3] != b[3]:
        return False
    try:
        wa, wb = float(a[1]), float(b[1])
    except (TypeError, ValueError):
        return a[1] == b[1]
    if a[0] == "x density":
        return wb / RATIO_TOLERANCE <= wa <= wb * RATIO_TOLERANCE
    return wa == wb


def s2_settings(fp):
    """{tid: (parity row or None, authors' row or None, the s2 rows)} for the
    groups of an embedding model with s2 and dense."""
    out = {}
    if fp.empty:
        return out
    emb = fp[(fp["embedding_parameters"].fillna(0) > 0)]
    for tid, sub in emb.groupby("tid"):
        s2 = sub[sub["reducer"] == "s2"]
        if s2.empty:
            continue
        ok = s2[s2["parity"] == "equivalent"]
        parity = (ok.sort_values(["bytes_per_step", "t_iter_s"]).iloc[0] if len(ok) else None)
        # the authors' rule: a fraction width 0.25 x density, no error
        # feedback (theirs has none) before one with it
        authors = sorted((r for _, r in s2.iterrows()
                          if sketch_of(r["options"], r["embed_density"])[0] == "x density"
                          and _near(sketch_of(r["options"], r["embed_density"])[1], 0.25)),
                         key=lambda r: sketch_of(r["options"], r["embed_density"])[3])
        out[tid] = (parity, authors[0] if authors else None, s2)
    return out


def _near(x, target):
    try:
        return target / 2 <= float(x) <= target * 2
    except (TypeError, ValueError):
        return False


def _micro_at(s2p, sk):
    """The microbenchmark points of s2 at sketch sk (row layout only: the
    embedding claims), grouped by (kind, platform)."""
    if s2p is None or s2p.empty:
        return {}
    pts = s2p[s2p["layout"] == "row"]
    keep = [i for i, r in pts.iterrows()
            if same_sketch(sketch_of(_variant_options(r["s2_variant"], r), r["density"]), sk)]
    return {k: g for k, g in pts.loc[keep].groupby(["kind", "platform"])} if keep else {}


def _variant_options(variant, r):
    return r.get("s2_options", "") or str(variant).partition("[")[2].rstrip("]")


def _train_speedup(summ, tid, row):
    """(speedup, low, high, baseline, how) of s2's seconds per iteration
    against the fastest exact sparse baseline of its group.  Too few seeds
    for a 95% interval (< 6): the range over every pairing of runs
    (slowest baseline run / fastest s2 run and the reverse), which holds the
    ratio of any two seeds' runs."""
    sub = summ[(summ["tid"] == tid) & summ["reducer"].isin(BASELINES) & summ["t_iter_s_median"].notna()]
    if sub.empty or not row["t_iter_s"] > 0:
        return np.nan, np.nan, np.nan, "", ""
    fastest = sub.loc[sub["t_iter_s_median"].idxmin()]
    b_lo, b_hi = stats.min_interval(sub["t_iter_s_ci_low"], sub["t_iter_s_ci_high"])
    lo, hi = stats.ratio_interval(b_lo, b_hi, row["t_iter_s_low"], row["t_iter_s_high"])
    how = "95% interval"
    if not stats.has_interval(lo, hi):
        lo, hi = _pairing_range(fastest, row)
        how = "range over the runs' pairings"
    return fastest["t_iter_s_median"] / row["t_iter_s"], lo, hi, fastest["variant"], how


def _pairing_range(num, den):
    """The range of num's seconds per iteration over den's, over every
    pairing of a run of each (num, den: rows with t_iter_s_min/max): what a
    ratio of two seeds' runs can be when there are too few for an interval."""
    return (num.get("t_iter_s_min", np.nan) / den["t_iter_s_max"],
            num.get("t_iter_s_max", np.nan) / den["t_iter_s_min"])


def _part(value, lo, hi, target, exact=False):
    """meets / below / inconclusive of one part of a joint claim."""
    if not np.isfinite(value):
        return "missing"
    if exact:
        return "meets" if value >= target else "below"
    if stats.has_interval(lo, hi):
        return "meets" if lo >= target else "below" if hi < target else "inconclusive"
    return "inconclusive"


def _joint_class(parts):
    classes = [c for c, _ in parts]
    if "below" in classes:
        return "below"
    if "missing" in classes:
        return "missing"
    if all(c in ("meets", "equivalent") for c in classes):
        return "meets"
    return "inconclusive"


def _verdict_words(cls, parts):
    named = lambda which: ", ".join(n for c, n in parts if c in which)   # noqa: E731
    if cls == "meets":
        return "meets the joint claim: every part holds at this one setting"
    if cls == "below":
        return "below the joint claim: %s fails at this setting" % named(("below",))
    if cls == "missing":
        return "incomplete: %s not measured at this setting" % named(("missing",))
    return "inconclusive: %s not settled at this setting" % named(("inconclusive",))


def s2_joint_rows(fp, s2p, summ, make_row):
    """Claims-table rows of S2's joint claim at its parity setting and at the
    authors' width, one per platform that measured s2 at that sketch."""
    rows = []
    for tid, (parity, authors, s2) in sorted(s2_settings(fp).items()):
        if parity is None:
            rows.append(_no_parity_row(tid, s2, make_row))
        same = parity is not None and authors is not None and parity["variant"] == authors["variant"]
        for label, at in (("at parity, the authors' width," if same else "at parity", parity),
                          ("at the authors' width", None if same else authors)):
            if at is not None:
                rows += _s2_joint_at(label, tid, at, s2p, summ, make_row)
    return rows


def _no_parity_row(tid, s2, make_row):
    tried = "; ".join("%s: %s %s" % (describe_sketch(sketch_of(r["options"], r["embed_density"])),
                                     _fmt_diff(r), r["parity"]) for _, r in s2.iterrows())
    cls = "below" if (s2["parity"] == "below").all() else "inconclusive"
    return make_row(
        "s2_joint", setting="paper", platform="this machine, %s ranks" % s2["ranks"].iloc[0],
        data=s2["kind"].iloc[0], oversubscribed="no", busy="-", points=0, repetitions=0,
        verdict="%s: no s2 setting tried reached accuracy parity with dense on %s (%s)"
                % ("below" if cls == "below" else "inconclusive", s2["model"].iloc[0], tid),
        verdict_class=cls, model=s2["model"].iloc[0],
        why="settings tried on %s: %s" % (tid, tried),
        would_change="a wider sketch (sketch_width_mode=nnz, sketch_width 4 or 16), 3 sketch rows "
                     "or error feedback, trained with >= 5 seeds beside dense")


def _fmt_diff(r):
    if r["unit"] == "rel":
        return "%+.1f%% %s" % (100 * r["diff"], r["metric"])
    return "%+.2f points %s" % (r["diff"], r["metric"])


def _s2_joint_at(label, tid, at, s2p, summ, make_row):
    sk = sketch_of(at["options"], at["embed_density"])
    acc = (at["parity"] if at["parity"] in ("equivalent", "below") else "inconclusive",
           "accuracy (%s)" % _fmt_diff(at))
    sp, sp_lo, sp_hi, base, how = _train_speedup(summ, tid, at)
    train_part = (_part(sp, sp_lo, sp_hi, S2_SPEEDUP),
                  "training speedup (%.2fx [%.2fx, %.2fx] vs %s, %s)" % (sp, sp_lo, sp_hi, base, how))
    head = "S2 %s (%s, %s)" % (label, describe_sketch(sk), at["model"])
    rows = []
    micro = _micro_at(s2p, sk)
    # this machine's training is judged with each platform's reduce figures
    for (kind, plat), pts in sorted(micro.items()):
        red = stats.median_range(pts["comm_reduction"], pts["comm_reduction_low"],
                                 pts["comm_reduction_high"])
        red_exact = bool(pts["comm_reduction_exact"].fillna(False).astype(bool).all())
        spd = stats.median_range(pts["speedup"], pts["speedup_low"], pts["speedup_high"])
        parts = [acc,
                 (_part(red[0], red[1], red[2], S2_REDUCTION, red_exact),
                  "reduction (%.1f%%)" % (100 * red[0])),
                 (_part(*spd, S2_SPEEDUP), "reduce speedup (%.2fx)" % spd[0])]
        # the training speedup belongs to the platform that trained; another
        # platform's row is judged on what it measured (the reduce)
        trained_here = str(plat) == str(at["platform"])
        if trained_here:
            parts.append(train_part)
        cls = _joint_class(parts)
        rows.append(make_row(
            "s2_joint", setting="paper", platform=plat, data=kind, oversubscribed="no",
            busy=_busy(pts, at), points=len(pts), repetitions=int(pts["n_repeats"].min()),
            measured_median=spd[0], measured_low=spd[1], measured_high=spd[2], exact=False,
            measured_min=float(pts["speedup"].min()), measured_max=float(pts["speedup"].max()),
            launches=int(pts["launches"].min()), model=at["model"],
            verdict=_verdict_words(cls, parts), verdict_class=cls, claim=head,
            why="%s; reduce: %.1f%% fewer bytes than %s, %.2fx the fastest (%s), s2 error %.3g; "
                "training%s: %.2fx seconds per iteration vs %s (%s seeds)"
                % (_fmt_diff(at) + " vs dense, " + at["parity"], 100 * red[0],
                   pts["fewest_bytes_baseline"].iloc[0], spd[0], pts["fastest_baseline"].iloc[0],
                   float(np.nanmedian(pts["s2_rel_l2_err"])) if pts["s2_rel_l2_err"].notna().any()
                   else np.nan, "" if trained_here else
                   " (on %s, not judged here: it did not train on this platform)" % at["platform"],
                   sp, base, at["seeds"]),
            would_change=_s2_would_change(parts)))
    # Platforms that measured s2 at other sketches but not at this one: the
    # joint claim is open there, and the row says how to settle it.
    for kind, plat in _s2_platforms(s2p):
        if (kind, plat) in micro:
            continue
        parts = [acc, ("missing", "reduction and reduce speedup on %s" % plat)]
        rows.append(make_row(
            "s2_joint", setting="paper", platform=plat, data=kind, oversubscribed="no",
            busy="-", points=0, model=at["model"], claim=head,
            verdict=_verdict_words(_joint_class(parts), parts),
            verdict_class=_joint_class(parts),
            why="%s vs dense, %s; %s ran s2 at other sketches, not at this one"
                % (_fmt_diff(at), at["parity"], plat),
            would_change="rb_micro with this sketch's options at the S2 authors' setting on %s "
                         "(%s)" % (plat, _how_to_run(kind, plat))))
    if not rows:
        parts = [acc, ("missing", "reduction and reduce speedup"), train_part]
        cls = _joint_class(parts)
        rows.append(make_row(
            "s2_joint", setting="paper", platform="this machine, %s ranks" % at["ranks"],
            data=at["kind"], oversubscribed="no", busy=at["busy"], points=1,
            repetitions=int(at["seeds"]), measured_median=sp, measured_low=sp_lo,
            measured_high=sp_hi, exact=False, launches=int(at["seeds"]), model=at["model"],
            verdict=_verdict_words(cls, parts), verdict_class=cls, claim=head,
            why="%s vs dense, %s; training %.2fx seconds per iteration vs %s; no microbenchmark "
                "ran s2 at this sketch" % (_fmt_diff(at), at["parity"], sp, base),
            would_change="rb_micro --reducer all --shape 32768x256 --layout row --density 0.02 "
                         "with this sketch's options, in >= 6 launches"))
    return rows


def _s2_platforms(s2p):
    """(kind, platform) of every platform with an s2 point in row layout."""
    if s2p is None or s2p.empty:
        return []
    pts = s2p[s2p["layout"] == "row"]
    return sorted(set(zip(pts["kind"], pts["platform"])))


def _how_to_run(kind, plat):
    if kind == "simulated":
        return "jobscripts/sim/claims.sh, -O sketch_width_mode/-O sketch_width in its s2 runs"
    if "emulated" in str(plat):
        return "jobscripts/emulated/sweep, the s2 line with this sketch"
    return "rb_micro --reducer s2 --shape 32768x256 --layout row --density 0.02, >= 6 launches"


def _busy(pts, at):
    vals = set(str(v) for v in list(pts.get("busy", [])) + [at.get("busy", "unknown")])
    return "yes" if "yes" in vals else "no" if vals == {"no"} else "unknown"


def _s2_would_change(parts):
    out = []
    for cls, name in parts:
        if cls == "meets" or cls == "equivalent":
            continue
        if name.startswith("accuracy"):
            out.append("accuracy: a wider sketch or 3 rows (the error falls as sqrt(union / width))")
        elif name.startswith("reduction"):
            out.append("reduction: a narrower sketch, or a sparser gradient (fewer union rows)")
        elif "speedup" in name:
            out.append("%s: a slower link (s2 wins where the wire, not the CPU, sets the time; "
                       "see the link-rate crossover)" % name.split(" (")[0])
    return "; ".join(out) or "nothing within these data: every part holds"


# ---------------------------------------------------------------- GossipGraD jointly

def gossip_joint_rows(fp, o1_rows, make_row):
    """GossipGraD's joint claim at its parity setting in each image
    classification group (higher is better: accuracy)."""
    rows = []
    if fp.empty:
        return rows
    o1 = [r for r in o1_rows if r.get("points", 0) and r["claim_id"] == "gossip_o1"
          and r.get("measure", "messages") == "messages"]
    o1_part = ((o1[0]["verdict_class"], "O(1) messages (%s)" % o1[0]["platform"]) if o1
               else ("missing", "O(1) messages"))
    for tid, sub in fp[fp["higher_is_better"].astype(bool)].groupby("tid"):
        g = sub[sub["reducer"] == "gossip"]
        if g.empty:
            continue
        ok = g[g["parity"] == "equivalent"]
        at = ok.sort_values("t_iter_s").iloc[0] if len(ok) else None
        if at is None:
            rows.append(make_row(
                "gossip_joint", setting="paper", platform="this machine, %s ranks" % g["ranks"].iloc[0],
                data=g["kind"].iloc[0], oversubscribed="no", busy="-", points=0,
                verdict="no gossip setting reached accuracy parity with dense on %s" % tid,
                verdict_class="below" if (g["parity"] == "below").all() else "inconclusive",
                model=g["model"].iloc[0],
                why="; ".join("%s: %s %s" % (r["variant"], _fmt_diff(r), r["parity"])
                              for _, r in g.iterrows()),
                would_change="more steps (gossip's consensus distance shrinks with them) or "
                             "gossip_mix=both"))
            continue
        eff = (at["compute_efficiency"], at["compute_efficiency_low"], at["compute_efficiency_high"])
        none = sub[sub["reducer"] == "none"]
        if not stats.has_interval(eff[1], eff[2]) and len(none):
            # too few seeds for a 95% interval: the range over every pairing
            # of a none run with a gossip run (as the S2 training speedup)
            eff = (eff[0],) + _pairing_range(none.iloc[0], at)
        parts = [("equivalent", "accuracy (%s)" % _fmt_diff(at)),
                 (_part(*eff, GOSSIP_EFFICIENCY), "compute efficiency (%.1f%%)" % (100 * eff[0])),
                 o1_part]
        cls = _joint_class(parts)
        rows.append(make_row(
            "gossip_joint", setting="paper", platform=at["platform"] or "this machine",
            data=at["kind"], oversubscribed="no", busy=at["busy"], points=1,
            repetitions=int(at["seeds"]), measured_median=eff[0], measured_low=eff[1],
            measured_high=eff[2], exact=False, launches=int(at["seeds"]), model=at["model"],
            verdict=_verdict_words(cls, parts), verdict_class=cls,
            claim="GossipGraD at parity (%s, %s)" % (at["variant"], at["model"]),
            why="%s vs dense, equivalent; efficiency: seconds per iteration of none / of %s; "
                "O(1) from %s" % (_fmt_diff(at), at["variant"], o1_part[1]),
            would_change="efficiency: more compute per step than this model's %.1f ms (the "
                         "exchange stays the same), or a faster link; see the compute gossip "
                         "needs for 90%%" % (1e3 * at["t_iter_s"] * (eff[0] if eff[0] > 0 else 1))
            if _part(*eff, GOSSIP_EFFICIENCY) != "meets" else
            "nothing within these data: every part holds"))
    return rows


# ---------------------------------------------------------------- report

HEADING = "Where each method holds: the accuracy-bytes-time frontier"


def section(doc, fp, draw, diverged=()):
    """The report's section: the frontier table per training group and the
    trade-off figure (drawn by draw(doc, fn, *args), rb-report's); diverged:
    the training archives refused because their loss diverged (a setting
    too lossy to train has no point, so they are named here)."""
    doc.heading(2, HEADING)
    if diverged:
        names = sorted(os.path.basename(p) for p in diverged)
        doc.para("Diverged (a loss became NaN or infinite; no accuracy, so no point below; "
                 "refused, see Inputs): %d run(s): %s." % (len(names), ", ".join(
                     "`%s`" % n for n in names[:12]) + (", ..." if len(names) > 12 else "")))
    if fp is None or fp.empty:
        doc.para("No training group of these data holds dense beside another reducer: no frontier.")
        return []
    doc.para("Every reducer and setting trained beside dense with the same seeds: its accuracy "
             "difference to dense (the median over seeds of the paired difference, with its 90% "
             "interval and the two one-sided tests' verdict: *equivalent* when the interval lies "
             "within +-0.5 accuracy points or +-2% of perplexity), rank 0's payload bytes per "
             "step (every gradient) and seconds per iteration (medians over the seeds). "
             "*front*: no other setting of the group is at least as accurate with fewer bytes "
             "(or less time). The joint verdicts in the claims table take each paper's parity "
             "setting from here: the s2 setting that is equivalent with the fewest bytes, the "
             "gossip setting that is equivalent with the least time.")
    shown = fp.assign(
        accuracy=[_fmt_diff(r) + (" [%s, %s]" % _fmt_ends(r) if r["parity"] != "reference" else "")
                  for _, r in fp.iterrows()],
        front=[", ".join(w for w, on in (("bytes", r["front_bytes"]), ("time", r["front_time"])) if on)
               or "-" for _, r in fp.iterrows()],
        method=["lossy" if r["lossy"] else "exact" for _, r in fp.iterrows()])
    shown = shown.sort_values(["tid", "lossy", "bytes_per_step"])
    doc.table(shown, "frontier", columns={
        "tid": "group", "model": "model", "variant": "reducer and setting", "method": "result",
        "seeds": "seeds", "accuracy": "vs dense", "parity": "parity", "bytes_per_step": "bytes/step",
        "t_iter_s": "s/iter", "front": "front"})
    figs = []
    drawable = [tid for tid, sub in fp.groupby("tid") if len(sub) >= 3]
    if drawable:
        figs += draw(doc, trade_off, fp[fp["tid"].isin(drawable)], doc.outdir)
    return figs


def _fmt_ends(r):
    if not (np.isfinite(r["diff_low"]) and np.isfinite(r["diff_high"])):
        return ("-", "-")
    if r["unit"] == "rel":
        return ("%+.1f%%" % (100 * r["diff_low"]), "%+.1f%%" % (100 * r["diff_high"]))
    return ("%+.2f" % r["diff_low"], "%+.2f" % r["diff_high"])


def trade_off(fp, outdir):
    """Accuracy difference to dense against bytes per step and against
    seconds per iteration, a row of two panels per training group; the
    front joined by a line."""
    from . import figures   # matplotlib only when drawing
    plt = figures.plt
    groups = sorted(fp["tid"].unique(), key=lambda t: int(str(t).lstrip("T") or 0))
    fig, axes = plt.subplots(len(groups), 2, figsize=(10, 2.7 * len(groups)), squeeze=False)
    for row, tid in zip(axes, groups):
        sub = fp[fp["tid"] == tid]
        rel = (sub["unit"] == "rel").all()
        y = 100 * sub["diff"] if rel else sub["diff"]
        ylabel = ("%s vs dense, %%" % sub["metric"].iloc[0]) if rel else \
                 ("%s vs dense, points" % sub["metric"].iloc[0])
        for ax, cost, front, xlabel in ((row[0], "bytes_per_step", "front_bytes", "bytes per step (rank 0)"),
                                        (row[1], "t_iter_s", "front_time", "seconds per iteration")):
            ok = sub[np.isfinite(sub[cost]) & (sub[cost] > 0)]
            for i, (_, r) in enumerate(ok.iterrows()):
                ax.scatter(r[cost], y[r.name], color=plotting.reducer_colour(r["variant"]),
                           marker=plotting.MARKERS[i % len(plotting.MARKERS)],
                           edgecolors="black" if r[front] else "none", s=60 if r[front] else 36,
                           label=r["variant"] if ax is row[0] else None, zorder=3)
            fr = ok[ok[front].astype(bool)].sort_values(cost)
            if len(fr) > 1:
                ax.plot(fr[cost], y[fr.index], color="black", lw=1, ls="--", zorder=2,
                        label="front" if ax is row[0] else None)
            ax.axhline(0, color="#888888", lw=0.8)
            ax.set_xscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if rel:
                ax.set_yscale("symlog", linthresh=2.0)
            ax.set_title("%s (%s)" % (sub["model"].iloc[0], tid), fontsize=10)
        row[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(2.25, 1.0), frameon=False)
    fig.subplots_adjust(right=0.78, wspace=0.3, hspace=0.45)
    name = "frontier.png"
    try:   # the legend sits outside the axes: keep it in the picture
        fig.savefig(os.path.join(outdir, name), dpi=plotting.DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    return [(name, "Accuracy difference to dense against bytes per step and seconds per "
                   "iteration, one point per reducer and setting (median over seeds); ringed "
                   "points and the dashed line: the front (no point at least as accurate for "
                   "less). Lower is better on the perplexity axis, higher on accuracy.")]
