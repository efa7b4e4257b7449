"""PNG figures.  Each function writes its files into outdir and returns
[(file name, caption)].  Lines show the median over repetitions; error bars
its 95% confidence interval (stats.py), absent below 6 repetitions."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from .micro import GROUP_COLS  # noqa: E402
from .stats import MIN_REPETITIONS  # noqa: E402

MAX_FIGURES_PER_KIND = 24
MARKERS = "osD^v<>px*h+"


def _save(fig, outdir, name):
    for ax in fig.get_axes():
        _plain_ticks(ax)
    try:
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=90)
    except ValueError:
        # No positive value for a log axis (all NaN or zero): draw linear.
        for ax in fig.get_axes():
            ax.set_xscale("linear")
            ax.set_yscale("linear")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, name), dpi=90)
    finally:
        plt.close(fig)
    return name


def _human(v, _pos=None):
    for unit, div in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if v >= div:
            return "%g%s" % (v / div, unit)
    return "%g" % v


def _plain_ticks(ax):
    """Plain tick labels ('0.5', '2', '64K') on log axes: cheaper than
    mathtext and easier to read."""
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v)
    none = matplotlib.ticker.NullFormatter()
    if ax.get_xscale() == "log":
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_human)
                                     if "size" in ax.get_xlabel() else plain)
        ax.xaxis.set_minor_formatter(none)
    if ax.get_yscale() == "log":
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(none)


def _legend(ax, size):
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize=size)


def _style(i):
    return {"marker": MARKERS[i % len(MARKERS)], "markersize": 4}


def _axes(ax, xlabel, ylabel, xscale=None, yscale=None, title=None, legend=6):
    """The frame every plot shares: labels, scales, title, grid, legend."""
    if xscale:   # "log", or ("log", {"base": 2})
        name, kw = xscale if isinstance(xscale, tuple) else (xscale, {})
        ax.set_xscale(name, **kw)
    if yscale:
        ax.set_yscale(yscale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    if legend:
        _legend(ax, legend)


def _lines(ax, frame, by, x, y, interval=None, label=None):
    """One line per value of `by`, sorted by x; with interval=(low, high)
    columns, error bars where both ends are known."""
    for i, (key, s) in enumerate(frame.groupby(by)):
        s = s.sort_values(x)
        name = label(key, s) if label else key
        if interval is None:
            ax.plot(s[x], s[y], label=name, **_style(i))
            continue
        yv = s[y].to_numpy(dtype=float)
        lo, hi = (s[c].to_numpy(dtype=float) for c in interval)
        err = [np.where(np.isfinite(lo), yv - lo, 0), np.where(np.isfinite(hi), hi - yv, 0)]
        ax.errorbar(s[x], yv, yerr=err, label=name, capsize=2, **_style(i))


def _one_plot(outdir, name, caption, draw, **frame):
    """A one-axis figure: draw(ax), then the shared frame; (file, caption)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    draw(ax)
    _axes(ax, **frame)
    return _save(fig, outdir, name), caption


