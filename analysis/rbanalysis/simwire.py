"""The report's "SimGrid against the wire" section: the same rb_micro
points measured on a network that the archives describe (network_*
attributes, e.g. an emulated cluster's shaped links) and simulated on a
SimGrid platform fitted to that network (jobscripts/sim/platform-from-wire,
whose <prop rb_network_*> name it; runmeta.network_origin), matched by that
origin, reducer variant, data (device, input, layout, overlap, density,
columns), ranks and size.  Per point: the measured and predicted time per
call, and the error of the prediction, (predicted - measured) / measured,
of the minimums over launches (each launch's t_avg_us; the launch that
other work on the machine disturbed least) and of the medians.
section(doc, points(rows)) writes it; report_sections.section_micro calls it and draws
figures.sim_vs_wire."""

import numpy as np
import pandas as pd

KEY = ["origin", "device", "input", "layout", "overlap", "density", "cols", "ranks",
       "variant", "size_bytes"]
# Where docs/simgrid.md sets the bar (1 Gbit, 2-4 nodes, dense and the exact
# sparse reducers): median and worst |error| of the minimums.
TARGET_MEDIAN = 0.15
TARGET_WORST = 0.35
# Calls of at least this many us (measured) are counted apart: there the
# wire, not a rank's wait for a core (a scheduler slice is ~1-4 ms on a
# loaded 2-core machine), makes most of the time.
LONG_CALL_US = 10000.0


def _launches(rows):
    """One value per point and launch (run_id): its t_avg_us (the median of
    its repetitions, if rb_micro --repeat made several), whether the launch
    ran on a busy machine, other processes' CPU during it."""
    g = rows.groupby(KEY + ["run_id"], dropna=False)
    return pd.DataFrame({"t": g["t_avg_us"].median(),
                         "busy": g["busy"].first() if "busy" in rows else "unknown",
                         "other": g["other_cpu_during"].first()
                         if "other_cpu_during" in rows else np.nan}).reset_index()


def _per_point(launch, prefix):
    """Minimum, median, maximum over a point's launches and their count."""
    g = launch.groupby(KEY, dropna=False)
    out = pd.DataFrame({prefix + "_min": g["t"].min(), prefix + "_median": g["t"].median(),
                        prefix + "_max": g["t"].max(), prefix + "_launches": g["t"].size()})
    if prefix == "meas":
        out["meas_busy"] = g["busy"].agg(lambda s: int((s == "yes").sum()))
        out["meas_other_cpu"] = g["other"].median()
    return out.reset_index()


def points(rows):
    """Matched points, one row each: measured and predicted minimum and
    median over launches, spread (max / min) of the measured launches, the
    busy ones, and the errors; empty when the data hold no such pair."""
    if rows.empty or "origin" not in rows:
        return pd.DataFrame()
    d = rows[(rows["origin"] != "") & np.isfinite(rows["t_avg_us"].astype(float))]
    meas, sim = d[d["kind"] == "measured"], d[d["kind"] == "simulated"]
    if meas.empty or sim.empty:
        return pd.DataFrame()
    both = _per_point(_launches(meas), "meas").merge(_per_point(_launches(sim), "sim"), on=KEY)
    if both.empty:
        return both
    both["meas_spread"] = both["meas_max"] / both["meas_min"]
    both["error_min"] = both["sim_min"] / both["meas_min"] - 1
    both["error_median"] = both["sim_median"] / both["meas_median"] - 1
    both["rate"] = [origin_value(o, "link_rate") for o in both["origin"]]
    both["setting"] = [setting(r) for _, r in both.iterrows()]
    return both.sort_values(["origin", "ranks", "setting", "variant", "size_bytes"]).reset_index(drop=True)


def origin_value(origin, key):
    for part in str(origin).split("; "):
        if part.startswith(key + "="):
            return part.split("=", 1)[1]
    return ""


def setting(r):
    """The data of a point in short: 'element d=0.01' or 'row x256 d=0.02'."""
    lay = str(r["layout"])
    cols = int(r["cols"]) if str(r["cols"]).isdigit() and int(r["cols"]) > 1 else None
    return "%s%s d=%g" % (lay, " x%d" % cols if cols else "", float(r["density"]))


