#!/usr/bin/python3
"""analysis/rbanalysis/workload.py: which row of a workload is the fastest
exact reducer.  An exact reducer's name is not enough: oktopk with
oktopk_select=topk is lossy (it reports an error), and a row with #wrong
above 0 failed validation; neither may be named the fastest exact."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import numpy as np
import pandas as pd

from rbanalysis import workload


def rows(*specs):
    """Rows of one workload point: (reducer, time us, #wrong, rel_l2_err)."""
    return pd.DataFrame([dict(kind="micro", input="", rows=10000, cols=64, ranks=2, order=0,
                              workload="uniform", reducer=r, t_avg_us=t, bytes_sent_avg=1.0,
                              wrong=w, rel_l2_err=e, union_rows=100, imbalance=1.0)
                         for r, t, w, e in specs])


def fastest(df):
    t = workload.reducer_table(df)
    return list(t.loc[t["fastest_exact"] == "fastest", "reducer"])


def test_the_fastest_exact_row_is_named():
    assert fastest(rows(("agsparse", 100, 0, 0.0), ("sparcml", 90, 0, 0.0), ("dense", 400, 0, 0.0))) == ["sparcml"]


def test_a_lossy_row_under_an_exact_name_is_not_exact():
    assert fastest(rows(("oktopk", 50, 0, 0.35), ("agsparse", 100, 0, 0.0))) == ["agsparse"]


def test_a_float_sums_rounding_is_still_exact():
    assert fastest(rows(("zen", 50, 0, 3e-8), ("agsparse", 100, 0, 0.0))) == ["zen"]


def test_a_row_that_failed_validation_is_not_exact():
    assert fastest(rows(("parallax", 50, 2, 0.0), ("agsparse", 100, 0, 0.0))) == ["agsparse"]


def test_lossy_reducers_are_never_named():
    assert fastest(rows(("s2", 10, 0, 2.7), ("gossip", 5, 0, np.nan))) == []
