#!/usr/bin/python3
"""analysis/rbanalysis/compare.py: the key that pairs a point of run A with
the same point of run B.  The same configuration simulated on two
platforms is two points (one key each); a measured point's key does not
depend on the platform column."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

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