def summary(pts):
    """Per network (rate) and rank count: points, median and worst |error|
    of the minimums (the worst named), the same over the calls of at least
    LONG_CALL_US, median |error| of the medians, and whether the targets
    hold."""
    rows = []
    for (origin, ranks), s in pts.groupby(["origin", "ranks"], sort=True):
        err = s["error_min"].abs()
        worst = s.loc[err.idxmax()]
        med = float(err.median())
        long_ = err[s["meas_min"] >= LONG_CALL_US]
        rows.append({"rate": origin_value(origin, "link_rate"), "ranks": int(ranks),
                     "points": len(s), "median_abs_err": med, "worst_abs_err": float(err.max()),
                     "long_points": len(long_),
                     "long_median_abs_err": float(long_.median()) if len(long_) else np.nan,
                     "long_worst_abs_err": float(long_.max()) if len(long_) else np.nan,
                     "worst_point": "%s %s %s" % (worst["variant"], worst["setting"],
                                                  size_text(worst["size_bytes"])),
                     "median_abs_err_medians": float(s["error_median"].abs().median()),
                     "within_15": float((err <= TARGET_MEDIAN).mean()),
                     "targets": "met" if med <= TARGET_MEDIAN and err.max() <= TARGET_WORST
                     else "missed"})
    return pd.DataFrame(rows)


def size_text(b):
    b = float(b)
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f:
            return "%g %s" % (b / f, unit)
    return "%g B" % b


def per_reducer(pts):
    """Per rate, ranks and reducer: median and worst |error| of the minimums."""
    g = pts.assign(abs_err=pts["error_min"].abs()).groupby(["rate", "ranks", "variant"], sort=True)
    return pd.DataFrame({"points": g.size(), "median_abs_err": g["abs_err"].median(),
                         "worst_abs_err": g["abs_err"].max(),
                         "median_err": g["error_min"].median()}).reset_index()


def per_size(pts):
    """Per rate, ranks, data and size: median and worst |error| over the
    reducers, and the median measured time: where the model holds."""
    g = pts.assign(abs_err=pts["error_min"].abs()).groupby(
        ["rate", "ranks", "setting", "size_bytes"], sort=True)
    return pd.DataFrame({"points": g.size(), "meas_min": g["meas_min"].median(),
                         "median_abs_err": g["abs_err"].median(),
                         "worst_abs_err": g["abs_err"].max()}).reset_index()


def section(doc, pts):
    """The section's text and tables for the matched points (points());
    report.build_report draws its figure (figures.sim_vs_wire)."""
    doc.heading(3, "SimGrid against the wire")
    doc.para("The same points measured on a network the archives describe (their `network_*` "
             "attributes) and simulated on a SimGrid platform fitted to that network "
             "(jobscripts/sim/platform-from-wire; its `rb_network_*` properties name it), "
             "matched by network, reducer, data, ranks and size. Per point: each launch's "
             "time per call (t_avg_us), the minimum over launches on each side (the launch "
             "other work disturbed least) and the error of the prediction, (predicted - "
             "measured) / measured; `err (medians)` compares the medians over launches "
             "instead; spread = slowest / fastest measured launch; busy = measured launches "
             "with more than half a core of other processes; other CPU = cores other "
             "processes kept busy during a measured launch (median over launches). Calls of at least %d ms "
             "(measured) are also counted apart: there the wire, not a rank's wait for a core, "
             "makes most of the time. Targets (docs/simgrid.md): median |error| <= %d%%, "
             "worst <= %d%%." % (LONG_CALL_US / 1000, 100 * TARGET_MEDIAN, 100 * TARGET_WORST))
    doc.table(summary(pts), "sim_vs_wire_summary", columns={
        "rate": "link", "ranks": "ranks", "points": "points",
        "median_abs_err": "median |err|", "worst_abs_err": "worst |err|",
        "worst_point": "worst at", "long_points": "calls >= %d ms" % (LONG_CALL_US / 1000),
        "long_median_abs_err": "their median |err|", "long_worst_abs_err": "their worst |err|",
        "median_abs_err_medians": "median |err| (medians)",
        "within_15": "share within 15%", "targets": "targets"})
    doc.table(per_size(pts), "sim_vs_wire_sizes", columns={
        "rate": "link", "ranks": "ranks", "setting": "data", "size_bytes": "size",
        "points": "reducers", "meas_min": "measured us (median of reducers)",
        "median_abs_err": "median |err|", "worst_abs_err": "worst |err|"})
    doc.table(per_reducer(pts), "sim_vs_wire_reducers", columns={
        "rate": "link", "ranks": "ranks", "variant": "reducer", "points": "points",
        "median_err": "median err", "median_abs_err": "median |err|",
        "worst_abs_err": "worst |err|"})
    doc.table(pts, "sim_vs_wire", columns={
        "rate": "link", "ranks": "ranks", "setting": "data", "variant": "reducer",
        "size_bytes": "size", "meas_min": "measured us (min)", "sim_min": "predicted us (min)",
        "error_min": "err", "meas_median": "measured us (median)",
        "sim_median": "predicted us (median)", "error_median": "err (medians)",
        "meas_launches": "launches", "meas_spread": "spread", "meas_busy": "busy",
        "meas_other_cpu": "other CPU (median)", "sim_launches": "sim launches"})
