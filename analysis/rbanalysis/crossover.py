"""Where the papers' claims cross over as the link changes, from the
measurements over an emulated network (jobscripts/emulated/sweep) at
several link rates and the cost model (docs/cost-model.md).

S2 (rate_crossover): at the papers' setting, the link rate below which s2
beats the fastest validated sparse baseline (the s2_speedup claim's
baseline) by a factor T: T = 1 (s2 faster) and T = 1.8 (the paper's
speedup).  Per configuration (nodes, ranks, shape, density, s2 variant):

  - *interpolated* where the measured speedups cross T between two
    measured rates: linearly in log(rate) and log(speedup) between them;
  - *extrapolated by the model* where they do not (T is met at every
    measured rate, or at none): each reducer's time at rate R is the
    alpha-beta model's t = t_rest + W x 8 / R, with W its busiest rank's
    bytes per call (wire.busiest_bytes: the bandwidth term of the model's
    collectives) and t_rest what the nearest measured rate left once the
    wire floor is taken off: latency, local work and the CPU as measured
    there, at least the model's own latency and local terms (at a rate
    where the wire took the whole time the difference is noise);
  - the *model alone* beside it: the same with t_rest from rb_micro's model
    column (t_model_us less W x the archive's model_beta_s_per_byte): what
    the cost model predicts without the measured CPU time.

GossipGraD (compute_90): with the exchange not overlapped with compute,
efficiency = c / (c + x) for c seconds of compute and an exchange of x
per step, so it is >= 90% exactly when c >= 9 x.  x = the gossip point's
median time less the `none` point's (both include rb_micro --compute), per
measured rate, with the interval [gossip low - none high, gossip high -
none low]; beside it the model's exchange at that link rate.
"""

import math

import numpy as np
import pandas as pd

from . import claims, stats, wire
from .runmeta import combine_busy, is_emulated_platform
from .micro import usable_baselines

THRESHOLDS = ((1.0, "s2 faster than the best baseline"),
              (1.8, "the paper's 1.8x"))
EFFICIENCY = 0.9
# Rates the model extrapolates over, bit/s: 1 Mbit/s .. 1 Tbit/s.
GRID = np.logspace(6, 12, 1201)
FAMILY = ["nodes", "ranks", "layout", "cols", "density", "size_bytes", "s2_variant"]


def rate_text(bps):
    """1e9 -> '1 Gbit/s', 4.2e9 -> '4.2 Gbit/s'."""
    if not (isinstance(bps, (int, float)) and np.isfinite(bps)) or bps <= 0:
        return "-"
    for unit, div in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= div:
            return "%.3g %s" % (bps / div, unit)
    return "%.3g bit/s" % bps


# ------------------------------------------------------------ S2 vs rate

def emulated_points(points):
    """The per-point rows (claims.s2_points, gossip_points) measured over
    an emulated network with a known link rate."""
    if points.empty or "link_bps" not in points:
        return points.iloc[0:0]
    keep = points["platform"].map(is_emulated_platform) & np.isfinite(
        points["link_bps"].astype(float))
    return points[keep]


def _interpolate(rates, values, t):
    """The rate at which values (over ascending rates) fall through t,
    between the highest rate where they are >= t and the next one up
    (log-log); None when they never fall through it inside the rates, or
    are >= t again at the highest rate (a crossing, if any, lies above)."""
    if len(values) and np.isfinite(values[-1]) and values[-1] >= t:
        return None
    for i in range(len(rates) - 2, -1, -1):
        a, b = values[i], values[i + 1]
        if np.isfinite(a) and np.isfinite(b) and a >= t > b and a > 0 and b > 0:
            x0, x1 = math.log(rates[i]), math.log(rates[i + 1])
            y0, y1 = math.log(a / t), math.log(b / t)
            return math.exp(x0 + (x1 - x0) * y0 / (y0 - y1))
    return None


def _model_times(rows, rest_of):
    """{variant: (t_rest us, W bytes)} of agg rows: t = t_rest + W x 8/R."""
    out = {}
    for _, r in rows.iterrows():
        w = wire.busiest_bytes(r)
        rest = rest_of(r, w)
        if np.isfinite(w) and np.isfinite(rest):
            out[r["variant"]] = (max(rest, 0.0), w)
    return out