def _two_plots(outdir, name, caption, panels, suptitle=None):
    """Two axes side by side: panels = [(draw(ax), frame)], each frame the
    keywords of _axes (legend=0 where the other panel has it)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (draw, frame) in zip(axes, panels):
        draw(ax)
        _axes(ax, **frame)
    if suptitle:
        fig.suptitle(_wrap(suptitle), fontsize=8)
    return _save(fig, outdir, name), caption


CI_BARS = "bars: 95%% confidence interval of the median (none below %d repetitions)"


def latency(agg, outdir):
    out = []
    for gid, sub in list(agg.groupby("gid", sort=False))[:MAX_FIGURES_PER_KIND]:
        out.append(_one_plot(
            outdir, "latency_%s.png" % gid,
            "%s: time per call vs size, per reducer (median over repetitions; %s)"
            % (gid, CI_BARS % MIN_REPETITIONS),
            lambda ax: _lines(ax, sub, "variant", "size_bytes", "t_avg_us_median",
                              ("t_avg_us_ci_low", "t_avg_us_ci_high")),
            xlabel="dense gradient size (bytes)", ylabel="time per call (us, avg over ranks)",
            xscale=("log", {"base": 2}), yscale="log", title=_wrap(sub["group"].iloc[0])))
    return out


def model_vs_measured(agg, outdir):
    """Measured median against the cost model's time, one colour per
    reducer, with the diagonal and the 0.5x / 2x lines."""
    if agg.empty or "t_model_us_median" not in agg:
        return []
    d = agg[np.isfinite(agg["t_model_us_median"]) & (agg["t_model_us_median"] > 0)]
    if d.empty:
        return []

    def draw(ax):
        for i, (v, sub) in enumerate(d.groupby("variant", sort=True)):
            ax.scatter(sub["t_model_us_median"], sub["t_avg_us_median"], s=12, label=v,
                       marker="os^vD<>"[i % 7])
        lo = min(d["t_model_us_median"].min(), d["t_avg_us_median"].min())
        hi = max(d["t_model_us_median"].max(), d["t_avg_us_median"].max())
        for f, style in ((1, "-"), (0.5, ":"), (2, ":")):
            ax.plot([lo, hi], [lo * f, hi * f], "k" + style, lw=0.7)
    return [_one_plot(outdir, "model_vs_measured.png",
                      "measured median time per call against the cost model's (rb_model with "
                      "the run's alpha, beta and memory bandwidth); solid: equal, dotted: 0.5x "
                      "and 2x", draw, xlabel="model (us)", ylabel="measured (us)",
                      xscale="log", yscale="log")]


def speedup(sp, outdir):
    if sp.empty:
        return []
    out = []
    for gid, sub in list(sp.groupby("gid", sort=False))[:MAX_FIGURES_PER_KIND]:
        panels = []
        for col, title, legend in (("speedup_vs_dense", "vs dense", 0),
                                   ("speedup_vs_best_baseline", "vs fastest other exact sparse baseline", 6)):
            def draw(ax, col=col):
                # every variant on both axes (NaN where undefined): one colour each
                _lines(ax, sub, "variant", "size_bytes", col, (col + "_low", col + "_high"))
                ax.axhline(1.0, color="k", lw=0.8)
            panels.append((draw, dict(xlabel="dense gradient size (bytes)",
                                      ylabel="speedup (>1 = faster)", xscale=("log", {"base": 2}),
                                      yscale="log", title="speedup " + title, legend=legend)))
        out.append(_two_plots(outdir, "speedup_%s.png" % gid,
                              "%s: speedup of each reducer vs dense and vs the fastest other exact "
                              "sparse baseline (a bar that crosses 1: no significant difference)" % gid,
                              panels, sub["group"].iloc[0]))
    return out


def _family_title(fam_cols, key, varying, size):
    d = dict(zip(fam_cols, key))
    other = ("density %g" % float(d["density"])) if varying == "ranks" else "%s ranks" % d["ranks"]
    return "%s | %s | %s/%s | %s | size %d B" % (d["kind"], d["machine"], d["layout"],
                                                  d["overlap"], other, size)


def wire_bytes(agg, outdir):
    """Bytes sent per rank vs density at the largest size of each family of
    groups that differ only in density."""
    return _family_plots(agg, outdir, "density", "wire_bytes_%d.png", "wire bytes per rank vs density (%s)",
                         "bytes_sent_avg_median", None,
                         dict(xlabel="density of each rank's gradient", ylabel="bytes sent per rank per call",
                              xscale="log", yscale="log"))


def scaling(sc, outdir):
    return _family_plots(sc, outdir, "ranks", "scaling_%d.png", "time per call vs ranks (%s)",
                         "t_avg_us_median", ("t_avg_us_ci_low", "t_avg_us_ci_high"),
                         dict(xlabel="ranks", ylabel="time per call (us)", yscale="log"))


def _family_plots(df, outdir, varying, name, caption, y, interval, frame):
    """One figure per family of groups that differ only in `varying`, at
    the family's largest size: y vs `varying`, one line per variant."""
    out = []
    if df.empty:
        return out
    fam_cols = [c for c in GROUP_COLS if c != varying and c in df.columns]
    for n, (key, fam) in enumerate(list(df.groupby(fam_cols, dropna=False))[:MAX_FIGURES_PER_KIND], 1):
        size = fam["size_bytes"].max()
        title = _family_title(fam_cols, key, varying, size)
        s0 = fam[fam["size_bytes"] == size]
        out.append(_one_plot(outdir, name % n, caption % title,
                             lambda ax: _lines(ax, s0, "variant", varying, y, interval),
                             title=title, **frame))
    return out


