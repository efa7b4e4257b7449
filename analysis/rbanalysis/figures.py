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

import os
import re
import textwrap
import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.lines  # noqa: E402
import matplotlib.patches  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from . import formatting  # noqa: E402
from .micro import GROUP_COLS  # noqa: E402
from .stats import MIN_REPETITIONS  # noqa: E402

MAX_FIGURES_PER_KIND = 24
# A figure of fewer points than this says nothing a table row does not.
MIN_POINTS = 3
MARKERS = "osD^v<>px*h+"
LINESTYLES = ("-", "--", ":", "-.")
DPI = 90
# Inches: one plot fills a third of the page's 1216 px column at DPI, two
# panels half of it.
ONE = (4.4, 2.7)
TWO = (6.6, 2.7)
FONT = {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 6.5,
        "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.titlesize": 8}
matplotlib.rcParams.update(FONT)

# One colour per reducer in every figure (matplotlib's tab10, fixed order).
REDUCER_COLOURS = {"dense": "#1f77b4", "agsparse": "#ff7f0e", "sparcml": "#2ca02c",
                   "s2": "#d62728", "parallax": "#9467bd", "omnireduce": "#8c564b",
                   "gossip": "#e377c2", "none": "#7f7f7f"}
OTHER_COLOURS = ("#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39")
# Series that are not reducers (training phases, workloads, sizes, options
# of one reducer): a palette no reducer uses (ColorBrewer's dark teal to
# sand), drawn with hatches or markers of their own as well.
SERIES_COLOURS = ("#01665e", "#80cdc1", "#543005", "#dfc27d", "#35978f", "#bf812d",
                  "#003c30", "#f6e8c3", "#8c510a", "#c7eae5")
SERIES_HATCHES = ("", "//", "..", "xx", "\\\\", "++")
# Verdicts: one colour per meaning, the report page's too (formatting).
VERDICT_COLOURS, VERDICT_KEY = formatting.VERDICT_COLOURS, formatting.VERDICT_KEY

# Figures whose text would reach outside the image: file -> [what]
CLIPPED = {}


def display_class(verdict_class, verdict=""):
    """The colour class a verdict is shown in: claims.py's class, except
    that a verdict by the median alone ('meets the claim by its median
    only') is told apart from an inconclusive interval."""
    cls = str(verdict_class)
    if cls == "inconclusive" and "by its median only" in str(verdict):
        return "median-only"
    return cls if cls in VERDICT_COLOURS else "missing"


