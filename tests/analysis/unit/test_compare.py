#!/usr/bin/python3
"""analysis/rbanalysis/compare.py: the key that pairs a point of run A with
the same point of run B.  The same configuration simulated on two
platforms is two points (one key each); a measured point's key does not
depend on the platform column; a joint claim whose setting at parity
differs between A and B is a contradiction.  A damaged report directory (a table cut
short, text where a number belongs) is refused, not compared."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import pytest

from rbanalysis import compare

ROW = {"kind": "simulated", "device": "host", "input": "", "layout": "row", "overlap": "random",
       "density": 0.02, "ranks": 128, "cols": 256, "timing": "2 iters + 1 warm-up",
       "malloc": "not set", "oversubscribed": False, "size_bytes": 4194304}


def key(**over):
    return compare._micro_key(dict(ROW, **over))


def test_two_simulated_platforms_are_two_points():
    assert key(platform="knl-aries") != key(platform="p100-ib-edr")


def test_the_platform_is_named_in_a_simulated_key():
    assert "p100-ib-edr" in key(platform="p100-ib-edr")


def test_a_measured_key_ignores_the_platform_column():
    assert key(kind="measured", platform="this machine") == key(kind="measured", platform="")


def test_every_configuration_column_changes_the_key():
    base = key(platform="knl-aries")
    for col, other in (("ranks", 64), ("density", 0.01), ("layout", "element"), ("size_bytes", 1024)):
        assert key(platform="knl-aries", **{col: other}) != base, col


POINTS = ("domain,key,variant,measure,median,ci_low,ci_high,n,busy,unit\n"
          "micro,k1,dense,t_avg_us,19.5,18.0,21.0,6,no,launch\n"
          "micro,k1,s2,t_avg_us,9.5,9.0,10.0,6,no,launch\n")
CLAIMS = "claim_id,setting,oversubscribed\nx,paper,False\n"


def report_dir(tmp_path, points=POINTS, claims=CLAIMS):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "verdict_points.csv").write_text(points)
    (tmp_path / "tables" / "claims.csv").write_text(claims)
    return str(tmp_path)


def test_a_report_directory_is_read(tmp_path):
    points, _, what = compare.dataset(report_dir(tmp_path))
    assert list(points["median"]) == [19.5, 9.5]
    assert what.startswith("report ")


@pytest.mark.parametrize("points, reason", [
    (POINTS[:-20], "tables/verdict_points.csv ends mid-line"),
    (POINTS.replace("19.5", "abc"), "column median holds 'abc', not a number"),
    (POINTS.replace(",6,no", ",six,no", 1), "column n holds 'six'"),
])
def test_a_damaged_report_is_refused(tmp_path, points, reason):
    """A cut table compared as fewer points ('no contradiction', exit 0);
    text in median ended --compare in a TypeError (exit 1: 'contradiction')."""
    with pytest.raises(compare.DatasetError) as e:
        compare.dataset(report_dir(tmp_path, points))
    assert reason in str(e.value)


def _joint(claim, median=3.0):
    import pandas as pd
    from rbanalysis import claim_table, claims
    row = claim_table._row("s2_joint", claim=claim, setting="paper", platform="this machine, 2 ranks",
                      data="measured", oversubscribed="no", busy="no", points=6, repetitions=2,
                      measured_median=median, measured_low=median * 0.9,
                      measured_high=median * 1.1, launches=6, model="embedlm",
                      verdict="meets the joint claim", verdict_class="meets")
    return pd.DataFrame([row], columns=claims.COLUMNS)


def test_a_parity_setting_that_differs_is_a_contradiction():
    a = _joint("S2 at parity (width 0.0625 x the row density, 1 row, embedlm)")
    b = _joint("S2 at parity (width 0.25 x the row density, 1 row, embedlm)")
    rows, checked, _ = compare.headline_contradictions(a, b)
    assert len(rows) == 1 and "setting at parity differs" in rows[0]["item"]
    same, checked, _ = compare.headline_contradictions(a, a)
    assert same == [] and checked == ["S2 at parity (measured, this machine, 2 ranks, embedlm)"]


def test_a_number_from_a_busy_machine_is_unchecked_not_a_contradiction():
    a = _joint("S2 at parity (width 0.25 x the row density, 1 row, embedlm)")
    b = a.assign(busy="yes")
    rows, checked, unchecked = compare.headline_contradictions(a, b)
    assert rows == [] and checked == [] and len(unchecked) == 1 and "busy in B" in unchecked[0]
