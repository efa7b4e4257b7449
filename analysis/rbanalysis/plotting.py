"""What every figure of the report is drawn with (figures.py draws them
and states their contract): the figures' size, fonts and palette, a
reducer's colour, the ticks, legends and wrapped titles, the check that
every text lies inside the image (CLIPPED), and the plot shapes the
figures share."""

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


def _rate_tick(v, _pos=None):
    """A link-rate tick: '100M', '1G', '10G' (bit/s)."""
    for unit, div in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= div:
            return "%g%s" % (v / div, unit)
    return "%g" % v