def _measured_rest(r, w):
    """What the measured time leaves once the wire floor is taken off, at
    least the model's own latency and local terms (where the wire took the
    whole time, the difference is noise)."""
    rest = r["t_avg_us_median"] - wire.floor_us(w, r["link_bps"])
    model = _model_rest(r, w)
    return max(rest, model) if np.isfinite(model) else rest


def _model_rest(r, w):
    beta = r.get("model_beta_s_per_byte_median", np.nan)
    return r.get("t_model_us_median", np.nan) - w * beta * 1e6


def _speedup_curve(times, s2_variant, rates):
    """Fastest baseline's model time / s2's at each rate (NaN without)."""
    if s2_variant not in times:
        return np.full(len(rates), np.nan)
    rest, w = times[s2_variant]
    s2 = rest + w * 8e6 / rates
    base = [v for k, v in times.items() if k != s2_variant]
    if not base:
        return np.full(len(rates), np.nan)
    best = np.min([b_rest + b_w * 8e6 / rates for b_rest, b_w in base], axis=0)
    return best / s2


def _point_rows(agg, p):
    """The agg rows of an s2 point: s2's variant and the validated sparse
    baselines timed at that group and size."""
    sub = agg[(agg["gid"] == p["gid"]) & (agg["size_bytes"] == p["size_bytes"])]
    base = usable_baselines(sub, "t_avg_us_median")
    return pd.concat([sub[sub["variant"] == p["s2_variant"]], base])


def _crossing_on_grid(curve, t, upward, start=None):
    """The rate on GRID where a model speedup curve falls through t (>= t
    below it, < t above it): going up from start (the lowest such rate
    above it), or down from it (the highest below it); None if none."""
    idx = [i for i in range(len(GRID) - 1)
           if curve[i] >= t and curve[i + 1] < t
           and (start is None or (GRID[i + 1] > start if upward else GRID[i] < start))]
    if not idx:
        return None
    return float(GRID[idx[0] if upward else idx[-1]])


EVERY_RATE, NO_RATE = "at every rate", "at no rate"


def _limit(curve, t, upward):
    """(where, why) of a model curve that never falls through t in that
    direction: its limit as the wire becomes free (upward) or dominates."""
    end = curve[-1] if upward else curve[0]
    if not np.isfinite(end):
        return "undetermined", "no model (times or bytes missing)"
    if upward and end >= t:
        return EVERY_RATE, "%.2fx as the wire becomes free" % end
    if not upward and end < t:
        return NO_RATE, "%.2fx, its byte ratio, as the wire dominates" % end
    return "undetermined", "no crossing found"


def _extrapolate(agg, anchor, t, upward):
    """(rate, where, how) from the model anchored at one measured point."""
    times = _model_times(_point_rows(agg, anchor), _measured_rest)
    curve = _speedup_curve(times, anchor["s2_variant"], GRID)
    rate = _crossing_on_grid(curve, t, upward, start=float(anchor["link_bps"]))
    how = "extrapolated by the model from %s" % rate_text(anchor["link_bps"])
    if rate is None:
        where, why = _limit(curve, t, upward)
        return np.nan, where, "%s: %s" % (how, why)
    return rate, "below %s" % rate_text(rate), how


def _model_alone(agg, fam, t):
    """(rate, where) of the crossing by rb_micro's model column alone
    (median over the family's measured rates, which should agree: it is a
    model)."""
    found, curve = [], None
    for _, p in fam.iterrows():
        curve = _speedup_curve(_model_times(_point_rows(agg, p), _model_rest),
                               p["s2_variant"], GRID)
        rate = _crossing_on_grid(curve, t, upward=False)
        if rate is not None:
            found.append(rate)
    if found:
        rate = float(np.median(found))
        return rate, "below %s" % rate_text(rate)
    if curve is None or not np.isfinite(curve).any():
        return np.nan, "no model"
    return np.nan, EVERY_RATE if np.nanmin(curve) >= t else NO_RATE


