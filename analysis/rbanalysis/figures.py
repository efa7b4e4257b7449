"""PNG figures.  Each function writes its files into outdir and returns
[(file name, caption)].  Lines show the median over repeats; error bars the
min..max over repeats."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from .micro import GROUP_COLS  # noqa: E402

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


def latency(agg, outdir):
    out = []
    for gid, sub in list(agg.groupby("gid", sort=False))[:MAX_FIGURES_PER_KIND]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, (var, s) in enumerate(sub.groupby("variant")):
            s = s.sort_values("size_bytes")
            y = s["t_avg_us_median"].to_numpy()
            err = [y - s["t_avg_us_min"].to_numpy(), s["t_avg_us_max"].to_numpy() - y]
            ax.errorbar(s["size_bytes"], y, yerr=err, label=var, capsize=2, **_style(i))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("dense gradient size (bytes)")
        ax.set_ylabel("time per call (us, avg over ranks)")
        ax.set_title(_wrap(sub["group"].iloc[0]), fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        _legend(ax, 6)
        name = _save(fig, outdir, "latency_%s.png" % gid)
        out.append((name, "%s: time per call vs size, per reducer (median, min..max over repeats)" % gid))
    return out


def speedup(sp, outdir):
    out = []
    if sp.empty:
        return out
    for gid, sub in list(sp.groupby("gid", sort=False))[:MAX_FIGURES_PER_KIND]:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, col, title in ((axes[0], "speedup_vs_dense", "vs dense"),
                               (axes[1], "speedup_vs_best_baseline", "vs best exact sparse baseline")):
            for i, (var, s) in enumerate(sub.groupby("variant")):
                s = s.sort_values("size_bytes")
                if s[col].notna().any():
                    ax.plot(s["size_bytes"], s[col], label=var, **_style(i))
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("dense gradient size (bytes)")
            ax.set_ylabel("speedup (>1 = faster)")
            ax.set_title("speedup " + title, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        _legend(axes[1], 6)
        fig.suptitle(_wrap(sub["group"].iloc[0]), fontsize=8)
        name = _save(fig, outdir, "speedup_%s.png" % gid)
        out.append((name, "%s: speedup of each reducer vs dense and vs the fastest exact sparse baseline" % gid))
    return out


def wire_bytes(agg, outdir):
    """Bytes sent per rank vs density at the largest size of each family of
    groups that differ only in density."""
    out = []
    fam_cols = [c for c in GROUP_COLS if c != "density"]
    fams = list(agg.groupby(fam_cols, dropna=False))[:MAX_FIGURES_PER_KIND]
    for n, (key, fam) in enumerate(fams, 1):
        size = fam["size_bytes"].max()
        s0 = fam[fam["size_bytes"] == size]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, (var, s) in enumerate(s0.groupby("variant")):
            s = s.sort_values("density")
            ax.plot(s["density"], s["bytes_sent_avg_median"], label=var, **_style(i))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("density of each rank's gradient")
        ax.set_ylabel("bytes sent per rank per call")
        d = dict(zip(fam_cols, key))
        title = "%s | %s | %s/%s | %s ranks | size %d B" % (d["kind"], d["machine"], d["layout"],
                                                           d["overlap"], d["ranks"], size)
        ax.set_title(title, fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        _legend(ax, 6)
        name = _save(fig, outdir, "wire_bytes_%d.png" % n)
        out.append((name, "wire bytes per rank vs density (%s)" % title))
    return out


def scaling(sc, outdir):
    out = []
    if sc.empty:
        return out
    fam_cols = [c for c in GROUP_COLS if c != "ranks"]
    for n, (key, fam) in enumerate(list(sc.groupby(fam_cols, dropna=False))[:MAX_FIGURES_PER_KIND], 1):
        size = fam["size_bytes"].max()
        s0 = fam[fam["size_bytes"] == size]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, (var, s) in enumerate(s0.groupby("variant")):
            s = s.sort_values("ranks")
            y = s["t_avg_us_median"].to_numpy()
            ax.errorbar(s["ranks"], y, yerr=[y - s["t_avg_us_min"], s["t_avg_us_max"] - y],
                        label=var, capsize=2, **_style(i))
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("time per call (us)")
        d = dict(zip(fam_cols, key))
        title = "%s | %s | %s/%s | density %g | size %d B" % (d["kind"], d["machine"], d["layout"],
                                                              d["overlap"], float(d["density"]), size)
        ax.set_title(title, fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        _legend(ax, 6)
        name = _save(fig, outdir, "scaling_%d.png" % n)
        out.append((name, "time per call vs ranks (%s)" % title))
    return out


def s2_error(s2, outdir):
    out = []
    if s2.empty:
        return out
    for kind, sk in s2.groupby("kind"):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for i, ((gid, size), s) in enumerate(sk.groupby(["gid", "size_bytes"])):
            s = s.sort_values("sketch_width")
            lab = "%s %dB d=%g" % (gid, size, float(s["density"].iloc[0]))
            axes[0].plot(s["sketch_width"], s["rel_l2_err_median"], label=lab, **_style(i))
            axes[1].plot(s["sketch_width"], s["recall_median"], label=lab, **_style(i))
        modes = ",".join(sorted(set(str(m) for m in sk["sketch_width_mode"])))
        for ax, yl in ((axes[0], "relative L2 error"), (axes[1], "recall of the true support")):
            ax.set_xlabel("sketch width (option sketch_width, mode %s)" % modes)
            ax.set_ylabel(yl)
            ax.grid(True, alpha=0.3)
        _legend(axes[0], 6)
        name = _save(fig, outdir, "s2_error_%s.png" % kind)
        out.append((name, "s2 error and recall vs sketch width (%s data)" % kind))
    return out


def gossip_consensus(g, outdir):
    out = []
    if g.empty:
        return out
    for kind, gk in g.groupby("kind"):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, ((gid, opts), s) in enumerate(gk.groupby(["gid", "options"])):
            s = s.sort_values("size_bytes")
            ax.plot(s["size_bytes"], s["consensus_median"],
                    label="%s %d ranks %s" % (gid, s["ranks"].iloc[0], opts), **_style(i))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("dense gradient size (bytes)")
        ax.set_ylabel("consensus distance max_r |x_r - mean| / |mean|")
        ax.grid(True, alpha=0.3)
        _legend(ax, 6)
        name = _save(fig, outdir, "gossip_consensus_%s.png" % kind)
        out.append((name, "gossip consensus distance after one call (%s data)" % kind))
    return out


def training_curves(curv, outdir):
    out = []
    if curv.empty:
        return out
    for tid, sub in list(curv.groupby("tid"))[:MAX_FIGURES_PER_KIND]:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        metric = sub["metric"].iloc[0]
        for i, ((var, run), s) in enumerate(sub.groupby(["variant", "run"])):
            s = s.sort_values("iteration")
            axes[0].plot(s["iteration"], s["value"], label=var, **_style(i))
            axes[1].plot(s["wall_s"], s["value"], label=var, **_style(i))
        axes[0].set_xlabel("iteration")
        axes[1].set_xlabel("wall time (s)")
        for ax in axes:
            ax.set_ylabel(metric)
            ax.grid(True, alpha=0.3)
        _legend(axes[1], 6)
        fig.suptitle(_wrap(sub["group"].iloc[0]), fontsize=8)
        name = _save(fig, outdir, "train_%s.png" % tid)
        out.append((name, "%s: %s vs iteration and vs wall time" % (tid, metric)))
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
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, ((kind, model, var), s) in enumerate(eff.groupby(["kind", "model", "variant"])):
        s = s.sort_values("ranks")
        ax.plot(s["ranks"], 100 * s["compute_efficiency"], label="%s %s %s" % (kind, model, var),
                **_style(i))
    ax.axhline(100, color="k", lw=0.8)
    ax.set_xlabel("ranks")
    ax.set_ylabel("compute efficiency (%): t_iter(none) / t_iter(reducer)")
    ax.grid(True, alpha=0.3)
    _legend(ax, 6)
    return [(_save(fig, outdir, "efficiency.png"), "compute efficiency vs ranks")]


def _wrap(text, width=110):
    return text if len(text) <= width else text[:width] + "..."
