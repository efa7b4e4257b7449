"""PNG figures.  Each function writes its files into outdir and returns
[(file name, caption)]; a figure with nothing to plot is not drawn: its
entry is (None, a sentence saying why) and the report prints it, and one
that would show fewer than MIN_POINTS points is not drawn either: its entry
is (None, why, [(what, values)]) and the report lists those values in a
table instead.  Lines show the median over repetitions; error bars its 95%
confidence interval (stats.py), absent below 6 repetitions.  Every figure
colours a reducer the same way (reducer_colour); series that are not
reducers (phases, workloads, sizes, options) take colours from a palette of
their own (SERIES_COLOURS), never a reducer's.  A size axis is labelled in
B/KiB/MiB.  Figures are small (3 to a row of the page at 1280 px), laid out
by matplotlib's constrained layout with wrapped titles and legends beside
or below the axes; after drawing, every text is checked to lie inside the
image (CLIPPED names any that does not, and the image is then saved with
its bounding box widened, so nothing is cut)."""

import re
import textwrap

# plotting first: it puts matplotlib on its Agg backend before pyplot loads.
from .plotting import (CI_BARS, MARKERS, MAX_FIGURES_PER_KIND, MIN_POINTS, ONE, SERIES_HATCHES,
                       SIZE, VERDICT_COLOURS, VERDICT_KEY, _axes, _by_size_or_dots,
                       _differing_options, _dots, _legend, _lines, _nothing, _one_plot,
                       _point_label, _point_text, _save, _size_frame, _tick_name, _two_plots, _us,
                       display_class, natural_groups, reducer_colour, series_colour, short_groups,
                       title_text)
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.lines  # noqa: E402
import numpy as np  # noqa: E402

from . import formatting  # noqa: E402
from .micro import GROUP_COLS  # noqa: E402
from .stats import MIN_REPETITIONS  # noqa: E402


def latency(agg, outdir):
    """A figure per group over size; the groups run at one size only, when
    there are several, in one figure together (latency_one_size.png)."""
    out = []
    titles = short_groups(agg)
    groups = natural_groups(agg, "gid")
    # one size and enough points for a figure (fewer: a table row, below)
    one = [(g, s) for g, s in groups if s["size_bytes"].nunique() == 1
           and np.isfinite(s["t_avg_us_median"].to_numpy(dtype=float)).sum() >= MIN_POINTS]
    if len(one) >= 2:
        out.append(_one_size_latency(one, titles, outdir))
        drawn = {g for g, _ in one}
        groups = [(g, s) for g, s in groups if g not in drawn]
    for gid, sub in groups[:MAX_FIGURES_PER_KIND]:
        out.append(_one_plot(
            outdir, "latency_%s.png" % gid,
            "%s: time per call vs size, per reducer (median, 95%% CI bars)" % gid,
            lambda ax, sub=sub: _by_size_or_dots(ax, sub, "t_avg_us_median",
                                                 ("t_avg_us_ci_low", "t_avg_us_ci_high")),
            values=lambda sub=sub: _point_text(sub, _point_label, "t_avg_us_median", _us,
                                               ("t_avg_us_ci_low", "t_avg_us_ci_high")),
            **_size_frame(sub, SIZE, "time per call (us, avg over ranks)", title=titles[gid])))
    return out