def rate_crossover(agg, s2p=None):
    """One row per emulated configuration at the papers' setting and
    threshold (module text)."""
    s2p = claims.s2_points(agg) if s2p is None else s2p
    pts = emulated_points(s2p)
    if pts.empty:
        return pd.DataFrame()
    pts = pts[pts["setting"] == "paper"]
    rows = []
    for key, fam in pts.groupby(FAMILY, sort=True, dropna=False):
        fam = fam.sort_values("link_bps").drop_duplicates("link_bps")
        rates = fam["link_bps"].astype(float).to_numpy()
        for t, what in THRESHOLDS:
            rows.append(dict(zip(FAMILY, key), **_family_row(agg, fam, rates, t, what)))
    return pd.DataFrame(rows)


def _family_row(agg, fam, rates, t, what):
    sp = fam["speedup"].astype(float).to_numpy()
    rate = _interpolate(rates, sp, t)
    if rate is not None:
        i = int(np.searchsorted(rates, rate))
        how = "interpolated between %s and %s" % (rate_text(rates[i - 1]), rate_text(rates[i]))
        where = "below %s" % rate_text(rate)
    elif np.isfinite(sp[-1]) and sp[-1] >= t:
        rate, where, how = _extrapolate(agg, fam.iloc[-1], t, upward=True)
        below = [rate_text(r) for r, v in zip(rates, sp) if v < t]
        if below:
            how += " (not monotonic: below %gx at %s)" % (t, ", ".join(below))
    else:
        rate, where, how = _extrapolate(agg, fam.iloc[0], t, upward=False)
    model_rate, model_where = _model_alone(agg, fam, t)
    lo = _interpolate(rates, fam["speedup_low"].astype(float).to_numpy(), t)
    hi = _interpolate(rates, fam["speedup_high"].astype(float).to_numpy(), t)
    return {
        "threshold": t, "meaning": what,
        "rates": ", ".join(rate_text(r) for r in rates),
        "speedups": "; ".join("%s %s" % (rate_text(r), _speedup_cell(p))
                              for r, (_, p) in zip(rates, fam.iterrows())),
        "crossover_bps": rate if rate is not None else np.nan,
        "crossover_low_bps": lo if lo is not None else np.nan,
        "crossover_high_bps": hi if hi is not None else np.nan,
        "where": where, "how": how, "model_alone_bps": model_rate, "model_alone": model_where,
        "cpu_bound_at": ", ".join(rate_text(r) for r, (_, p) in zip(rates, fam.iterrows())
                                  if _cpu_bound(p)) or "none",
        "busy": combine_busy(fam["busy"]),
        "oversubscribed": "yes" if fam["oversubscribed"].any() else "no",
        "launches": int(fam["launches"].min()),
    }


def rate_curves(agg, s2p=None):
    """The speedups behind rate_crossover, for its figure (one row per
    configuration, source and rate): `measured` (each measured rate, with
    its interval), `model` (extrapolated from the lowest measured rate
    downwards and from the highest upwards, a decade each way) and `model
    alone` (rb_micro's model column, over the same span)."""
    s2p = claims.s2_points(agg) if s2p is None else s2p
    pts = emulated_points(s2p)
    pts = pts[pts["setting"] == "paper"] if not pts.empty else pts
    rows = []
    for key, fam in (pts.groupby(FAMILY, sort=True, dropna=False) if not pts.empty else []):
        fam = fam.sort_values("link_bps").drop_duplicates("link_bps")
        conf = dict(zip(FAMILY, key))
        for _, p in fam.iterrows():
            rows.append(dict(conf, source="measured", link_bps=float(p["link_bps"]),
                             speedup=p["speedup"], low=p["speedup_low"], high=p["speedup_high"]))
        lo, hi = float(fam["link_bps"].iloc[0]), float(fam["link_bps"].iloc[-1])
        span = GRID[(GRID >= lo / 10) & (GRID <= hi * 10)]
        for segment, anchor, side in (("below", fam.iloc[0], span <= lo),
                                      ("above", fam.iloc[-1], span >= hi)):
            curve = _speedup_curve(_model_times(_point_rows(agg, anchor), _measured_rest),
                                   anchor["s2_variant"], span[side])
            rows += [dict(conf, source="model", segment=segment, link_bps=float(r),
                          speedup=float(v)) for r, v in zip(span[side], curve)]
        alone = _speedup_curve(_model_times(_point_rows(agg, fam.iloc[-1]), _model_rest),
                               fam.iloc[-1]["s2_variant"], span)
        rows += [dict(conf, source="model alone", link_bps=float(r), speedup=float(v))
                 for r, v in zip(span, alone)]
    return pd.DataFrame(rows)


