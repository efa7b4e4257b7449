"""How the report writes numbers, in one place: table cells, sizes (B, KiB,
MiB, GiB), a claim's value (percent, x, accuracy points or % of perplexity,
by the claims table's unit column, as in the headline) with its
interval, marked exact where the value is deterministic, and with the range
of its points beside it where a pooled interval does not cover them."""

import math
import re

import pandas as pd

from . import stats


def missing(v):
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def number(v):
    """Table cell text: 4 significant digits for floats, whole numbers in
    full (byte counts: 12288, not 1.229e+04), '-' for missing."""
    if missing(v):
        return "-"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return "%d" % v
        return "%.4g" % v
    return str(v)


def size(v):
    """Bytes as a reader counts them: '512 B', '4 KiB', '1.5 MiB'."""
    if missing(v):
        return "-"
    try:
        b = float(v)
    except (TypeError, ValueError):
        return str(v)
    for unit, div in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(b) >= div:
            return "%.4g %s" % (b / div, unit)
    return "%d B" % b if b.is_integer() else "%.4g B" % b


def size_tick(v, _pos=None):
    """A size axis tick: '4K'-style is ambiguous, so KiB/MiB, no space."""
    return size(v).replace(" ", "")


def percent(v):
    return "-" if missing(v) else "%.1f%%" % (100 * float(v))


def times(v):
    return "-" if missing(v) else "%.2fx" % float(v)


def general(v):
    return "-" if missing(v) else "%.3g" % float(v)


def claim_formatter(paper):
    """A claim's numbers are written like the paper's: '81%' -> percent,
    '1.8x' -> times, anything else (a difference, a message count) as a
    plain number."""
    if "%" in str(paper):
        return percent
    if re.search(r"\d\s*x\b", str(paper)):
        return times
    return general


def points(v):
    """An accuracy difference: '+0.25 points' (percentage points)."""
    return "-" if missing(v) else "%+.2f points" % float(v)


def relative(v):
    """A relative difference of perplexity: '+1.20% perplexity'."""
    return "-" if missing(v) else "%+.2f%% perplexity" % (100 * float(v))


# A unit in words is written once after an interval: '-0.25 [-0.50, +0.10] points'.
points.bare, points.suffix = (lambda v: "%+.2f" % float(v)), " points"
relative.bare, relative.suffix = (lambda v: "%+.2f%%" % (100 * float(v))), " perplexity"


def plain_unit(v):
    """A number whose unit is not known: said so rather than left bare."""
    return "-" if missing(v) else "%.3g (no unit)" % float(v)


# A claims-table row's unit column (claims.py) -> how its numbers are written.
UNIT_FORMATTERS = {"%": percent, "x": times, "points": points, "rel": relative}


def row_formatter(row):
    """How a claims-table row's numbers are written: by its unit column
    where it has one ('%', 'x', 'points', 'rel'), else by its paper text;
    every number with its unit."""
    unit = row.get("unit", "") if hasattr(row, "get") else ""
    if not missing(unit) and str(unit) in UNIT_FORMATTERS:
        return UNIT_FORMATTERS[str(unit)]
    f = claim_formatter(row.get("paper", "") if hasattr(row, "get") else "")
    return plain_unit if f is general else f


def claim_unit(paper, unit=None):
    """The axis label of a claim's values."""
    if unit == "points":
        return "accuracy difference (percentage points)"
    if unit == "rel":
        return "perplexity difference (% of dense's)"
    f = UNIT_FORMATTERS.get(unit) or claim_formatter(paper)
    return {percent: "%", times: "x (> 1 = faster, or growth ratio)"}.get(f, "value")


def interval(med, lo, hi, f, exact=False):
    """'93.4% [93.1%, 93.6%]'; '87.3% (exact)' for a deterministic value or
    a zero-width interval (every repetition gave the same number); the
    median alone, '(no interval)', below stats.MIN_REPETITIONS."""
    if missing(med):
        return "-"
    if exact or (stats.has_interval(lo, hi) and f(lo) == f(hi) == f(med)):
        return "%s (exact)" % f(med)
    if stats.has_interval(lo, hi):
        if hasattr(f, "suffix"):
            return "%s [%s, %s]%s" % (f.bare(med), f.bare(lo), f.bare(hi), f.suffix)
        return "%s [%s, %s]" % (f(med), f(lo), f(hi))
    return "%s (no interval)" % f(med)


def points_range(lo, hi, vmin, vmax):
    """True when the points' values reach outside [lo, hi]: an interval of
    the pooled median then must not be read as covering them."""
    if missing(vmin) or missing(vmax):
        return False
    if not stats.has_interval(lo, hi):
        return vmin != vmax
    return vmin < lo or vmax > hi


