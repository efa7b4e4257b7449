#!/usr/bin/python3
"""analysis/rbanalysis/stats.py, function by function, on values whose
answers are known from the definitions (Le Boudec 2010, table A.1, for the
order statistics of the median's interval): median_ci, launch_median_ci,
the 5% minimum effect (differ, ratio_verdict), two one-sided tests
(paired_equivalence) and the interval arithmetic of the claims.
tests/analysis/stats_unit.py checks the same module on worked cases."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import math
import random

import numpy as np
import pytest

from rbanalysis import stats

NAN = float("nan")


def binomial_coverage(n, l):
    """P(l <= Binomial(n, 1/2) <= n - l), from the definition."""
    return sum(math.comb(n, i) for i in range(l, n - l + 1)) / 2 ** n


# ------------------------------------------------------------- median_ci

# Le Boudec, table A.1: the 95% interval of the median of n values is
# [x_(l), x_(n+1-l)].
@pytest.mark.parametrize("n, l", [(6, 1), (9, 2), (10, 2), (20, 6), (30, 10), (50, 18),
                                  (70, 27), (100, 40)])
def test_interval_ranks_are_the_textbook_ones(n, l):
    lo, hi, cov = stats.interval_ranks(n)
    assert (lo, hi) == (l, n + 1 - l)
    assert cov == pytest.approx(binomial_coverage(n, l))
    assert cov >= 0.95 > binomial_coverage(n, l + 1)


def test_no_95_interval_below_six_values():
    assert stats.MIN_REPETITIONS == 6
    for n in range(1, 6):
        assert stats.interval_ranks(n) is None
    assert binomial_coverage(5, 1) == 0.9375


def test_median_ci_odd_count_with_outlier():
    med, lo, hi, n, cov = stats.median_ci([7, 3, 1000, 5, 9, 4, 6, 8, 2])
    assert (med, lo, hi, n) == (6, 3, 9, 9)
    assert cov == pytest.approx(0.9609375)


def test_median_ci_even_count_is_the_middle_pair_mean():
    # The mean of these is 19.17; the median is (3 + 4) / 2.
    med, lo, hi, n, cov = stats.median_ci([100, 1, 4, 2, 5, 3])
    assert med == 3.5
    assert (lo, hi, n) == (1, 100, 6)
    assert cov == pytest.approx(0.96875)


def test_median_ci_is_the_median_not_the_mean():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 40)
        x = [rng.lognormvariate(0, 1.5) for _ in range(n)]
        x[rng.randrange(n)] *= 1000   # one slow outlier
        med = stats.median_ci(x)[0]
        assert med == pytest.approx(float(np.median(x)), rel=1e-12)
        if n >= 3:
            assert med < float(np.mean(x))


def test_median_ci_ignores_order_and_unusable_values():
    x = [4.0, 1.0, 3.0, 6.0, 2.0, 5.0, 7.0]
    shuffled = [7.0, 2.0, 5.0, 1.0, 6.0, 3.0, 4.0]
    assert stats.median_ci(x) == stats.median_ci(shuffled)
    with_junk = x + [NAN, None, math.inf, -math.inf]
    assert stats.median_ci(with_junk) == stats.median_ci(x)


def test_median_ci_of_nothing():
    med, lo, hi, n, cov = stats.median_ci([])
    assert n == 0 and all(math.isnan(v) for v in (med, lo, hi, cov))
    assert stats.median_ci([NAN, None])[3] == 0


def test_median_ci_below_six_values_gives_the_median_only():
    med, lo, hi, n, cov = stats.median_ci([5, 1, 4])
    assert (med, n) == (4, 3)
    assert math.isnan(lo) and math.isnan(hi) and math.isnan(cov)


def test_median_ci_censored_values_count_as_largest():
    # Two of seven runs never reached the target (+inf).
    x = [12, math.inf, 10, 14, math.inf, 11, 13]
    med, lo, hi, n, _ = stats.median_ci(x, keep_inf=True)
    assert (med, lo, n) == (13, 10, 7)
    assert hi == math.inf
    # Without keep_inf they are left out: the median of the five others.
    assert stats.median_ci(x)[:4:3] == (12, 5)


def test_median_ci_at_90_percent_for_tost():
    # n = 8 at 90%: [x_(2), x_(7)] (coverage 0.930); at 95%: [x_(1), x_(8)].
    x = list(range(1, 9))
    assert stats.median_ci(x, level=stats.TOST_LEVEL)[1:3] == (2, 7)
    assert stats.median_ci(x)[1:3] == (1, 8)


# ------------------------------------------------------ launch_median_ci

def test_launch_median_is_the_median_of_launch_medians():
    # Launch A: five fast repetitions; B and C: one slow one each.  Over
    # the seven rows the median is 1; over the three launches it is 10.
    values = [1, 1, 1, 1, 1, 10, 20]
    launches = ["A"] * 5 + ["B", "C"]
    ci = stats.launch_median_ci(values, launches)
    assert ci["median"] == 10
    assert ci["unit"] == "launch" and ci["launches"] == 3 and ci["n"] == 3
    assert math.isnan(ci["low"]) and math.isnan(ci["high"])


def test_launch_interval_over_six_launches():
    values, launches = [], []
    for k, level in enumerate([5.0, 9.0, 4.0, 8.0, 6.0, 7.0]):
        values += [level, level + 0.1, level - 0.1]
        launches += ["L%d" % k] * 3
    ci = stats.launch_median_ci(values, launches)
    assert (ci["median"], ci["low"], ci["high"], ci["n"]) == (6.5, 4.0, 9.0, 6)
    assert ci["coverage"] == pytest.approx(0.96875)


def test_one_launch_keeps_its_repetitions_interval_marked():
    x = [3.0, 1.0, 2.0, 6.0, 5.0, 4.0]
    ci = stats.launch_median_ci(x, ["only"] * 6)
    assert ci["unit"] == stats.ONE_LAUNCH and ci["launches"] == 1
    assert (ci["median"], ci["low"], ci["high"], ci["n"]) == (3.5, 1.0, 6.0, 6)


def test_launch_medians_are_those_of_each_launchs_rows():
    """launch_median_ci groups the rows by launch in one pass (a search of
    all rows per launch was quadratic: minutes over 10,000 launches): the
    same numbers as the definition, launches interleaved, one row or
    several each."""
    rnd = random.Random(5)
    for trial in range(200):
        launches = [rnd.choice(["L%d" % i for i in range(rnd.randint(2, 30))] + [7, 7.0])
                    for _ in range(rnd.randint(2, 120))]
        values = [rnd.lognormvariate(3, 1) if rnd.random() > 0.05 else NAN for _ in launches]
        pairs = [(l, float(v)) for v, l in zip(values, launches) if np.isfinite(v)]
        ids = sorted(set(l for l, _ in pairs), key=str)
        if len(ids) < 2:
            continue
        per = [float(np.median([v for l, v in pairs if l == i])) for i in ids]
        want = stats.median_ci(per)
        got = stats.launch_median_ci(values, launches)
        same = pytest.approx(want[:4], nan_ok=True, rel=0, abs=0)   # exactly
        assert (got["median"], got["low"], got["high"], got["n"]) == same
        assert got["launches"] == len(ids)


def test_launch_median_ci_skips_unusable_rows():
    ci = stats.launch_median_ci([NAN, 2.0, None, 4.0], ["A", "A", "B", "B"])
    assert ci["launches"] == 2 and ci["median"] == 3.0
    empty = stats.launch_median_ci([NAN], ["A"])
    assert empty["n"] == 0 and empty["unit"] == ""


# ------------------------------------------- significance, minimum effect

def test_compare_needs_two_intervals_that_do_not_touch():
    assert stats.compare(1, 2, 3, 4) == -1
    assert stats.compare(3, 4, 1, 2) == 1
    assert stats.compare(1, 3, 3, 4) == 0            # touching ends overlap
    assert stats.compare(NAN, NAN, 3, 4) == 0        # no interval: never significant
    assert stats.compare(1, 2, None, None) == 0


def test_min_effect_is_five_percent():
    assert stats.MIN_EFFECT == 0.05


@pytest.mark.parametrize("b, want", [(104.9, 0), (105.0, 0), (105.1, -1), (150.0, -1)])
def test_differ_states_only_differences_beyond_the_minimum_effect(b, want):
    # Both intervals tight, so every pair here is significant.
    assert stats.differ(100, 99.9, 100.1, b, b - 0.01, b + 0.01) == want
    assert stats.differ(b, b - 0.01, b + 0.01, 100, 99.9, 100.1) == -want


def test_differ_other_minimum_effect_and_bad_medians():
    assert stats.differ(100, 99.9, 100.1, 103, 102.9, 103.1, min_effect=0.02) == -1
    assert stats.differ(0, -0.1, 0.1, 10, 9, 11) == 0
    assert stats.differ(100, 99, 101, 200, 150, 250) == -1
    assert stats.differ(100, 99, 101, 200, NAN, NAN) == 0


@pytest.mark.parametrize("ratio, lo, hi, want", [
    (1.5, 1.2, 1.9, "faster"),
    (0.6, 0.5, 0.7, "slower"),
    (1.04, 1.01, 1.06, "equivalent within 5%"),      # significant, within 5%
    (0.97, 0.96, 0.99, "equivalent within 5%"),
    (1.0, 0.96, 1.04, "equivalent within 5%"),       # interval inside +-5%
    (1.0, 0.8, 1.3, "no significant difference"),
    (1.2, NAN, NAN, "no significant difference (no interval)"),
])
def test_ratio_verdict(ratio, lo, hi, want):
    assert stats.ratio_verdict(ratio, lo, hi) == want


def test_ratio_verdict_own_words():
    assert stats.ratio_verdict(2.0, 1.5, 2.5, above="fewer bytes", below="more bytes") == \
        "fewer bytes"


# ---------------------------------------------------- two one-sided tests

@pytest.mark.parametrize("diffs, want", [
    ([0.1, -0.2, 0.3, 0.0, -0.1], "equivalent"),
    ([-0.5, 0.5, 0.0, 0.1, -0.1], "equivalent"),          # the margin itself is inside
    ([0.6, 0.9, 1.2, 0.7, 0.8], "not-equivalent"),        # wholly above
    ([-0.6, -0.9, -1.2, -0.7, -0.8], "not-equivalent"),   # wholly below
    ([-0.8, 0.1, -0.2, 0.3, -0.1], "inconclusive"),       # straddles -margin
    ([0.1, 0.0, 0.2, 0.1], "inconclusive"),               # 4 pairs: no 90% interval
])
def test_paired_equivalence_classes(diffs, want):
    assert stats.paired_equivalence(diffs, 0.5)[5] == want


def test_paired_equivalence_uses_the_order_statistic_interval():
    # Eight pairs, one far off: at 90% the interval is [x_(2), x_(7)] =
    # [-0.2, 0.2], inside +-0.5 (a [min, max] reading would say
    # inconclusive).
    diffs = [-0.9, 0.1, 0.2, -0.1, 0.0, 0.3, -0.2, 0.1]
    med, lo, hi, n, cov, verdict = stats.paired_equivalence(diffs, 0.5)
    assert (lo, hi, n, verdict) == (-0.2, 0.2, 8, "equivalent")
    assert med == pytest.approx(0.05)
    assert cov == pytest.approx(binomial_coverage(8, 2))


def test_tost_needs_five_pairs():
    assert stats.min_pairs() == 5
    assert stats.min_pairs(0.95) == 6


# --------------------------------------------------- interval arithmetic

def test_ratio_interval():
    assert stats.ratio_interval(8, 12, 2, 4) == (2, 6)
    assert all(math.isnan(v) for v in stats.ratio_interval(8, 12, 0, 4))
    assert all(math.isnan(v) for v in stats.ratio_interval(8, 12, NAN, 4))


def test_min_interval():
    assert stats.min_interval([3, 1, 2], [5, 4, 6]) == (1, 4)
    assert all(math.isnan(v) for v in stats.min_interval([3, NAN], [5, 4]))
    assert all(math.isnan(v) for v in stats.min_interval([], []))


def test_median_range():
    assert stats.median_range([1, 2, 3], [0.5, 1.5, 2.5], [1.5, 2.5, 3.5]) == (2, 1.5, 2.5)
    # One point of three without an interval counts as (-inf, inf): the
    # medians of the ends are still finite.
    assert stats.median_range([1, 2, 3], [0.5, NAN, 2.5], [1.5, NAN, 3.5]) == (2, 0.5, 3.5)
    # Two of three without: an end is infinite, so no range.
    med, lo, hi = stats.median_range([1, 2, 3], [0.5, NAN, NAN], [1.5, NAN, NAN])
    assert med == 2 and math.isnan(lo) and math.isnan(hi)