def _speedup_cell(p):
    return "%.2fx" % p["speedup"] if np.isfinite(p["speedup"]) else "-"


def _cpu_bound(p):
    """s2 or its baseline CPU- or latency-bound at that point (wire.py)."""
    return any(np.isfinite(s) and s < wire.CPU_BOUND_SHARE
               for s in (p.get("s2_wire_share", np.nan), p.get("baseline_wire_share", np.nan)))


def crossover_text(row):
    """'below 4.2 Gbit/s (interpolated between 1 Gbit/s and 10 Gbit/s)',
    'at every rate (extrapolated by the model from 10 Gbit/s: ...)'."""
    text = "%s (%s" % (row["where"], row["how"])
    if np.isfinite(row["crossover_low_bps"]) and np.isfinite(row["crossover_high_bps"]):
        text += "; from the interval ends %s..%s" % (rate_text(row["crossover_low_bps"]),
                                                   rate_text(row["crossover_high_bps"]))
    return text + ")"


# ------------------------------------------------------ gossip vs compute

def compute_90(agg, gp=None):
    """One row per emulated gossip --compute point (module text)."""
    gp = claims.gossip_points(pd.DataFrame(), agg) if gp is None else gp
    pts = emulated_points(gp)
    if pts.empty:
        return pd.DataFrame()
    rows = []
    for _, p in pts.iterrows():
        sub = agg[(agg["gid"] == p["gid"]) & (agg["size_bytes"] == p["size_bytes"])]
        g, n = sub[sub["variant"] == p["variant"]], sub[sub["reducer"] == "none"]
        if g.empty or n.empty:
            continue
        rows.append(_gossip_row(p, g.iloc[0], n.iloc[0]))
    out = pd.DataFrame(rows)
    return out.sort_values(["nodes", "ranks", "link_bps"]).reset_index(drop=True) if rows else out


def _gossip_row(p, g, n):
    x = g["t_avg_us_median"] - n["t_avg_us_median"]
    x_lo = x_hi = np.nan
    if stats.has_interval(g["t_avg_us_ci_low"], g["t_avg_us_ci_high"]) and stats.has_interval(
            n["t_avg_us_ci_low"], n["t_avg_us_ci_high"]):
        x_lo = g["t_avg_us_ci_low"] - n["t_avg_us_ci_high"]
        x_hi = g["t_avg_us_ci_high"] - n["t_avg_us_ci_low"]
    w = wire.busiest_bytes(g)
    link = float(p["link_bps"])
    model_x = _model_exchange(g, w, link)
    return {
        "gid": p["gid"], "nodes": p.get("nodes", np.nan), "ranks": p["ranks"], "link_bps": link,
        "rate": rate_text(link), "size_bytes": g["size_bytes"], "variant": p["variant"],
        "compute_s": p["compute_s"], "t_none_us": n["t_avg_us_median"],
        "t_gossip_us": g["t_avg_us_median"], "exchange_us": x, "exchange_low_us": x_lo,
        "exchange_high_us": x_hi, "wire_floor_us": wire.floor_us(w, link),
        "wire_share": wire.share(wire.floor_us(w, link), x),
        "compute_90_s": 9 * x * 1e-6,
        "compute_90_low_s": 9 * x_lo * 1e-6, "compute_90_high_s": 9 * x_hi * 1e-6,
        "efficiency": p["compute_efficiency"],
        "model_exchange_us": model_x, "model_compute_90_s": 9 * model_x * 1e-6,
        "busy": p["busy"], "oversubscribed": "yes" if p["oversubscribed"] else "no",
        "launches": p["launches"],
    }


