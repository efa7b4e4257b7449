"""Medians with nonparametric confidence intervals, and what they allow one
to say (Hoefler & Belli, "Scientific Benchmarking of Parallel Computing
Systems", SC'15, rules 5-7; Le Boudec, "Performance Evaluation of Computer
and Communication Systems", 2010, section 2.2.1).

A *repetition* is one independent measurement of a point: a row of
/micro/results (one per file of the same configuration, or one per
`repeat` of rb_micro -r N) or one rb_train run.  Over the n repetitions of
a point:

  median   the sample median;
  interval [x_(l), x_(n+1-l)], the order statistics for which the number of
           repetitions below the true median, Binomial(n, 1/2), lies in
           [l, n-l] with probability >= 95%.  No distribution is assumed.
           Below MIN_REPETITIONS (6) no l >= 1 reaches 95% (n = 5 gives
           [x_(1), x_(5)] at 93.75%): no interval is given, only n.

Two points differ *significantly* only when both have an interval and the
intervals do not overlap (a conservative test).  A point without interval
is never significantly different from anything.

The per-iteration samples of a row (/micro/samples) are not repetitions:
consecutive calls of one run share its process placement, caches, network
state and neighbours, so they are correlated, and an interval built from
them would be far too narrow.  They are only described (the iteration IQR).
"""

import math

import numpy as np

LEVEL = 0.95


def coverage(n, l):
    """P(x_(l) <= true median <= x_(n+1-l)) for n continuous samples."""
    if l < 1 or 2 * l > n + 1:
        return 0.0
    inside = sum(math.comb(n, i) for i in range(l, n - l + 1))
    return inside / 2.0 ** n


def interval_ranks(n, level=LEVEL):
    """(l, u, coverage): 1-based ranks of the symmetric order-statistic
    interval of the median with the largest l reaching level; None when n
    repetitions cannot give one."""
    best = None
    for l in range(1, n // 2 + 1):
        c = coverage(n, l)
        if c < level:
            break
        best = (l, n + 1 - l, c)
    return best


def _min_repetitions(level=LEVEL):
    n = 1
    while interval_ranks(n, level) is None:
        n += 1
    return n


MIN_REPETITIONS = _min_repetitions()   # 6 at 95%


def median_ci(values, level=LEVEL):
    """(median, low, high, n, coverage) of the finite values; low, high and
    coverage are NaN when n < MIN_REPETITIONS."""
    x = np.sort(np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float))
    n = len(x)
    if n == 0:
        return (np.nan, np.nan, np.nan, 0, np.nan)
    ranks = interval_ranks(n, level)
    if ranks is None:
        return (float(np.median(x)), np.nan, np.nan, n, np.nan)
    l, u, c = ranks
    return (float(np.median(x)), float(x[l - 1]), float(x[u - 1]), n, c)


def has_interval(lo, hi):
    return lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi)


def compare(a_lo, a_hi, b_lo, b_hi):
    """-1 when a is significantly smaller than b, +1 when larger, 0 when
    the intervals overlap or either is missing."""
    if not (has_interval(a_lo, a_hi) and has_interval(b_lo, b_hi)):
        return 0
    if a_hi < b_lo:
        return -1
    if a_lo > b_hi:
        return 1
    return 0


def min_interval(los, his):
    """Interval of min over several quantities from theirs: if each interval
    holds its quantity, [min lows, min highs] holds the minimum.  NaN when
    any is missing."""
    los, his = list(los), list(his)
    if not los or not all(has_interval(lo, hi) for lo, hi in zip(los, his)):
        return (np.nan, np.nan)
    return (min(los), min(his))


def ratio_interval(num_lo, num_hi, den_lo, den_hi):
    """Interval of num / den (both positive) from their intervals:
    [num_lo / den_hi, num_hi / den_lo].  It holds the ratio whenever both
    intervals hold their quantities (>= 90% by Bonferroni, not 95%), and it
    excludes 1 exactly when the two intervals do not overlap."""
    if not (has_interval(num_lo, num_hi) and has_interval(den_lo, den_hi)) or den_lo <= 0 or den_hi <= 0:
        return (np.nan, np.nan)
    return (num_lo / den_hi, num_hi / den_lo)


def median_range(values, los, his):
    """(median, low, high) over several points: the median of the values and
    the medians of their interval ends, a point without interval counting
    as (-inf, +inf).  If every point's interval holds its true value, the
    median of the true values lies in [median lows, median highs] (the
    median is monotone), so this is the range a repeated experiment should
    land in; an end that comes out infinite is NaN (not enough points have
    an interval)."""
    points = [(v, lo, hi) for v, lo, hi in zip(values, los, his) if np.isfinite(v)]
    if not points:
        return (np.nan, np.nan, np.nan)
    med = float(np.median([p[0] for p in points]))
    known = [has_interval(lo, hi) for _, lo, hi in points]
    lo = float(np.median([p[1] if k else -np.inf for p, k in zip(points, known)]))
    hi = float(np.median([p[2] if k else np.inf for p, k in zip(points, known)]))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return (med, np.nan, np.nan)
    return (med, lo, hi)
