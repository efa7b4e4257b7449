#!/usr/bin/python3
"""rb-report's statistics (analysis/rbanalysis/stats.py) on values whose
answers are known: the median and its order-statistic interval (not the
mean), intervals over launches, the 5% minimum effect, two one-sided
tests, and censored (never reached) values."""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    from synth import Checks
    from rbanalysis import stats
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()


def median_not_mean():
    # One outlier: the mean is 208, the median 6; the interval of n = 9 is
    # [x_(2), x_(8)] (coverage 96.1%).
    x = [3, 9, 4, 1000, 6, 5, 8, 7, 2]
    med, lo, hi, n, cov = stats.median_ci(x)
    check(med == 6 and (lo, hi) == (3, 9) and n == 9 and math.isclose(cov, 0.9609375),
          "median_ci of 9 values with an outlier: 6 [3, 9] at 96.1%% (got %s [%s, %s] %s)"
          % (med, lo, hi, cov))
    check(not math.isclose(med, float(np.mean(x))), "median_ci is not the mean (%g)" % np.mean(x))
    # Below 6 values: no interval at 95% (n = 5 reaches 93.75%).
    med, lo, hi, n, _ = stats.median_ci([1, 2, 3, 4, 5])
    check(med == 3 and math.isnan(lo) and math.isnan(hi), "5 values: median, no 95% interval")
    med, lo, hi, n, cov = stats.median_ci([1, 2, 3, 4, 5], level=stats.TOST_LEVEL)
    check((lo, hi) == (1, 5) and math.isclose(cov, 0.9375),
          "5 values at 90%%: [min, max] at 93.75%% (got [%s, %s] %s)" % (lo, hi, cov))


def censored():
    # Runs that never reached the target count as +inf: the median is
    # that of the 6 values with the two infinities largest.
    x = [10, 12, math.inf, 11, math.inf, 13]
    med, lo, hi, n, _ = stats.median_ci(x, keep_inf=True)
    check(n == 6 and med == 12.5 and lo == 10 and hi == math.inf,
          "censored: 6 runs, 2 never reached: median 12.5 [10, inf] (got %s [%s, %s])"
          % (med, lo, hi))
    med, _, _, n, _ = stats.median_ci([math.inf] * 4 + [1, 2], keep_inf=True)
    check(med == math.inf, "censored: most runs never reached: the median is inf")
    med, _, _, n, _ = stats.median_ci(x)
    check(n == 4, "without keep_inf the infinities are left out (n %d)" % n)


def launches():
    # Two launches of 9 repetitions each, the second 2x the first: the
    # repetitions of one launch share its offset.  Over the 18 rows a
    # repetition interval would be narrow and wrong; over launches there
    # are 2 units: no interval.
    a = [4.4 + 0.05 * i for i in range(9)]
    b = [2 * v for v in a]
    ci = stats.launch_median_ci(a + b, ["L1"] * 9 + ["L2"] * 9)
    check(ci["unit"] == "launch" and ci["n"] == 2 and ci["launches"] == 2
          and math.isnan(ci["low"]) and math.isclose(ci["median"], (4.6 + 9.2) / 2),
          "2 launches with a 2x offset: the unit is the launch, 2 units, no interval "
          "(got %s)" % ci)
    # Six launches, three quick and three 2x slow, 5 repetitions each: the
    # interval spans both levels.
    vals, ids = [], []
    for k in range(6):
        base = 4.6 if k % 2 == 0 else 9.2
        vals += [base + 0.01 * i for i in range(5)]
        ids += ["L%d" % k] * 5
    ci = stats.launch_median_ci(vals, ids)
    check(ci["n"] == 6 and ci["low"] < 5 and ci["high"] > 9,
          "6 launches, half 2x slower: the interval spans both (got [%g, %g])"
          % (ci["low"], ci["high"]))
    # One launch: the interval over its repetitions, marked.
    ci = stats.launch_median_ci(a, ["L1"] * 9)
    check(ci["unit"] == stats.ONE_LAUNCH and ci["n"] == 9 and not math.isnan(ci["low"]),
          "one launch: the repetitions' interval, marked %r" % ci["unit"])