def _model_exchange(g, w, link):
    """The model's exchange at the link's rate: rb_micro's model time less
    the compute, with its bandwidth term moved from the archive's beta to
    8 / link."""
    t = g.get("t_model_us_median", np.nan) - 1e6 * float(g.get("compute_s", 0) or 0)
    beta = g.get("model_beta_s_per_byte_median", np.nan)
    return t - w * beta * 1e6 + wire.floor_us(w, link)


def compute_90_text(row):
    """'2.0 s [1.9 s, 2.1 s] (exchange 223 ms at 1 Gbit/s)'."""
    def s(v):
        return "%.3g s" % v if np.isfinite(v) else "-"
    ci = (" [%s, %s]" % (s(row["compute_90_low_s"]), s(row["compute_90_high_s"]))
          if np.isfinite(row["compute_90_low_s"]) else "")
    return "%s%s (exchange %.3g ms at %s)" % (s(row["compute_90_s"]), ci,
                                              row["exchange_us"] / 1e3, row["rate"])


# ------------------------------------------------ notes for the claims rows

def s2_notes(table):
    """A context for the s2_speedup rows (claim_table.py's _summarise): at points
    over an emulated network, whether the wire explains their time, and
    where the speedup crosses 1x and 1.8x as the link rate changes."""
    def notes(points):
        pts = emulated_points(points)
        if pts.empty:
            return ""
        parts = [_cpu_note(pts)]
        for _, p in pts.drop_duplicates(["nodes", "size_bytes", "s2_variant"]).iterrows():
            parts.append(_crossing_note(table, p))
        return "; ".join(x for x in parts if x)
    return notes


def _cpu_note(pts):
    bound = pts[[_cpu_bound(p) for _, p in pts.iterrows()]]
    if bound.empty:
        return ""
    p = bound.iloc[0]
    return ("%s at %s: the wire floor is %s of s2's time and %s of %s's, so the CPU (shared by "
            "every node of the emulated cluster) or latency, not the link, sets it"
            % (wire.CPU_BOUND, rate_text(p["link_bps"]), _pct(p["s2_wire_share"]),
               _pct(p["baseline_wire_share"]), p["fastest_baseline"]))


def _pct(v):
    return "%.0f%%" % (100 * v) if np.isfinite(v) else "?"


def _crossing_note(table, p):
    if table.empty:
        return ""
    mine = table[(table["nodes"] == p["nodes"]) & (table["size_bytes"] == p["size_bytes"])
                 & (table["s2_variant"] == p["s2_variant"])]
    said = ["%s %s" % ("faster than the best baseline" if r["threshold"] == 1.0
                       else "%gx" % r["threshold"], crossover_text(r))
            for _, r in mine.iterrows()]
    return ("over the link rates measured at %s nodes, s2 is %s (*Link-rate crossovers*)"
            % (_int(p["nodes"]), " and ".join(said))) if said else ""


def _int(v):
    try:
        return "%d" % int(v)
    except (TypeError, ValueError):
        return "?"


def gossip_notes(table):
    """A context for the gossip_efficiency rows: at points over an
    emulated network, the compute per step that 90% would need there."""
    def notes(points):
        pts = emulated_points(points)
        if pts.empty or table.empty:
            return ""
        parts = []
        for _, p in pts.iterrows():
            r = table[(table["gid"] == p.get("gid")) & (table["size_bytes"] == p.get("size_bytes"))
                      & (table["variant"] == p["variant"])]
            if len(r):
                r = r.iloc[0]
                parts.append("at %s gossip's exchange takes %.3g ms, so >= 90%% needs >= %s of "
                             "compute per step (this point: %g s; *Link-rate crossovers*)"
                             % (r["rate"], r["exchange_us"] / 1e3,
                                compute_90_text(r).split(" (")[0], r["compute_s"]))
        return "; ".join(parts)
    return notes


# ---------------------------------------------------------------- report

HEADING = "Link-rate crossovers (emulated network)"


