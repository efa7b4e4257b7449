"""Medians with nonparametric confidence intervals, and what they allow one
to say (Hoefler & Belli, "Scientific Benchmarking of Parallel Computing
Systems", SC'15, rules 5-7; Le Boudec, "Performance Evaluation of Computer
and Communication Systems", 2010, section 2.2.1).

A *repetition* is one measurement of a point: a row of /micro/results
(one per file of the same configuration, or one per `repeat` of rb_micro
--repeat N) or one rb_train run.  A *launch* is one process start (one mpirun,
one archive file, one run_id).  The repetitions inside one launch share
its process placement, memory layout and neighbours: on this project's VM
the same point took 4.64 us [4.44, 4.94] in one launch and 9.29 us
[9.04, 9.40] in the next.  So when a point has rows from two launches or
more, the unit is the launch (launch_median_ci): each launch's median over
its repetitions, then the median and interval over those launch medians.
A point of one launch keeps the interval over its repetitions, marked: it
leaves out the launch-to-launch variation.  Over the n units of a point:

  median   the sample median;
  interval [x_(l), x_(n+1-l)], the order statistics for which the number of
           repetitions below the true median, Binomial(n, 1/2), lies in
           [l, n-l] with probability >= 95%.  No distribution is assumed.
           Below MIN_REPETITIONS (6) no l >= 1 reaches 95% (n = 5 gives
           [x_(1), x_(5)] at 93.75%): no interval is given, only n.

Two points differ *significantly* only when both have an interval and the
intervals do not overlap (a conservative test).  A point without interval
is never significantly different from anything.  A difference is
*reported* only when it is significant and its medians differ by more than
MIN_EFFECT (5%, differ()); a significant difference smaller than that is
"equivalent within 5%".

Equivalence (paired_equivalence): two one-sided tests (TOST, Schuirmann
1987) at 5% each are the 90% interval of the difference lying inside the
margin.  The interval is the order-statistic one of the median paired
difference at >= 90% (n = 5 gives [min, max] at 93.75%).

The per-iteration samples of a row (/micro/samples) are not repetitions:
consecutive calls of one run share its process placement, caches, network
state and neighbours, so they are correlated, and an interval built from
them would be far too narrow.  They are only described (the iteration IQR).
"""

import functools
import math

import numpy as np

LEVEL = 0.95
# The smallest difference worth reporting, relative: a significant
# difference of medians within 5% is "equivalent within 5%".  Used for
# speedups, per-point comparisons, claim verdicts and --compare alike.
MIN_EFFECT = 0.05
# Two one-sided tests at 5% each: the 90% interval.
TOST_LEVEL = 0.90
ONE_LAUNCH = "one launch: the interval leaves out launch-to-launch variation"


def coverage(n, l):
    """P(x_(l) <= true median <= x_(n+1-l)) for n continuous samples.
    Exact in integers: a float 2.0 ** n overflows from n = 1024."""
    if l < 1 or 2 * l > n + 1:
        return 0.0
    inside = sum(math.comb(n, i) for i in range(l, n - l + 1))
    return inside / 2 ** n


