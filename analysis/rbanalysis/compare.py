"""rb-report --compare A B: do two data sets tell the same story?

A and B are each a results directory (or HDF5 files, merged archives) or an
rb-report output directory (its tables/verdict_points.csv and
tables/claims.csv).  A contradiction is:

  - a difference between two reducers at the same point that both data
    sets call significant and beyond the 5% minimum effect
    (stats.differ), in opposite directions; a difference one data set
    does not state (overlapping intervals, or within 5%) contradicts
    nothing;
  - a headline number whose intervals in A and B do not overlap with
    medians more than 5% apart (the same test), or, where B has no
    interval, B's number outside A's interval by more than 5%; or a
    headline number one data set has and the other has not (unless the
    other has it from a busy machine: then it is unchecked); or a joint
    claim (S2 or GossipGraD at parity) reached at different settings.  (B's median
    outside A's interval alone is no contradiction: two runs of one
    distribution put it there about one time in six, since B's median has
    noise of its own.)

A contradiction at a point measured on a busy machine (machine_*
attributes: runmeta.busy) says so: it may be the machine, not the reducers.
Intervals are over launches wherever a point has several (stats.py); a
point of one launch has an interval that leaves out launch-to-launch
variation, and its contradictions say so too.

Points are matched by configuration (kind, device, layout, overlap,
density, ranks, columns, timing, allocator policy, oversubscription and
size for rb_micro; kind, model, data set, ranks and allocator policy for
rb_train), not by machine or version: the question is whether the verdict
repeats.  A headline number of A without an interval cannot be checked:
it is listed as unchecked, not as agreeing.
"""

import os

import numpy as np
import pandas as pd

from . import claim_table, load, micro, stats, training
from .runmeta import is_emulated_platform

POINT_COLUMNS = ["domain", "key", "variant", "measure", "median", "ci_low", "ci_high", "n"]
# Written since launch-level intervals and busy runs; older reports lack them.
EXTRA_COLUMNS = ["busy", "unit"]


class DatasetError(Exception):
    pass


def _micro_key(r):
    # A simulated point names its platform: the same configuration simulated
    # on two platforms is two points, not one seen twice; so does one
    # measured over an emulated network (its nodes and link rate).
    kind = r["kind"]
    if (kind == "simulated" or is_emulated_platform(r.get("platform", ""))) and str(
            r.get("platform", "") or ""):
        kind = "%s on %s" % (kind, r["platform"])
    return ("%s | %s%s | %s/%s | density %g | %d ranks | cols %s | %s | malloc: %s%s | %d B"
            % (kind, r["device"], " | rows input" if r.get("input") == "rows" else "",
               r["layout"], r["overlap"], float(r["density"]),
               int(r["ranks"]), r["cols"], r["timing"], r["malloc"],
               " | oversubscribed" if r["oversubscribed"] in (True,) else "", int(r["size_bytes"])))


def _train_key(r):
    kind = r["kind"]
    if is_emulated_platform(r.get("platform", "")):
        kind = "%s on %s" % (kind, r["platform"])
    return "%s | %s | %s | %d ranks | malloc: %s" % (kind, r["model"], r.get("dataset", ""),
                                                     int(r["ranks"]), r.get("malloc", ""))


def verdict_points(agg, summ):
    """Every point's median and interval, keyed by configuration: what
    --compare reads (tables/verdict_points.csv)."""
    rows = []
    if not agg.empty:
        for _, r in agg[agg["reducer"] != "none"].iterrows():
            rows.append(("micro", _micro_key(r), r["variant"], "t_avg_us", r["t_avg_us_median"],
                         r["t_avg_us_ci_low"], r["t_avg_us_ci_high"], r["n_repeats"],
                         r.get("busy", "unknown"), r.get("interval_unit", "")))
    if not summ.empty and "t_iter_s_median" in summ:
        for _, r in summ[summ["t_iter_s_median"].notna()].iterrows():
            rows.append(("train", _train_key(r), r["variant"], "t_iter_s", r["t_iter_s_median"],
                         r["t_iter_s_ci_low"], r["t_iter_s_ci_high"], r["n_repeats"],
                         r.get("busy", "unknown"), "launch"))
    return pd.DataFrame(rows, columns=POINT_COLUMNS + EXTRA_COLUMNS)