def section(doc, cpoints, agg, draw):
    """The report's section: the two tables and the S2 figure (drawn by
    draw(doc, fn, *args), rb-report's), or a line saying the data hold no
    emulated-network point.  Returns the figures drawn."""
    s2x = cpoints.get("s2_rate", pd.DataFrame())
    g90 = cpoints.get("gossip_compute_90", pd.DataFrame())
    doc.heading(2, HEADING)
    if s2x.empty and g90.empty:
        doc.para("No rb_micro point of these data was measured over an emulated network "
                 "(jobscripts/emulated/sweep) at the papers' setting or with gossip and "
                 "--compute.")
        return []
    figs = []
    doc.para("Measured over the links of an emulated cluster (jobscripts/emulated/: network "
             "namespaces of this one machine, links shaped by tbf). **S2**: the link rate below "
             "which s2 beats the fastest validated sparse baseline at the papers' setting (1x), "
             "and below which it reaches the paper's 1.8x: *interpolated* (log-log) where the "
             "measured speedups cross between two measured rates, else *extrapolated by the "
             "model* from the nearest measured rate (each reducer: the time left there once its "
             "wire floor is taken off, at least the cost model's latency and local terms, plus "
             "its busiest rank's bytes x 8 / rate); *model alone*: the same from rb_micro's "
             "cost-model column (docs/cost-model.md) without the measured CPU time. "
             "**GossipGraD**: with the exchange not overlapped, efficiency = c / (c + x) for c "
             "of compute and x of exchange per step, so >= 90% needs c >= 9x: x = gossip's time "
             "less `none`'s at the same --compute, per measured rate. `CPU-bound at`: rates "
             "where the wire floor is under half of s2's or the baseline's time (wire.py): "
             "there the 2-core machine, not the link, sets the times.")
    if not s2x.empty:
        doc.heading(3, "S2: the link rate below which it beats the best baseline")
        doc.table(_s2_shown(s2x), "crossover_s2_rate", columns={
            "nodes": "nodes", "ranks": "ranks", "size_bytes": "size", "s2_variant": "s2",
            "meaning": "threshold", "speedups": "measured speedup", "crossover": "crossover",
            "model_alone": "model alone", "cpu_bound_at": "CPU-bound at", "busy": "busy",
            "oversubscribed": "oversub.", "launches": "launches"})
        curves = rate_curves(agg, cpoints.get("s2"))
        doc.csv(curves, "crossover_s2_curves")
        from . import figures   # matplotlib: only when there is something to draw
        figs += draw(doc, figures.rate_crossover, curves, doc.outdir)
    if not g90.empty:
        doc.heading(3, "GossipGraD: the compute per step below which efficiency drops under 90%")
        doc.table(_gossip_shown(g90), "crossover_gossip_compute", columns={
            "nodes": "nodes", "ranks": "ranks", "rate": "link", "size_bytes": "size",
            "compute_s": "compute s", "exchange_text": "exchange ms", "wire_text": "wire share",
            "efficiency_text": "efficiency", "compute_90_text": "90% needs compute >=",
            "model_text": "model: compute >=", "busy": "busy",
            "oversubscribed": "oversub.", "launches": "launches"})
    return figs


def _s2_shown(s2x):
    return s2x.assign(crossover=[crossover_text(r) for _, r in s2x.iterrows()])


def _gossip_shown(g90):
    def ms(v):
        return "%.4g" % (v / 1e3) if np.isfinite(v) else "-"
    return wire.annotate(g90, "wire_share", "-").assign(
        exchange_text=["%s [%s, %s]" % (ms(x), ms(lo), ms(hi)) if np.isfinite(lo) else ms(x)
                       for x, lo, hi in zip(g90["exchange_us"], g90["exchange_low_us"],
                                            g90["exchange_high_us"])],
        efficiency_text=["%.1f%%" % (100 * e) if np.isfinite(e) else "-"
                         for e in g90["efficiency"]],
        compute_90_text=[compute_90_text(r).split(" (")[0] for _, r in g90.iterrows()],
        model_text=["%.3g s" % v if np.isfinite(v) else "-" for v in g90["model_compute_90_s"]])
