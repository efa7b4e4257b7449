"""The report's microbenchmark and training sections (latency and speedup
tables with their intervals, the other micro tables, training curves) and
how figures are drawn into the report (draw, place)."""

import importlib
import os
import re
import sys
import warnings

import pandas as pd

from . import figures, micro, stats, training, wire, plotting
from .formatting import number as fmt

from .report_terms import LATENCY_COLUMNS


def draw(doc, fn, *args):
    """Draw figures with fn(*args) and add them to doc.  A figure that
    cannot be drawn is reported, never the end of the report; one that
    cannot be written (a full disk) ends it: no report lacking figures."""
    figs = draw_only(doc, fn, *args)
    return place(doc, figs, fn.__name__) if figs is not None else []


def draw_only(doc, fn, *args):
    """fn(*args)'s figure entries, or None (said in doc) when it failed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all-NaN series, empty legends
            return fn(*args)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 -- any plotting failure
        msg = "figure %s could not be drawn: %s: %s" % (fn.__name__, type(e).__name__, e)
        print("rb-report: warning: " + msg, file=sys.stderr)
        doc.note("(%s)" % msg)
        return None


def place(doc, figs, kind):
    """Add figure entries to doc: the figures, a line for each that had
    nothing to plot, and one table of those with too few points."""
    drawn = [f[:2] for f in figs if f[0]]
    few = []
    for entry in figs:
        name, caption = entry[0], entry[1]
        if name:
            doc.figure(name, caption, plotting.CLIPPED.get(name))
        elif len(entry) > 2:   # too few points for a figure: a table row
            few.append(entry[2])
        else:   # nothing to plot: said in text, never an empty frame
            doc.note(caption)
    if few:
        table = "few_points_" + kind
        while os.path.join("tables", table + ".csv") in doc.csv_files:
            table += "_"
        doc.table(pd.DataFrame(few), table, columns={"figure": "not drawn", "points": "points",
                                                     "values": "its points (median [interval])"},
                  caption="Fewer than %d points: no figure, the values instead."
                          % plotting.MIN_POINTS)
    return drawn


def point_interval_text(lo, hi, unit, n_units):
    """A latency interval and what it is over: '4.4..9.3 (6 launches)',
    '3 launches < 6' (no interval), or '4.4..4.9 (one launch)': over the
    repetitions of one launch, leaving out launch-to-launch variation."""
    if unit == "launch":
        if stats.has_interval(lo, hi):
            return "%s..%s (%d launches)" % (fmt(lo), fmt(hi), n_units)
        return "%d launches < %d" % (n_units, stats.MIN_REPETITIONS)
    text = interval_text(lo, hi)
    return text + " (one launch)" if unit and stats.has_interval(lo, hi) else text


def tta_interval_text(lo, hi):
    """A time-to-target interval: an end may be a run that never reached it."""
    inf = float("inf")
    if hi == inf:
        return "not reached" if lo == inf else "%s..not reached" % fmt(lo)
    return interval_text(lo, hi)


def interval_text(lo, hi):
    """'12.3..14.5', or why there is none."""
    if stats.has_interval(lo, hi):
        return "%s..%s" % (fmt(lo), fmt(hi))
    return "n < %d" % stats.MIN_REPETITIONS


def speedup_text(value, verdict):
    """A speedup cell: the number only where the difference is significant."""
    if verdict in ("faster", "slower"):
        return "%sx (%s)" % (fmt(value), verdict)
    return verdict or "-"


def subsection(doc, heading, df, name, columns, absent, figure=None, intro=None):
    """A table (and its figures) under a heading, or one line saying the
    data do not hold it; returns the figures drawn."""
    doc.heading(3, heading)
    if df.empty:
        doc.para("Not measured in these data: %s." % absent)
        return []
    if intro:
        doc.para(intro)
    doc.table(df, name, columns=columns)
    return draw(doc, figure, df, doc.outdir) if figure else []


def section_latency_speedup(doc, agg):
    """Latency with intervals, then speedups and ranks from significant
    differences only."""
    out = []
    outdir = doc.outdir
    doc.heading(3, "Latency vs size")
    lat = agg.copy()
    lat["iter_iqr"] = [("%s..%s" % (fmt(a), fmt(b))) for a, b in
                       zip(lat.get("iter_q25_us_median", []), lat.get("iter_q75_us_median", []))]
    lat["ci"] = [point_interval_text(a, b, u, n) for a, b, u, n in
                 zip(lat["t_avg_us_ci_low"], lat["t_avg_us_ci_high"],
                     lat.get("interval_unit", [""] * len(lat)), lat.get("n_units", lat["n_repeats"]))]
    doc.table(wire.annotate(lat), "micro_latency", caption="Per point: %s." % LATENCY_COLUMNS, columns={
        "gid": "group", "kind": "kind", "variant": "reducer", "size_bytes": "size",
        "n_repeats": "n", "n_samples": "samples", "t_avg_us_median": "median us",
        "ci": "95% CI us", "t_avg_us_min": "min us", "t_avg_us_max": "max us",
        "iter_iqr": "iter IQR us", "busbw_gbs_median": "busbw GB/s", "wrong_max": "wrong",
        **wire.SHOWN})
    lat_figs = draw_only(doc, figures.latency, agg, outdir) or []

    doc.heading(3, "Speedup vs dense and vs the best exact sparse baseline")
    doc.para("Median time of dense (of the fastest other validated baseline) / median time of "
             "the reducer, at the same size; > 1 is faster. A number is shown only where the "
             "difference is significant (the two 95% intervals do not overlap); otherwise "
             "**no significant difference**. rank = 1 + the number of reducers significantly "
             "faster at that point (ties share a rank). `none` is left out: it does not "
             "communicate (see compute efficiency).",
             fold="Speedup = median time of dense (or of the fastest other validated baseline) / "
                  "the reducer's; how it is read (show)")
    sp = micro.speedups(agg)
    if not sp.empty:
        sp["vs dense"] = [speedup_text(v, t) for v, t in zip(sp["speedup_vs_dense"], sp["vs_dense"])]
        sp["vs baseline"] = [speedup_text(v, t) for v, t in
                             zip(sp["speedup_vs_best_baseline"], sp["vs_best_baseline"])]
    doc.table(sp, "micro_speedup", columns={
        "gid": "group", "variant": "reducer", "size_bytes": "size", "rank": "rank",
        "n_repeats": "n", "t_avg_us_median": "median us", "vs dense": "vs dense",
        "best_baseline": "fastest other baseline", "vs baseline": "vs it"})
    sp_figs = draw_only(doc, figures.speedup, sp, outdir) or []
    # each group's latency beside its speedup: one row of the page
    doc.heading(3, "Latency and speedup per group")
    if lat_figs or sp_figs:
        doc.para("Per group, time per call vs size (median; bars: 95%% CI of the median, from "
                 "%d repetitions) beside the speedup vs dense and vs the fastest other exact "
                 "baseline (a bar that crosses 1: no significant difference); the groups run at "
                 "one size together, first (no speedup figure: see the table)."
                 % stats.MIN_REPETITIONS)
    order = {}
    for e in lat_figs + sp_figs:
        m = re.search(r"_(G\d+)\.png$", str(e[0] or (e[2]["figure"].replace(" ", "_") + ".png"
                                                      if len(e) > 2 else "")))
        order.setdefault(m.group(1) if m else "G0", []).append(e)
    merged = [e for k in sorted(order, key=plotting.natural_key) for e in order[k]]
    doc.fold_figures("every group's latency beside its speedup, in group order")
    out += place(doc, merged, "latency_speedup")
    doc.fold_figures()
    return out


def section_micro(doc, rows, agg):
    out = []
    outdir = doc.outdir
    doc.heading(2, "Microbenchmarks (rb_micro)")
    doc.para("Rows are compared only inside a group (same kind, machine, version, device, "
             "layout, overlap, density, ranks, columns, timing). Times are each row's t_avg_us "
             "(mean over iterations, averaged over ranks). A point (group, reducer variant, "
             "size) has n repetitions: rows from several files of the same configuration, or "
             "the `repeat` rows of rb_micro --repeat within one file. Each point shows the median "
             "over its repetitions and, from %d repetitions on, the 95%% confidence interval "
             "of that median (order statistics, no distribution assumed); `samples` counts the "
             "timed calls behind them. Two reducers differ significantly only when their "
             "intervals do not overlap; speedups and ranks count only such differences. iter "
             "IQR is the interquartile range of the per-iteration time of the slowest rank, "
             "from the raw samples: it describes one run's spread, and is not used for the "
             "intervals (consecutive calls of one run are not independent)."
             % stats.MIN_REPETITIONS)
    doc.csv(rows, "micro_rows")
    doc.para("Tidy table of every measurement with its run metadata: "
             "[tables/micro_rows.csv](tables/micro_rows.csv).")
    doc.heading(3, "Groups")
    # what each group is: the key at the top; here what it holds
    doc.table(micro.groups_table(rows), "micro_groups",
              columns={"gid": "group", "runs": "runs", "rows": "rows", "reducers": "reducers",
                       "sizes": "sizes"},
              caption="What each group is: *Key* at the top (and the CSV).")

    out += section_latency_speedup(doc, agg)

    # the figures of the short sections below share rows at their end
    doc.begin_gallery()
    doc.heading(3, "Wire bytes per rank vs density")
    doc.para("bytes sent per rank per call (median over repeats); bound = 2k(p-1)/p x 8 B "
             "for k non-zeros of the aggregate; wire/bound is how far above that bound.")
    doc.table(micro.wire_bytes(agg), "micro_wire_bytes", columns={
        "gid": "group", "layout": "layout", "ranks": "ranks", "density": "density",
        "size_bytes": "size", "variant": "reducer", "bytes_sent_avg_median": "sent/rank",
        "bytes_sent_max_median": "max sent", "bound_bytes_median": "bound",
        "wire_to_bound_median": "wire/bound"})
    out += draw(doc, figures.wire_bytes, agg, outdir)

    out += subsection(doc, "Scaling with ranks", micro.scaling(agg), "micro_scaling", {
        "kind": "kind", "layout": "layout", "density": "density", "variant": "reducer",
        "size_bytes": "size", "ranks": "ranks", "t_avg_us_median": "median us",
        "t_avg_us_ci_low": "CI low", "t_avg_us_ci_high": "CI high", "n_repeats": "n"},
        "no configuration was run at more than one rank count", figures.scaling)
    out += subsection(doc, "S2 error and recall vs sketch width", micro.s2_error(agg),
                      "micro_s2_error", {
        "gid": "group", "density": "density", "size_bytes": "size",
        "sketch_width_mode": "width mode", "sketch_width": "width", "sketch_rows": "rows",
        "rel_l2_err_median": "rel L2 err", "recall_median": "recall",
        "max_abs_err_median": "max abs err", "bytes_sent_avg_median": "sent/rank"},
        "no s2 rows", figures.s2_error)

    out += subsection(doc, "Measured against the cost model", micro.model_fit(agg), "micro_model", {
        "kind": "kind", "variant": "reducer", "points": "points", "ratio_median": "meas/model",
        "ratio_min": "min", "ratio_max": "max", "within_0.5_2": "share in 0.5-2x",
        "floor_over_model": "floor/model", "explained": "why (where the data say)"},
        "no row has a model time (archives before rb_micro's model column)",
        intro="measured median / the cost model's time (docs/cost-model.md): a reducer far off "
              "its model has a bug, a missing optimisation, or a cost the model leaves out.")
    out += draw(doc, figures.model_vs_measured, agg, outdir)
    out += subsection(doc, "Against the memory floor", micro.memory_floor(agg), "micro_floor", {
        "gid": "group", "input": "input", "layout": "layout", "density": "density",
        "ranks": "ranks", "variant": "reducer", "size_bytes": "size",
        "t_avg_us_median": "median us", "t_floor_us_median": "floor us",
        "t_over_floor": "time/floor", "local_over_floor": "(time - comm)/floor"},
        "no row has a memory floor (archives before rb_micro's floor column)",
        intro="floor: one read pass of the input on the same buffers, measured before each "
              "row (rb_micro's floor(us)); (time - comm)/floor is the reducer's local work "
              "against the traffic it cannot avoid.")
    out += subsection(doc, "Where each reducer crosses dense", micro.dense_crossover(agg),
                      "micro_crossover", {
        "kind": "kind", "layout": "layout", "density": "density", "size_bytes": "size",
        "variant": "reducer", "ranks_run": "ranks run", "faster_than_dense_at": "faster at",
        "crosses_at": "slower than dense from"},
        "no configuration was run at more than one rank count (simulated sweeps: "
        "jobscripts/sim/scaling.sh)",
        intro="agsparse's volume relative to dense is about density x ranks, so it loses near "
              "ranks = 1/density; the measured (or simulated) rank count from which each "
              "reducer's median is no longer below dense's.")

    mvs = micro.measured_vs_simulated(agg)
    if not mvs.empty:
        doc.heading(3, "Measured and simulated, side by side")
        doc.para("The same configuration measured on a machine and simulated (SimGrid SMPI, "
                 "root attribute simulated=1): medians and the ratio simulated / measured. "
                 "They are never pooled; this table only puts them next to each other.")
        doc.table(mvs, "micro_measured_vs_simulated", columns={
            "variant": "reducer", "layout": "layout", "density": "density", "ranks": "ranks",
            "size_bytes": "size", "machine_measured": "measured on",
            "t_avg_us_median_measured": "measured us", "machine_simulated": "simulated platform",
            "t_avg_us_median_simulated": "simulated us", "time_sim_over_measured": "sim/meas",
            "bytes_sent_avg_median_measured": "sent/rank meas.",
            "bytes_sent_avg_median_simulated": "sent/rank sim."})

    simwire = importlib.import_module(".simwire", __package__)
    pts = simwire.points(rows)
    if not pts.empty:
        simwire.section(doc, pts)
        out += draw(doc, figures.sim_vs_wire, pts, outdir)

    out += subsection(doc, "Gossip consensus distance", micro.gossip_consensus(agg), "micro_gossip", {
        "gid": "group", "ranks": "ranks", "density": "density", "size_bytes": "size",
        "options": "options", "consensus_median": "consensus",
        "bytes_sent_avg_median": "sent/rank"}, "no gossip rows", figures.gossip_consensus,
        intro="consensus = max over ranks of |x_r - mean| / |mean| after one call: how far "
              "one gossip step leaves the ranks from the exact average.")
    doc.end_gallery("Figures: wire bytes, scaling, S2 error, cost model, SimGrid, gossip consensus")
    return out


def section_training(doc, curv, summ, chosen):
    out = []
    outdir = doc.outdir
    doc.heading(2, "Training (rb_train, rb-torch-train)")
    if not curv.empty:
        doc.csv(curv, "train_curves")
        doc.para("Tidy table of every evaluation point: "
                 "[tables/train_curves.csv](tables/train_curves.csv).")
    if summ.empty:
        doc.para("No training curves or phase times could be read.")
        return out
    doc.heading(3, "Summary per group and reducer")
    if chosen:
        doc.bullets("%s: target %s = %s (%s)" % (tid, m, fmt(t), how)
                    for tid, (m, t, how) in sorted(chosen.items()))
    nan = pd.Series([float("nan")] * len(summ))
    summ = summ.assign(
        tt_target_text=["not reached" if v == float("inf") else v
                        for v in summ.get("tt_target_s_median", nan)],
        tt_target_ci=[tta_interval_text(lo, hi) for lo, hi in
                      zip(summ.get("tt_target_s_ci_low", nan), summ.get("tt_target_s_ci_high", nan))])
    doc.table(summ, "train_summary", columns={
        "tid": "group", "kind": "kind", "model": "model", "ranks": "ranks", "variant": "reducer",
        "n_repeats": "n", "metric": "metric", "final_median": "final", "best_median": "best",
        "t_iter_s_median": "s/iter", "t_iter_s_ci_low": "CI low", "t_iter_s_ci_high": "CI high",
        "t_iter_s_min": "min", "t_iter_s_max": "max",
        "tt_target_text": "time to target s", "tt_target_ci": "95% CI s", "n_reached": "reached",
        "it_target_median": "iters to target",
        "compute_efficiency": "compute eff."})
    # the curves, the phase breakdown and the efficiency share rows at the end
    doc.begin_gallery()
    out += draw(doc, figures.training_curves, curv, outdir)
    out += draw(doc, figures.phase_bars, summ, outdir)
    out += subsection(doc, "Compute efficiency vs ranks", training.efficiency_vs_ranks(summ),
                      "train_efficiency", None,
                      "no group has both `none` and another reducer", figures.efficiency)
    doc.end_gallery("Figures: training curves, phase breakdown (time per iteration by phase), "
                    "compute efficiency")
    return out
