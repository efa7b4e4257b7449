"""How the report writes numbers, in one place: table cells, sizes (B, KiB,
MiB, GiB), a claim's value (percent or x, as in the headline) with its
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


def claim_unit(paper):
    """The axis label of a claim's values."""
    f = claim_formatter(paper)
    return {percent: "%", times: "x (speedup, > 1 = faster)"}.get(f, "value")


def interval(med, lo, hi, f, exact=False):
    """'93.4% [93.1%, 93.6%]'; '87.3% (exact)' for a deterministic value or
    a zero-width interval (every repetition gave the same number); the
    median alone, '(no interval)', below stats.MIN_REPETITIONS."""
    if missing(med):
        return "-"
    if exact or (stats.has_interval(lo, hi) and f(lo) == f(hi) == f(med)):
        return "%s (exact)" % f(med)
    if stats.has_interval(lo, hi):
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
    f = claim_formatter(row.get("paper", ""))
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