def s2_error(s2, outdir):
    out = []
    for kind, sk in s2.groupby("kind"):
        modes = ",".join(sorted(set(str(m) for m in sk["sketch_width_mode"])))
        xlabel = "sketch width (option sketch_width, mode %s)" % modes
        panels = [(lambda ax, col=col: _lines(
                       ax, sk, ["gid", "size_bytes"], "sketch_width", col,
                       label=lambda k, s: "%s %dB d=%g" % (k[0], k[1], float(s["density"].iloc[0]))),
                   dict(xlabel=xlabel, ylabel=ylabel, legend=legend))
                  for col, ylabel, legend in (("rel_l2_err_median", "relative L2 error", 6),
                                              ("recall_median", "recall of the true support", 0))]
        out.append(_two_plots(outdir, "s2_error_%s.png" % kind,
                              "s2 error and recall vs sketch width (%s data)" % kind, panels))
    return out


def gossip_consensus(g, outdir):
    if g.empty:
        return []
    return [_one_plot(outdir, "gossip_consensus_%s.png" % kind,
                      "gossip consensus distance after one call (%s data)" % kind,
                      lambda ax: _lines(ax, gk, ["gid", "options"], "size_bytes", "consensus_median",
                                        label=lambda k, s: "%s %d ranks %s" % (k[0], s["ranks"].iloc[0], k[1])),
                      xlabel="dense gradient size (bytes)",
                      ylabel="consensus distance max_r |x_r - mean| / |mean|", xscale=("log", {"base": 2}))
            for kind, gk in g.groupby("kind")]


def training_curves(curv, outdir):
    out = []
    for tid, sub in list(curv.groupby("tid"))[:MAX_FIGURES_PER_KIND] if not curv.empty else []:
        metric = sub["metric"].iloc[0]
        panels = [(lambda ax, x=x: _lines(ax, sub, ["variant", "run"], x, "value",
                                          label=lambda k, s: k[0]),
                   dict(xlabel=xlabel, ylabel=metric, legend=legend))
                  for x, xlabel, legend in (("iteration", "iteration", 0), ("wall_s", "wall time (s)", 6))]
        out.append(_two_plots(outdir, "train_%s.png" % tid, "%s: %s vs iteration and vs wall time"
                              % (tid, metric), panels, sub["group"].iloc[0]))
    return out


def phase_bars(summ, outdir):
    out = []
    cols = ["t_%s_s_median" % p for p in ("forward", "backward", "reduce", "update")]
    if summ.empty or not all(c in summ for c in cols):
        return out
    for tid, sub in list(summ.groupby("tid"))[:MAX_FIGURES_PER_KIND]:
        sub = sub[sub[cols].notna().any(axis=1)]
        if sub.empty:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        x = np.arange(len(sub))
        bottom = np.zeros(len(sub))
        for c in cols:
            v = sub[c].fillna(0).to_numpy() * 1e3
            ax.bar(x, v, bottom=bottom, label=c[2:-9])
            bottom += v
        ax.set_xticks(x)
        ax.set_xticklabels(sub["variant"], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("ms per iteration (median)")
        ax.set_title(_wrap(sub["group"].iloc[0]), fontsize=8)
        _legend(ax, 7)
        name = _save(fig, outdir, "phases_%s.png" % tid)
        out.append((name, "%s: time per iteration by phase" % tid))
    return out


def efficiency(eff, outdir):
    if eff.empty:
        return []
    pct = eff.assign(**{c: 100 * eff[c] for c in ("compute_efficiency", "compute_efficiency_low",
                                                  "compute_efficiency_high") if c in eff})

    def draw(ax):
        _lines(ax, pct, ["kind", "model", "variant"], "ranks", "compute_efficiency",
               ("compute_efficiency_low", "compute_efficiency_high") if "compute_efficiency_low" in pct
               else None, label=lambda k, s: " ".join(k))
        ax.axhline(100, color="k", lw=0.8)

    return [_one_plot(outdir, "efficiency.png", "compute efficiency vs ranks (%s)"
                      % (CI_BARS % MIN_REPETITIONS), draw, xlabel="ranks",
                      ylabel="compute efficiency (%): t_iter(none) / t_iter(reducer)")]


def _wrap(text, width=110):
    return text if len(text) <= width else text[:width] + "..."