@functools.lru_cache(maxsize=4096)
def interval_ranks(n, level=LEVEL):
    """(l, u, coverage): 1-based ranks of the symmetric order-statistic
    interval of the median with the largest l reaching level; None when n
    repetitions cannot give one.  One pass over the binomial tail with
    exact integers, so thousands of launches cost milliseconds."""
    if n < 1:
        return None
    total = 2 ** n
    best = None
    tail = 0            # sum of comb(n, i) for i < l
    term = 1            # comb(n, l - 1)
    for l in range(1, n // 2 + 1):
        tail += term
        c = (total - 2 * tail) / total    # l <= n - l: the tails are mirror images
        if c < level:
            break
        best = (l, n + 1 - l, c)
        term = term * (n - l + 1) // l
    return best


def _min_repetitions(level=LEVEL):
    n = 1
    while interval_ranks(n, level) is None:
        n += 1
    return n


MIN_REPETITIONS = _min_repetitions()   # 6 at 95%


def _usable(v, keep_inf):
    if v is None:
        return False
    v = float(v)
    return np.isfinite(v) or (keep_inf and v == np.inf)


def median_ci(values, level=LEVEL, keep_inf=False):
    """(median, low, high, n, coverage) of the finite values; low, high and
    coverage are NaN when n is too small for level (n < MIN_REPETITIONS at
    95%).  keep_inf: +inf counts as a value (a censored run, e.g. one that
    never reached its target: larger than every finite one); the median
    and ends may then be inf."""
    x = np.sort(np.asarray([float(v) for v in values if _usable(v, keep_inf)], dtype=float))
    n = len(x)
    if n == 0:
        return (np.nan, np.nan, np.nan, 0, np.nan)
    med = _median_sorted(x)
    ranks = interval_ranks(n, level)
    if ranks is None:
        return (med, np.nan, np.nan, n, np.nan)
    l, u, c = ranks
    return (med, float(x[l - 1]), float(x[u - 1]), n, c)


def _median_sorted(x):
    """np.median, except that the mean of a finite value and inf is inf
    (numpy gives nan for inf - inf cases only, but be explicit)."""
    n = len(x)
    a, b = x[(n - 1) // 2], x[n // 2]
    return float(a) if a == b else float((a + b) / 2)


def launch_median_ci(values, launches, level=LEVEL):
    """Median and interval of a point over its launches (module text).
    Returns a dict: median, low, high, n (the units: launches, or the
    repetitions of the one launch), coverage, launches (distinct ones) and
    unit ("launch" or ONE_LAUNCH).  A launch's value is the median of its
    repetitions; the point's median is the median of those."""
    pairs = [(l, float(v)) for v, l in zip(values, launches) if v is not None and np.isfinite(v)]
    ids = sorted(set(l for l, _ in pairs), key=str)
    if len(ids) >= 2:
        of = {}   # each launch's values, in one pass (a search per launch was quadratic)
        for l, v in pairs:
            of.setdefault(l, []).append(v)
        per = [_median_of(of[i]) for i in ids]
        med, lo, hi, n, cov = median_ci(per, level)
        unit = "launch"
    else:
        med, lo, hi, n, cov = median_ci([v for _, v in pairs], level)
        unit = ONE_LAUNCH if pairs else ""
    return {"median": med, "low": lo, "high": hi, "n": n, "coverage": cov,
            "launches": len(ids), "unit": unit}


def _median_of(values):
    """float(np.median(values)); one value is its own median."""
    return values[0] if len(values) == 1 else float(np.median(values))


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


def differ(a, a_lo, a_hi, b, b_lo, b_hi, min_effect=MIN_EFFECT):
    """-1 when a is significantly smaller than b and by more than
    min_effect (a < b / (1 + min_effect)), +1 when larger by more than it,
    0 otherwise: the only differences the report states."""
    sig = compare(a_lo, a_hi, b_lo, b_hi)
    if sig == 0 or not (np.isfinite(a) and np.isfinite(b)) or a <= 0 or b <= 0:
        return 0
    big = a / b > 1 + min_effect or b / a > 1 + min_effect
    return sig if big else 0


def ratio_verdict(ratio, lo, hi, above="faster", below="slower", min_effect=MIN_EFFECT):
    """Words for a ratio (e.g. a speedup) and its interval: `above` /
    `below` when the interval excludes 1 and the ratio is beyond the
    minimum effect; "equivalent within 5%" when the whole interval, or a
    significant ratio, lies within it; else no significant difference."""
    if not has_interval(lo, hi):
        return "no significant difference (no interval)"
    m = 1 + min_effect
    if lo > 1 and ratio > m:
        return above
    if hi < 1 and ratio < 1 / m:
        return below
    if (1 / m <= lo and hi <= m) or lo > 1 or hi < 1:
        return "equivalent within %g%%" % (100 * min_effect)
    return "no significant difference"


def paired_equivalence(diffs, margin, level=TOST_LEVEL):
    """Two one-sided tests on paired differences (reducer - reference, one
    per seed): (median, low, high, n, coverage, verdict_class) with the
    order-statistic interval of the median difference at >= level.
    equivalent: the interval inside [-margin, margin]; not-equivalent: it
    lies wholly above margin or wholly below -margin (the caller says which
    side is worse); inconclusive: it straddles a margin, or too few pairs
    for an interval (n < 5 at 90%)."""
    med, lo, hi, n, cov = median_ci(diffs, level)
    if not has_interval(lo, hi):
        return med, lo, hi, n, cov, "inconclusive"
    if -margin <= lo and hi <= margin:
        return med, lo, hi, n, cov, "equivalent"
    if lo > margin or hi < -margin:
        return med, lo, hi, n, cov, "not-equivalent"
    return med, lo, hi, n, cov, "inconclusive"


def min_pairs(level=TOST_LEVEL):
    """The fewest pairs that give an interval at level (5 at 90%)."""
    return _min_repetitions(level)


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