def claim_value(row, with_points=True):
    """A claims-table row's value as the report prints it: the median with
    its interval (or 'exact').  Over several points the interval is that of
    their median: where the points reach outside it, their range is
    printed beside it (and a zero-width one is left out: the points are
    each exact, their median is not)."""
    if not row.get("points") or missing(row.get("measured_median")):
        return "not measured"
    f = row_formatter(row)
    med, lo, hi = row["measured_median"], row.get("measured_low"), row.get("measured_high")
    n = int(row["points"])
    vmin, vmax = row.get("measured_min"), row.get("measured_max")
    if n > 1 and with_points and points_range(lo, hi, vmin, vmax):
        zero = stats.has_interval(lo, hi) and f(lo) == f(hi)
        shown = f(med) if zero or not stats.has_interval(lo, hi) else interval(med, lo, hi, f)
        return "%s (median of %d points, which range %s to %s)" % (shown, n, f(vmin), f(vmax))
    text = interval(med, lo, hi, f, bool(row.get("exact", False)))
    if n > 1 and with_points and (missing(vmin) or missing(vmax)):
        # the points' range is unknown here: say whose interval it is
        return "%s (median of %d points; the interval is the median's, not the points')" % (text, n)
    return "%s over %d points" % (text, n) if n > 1 and with_points else text


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not (
        isinstance(v, float) and math.isnan(v))


# ---------------------------------------------------------------- terminal

# Verdict classes (claims table, verdict_class, and plotting.display_class's
# median-only) and their colours, one per meaning, on the page and in the
# figures; the key says what each colour means.
VERDICT_COLOURS = {"meets": "#1a7f37", "equivalent": "#1a7f37", "below": "#c62828",
                   "not-equivalent": "#c62828", "inconclusive": "#9a6700",
                   "median-only": "#6639ba", "missing": "#6e7781"}
VERDICT_KEY = (("meets", "meets the claim, or equivalent within the margin"),
               ("below", "below the claim, or not equivalent"),
               ("median-only", "meets or below by its median only: no interval"),
               ("inconclusive", "inconclusive: the interval straddles the claim"),
               ("missing", "not measured"))

TERMINAL_WIDTH = 120


def wrap_lines(text, width=TERMINAL_WIDTH, indent="", subsequent=None):
    """text as lines of at most width characters (words kept whole; a word
    longer than a line is broken, never dropped)."""
    import textwrap
    return textwrap.wrap(str(text), width, initial_indent=indent,
                         subsequent_indent=indent if subsequent is None else subsequent,
                         break_on_hyphens=False) or [indent.rstrip()]


def cell_wrap(text, width):
    """A table cell's lines: broken at spaces and after ',' or '[' (so that
    's2[sketch_width=0.005,sketch_width_mode=fraction]' breaks between its
    options), a piece longer than the column broken where it must."""
    pieces = [p for p in re.split(r"(?<=[ ,\[])", text) if p]
    lines, cur = [], ""
    for p in pieces:
        if cur and len(cur) + len(p.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = ""
        while len(p.rstrip()) > width:
            lines.append(p[:width])
            p = p[width:]
        cur += p
    if cur.strip() or not lines:
        lines.append(cur.rstrip())
    return lines


def text_table(heads, rows, widths, right=(), indent="  ", notes=None):
    """An aligned plain-text table whose cells wrap inside their column
    (never cut): heads and rows of strings, widths per column, right: the
    columns aligned right; notes: a text per row (or ''), wrapped under it
    across the table's width.  Returns the lines."""
    def cell_lines(text, w):
        return cell_wrap(str(text), w) if str(text) else [""]

    def render(cells):
        wrapped = [cell_lines(c, w) for c, w in zip(cells, widths)]
        out = []
        for k in range(max(len(w) for w in wrapped)):
            parts = []
            for j, (lines, w) in enumerate(zip(wrapped, widths)):
                t = lines[k] if k < len(lines) else ""
                parts.append(t.rjust(w) if j in right else t.ljust(w))
            out.append((indent + " ".join(parts)).rstrip())
        return out
    lines = render(heads)
    lines.append(indent + " ".join("-" * w for w in widths))
    total = len(indent) + sum(widths) + len(widths) - 1
    for i, r in enumerate(rows):
        lines += render(r)
        if notes and notes[i]:
            lines += wrap_lines(notes[i], total, indent + "    ", indent + "      ")
    return lines