def _one_size_latency(one, titles, outdir):
    """Groups run at one size, a row each: every reducer's median time per
    call relative to dense's in that group (to the fastest where dense is
    absent), with its interval; one colour per reducer."""
    fig, ax = plt.subplots(figsize=(6.6, 1.0 + 0.2 * len(one)))
    variants = sorted({v for _, s in one for v in s["variant"]})
    n = 0
    labels = []
    for row, (gid, s) in enumerate(one):
        t = s.set_index("variant")
        ref = t.loc["dense", "t_avg_us_median"] if "dense" in t.index else t["t_avg_us_median"].min()
        labels.append("%s (%s)" % (gid, formatting.size(s["size_bytes"].iloc[0])))
        for k, v in enumerate(variants):
            if v not in t.index or not formatting.is_number(t.loc[v, "t_avg_us_median"]) or not ref > 0:
                continue
            r = t.loc[v]
            y = row + (k - (len(variants) - 1) / 2) * 0.6 / max(len(variants), 1)
            x = r["t_avg_us_median"] / ref
            err = None
            if all(formatting.is_number(r.get(c)) for c in ("t_avg_us_ci_low", "t_avg_us_ci_high")):
                err = [[x - r["t_avg_us_ci_low"] / ref], [r["t_avg_us_ci_high"] / ref - x]]
            ax.errorbar([x], [y], xerr=err, fmt=MARKERS[k % len(MARKERS)], markersize=3.5, capsize=1.5,
                        color=reducer_colour(v), label=v, lw=0.8)
            n += 1
    ax.axvline(1.0, color="k", lw=0.7)
    ax.set_yticks(range(len(one)))
    ax.set_yticklabels(labels, fontsize=6.5)
    ax.set_ylim(len(one) - 0.5, -0.5)
    _axes(ax, "time per call / dense's in the same group (log; < 1: faster than dense)", "",
          xscale="log", legend=0)
    # the legend beside the rows, not below them
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    ax.legend(list(seen.values()), [_tick_name(k, 22) for k in seen], fontsize=6, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle("Groups run at one size: each reducer's time relative to dense", fontsize=8)
    name = _save(fig, outdir, "latency_one_size.png")
    return (name, "groups run at one size (%s): each reducer's median time per call relative to "
                  "dense's in its group (the fastest's where dense was not run), bars: 95%% "
                  "confidence interval; the groups' times are in the latency table"
            % ", ".join(g for g, _ in one))


def model_vs_measured(agg, outdir):
    """Measured median against the cost model's time, one colour per
    reducer, with the diagonal and the 0.5x / 2x lines."""
    if agg.empty or "t_model_us_median" not in agg:
        return []
    d = agg[np.isfinite(agg["t_model_us_median"]) & (agg["t_model_us_median"] > 0)
            & np.isfinite(agg["t_avg_us_median"]) & (agg["t_avg_us_median"] > 0)]
    caption = ("measured median time per call against the cost model's (rb_model with the "
               "run's alpha, beta and memory bandwidth); solid: equal, dotted: 0.5x and 2x")
    if d.empty:
        return [(None, _nothing(caption))]

    def draw(ax):
        for i, (v, sub) in enumerate(d.groupby("variant", sort=True)):
            ax.scatter(sub["t_model_us_median"], sub["t_avg_us_median"], s=12, label=v,
                       marker=MARKERS[i % len(MARKERS)], color=reducer_colour(v))
        lo = min(d["t_model_us_median"].min(), d["t_avg_us_median"].min())
        hi = max(d["t_model_us_median"].max(), d["t_avg_us_median"].max())
        for f, style in ((1, "-"), (0.5, ":"), (2, ":")):
            ax.plot([lo, hi], [lo * f, hi * f], "k" + style, lw=0.7)
        return len(d)
    return [_one_plot(outdir, "model_vs_measured.png", caption, draw,
                      xlabel="cost model's time per call (us)",
                      ylabel="measured time per call (us)", xscale="log", yscale="log")]


def sim_vs_wire(pts, outdir):
    """Per network (link rate): the time SimGrid predicted against the one
    measured, minimums over launches, one panel per rank count, a colour
    per reducer, a marker per data setting; solid: equal, dashed: +-15%,
    dotted: +-35% (docs/simgrid.md's targets)."""
    out = []
    for rate, d in pts.groupby("rate", sort=True):
        caption = ("%s links: predicted (SimGrid, on the platform fitted to that network) "
                   "against measured time per call, minimum over launches; solid: equal, "
                   "dashed: +-15%%, dotted: +-35%%" % (rate or "?"))
        ranks = sorted(d["ranks"].unique())
        fig, axes = plt.subplots(1, len(ranks), figsize=(5 * len(ranks), 4.2), squeeze=False)
        settings = sorted(d["setting"].unique())
        for ax, p in zip(axes[0], ranks):
            s = d[d["ranks"] == p]
            for (v, st), sub in s.groupby(["variant", "setting"], sort=True):
                ax.scatter(sub["meas_min"], sub["sim_min"], s=14, color=reducer_colour(v),
                           marker=MARKERS[settings.index(st) % len(MARKERS)],
                           label="%s (%s)" % (v, st) if len(settings) > 1 else v)
            lo = min(s["meas_min"].min(), s["sim_min"].min()) * 0.8
            hi = max(s["meas_min"].max(), s["sim_min"].max()) * 1.25
            for f, style in ((1, "-"), (1.15, "--"), (1 / 1.15, "--"), (1.35, ":"), (0.65, ":")):
                ax.plot([lo, hi], [lo * f, hi * f], "k" + style, lw=0.6)
            _axes(ax, "measured time per call (us)", "predicted time per call (us)", "log", "log",
                  title="%s, %d ranks" % (rate, p), legend=6 if p == ranks[-1] else 0)
        out.append((_save(fig, outdir, "sim_vs_wire_%s.png" % re.sub(r"[^A-Za-z0-9]", "", str(rate))),
                    caption))
    return out


def speedup(sp, outdir):
    if sp.empty:
        return []
    out = []
    titles = short_groups(sp) if "group" in sp else {}
    for gid, sub in natural_groups(sp, "gid")[:MAX_FIGURES_PER_KIND]:
        if sub["size_bytes"].nunique() == 1:
            # one size: the one-size latency figure shows each reducer
            # against dense; the speedups are the speedup table's
            continue
        panels = []
        for col, title, legend in (("speedup_vs_dense", "vs dense", 0),
                                   ("speedup_vs_best_baseline", "vs fastest other exact baseline", 6)):
            def draw(ax, col=col):
                n = _by_size_or_dots(ax, sub, col, (col + "_low", col + "_high"))
                if n:
                    (ax.axvline if sub["size_bytes"].nunique() == 1 else ax.axhline)(1.0, color="k", lw=0.8)
                return n
            panels.append((draw, _size_frame(sub, SIZE, "speedup (>1 = faster)",
                                             title="speedup " + title, legend=legend)))
        out.append(_two_plots(outdir, "speedup_%s.png" % gid,
                              "%s: speedup vs dense and vs the fastest other exact baseline "
                              "(a bar that crosses 1: no significant difference)" % gid,
                              panels, titles.get(gid, gid),
                              values=lambda sub=sub: _point_text(
                                  sub, _point_label, "speedup_vs_dense", formatting.times,
                                  ("speedup_vs_dense_low", "speedup_vs_dense_high")) + " (vs dense)"))
    return out


def _family_title(fam_cols, key, varying, size):
    d = dict(zip(fam_cols, key))
    other = ("density %g" % float(d["density"])) if varying == "ranks" else "%s ranks" % d["ranks"]
    return "%s | %s | %s/%s | %s | size %s" % (d["kind"], d["machine"], d["layout"],
                                               d["overlap"], other, formatting.size(size))


def wire_bytes(agg, outdir):
    """Bytes sent per rank vs density at the largest size of each family of
    groups that differ only in density."""
    return _family_plots(agg, outdir, "density", "wire_bytes_%d.png", "wire bytes per rank vs density (%s)",
                         "bytes_sent_avg_median", None,
                         dict(xlabel="density of each rank's gradient",
                              ylabel="bytes sent per rank per call (size)",
                              xscale="log", yscale="log"))


def scaling(sc, outdir):
    return _family_plots(sc, outdir, "ranks", "scaling_%d.png", "time per call vs ranks (%s)",
                         "t_avg_us_median", ("t_avg_us_ci_low", "t_avg_us_ci_high"),
                         dict(xlabel="ranks", ylabel="time per call (us)", yscale="log"))


def _family_plots(df, outdir, varying, name, caption, y, interval, frame):
    """One figure per family of groups that differ only in `varying`, at
    the family's largest size: y vs `varying`, one line per variant.  A
    family run at one value of `varying` has nothing to draw a line over:
    no figure."""
    out = []
    if df.empty:
        return out
    fam_cols = [c for c in GROUP_COLS if c != varying and c in df.columns]
    for n, (key, fam) in enumerate(list(df.groupby(fam_cols, dropna=False))[:MAX_FIGURES_PER_KIND], 1):
        size = fam["size_bytes"].max()
        title = _family_title(fam_cols, key, varying, size)
        s0 = fam[fam["size_bytes"] == size]
        if s0[varying].nunique() < 2:
            continue
        out.append(_one_plot(outdir, name % n, caption % title,
                             lambda ax, s0=s0: _lines(ax, s0, "variant", varying, y, interval,
                                                      positive=True),
                             values=lambda s0=s0: _point_text(
                                 s0, lambda r: "%s %s %s" % (r["variant"], varying, formatting.general(r[varying])),
                                 y, formatting.general),
                             title=title, **frame))
    if not out:
        out.append((None, "No figure of %s: no configuration was run at more than one %s."
                    % (caption.split(" (")[0], "rank count" if varying == "ranks" else varying)))
    return out


def s2_error(s2, outdir):
    out = []
    for kind, sk in s2.groupby("kind"):
        modes = ",".join(sorted(set(str(m) for m in sk["sketch_width_mode"])))
        xlabel = "sketch width (sketch_width, mode %s)" % modes
        # a line per group and size: colours of their own, not s2's alone
        panels = [(lambda ax, col=col: _lines(
                       ax, sk, ["gid", "size_bytes"], "sketch_width", col,
                       label=lambda k, s: "%s %s d=%g" % (k[0], formatting.size(k[1]),
                                                          float(s["density"].iloc[0])),
                       colour="series"),
                   dict(xlabel=xlabel, ylabel=ylabel, legend=legend))
                  for col, ylabel, legend in (("rel_l2_err_median", "relative L2 error", 0),
                                              ("recall_median", "recall of the true support", 6))]
        out.append(_two_plots(outdir, "s2_error_%s.png" % kind,
                              "s2 error and recall vs sketch width (%s data)" % kind, panels,
                              values=lambda sk=sk: _point_text(
                                  sk, lambda r: "%s %s width %s" % (r["gid"], formatting.size(r["size_bytes"]),
                                                                    formatting.general(r["sketch_width"])),
                                  "rel_l2_err_median", lambda v: "rel. L2 error %s" % formatting.general(v))))
    return out


def gossip_consensus(g, outdir):
    if g.empty:
        return []
    if (g["consensus_median"].fillna(0) == 0).all():
        return [(None, "No figure of the gossip consensus distance: it is 0 at every point "
                       "(one gossip step left the ranks at the exact average).")]
    # a line per group and options: colours of their own, not gossip's alone;
    # a kind whose every point is 0 has nothing to draw (its table says so)
    return [(None, "No figure of the gossip consensus distance (%s data): it is 0 at every point "
                   "(one gossip step left the ranks at the exact average)." % kind)
            if (gk["consensus_median"].fillna(0) == 0).all() else _one_plot(outdir, "gossip_consensus_%s.png" % kind,
                      "gossip consensus distance after one call (%s data)" % kind,
                      lambda ax, gk=gk: _lines(
                          ax, gk, ["gid", "options"], "size_bytes", "consensus_median",
                          label=lambda k, s, gk=gk: "%s %d ranks%s" % (
                              k[0], s["ranks"].iloc[0], _differing_options(gk["options"], k[1])),
                          colour="series"),
                      values=lambda gk=gk: _point_text(
                          gk, lambda r: "%s %s" % (r["gid"], formatting.size(r["size_bytes"])),
                          "consensus_median", formatting.general),
                      xlabel=SIZE,
                      ylabel="consensus distance max_r |x_r - mean| / |mean|", xscale=("log", {"base": 2}))
            for kind, gk in g.groupby("kind")]


def training_curves(curv, outdir):
    """Each repetition (run) a thin line in its reducer's colour; one legend
    entry per reducer."""
    out = []
    for tid, sub in natural_groups(curv, "tid")[:MAX_FIGURES_PER_KIND] if not curv.empty else []:
        metric = sub["metric"].iloc[0]
        runs = sub.groupby("variant")["run"].nunique().max()
        v = sub["value"].to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        # values over orders of magnitude (a perplexity from 10 to 10^4): log
        scale = "log" if len(v) and v.min() > 0 and v.max() / v.min() >= 20 else None

        def draw(ax, x):
            n = _lines(ax, sub, ["variant", "run"], x, "value", label=lambda k, s: k[0])
            for line in ax.get_lines():
                line.set_linestyle("-")
                line.set_linewidth(0.9)
                line.set_markersize(2.5)
            return n
        panels = [(lambda ax, x=x: draw(ax, x), dict(xlabel=xlabel, ylabel=metric + (" (log)" if scale else ""),
                                                     yscale=scale, legend=legend))
                  for x, xlabel, legend in (("iteration", "iteration", 0), ("wall_s", "wall time (s)", 7))]
        out.append(_two_plots(outdir, "train_%s.png" % tid,
                              "%s: %s vs iteration and vs wall time (%d repetition%s per reducer, "
                              "one line each%s)" % (tid, metric, runs, "" if runs == 1 else "s",
                                                    "; log axis: the values span %.0fx" % (v.max() / v.min())
                                                    if scale else ""),
                              panels, "%s: %s" % (tid, sub["group"].iloc[0]),
                              values=lambda sub=sub: _point_text(
                                  sub, lambda r: "%s run %s it %s" % (r["variant"], r["run"], r["iteration"]),
                                  "value", formatting.general)))
    return out


def phase_bars(summ, outdir):
    out = []
    cols = ["t_%s_s_median" % p for p in ("forward", "backward", "reduce", "update")]
    if summ.empty or not all(c in summ for c in cols):
        return out
    # phases are not reducers: the series palette, and a hatch each
    for tid, sub in natural_groups(summ, "tid")[:MAX_FIGURES_PER_KIND]:
        sub = sub[sub[cols].notna().any(axis=1)]
        if sub.empty:
            out.append((None, _nothing("%s: time per iteration by phase" % tid)))
            continue
        fig, ax = plt.subplots(figsize=ONE)
        x = np.arange(len(sub))
        bottom = np.zeros(len(sub))
        for i, c in enumerate(cols):
            v = sub[c].fillna(0).to_numpy() * 1e3
            ax.bar(x, v, bottom=bottom, label=c[2:-9], color=series_colour(i),
                   hatch=SERIES_HATCHES[i % len(SERIES_HATCHES)], edgecolor="#333", linewidth=0.4)
            bottom += v
        ax.set_xticks(x)
        ax.set_xticklabels(sub["variant"], rotation=30, ha="right", fontsize=7)
        for t, v in zip(ax.get_xticklabels(), sub["variant"]):
            t.set_color(reducer_colour(v))
        ax.set_xlabel("reducer")
        ax.set_ylabel("ms per iteration (median)")
        ax.set_title(title_text("%s: %s" % (tid, sub["group"].iloc[0])), fontsize=8)
        _legend(ax, 6.5, outside=False)
        ax.get_legend().set_title("phase", prop={"size": 6.5})
        name = _save(fig, outdir, "phases_%s.png" % tid)
        out.append((name, "%s: time per iteration by phase" % tid))
    return out


def efficiency(eff, outdir):
    if eff.empty:
        return []
    pct = eff.assign(**{c: 100 * eff[c] for c in ("compute_efficiency", "compute_efficiency_low",
                                                  "compute_efficiency_high") if c in eff})
    interval = (("compute_efficiency_low", "compute_efficiency_high")
                if "compute_efficiency_low" in pct else None)
    ylabel = "compute efficiency (%): t_iter(none) / t_iter(reducer)"
    one = pct["ranks"].nunique() == 1

    def draw(ax):
        if one:
            d = pct.assign(row=[" ".join(str(x) for x in k)
                                for k in zip(pct["kind"], pct["model"], pct["variant"])])
            n = _dots(ax, d, "compute_efficiency", interval, label="row")
            ax.axvline(100, color="k", lw=0.8)
            return n
        n = _lines(ax, pct, ["kind", "model", "variant"], "ranks", "compute_efficiency", interval,
                   label=lambda k, s: " ".join(k))
        ax.axhline(100, color="k", lw=0.8)
        return n

    frame = (dict(xlabel="%s at %d ranks" % (ylabel, pct["ranks"].iloc[0]), ylabel="", legend=0)
             if one else dict(xlabel="ranks", ylabel=ylabel))
    return [_one_plot(outdir, "efficiency.png", "compute efficiency vs ranks (%s)"
                      % (CI_BARS % MIN_REPETITIONS), draw,
                      values=lambda: _point_text(
                          pct, lambda r: "%s %s %s %d ranks" % (r["kind"], r["model"], r["variant"], r["ranks"]),
                          "compute_efficiency", lambda v: "%.1f%%" % v), **frame)]


# ---------------------------------------------------------------- verdict

def _measure_of(claim):
    """'S2: speedup vs best baseline (training time to accuracy)' ->
    'training time to accuracy' (what tells apart the rows of one claim)."""
    m = re.search(r"\(([^()]*)\)\s*$", str(claim))
    return m.group(1) if m else ""


def _platform_label(r, measure=False):
    flags = [f for f, col in (("oversubscribed", "oversubscribed"), ("busy", "busy"))
             if str(r.get(col, "no")) == "yes"]
    label = str(r.get("platform", r.get("data", "")))
    if label in ("", "-", "nan", "None"):
        label = "no point"
    if str(r.get("setting", "paper")) != "paper":
        flags.insert(0, "other setting")
    if measure and _measure_of(r["claim"]):
        label = "%s: %s" % (_measure_of(r["claim"]), label)
    return label + (" (%s)" % ", ".join(flags) if flags else "")


def verdict(ctab, outdir):
    """The whole verdict in one figure: a panel per claim, a row per
    platform; each measured value with its interval (a diamond: exact, no
    interval needed) coloured by its verdict, the paper's number as a
    dashed line; a claim without data says 'missing' on its row.  Input:
    the claims table (claim_id, claim, paper, paper_value, platform,
    setting, oversubscribed, busy, measured_median/low/high, exact,
    verdict_class)."""
    if ctab is None or ctab.empty:
        return []
    measured = ctab["measured_median"].map(formatting.is_number) & (ctab["points"].fillna(0) > 0)
    # a claim without any measured row is a line of the claims table, not a panel
    claims = list(dict.fromkeys(ctab.loc[measured, "claim_id"]))
    if not claims:
        return [(None, "No figure of the verdict: no claim has a measured value in these data.")]
    left_out = [c for c in dict.fromkeys(ctab["claim_id"]) if c not in claims]
    # a row without a value (a platform that did not run the setting) stays
    # a line of the claims table: the panels show values
    ctab = ctab[ctab["claim_id"].isin(claims) & measured]
    # row names (long ones on two lines: such a panel's rows get more room)
    names = {}
    for c in claims:
        rows = ctab[ctab["claim_id"] == c]
        several = rows["claim"].nunique() > 1
        names[c] = [textwrap.fill(_platform_label(r, several), 48) for _, r in rows.iterrows()]
    heights = [max(1, len(names[c])) * (1.7 if any("\n" in x for x in names[c]) else 1.0)
               for c in claims]
    # two panels side by side (the page's width), a row as tall as its taller panel
    cols = 2 if len(claims) > 2 else 1
    nrows = (len(claims) + cols - 1) // cols
    row_h = [max(heights[k] for k in range(r * cols, min(len(claims), (r + 1) * cols)))
             for r in range(nrows)]
    fig, axes = plt.subplots(nrows, cols, figsize=(13.4 if cols == 2 else 9,
                                                   0.6 + 0.23 * sum(row_h) + 0.5 * nrows),
                             gridspec_kw={"height_ratios": [h + 1.6 for h in row_h]}, squeeze=False)
    for ax in axes.flat[len(claims):]:
        ax.set_visible(False)
    drawn = 0
    shown = set()
    for ax, cid in zip(axes.flat, claims):
        annotations = []
        rows = ctab[ctab["claim_id"] == cid].reset_index(drop=True)
        first = rows.iloc[0]
        # the row's unit, where it has one: a joint claim's paper text holds
        # "81%" though its value is a speedup
        pct = formatting.row_formatter(first) is formatting.percent
        scale = 100.0 if pct else 1.0
        paper = float(first["paper_value"]) * scale if formatting.is_number(first["paper_value"]) else np.nan
        values = []
        for pos, r in rows.iterrows():
            cls = display_class(r.get("verdict_class", "missing"), r.get("verdict", ""))
            shown.add(cls)
            colour = VERDICT_COLOURS[cls]
            med = r["measured_median"]
            if not formatting.is_number(med) or not r.get("points", 0):
                why = r.get("why", "") if not formatting.missing(r.get("why", "")) else ""
                ax.text(0.01, pos, _wrap(str(why or r.get("verdict", "") or "missing"), 75),
                        transform=ax.get_yaxis_transform(), va="center", fontsize=7, color=colour)
                continue
            med *= scale
            lo, hi = r["measured_low"], r["measured_high"]
            vmin, vmax = r.get("measured_min"), r.get("measured_max")
            pooled = int(r.get("points", 1)) > 1
            if pooled and formatting.is_number(vmin) and formatting.is_number(vmax):
                # the points themselves: a light band behind their median
                ax.plot([vmin * scale, vmax * scale], [pos, pos], color=colour, alpha=0.25, lw=7,
                        solid_capstyle="butt")
                values += [vmin * scale, vmax * scale]
            if bool(r.get("exact", False)) or not (formatting.is_number(lo) and formatting.is_number(hi)):
                ax.plot([med], [pos], marker="D" if r.get("exact", False) else "o", color=colour,
                        markersize=6, linestyle="none")
                values.append(med)
            else:
                ax.errorbar([med], [pos], xerr=[[med - lo * scale], [hi * scale - med]], fmt="o",
                            color=colour, capsize=4, markersize=5)
                values += [lo * scale, hi * scale]
            text = formatting.claim_value(r, with_points=False)
            if pooled:
                text = "%s, median of %d points" % (text.replace(" (exact)", ""), int(r["points"]))
            annotations.append(ax.annotate(text, (med, pos), xytext=(0, 5),
                                           textcoords="offset points", ha="center", va="bottom",
                                           fontsize=6.5, color=colour))
            drawn += 1
        if np.isfinite(paper):
            ax.axvline(paper, color="k", linestyle="--", lw=1)
            values.append(paper)
        finite = [v for v in values if np.isfinite(v)]
        ratio = formatting.row_formatter(first) is formatting.times
        centres = [v for v in list(rows["measured_median"] * scale) + [paper]
                   if formatting.is_number(v) and np.isfinite(v)]
        if ratio and centres and min(centres) > 0:
            # speedups are ratios: a log axis, at most 10x beyond the medians
            # and the paper's number (a wider interval runs off the edge)
            lo = max(min(v for v in finite if v > 0), min(centres) / 10)
            hi = min(max(finite), max(centres) * 10)
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.25, hi * 1.25)
        elif finite:
            lo, hi = min(finite), max(finite)
            pad = 0.12 * (hi - lo) if hi > lo else 0.1 * max(abs(hi), 1)
            ax.set_xlim(lo - pad, hi + pad)
        ax.set_yticks(range(len(rows)))
        several = rows["claim"].nunique() > 1      # e.g. time per iteration and to accuracy
        # a long row name on two lines, not a squeezed figure
        ax.set_yticklabels(names[cid], fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        title = re.sub(r"\s*\([^()]*\)\s*$", "", str(first["claim"])) if several else first["claim"]
        ax.set_title(textwrap.fill("%s (paper %s, dashed)" % (title, first["paper"]), 75),
                     fontsize=8, loc="left")
        units = {str(u) for u in rows.get("unit", []) if not formatting.missing(u)}
        ax.set_xlabel(formatting.claim_unit(first["paper"], first.get("unit")) if len(units) <= 1
                      else "difference to dense (each value with its unit: %s)" % ", ".join(sorted(units)),
                      fontsize=7)
        if not any(formatting.is_number(v) for v in rows["measured_median"]):
            ax.set_xticks([])      # nothing measured: an axis without values
            ax.set_xlabel("")
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(True, axis="x", alpha=0.3)
        # a value's label near an end of the axis runs inwards, not off the figure
        lo, hi = ax.get_xlim()
        tr = (np.log10 if ax.get_xscale() == "log" else (lambda v: v))
        for a in annotations:
            frac = (tr(a.xy[0]) - tr(lo)) / (tr(hi) - tr(lo)) if tr(hi) != tr(lo) else 0.5
            a.set_ha("left" if frac < 0.3 else "right" if frac > 0.7 else "center")
    if not drawn:
        plt.close(fig)
        return [(None, "No figure of the verdict: no claim has a measured value in these data.")]
    # the key: one colour per meaning, as in the headline box
    handles = [matplotlib.lines.Line2D([], [], marker="o", linestyle="none",
                                       color=VERDICT_COLOURS[k], label=text)
               for k, text in VERDICT_KEY if k in shown]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=min(3, len(handles)), fontsize=7,
                   frameon=False)
    bottom = (0.3 + 0.2 * ((len(handles) + 2) // 3)) / fig.get_figheight() if handles else 0
    _save(fig, outdir, "verdict.png", rect=(0, bottom, 1, 1))
    return [("verdict.png", "the verdict: each claim's measured value (median over its points, "
                            "bar: its interval; diamond: exact, no interval needed) against the "
                            "paper's number (dashed), per platform; light band: the range of the points pooled in "
                            "a row; colour: the verdict (key below the figure)%s"
              % ("; claims without a measured value (%d) are in the table only" % len(left_out)
                 if left_out else ""))]


def _wrap(text, width=110):
    return text if len(text) <= width else text[:width] + "..."


# ---------------------------------------------------------------- crossover

# measured points joined by straight lines: on log-log axes, the interpolation
RATE_STYLES = {"measured": dict(fmt="o-", lw=1, capsize=3, color="#d62728"),
               "model": dict(linestyle=":", color="#d62728"),
               "model alone": dict(linestyle="--", color="#7f7f7f", lw=0.8)}


def rate_crossover(curves, outdir):
    """S2's speedup over the fastest sparse baseline against the link rate
    of an emulated network (crossover.rate_curves): the measured points
    with their intervals, the model's extrapolation beyond them, the model
    alone; the paper's 1.8x and 1x dashed.  One figure per configuration."""
    out = []
    if curves.empty:
        return out
    keys = [c for c in ("nodes", "ranks", "size_bytes", "s2_variant") if c in curves]
    for i, (key, fam) in enumerate(curves.groupby(keys, sort=True, dropna=False)):
        if i >= MAX_FIGURES_PER_KIND:
            break
        conf = dict(zip(keys, key))

        def draw(ax, fam=fam):
            n = 0
            segments = fam["segment"].fillna("") if "segment" in fam else ""
            for (source, _), s in fam.assign(segment=segments).groupby(["source", "segment"],
                                                                        sort=False):
                s = s[np.isfinite(s["speedup"].to_numpy(dtype=float)) & (s["speedup"] > 0)]
                s = s.sort_values("link_bps")
                if s.empty:
                    continue
                n += len(s)
                if source == "measured":
                    y = s["speedup"].to_numpy(dtype=float)
                    lo, hi = s["low"].to_numpy(dtype=float), s["high"].to_numpy(dtype=float)
                    err = [np.where(np.isfinite(lo), y - lo, 0),
                           np.where(np.isfinite(hi), hi - y, 0)]
                    ax.errorbar(s["link_bps"], y, yerr=err, label=source, **RATE_STYLES[source])
                else:
                    ax.plot(s["link_bps"], s["speedup"], label=source, **RATE_STYLES[source])
            for t in (1.0, 1.8):
                ax.axhline(t, color="k", lw=0.7, ls="--")
            return n
        name = "crossover_s2_%d.png" % (i + 1)
        caption = ("S2 against the fastest sparse baseline vs the link rate, %s nodes, %s, %s "
                   "(emulated network; dashed: 1x and the paper's 1.8x; %s)"
                   % (conf.get("nodes", "?"), formatting.size(conf.get("size_bytes")),
                      conf.get("s2_variant", "s2"), CI_BARS % MIN_REPETITIONS))
        out.append(_one_plot(outdir, name, caption, draw, xlabel="link rate (bit/s)",
                             ylabel="speedup (fastest baseline / s2)", xscale="log",
                             yscale="log"))
    return out