def _read_table(path, csv):
    """A table of a report directory; a file cut short (it does not end
    with the newline pandas ends every table with) is a damaged report, not
    one with fewer points."""
    with open(csv, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise DatasetError("%s: %s ends mid-line: a truncated or damaged report; run rb-report "
                           "on its results again" % (path, os.path.relpath(csv, path)))
    return pd.read_csv(csv, keep_default_na=False, na_values=[""])


NUMERIC_POINT_COLUMNS = ("median", "ci_low", "ci_high", "n")


def _check_numbers(path, points):
    """The columns compared as numbers hold numbers (or nothing): text there
    ended --compare in a TypeError, exit 1, which reads as 'contradiction'."""
    for col in NUMERIC_POINT_COLUMNS:
        v = pd.to_numeric(points[col], errors="coerce")
        bad = v.isna() & points[col].notna()
        if bad.any():
            raise DatasetError("%s: tables/verdict_points.csv: column %s holds %r, not a number: "
                               "a damaged report" % (path, col, points[col][bad].iloc[0]))
        points[col] = v


def dataset(path):
    """(points, claims table, description) of one side of the comparison."""
    tables = os.path.join(path, "tables")
    vp, ct = os.path.join(tables, "verdict_points.csv"), os.path.join(tables, "claims.csv")
    if os.path.isfile(vp) and os.path.isfile(ct):
        try:
            points = _read_table(path, vp)
            ctab = _read_table(path, ct)
        except (OSError, ValueError) as e:
            raise DatasetError("%s: cannot read its tables: %s" % (path, e))
        missing = set(POINT_COLUMNS) - set(points.columns) | {"setting", "oversubscribed"} - set(ctab.columns)
        if missing:
            raise DatasetError("%s: a report from an older rb-report (no %s): run rb-report on "
                               "its results again" % (path, ", ".join(sorted(missing))))
        _check_numbers(path, points)
        for col, default in (("busy", "unknown"), ("unit", "")):
            if col not in points:
                points[col] = default
        # Claims tables of an rb-report before the seven-claim table.
        for col, default in (("busy", "unknown"), ("launches", "-"), ("exact", False),
                             ("platform", ""), ("model", ""), ("data", "measured")):
            if col not in ctab:
                ctab[col] = default
        return points, ctab, "report %s" % path
    archive = load.load([path])
    if not archive.runs:
        reasons = "; ".join(r.message() for r in archive.refusals[:3])
        raise DatasetError("%s: nothing usable%s" % (path, " (%s)" % reasons if reasons else ""))
    rows = micro.add_group(micro.micro_rows(archive))
    agg = micro.summarise_repeats(rows)
    recs = training.records(archive)
    curv, phases = training.curves(recs), training.phase_times(recs)
    summ, chosen = training.summary(curv, phases)
    truns, _ = training.runs(curv, phases)
    ctab, _ = claim_table.claims_table(agg, summ, truns, chosen)
    return verdict_points(agg, summ), ctab, "%d run(s) in %s" % (len(archive.runs), path)


def _unique(points):
    """Points keyed by (domain, key, variant); a key seen twice (data pooled
    from two machines) keeps the first and is counted."""
    dup = points.duplicated(["domain", "key", "variant"])
    return points[~dup].set_index(["domain", "key", "variant"]), int(dup.sum())


def _pairs(points):
    """{(domain, key, a, b): (stated sign, median sign, rec a, rec b)} for
    every pair of variants at a point (a < b by name); sign -1: a is
    smaller; stated: significant and beyond the 5% minimum effect."""
    out = {}
    for (domain, key), sub in points.reset_index().groupby(["domain", "key"]):
        sub = sub.sort_values("variant")
        recs = list(sub.itertuples(index=False))
        for i, a in enumerate(recs):
            for b in recs[i + 1:]:
                sig = stats.differ(a.median, a.ci_low, a.ci_high, b.median, b.ci_low, b.ci_high)
                out[(domain, key, a.variant, b.variant)] = (sig, int(np.sign(a.median - b.median)), a, b)
    return out


def _order(sign, a, b):
    return "%s < %s" % (a, b) if sign < 0 else "%s > %s" % (a, b) if sign > 0 else "%s = %s" % (a, b)


def _fmt(v):
    return "-" if v is None or not np.isfinite(v) else "%.4g" % v


def _side(rec):
    return "%s %s [%s, %s] n=%d / %s %s [%s, %s] n=%d" % (
        rec[0].variant, _fmt(rec[0].median), _fmt(rec[0].ci_low), _fmt(rec[0].ci_high), rec[0].n,
        rec[1].variant, _fmt(rec[1].median), _fmt(rec[1].ci_low), _fmt(rec[1].ci_high), rec[1].n)


def _caveats(recs_a, recs_b):
    """Why a contradiction may be the machine: busy runs, one-launch points."""
    notes = []
    for name, recs in (("A", recs_a), ("B", recs_b)):
        if any(str(getattr(r, "busy", "")) == "yes" for r in recs):
            notes.append("a busy run in %s (other processes or stolen CPU time)" % name)
        if any(str(getattr(r, "unit", "")) not in ("", "launch", "nan") for r in recs):
            notes.append("one launch in %s (its interval leaves out launch-to-launch "
                         "variation)" % name)
    return notes


def difference_contradictions(pa, pb):
    """Rows for every pair that both data sets call significant and beyond
    the minimum effect, in opposite directions; and the number of pairs
    compared and found so in each."""
    rows, compared, significant = [], 0, {"A": 0, "B": 0}
    for pair in sorted(set(pa) & set(pb)):
        compared += 1
        sa, sb = pa[pair][0], pb[pair][0]
        significant["A"] += sa != 0
        significant["B"] += sb != 0
        if sa != 0 and sb == -sa:
            domain, key, a, b = pair
            notes = _caveats(pa[pair][2:], pb[pair][2:])
            rows.append({"what": "difference", "where": "%s: %s" % (domain, key),
                         "item": "%s in A, %s in B%s" % (_order(sa, a, b), _order(sb, a, b),
                                                          " (%s)" % "; ".join(notes) if notes else ""),
                         "A": _side(pa[pair][2:]), "B": _side(pb[pair][2:])})
    return rows, compared, significant


def _headlines(ctab):
    rows = claim_table.headline_rows(ctab)
    return {(_claim_key(r["claim"]), r["data"], str(r.get("platform", "")),
             str(r.get("model", "") or "")): r for _, r in rows.iterrows()}


def _busy_only(ctab):
    """Keys of the rows that would be headline numbers but for a busy
    machine."""
    if ctab.empty or "busy" not in ctab:
        return set()
    rows = claim_table.headline_rows(ctab.assign(busy=ctab["busy"].replace("yes", "no")))
    busy = ctab.loc[rows.index, "busy"] == "yes"
    return {(_claim_key(r["claim"]), r["data"], str(r.get("platform", "")),
             str(r.get("model", "") or "")) for _, r in rows[busy].iterrows()}


def _claim_key(claim):
    """A joint claim at parity is one claim whichever setting reached
    parity: 'S2 at parity (width ...)' -> 'S2 at parity' (a setting that
    differs between A and B is then a contradiction of its own)."""
    for head in ("S2 at parity", "GossipGraD at parity"):
        if str(claim).startswith(head):
            return head
    return claim


def _key_text(key):
    claim, data, plat, model = key
    extra = ", ".join(x for x in (plat if plat not in ("", "nan", "-") else "",
                                  model if model not in ("", "nan") else "") if x)
    return "%s (%s%s)" % (claim, data, ", " + extra if extra else "")


def headline_contradictions(ca, cb):
    """Rows for every headline number on which A and B disagree (see the
    module's text), or present on one side only; and the claims checked and
    left unchecked."""
    ha, hb = _headlines(ca), _headlines(cb)
    busy_a, busy_b = _busy_only(ca), _busy_only(cb)
    rows, checked, unchecked = [], [], []
    for key in sorted(set(ha) | set(hb)):
        a, b = ha.get(key), hb.get(key)
        item = _key_text(key)
        if (a is None and key in busy_a) or (b is None and key in busy_b):
            # the number is there, from a busy machine: not comparable, not contradicting
            unchecked.append(item + " (busy in %s)" % ("A" if a is None else "B"))
            continue
        if a is None or b is None:
            rows.append({"what": "headline", "where": "papers' setting", "item": item,
                         "A": _claim_text(a), "B": _claim_text(b)})
            continue
        if a["claim"] != b["claim"]:
            rows.append({"what": "headline", "where": "papers' setting",
                         "item": item + ": the setting at parity differs",
                         "A": a["claim"], "B": b["claim"]})
            continue
        lo, hi = a["measured_low"], a["measured_high"]
        if not stats.has_interval(lo, hi):
            unchecked.append(item)
            continue
        checked.append(item)
        blo, bhi = b["measured_low"], b["measured_high"]
        am, bm = a["measured_median"], b["measured_median"]
        if stats.has_interval(blo, bhi):
            clash = stats.differ(am, lo, hi, bm, blo, bhi) != 0
            why = "A's and B's intervals do not overlap, medians more than 5% apart"
        else:
            clash = stats.differ(am, lo, hi, bm, bm, bm) != 0
            why = "B outside A's interval, more than 5% from A's median"
        if clash:
            rows.append({"what": "headline", "where": "papers' setting", "item": item + ": " + why,
                         "A": _claim_text(a), "B": _claim_text(b)})
    return rows, checked, unchecked


def _claim_text(r):
    return "no headline number" if r is None else claim_table.format_value(r)


def compare(path_a, path_b, out):
    """Print the comparison to out; return 0 (no contradiction) or 1."""
    pa, ca, da = dataset(path_a)
    pb, cb, db = dataset(path_b)
    (ua, dup_a), (ub, dup_b) = _unique(pa), _unique(pb)
    pairs_a, pairs_b = _pairs(ua), _pairs(ub)
    diff, compared, significant = difference_contradictions(pairs_a, pairs_b)
    head, checked, unchecked = headline_contradictions(ca, cb)
    common = len(set(ua.index) & set(ub.index))
    print("A: %s (%d points)\nB: %s (%d points)" % (da, len(ua), db, len(ub)), file=out)
    print("compared: %d points in both (%d only in A, %d only in B), %d pairs of reducers; "
          "significant and beyond 5%%: %d in A, %d in B" % (common, len(ua) - common, len(ub) - common, compared,
                                             significant["A"], significant["B"]), file=out)
    for name, dup in (("A", dup_a), ("B", dup_b)):
        if dup:
            print("note: %s holds %d point(s) twice (runs from different machines or versions "
                  "pooled); the first was used" % (name, dup), file=out)
    print("headline numbers checked: %s" % (", ".join(checked) or "none"), file=out)
    for name, pts in (("A", ua), ("B", ub)):
        if "busy" in pts and (pts["busy"] == "yes").any():
            print("note: %s holds %d point(s) measured on a busy machine" % (
                name, int((pts["busy"] == "yes").sum())), file=out)
    if unchecked:
        print("unchecked (A has no interval: fewer than %d repetitions; or one side's number "
              "comes from a busy machine): %s"
              % (stats.MIN_REPETITIONS, ", ".join(unchecked)), file=out)
    rows = head + diff
    if not rows:
        print("no contradiction", file=out)
        return 0
    print("%d contradiction(s):" % len(rows), file=out)
    for r in rows:
        print("- %s at %s: %s\n    A: %s\n    B: %s" % (r["what"], r["where"], r["item"], r["A"], r["B"]),
              file=out)
    return 1