def series_colour(i):
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def natural_key(text):
    """'G2' before 'G10': digits compared as numbers."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(text)) if t]


def natural_groups(frame, by):
    """frame.groupby(by) in natural order of the key (G1, G2, ..., G10)."""
    return sorted(frame.groupby(by, sort=False), key=lambda kv: natural_key(kv[0]))


def reducer_of(variant):
    """'s2[sketch_width=2]' -> 's2'."""
    return str(variant).split("[", 1)[0].strip()


def reducer_colour(variant):
    """The colour of a reducer (or a variant of it) in every figure."""
    r = reducer_of(variant)
    if r in REDUCER_COLOURS:
        return REDUCER_COLOURS[r]
    return OTHER_COLOURS[zlib.crc32(r.encode()) % len(OTHER_COLOURS)]


def _save(fig, outdir, name, rect=None):
    """Lay fig out (constrained layout), check that no text reaches outside
    it, save it as outdir/name.  A text that does (a title too long for any
    wrapping) is named in CLIPPED and the image is widened to hold it.
    rect: tight layout within it instead (a figure legend below the axes)."""
    for ax in fig.get_axes():
        _readable_ticks(ax)
    try:
        if rect is not None:
            fig.tight_layout(rect=rect)
        elif fig.get_layout_engine() is None:
            fig.set_layout_engine("constrained")
        fig.canvas.draw()
        for _ in range(3):      # a text that reaches outside: wrapped narrower, laid out again
            artists = clipped_texts(fig, artists=True)
            if not artists or not any(_narrower(t) for _, t in artists):
                break
            if rect is not None:
                fig.tight_layout(rect=rect)
            fig.canvas.draw()
        cut = clipped_texts(fig)
        if cut:
            CLIPPED[name] = cut
        else:
            CLIPPED.pop(name, None)
        fig.savefig(os.path.join(outdir, name), dpi=DPI,
                    **({"bbox_inches": "tight", "pad_inches": 0.05} if cut else {}))
    finally:
        plt.close(fig)
    return name


def _narrower(text):
    """Wrap a text artist to about two thirds of its longest line; False
    when it cannot get narrower (a single word)."""
    s = text.get_text()
    longest = max(len(x) for x in s.split("\n"))
    width = max(12, int(longest * 0.7))
    if width >= longest:
        return False
    new = "\n".join(textwrap.fill(x, width, break_long_words=False) for x in s.split("\n"))
    if new == s:
        return False
    text.set_text(new)
    return True


def clipped_texts(fig, artists=False):
    """The visible texts of a drawn figure (titles, axis labels, tick
    labels, legends, annotations) that reach outside it, as
    ['title: ...', ...] (artists: as [(what, the text artist)])."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    texts = [("suptitle", fig._suptitle)] if getattr(fig, "_suptitle", None) else []
    for leg in fig.legends:
        texts += [("legend", t) for t in leg.get_texts()]
    for ax in fig.get_axes():
        texts += [("title", ax.title), ("title", ax._left_title), ("title", ax._right_title),
                  ("x label", ax.xaxis.label), ("y label", ax.yaxis.label)]
        for axis in (ax.xaxis, ax.yaxis):    # the ticks drawn, not those beyond the limits
            texts += [("tick label", t.label1) for t in axis._update_ticks()]
        if ax.get_legend():
            texts += [("legend", t) for t in ax.get_legend().get_texts()]
        texts += [("annotation", t) for t in ax.texts]
    for what, t in texts:
        if t is None or not t.get_visible() or not t.get_text().strip():
            continue
        e = t.get_window_extent(renderer)
        if e.x0 < box.x0 - 1 or e.y0 < box.y0 - 1 or e.x1 > box.x1 + 1 or e.y1 > box.y1 + 1:
            out.append((what, t) if artists else
                       "%s '%s'" % (what, t.get_text().replace("\n", " ")[:60]))
    return out


def title_text(text, width=50, lines=3):
    """A title wrapped to the width of a small figure, at most `lines`
    lines; a longer one is shortened at a word with '...' (the caption and
    the group key hold it whole)."""
    wrapped = textwrap.wrap(str(text), width)
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][:width - 3].rstrip() + "..."
    return "\n".join(wrapped)


def _plain(v, _pos=None):
    return "%g" % v


def _readable_ticks(ax):
    """Log axes labelled in plain numbers ('0.5', '2'; sizes '64KiB'),
    with at least three labelled ticks: over less than a decade the log
    locator labels one tick ('1'), so evenly spaced ticks instead."""
    for axis, scale, label in ((ax.xaxis, ax.get_xscale(), ax.get_xlabel()),
                               (ax.yaxis, ax.get_yscale(), ax.get_ylabel())):
        sized = "size" in label
        if scale != "log" and not sized:
            continue
        lo, hi = sorted(axis.get_view_interval())
        if scale == "log" and len(_ticks_within(axis, lo, hi)) < 3:
            # 1-2-5 steps, else (less than a factor 5 spanned) evenly spaced ticks
            for loc in (matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)),
                        matplotlib.ticker.MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10])):
                axis.set_major_locator(loc)
                if 3 <= len(_ticks_within(axis, lo, hi)) <= 7:
                    break
            axis.set_minor_locator(matplotlib.ticker.NullLocator())
        elif scale == "log" and sized and len(_ticks_within(axis, lo, hi)) > 10:
            axis.set_major_locator(matplotlib.ticker.LogLocator(base=2, numticks=8))
        if scale == "log":
            axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            formatting.size_tick if sized else _rate_tick if "bit/s" in label else _plain))