def launch_offset_not_significant():
    # Reducer x is run in 6 launches; reducer y in 6 other launches; each
    # launch adds its own 1x or 2x offset to both, interleaved.  The
    # repetitions of a launch agree closely, so a per-repetition interval
    # would call x and y different; over launches they are not.
    xs, ys, ids = [], [], []
    for k in range(6):
        off = 1.0 if k in (0, 3, 4) else 2.0
        xs += [4.6 * off + 0.01 * i for i in range(9)]
        ys += [4.9 * off + 0.01 * i for i in range(9)]
        ids += ["L%d" % k] * 9
    cx, cy = stats.launch_median_ci(xs, ids), stats.launch_median_ci(ys, ids)
    sig = stats.differ(cx["median"], cx["low"], cx["high"], cy["median"], cy["low"], cy["high"])
    check(sig == 0, "launch-level: a 2x launch offset does not make x and y differ (%s vs %s)"
          % ((cx["low"], cx["high"]), (cy["low"], cy["high"])))
    # Two launches, one per reducer, 2x apart: over repetitions the
    # intervals would not overlap; each point is one launch, so it is
    # marked, and it never makes the headline (checked in claims_synth.py).
    rx = stats.median_ci(xs[:9])
    ry = stats.median_ci([2 * v for v in xs[:9]])
    check(stats.compare(rx[1], rx[2], ry[1], ry[2]) != 0,
          "per repetition (one launch each) the 2x launch offset looks significant: why one "
          "launch is marked")


def minimum_effect():
    check(stats.MIN_EFFECT == 0.05, "the minimum effect is 5%")
    # Significant (no overlap) but 3% apart: not stated.
    check(stats.differ(100, 99.5, 100.5, 103, 102.5, 103.5) == 0,
          "significant but 3% apart: no stated difference")
    check(stats.differ(100, 99.5, 100.5, 110, 109, 111) == -1,
          "significant and 10% apart: stated (a smaller)")
    check(stats.differ(100, 90, 120, 130, 110, 140) == 0, "overlapping intervals: none")
    check(stats.ratio_verdict(1.03, 1.01, 1.04) == "equivalent within 5%",
          "a significant 3% speedup: equivalent within 5%")
    check(stats.ratio_verdict(1.5, 1.2, 1.9) == "faster", "a significant 1.5x: faster")
    check(stats.ratio_verdict(0.6, 0.5, 0.7) == "slower", "a significant 0.6x: slower")
    check(stats.ratio_verdict(1.0, 0.7, 1.4) == "no significant difference",
          "a wide interval around 1: no significant difference, not equivalence")
    check(stats.ratio_verdict(1.0, 0.97, 1.03) == "equivalent within 5%",
          "an interval inside +-5%: equivalent within 5%")


def tost():
    m = 0.5
    inside = [0.1, -0.2, 0.3, 0.0, -0.1]
    out = stats.paired_equivalence(inside, m)
    check(out[5] == "equivalent" and (out[1], out[2]) == (-0.2, 0.3),
          "TOST: 5 differences in [-0.2, 0.3], margin 0.5: equivalent (got %s)" % (out,))
    below = [-1.2, -0.9, -1.5, -0.8, -1.1]
    check(stats.paired_equivalence(below, m)[5] == "not-equivalent",
          "TOST: all differences below -0.5: not equivalent")
    straddle = [-0.8, 0.1, -0.2, 0.3, -0.1]
    check(stats.paired_equivalence(straddle, m)[5] == "inconclusive",
          "TOST: interval [-0.8, 0.3] straddles -0.5: inconclusive")
    check(stats.paired_equivalence([0.1, 0.0, 0.2, 0.1], m)[5] == "inconclusive",
          "TOST: 4 pairs give no 90% interval: inconclusive")
    check(stats.min_pairs() == 5, "TOST needs 5 pairs at 90%")


def many_launches():
    # 1,024 and 10,000 repetitions (rb_micro --repeat 1024, or that many
    # archives): a float 2.0 ** n overflowed here.  The ranks match the
    # slow definition, and the normal approximation of the binomial.
    for n in (1024, 10000):
        l, u, cov = stats.interval_ranks(n)
        check(0.95 <= cov < 0.96 and stats.coverage(n, l + 1) < 0.95 and u == n + 1 - l,
              "n = %d: the largest l with coverage >= 95%% (got l = %d, %.4f)" % (n, l, cov))
        half = 1.96 * math.sqrt(n) / 2
        check(abs((n / 2 - l) - half) <= 2, "n = %d: l lies 1.96 sd below n/2 (%d vs %.1f)"
              % (n, l, n / 2 - half))
    med, lo, hi, n, _ = stats.median_ci(range(10000))
    check(n == 10000 and lo < med < hi, "median_ci of 10,000 values has an interval")


for test in (median_not_mean, censored, launches, launch_offset_not_significant, minimum_effect,
             tost, many_launches):
    test()
sys.exit(check.exit())