def _ticks_within(axis, lo, hi):
    return [t for t in axis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi]


def _legend(ax, size, outside=None):
    """One entry per label (repetitions of a reducer share one).  More
    than a few entries go below the axes, never over the data."""
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    if not seen:
        return
    if outside is None:
        outside = len(seen) > 4
    labels = [_tick_name(k, 30) for k in seen]
    widest = max(len(x) for lab in labels for x in lab.split("\n"))
    if outside:
        ax.legend(list(seen.values()), labels, fontsize=size, loc="upper center",
                  bbox_to_anchor=(0.5, -0.22), frameon=False,
                  ncol=max(1, min(3, len(seen), 66 // (widest + 6))))
    else:
        ax.legend(list(seen.values()), labels, fontsize=size, loc="best")


def _style(i, colour=None):
    st = {"marker": MARKERS[i % len(MARKERS)], "markersize": 4,
          "linestyle": LINESTYLES[i % len(LINESTYLES)]}
    if colour:
        st["color"] = colour
    return st


def _axes(ax, xlabel, ylabel, xscale=None, yscale=None, title=None, legend=6):
    """The frame every plot shares: labels, scales, title, grid, legend."""
    if xscale:   # "log", or ("log", {"base": 2})
        name, kw = xscale if isinstance(xscale, tuple) else (xscale, {})
        ax.set_xscale(name, **kw)
    if yscale:
        ax.set_yscale(yscale)
    ax.set_xlabel(_wrap_label(xlabel, 50))
    ax.set_ylabel(_wrap_label(ylabel))
    if title:
        ax.set_title(title_text(title), fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    if legend:
        _legend(ax, legend)


def _wrap_label(text, width=34):
    """A y label on two lines where one would not fit beside a small axes."""
    return "\n".join(textwrap.wrap(str(text), width)) if text else text


def _lines(ax, frame, by, x, y, interval=None, label=None, colour=None, positive=False):
    """One line per value of `by`, sorted by x, coloured by its reducer
    (the frame's variant column) unless colour(key, s) says otherwise
    (colour="series": each line a colour of SERIES_COLOURS and a marker of
    its own); with
    interval=(low, high) columns, error bars where both ends are known.
    Returns the number of points drawn (0: nothing to plot; positive: only
    y > 0 counts, for a log axis)."""
    drawn = 0
    per_colour = {}
    for n, (key, s) in enumerate(natural_groups(frame, by)):
        s = s.sort_values(x)
        name = label(key, s) if label else key
        if colour == "series":
            c = series_colour(n)
        else:
            c = colour(key, s) if colour else (reducer_colour(s["variant"].iloc[0])
                                              if "variant" in s else None)
        i = per_colour[c] = per_colour.get(c, -1) + 1     # variants of one reducer: own marker
        if colour == "series":
            i = n
        yv = s[y].to_numpy(dtype=float)
        ok = np.isfinite(s[x].to_numpy(dtype=float)) & np.isfinite(yv) & ((yv > 0) if positive else True)
        drawn += int(ok.sum())
        if not ok.any():
            continue
        if interval is None:
            ax.plot(s[x], yv, label=name, **_style(i, c))
            continue
        lo, hi = (s[col].to_numpy(dtype=float) for col in interval)
        err = [np.where(np.isfinite(lo), yv - lo, 0), np.where(np.isfinite(hi), hi - yv, 0)]
        ax.errorbar(s[x], yv, yerr=err, label=name, capsize=2, **_style(i, c))
    return drawn


def _dots(ax, frame, value, interval=None, label="variant"):
    """One x value only (a single size, a single rank count): a dot per
    variant on its own row (named by the label column) with its interval,
    not a line of one point.  Returns the number of dots drawn."""
    d = frame[np.isfinite(frame[value].to_numpy(dtype=float))].sort_values(label)
    for pos, (_, r) in enumerate(d.iterrows()):
        err = None
        if interval and all(np.isfinite(float(r[c])) for c in interval):
            err = [[r[value] - r[interval[0]]], [r[interval[1]] - r[value]]]
        ax.errorbar([r[value]], [pos], xerr=err, fmt="o", capsize=3,
                    color=reducer_colour(r["variant"]))
    ax.set_yticks(range(len(d)))
    # long variant names ('s2[sketch_width=0.005,sketch_width_mode=fraction]')
    # on two or three lines, broken after a comma or '['
    ax.set_yticklabels([_tick_name(x) for x in d[label]], fontsize=6.5)
    ax.set_ylim(-0.7, len(d) - 0.3)
    return len(d)


def _differing_options(all_options, options):
    """' a=1,b=2' less the options every line shares (said once in the
    caption's table); '' when none differs."""
    sets = [set(str(o).split(",")) for o in set(all_options) if str(o)]
    common = set.intersection(*sets) if sets else set()
    own = [p for p in str(options).split(",") if p and p not in common]
    return " " + ",".join(own) if own else ""


# Option names as a figure's legend and ticks abbreviate them (tables and
# CSVs keep the full variant labels).
COMPACT = ((r"sketch_width_mode=fraction", "frac"), (r"sketch_width_mode=nnz", "x nnz"),
           (r"sketch_width=", "w="), (r"sketch_rows=", "rows="), (r"error_feedback=", "ef="),
           (r"dense_reducer=", "dense layers: "), (r"gossip_mix=", "mix="),
           (r"oktopk_select=", "select="), (r"oktopk_density=", "k="),
           (r"sparsify=topk:", "top-k "), (r"sparsify_feedback=off", "no feedback"))


def compact(text):
    """'s2[sketch_rows=1,sketch_width=0.0008,sketch_width_mode=fraction]' ->
    's2[rows=1,w=0.0008,frac]'."""
    text = str(text)
    for long, short in COMPACT:
        text = re.sub(long, short, text)
    return text


def _tick_name(text, width=24):
    parts = re.split(r"(?<=[,\[])", compact(text))
    lines, cur = [], ""
    for p in parts:
        if cur and len(cur) + len(p) > width:
            lines.append(cur)
            cur = ""
        cur += p
    lines.append(cur)
    return "\n".join(lines)


def _empty_panel(ax, what="no value to plot"):
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, color="#555")
    ax.set_xticks([])
    ax.set_yticks([])


def _one_plot(outdir, name, caption, draw, values=None, **frame):
    """A one-axis figure: draw(ax) (returns how many points it drew), then
    the shared frame; (file, caption), or (None, why) when draw had
    nothing to plot, or (None, why, row) when it drew fewer than
    MIN_POINTS points (row: what the figure was and values(), its points
    as text, for the report's table of them)."""
    fig, ax = plt.subplots(figsize=ONE)
    n = draw(ax)
    if not n:
        plt.close(fig)
        return None, _nothing(caption)
    if n < MIN_POINTS:
        plt.close(fig)
        return _few(name, caption, n, values)
    title = frame.pop("title", None)
    _axes(ax, **frame)
    if title:    # over the figure, not the axes (long tick labels push the axes aside)
        fig.suptitle(title_text(title, 60), fontsize=8)
    return _save(fig, outdir, name), caption


def _nothing(caption):
    return "No figure for %s: these data hold no value to plot." % caption


def _few(name, caption, n, values):
    """The entry of a figure of too few points: a row of the report's table
    of them instead of an image."""
    what = os.path.splitext(name)[0].replace("_", " ")
    return (None, "No figure for %s: %d point%s, fewer than %d (listed in a table instead)."
            % (caption, n, "" if n == 1 else "s", MIN_POINTS),
            {"figure": what, "points": n, "values": values() if values else "-",
             "caption": caption})


def _two_plots(outdir, name, caption, panels, suptitle=None, values=None):
    """Two axes side by side: panels = [(draw(ax), frame)], each frame the
    keywords of _axes (legend=0 where the other panel has it).  A panel
    without data says so; a figure without any is not drawn, nor one whose
    panels each have fewer than MIN_POINTS points (a table row instead)."""
    fig, axes = plt.subplots(1, 2, figsize=TWO)
    counts = []
    for ax, (draw, frame) in zip(axes, panels):
        n = draw(ax)
        counts.append(n)
        if n:
            _axes(ax, **frame)
        else:
            _empty_panel(ax)
            ax.set_title(title_text(frame.get("title") or frame.get("ylabel", "")), fontsize=8)
    if not sum(counts):
        plt.close(fig)
        return None, _nothing(caption)
    if max(counts) < MIN_POINTS:
        plt.close(fig)
        return _few(name, caption, max(counts), values)
    if suptitle:
        fig.suptitle(title_text(suptitle, 85, 2), fontsize=8)
    return _save(fig, outdir, name), caption


def _point_text(frame, label, value, fmt_value, interval=None):
    """The points of a figure not drawn, as text: 'dense 4 KiB: 30 us
    [28, 33]; agsparse 4 KiB: 41 us'."""
    parts = []
    for _, r in frame.iterrows():
        v = r.get(value)
        if not formatting.is_number(v):
            continue
        text = "%s: %s" % (label(r), fmt_value(v))
        if interval and all(formatting.is_number(r.get(c)) for c in interval):
            text += " [%s, %s]" % (fmt_value(r[interval[0]]), fmt_value(r[interval[1]]))
        parts.append(text)
    return "; ".join(parts) or "-"


def _us(v):
    return "%s us" % formatting.general(v)


CI_BARS = "bars: 95%% confidence interval of the median (none below %d repetitions)"
SIZE = "dense gradient size"


def _by_size_or_dots(ax, sub, y, interval, positive=True):
    """Lines over size, or, where the group was run at one size only, a
    dot per reducer (the value then on the x axis)."""
    if sub["size_bytes"].nunique() == 1:
        return _dots(ax, sub, y, interval)
    return _lines(ax, sub, "variant", "size_bytes", y, interval, positive=positive)


def _size_frame(sub, xlabel, ylabel, scale="log", **kw):
    """The frame of a plot over size, or of its one-size dot plot."""
    if sub["size_bytes"].nunique() == 1:   # rows name the reducers: no legend
        kw["legend"] = 0
        return dict(xlabel="%s at %s" % (ylabel, formatting.size(sub["size_bytes"].iloc[0])),
                    ylabel="", xscale=scale, **kw)
    return dict(xlabel=xlabel, ylabel=ylabel, xscale=("log", {"base": 2}), yscale=scale, **kw)


def short_groups(frame):
    """gid -> '<gid>: ' + the parts of its group label (' | '-separated)
    that not every group of the frame shares (the group key at the top of
    the report has the whole label)."""
    labels = frame.groupby("gid", sort=False)["group"].first().to_dict()
    parts = {g: str(lab).split(" | ") for g, lab in labels.items()}
    common = set.intersection(*(set(p) for p in parts.values())) if len(parts) > 1 else set()
    return {g: "%s: %s" % (g, " | ".join(x for x in p if x not in common) or "all groups alike")
            for g, p in parts.items()}


def _point_label(r):
    return "%s %s" % (r["variant"], formatting.size(r["size_bytes"]))


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


def _rate_tick(v, _pos=None):
    """A link-rate tick: '100M', '1G', '10G' (bit/s)."""
    for unit, div in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= div:
            return "%g%s" % (v / div, unit)
    return "%g" % v


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
