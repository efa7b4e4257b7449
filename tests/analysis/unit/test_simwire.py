#!/usr/bin/python3
"""analysis/rbanalysis/simwire.py and runmeta.network_origin: a measured run on a
described network and a simulation on a platform fitted to it meet on one
origin string; points are matched by it (never across link rates), each
side reduced to its minimum and median over launches, and the error per
point, its median and worst per rate and rank count come out right."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import numpy as np
import pandas as pd

from rbanalysis import runmeta, simwire as wire

NET = {"network": "emulated", "network_link_rate": "1gbit", "network_link_bps": 1e9,
       "network_transport": "tcp", "network_topology": "one switch (Linux bridge)",
       "network_shaper": "tbf rate 1gbit burst 128kb latency 20ms"}
PLATFORM = """<platform version="4.1"><zone id="wire" routing="Full">
    <prop id="rb_network_network" value="emulated"/>
    <prop id="rb_network_link_rate" value="1gbit"/>
    <prop id="rb_network_link_bps" value="1000000000"/>
    <prop id="rb_network_transport" value="tcp"/>
    <prop id="rb_network_topology" value="one switch (Linux bridge)"/>
    <prop id="rb_network_shaper" value="tbf rate 1gbit burst 128kb latency 20ms"/>
</zone></platform>"""


def test_measured_and_fitted_platform_share_an_origin():
    m = runmeta.network_origin(NET, "measured")
    s = runmeta.network_origin({"sim_platform": PLATFORM}, "simulated")
    assert m == s and "link_rate=1gbit" in m


def test_no_origin_without_a_described_network():
    assert runmeta.network_origin({"network": "one node"}, "measured") == ""
    assert runmeta.network_origin({"network": "not recorded"}, "measured") == ""
    assert runmeta.network_origin({}, "measured") == ""
    assert runmeta.network_origin({"sim_platform": "<platform/>"}, "simulated") == ""


def rows(kind, origin, launches, ranks=2, variant="dense", size=1 << 20):
    """One row per launch (its t_avg_us), as micro_rows gives them."""
    return pd.DataFrame([dict(kind=kind, origin=origin, device="host", input="dense",
                              layout="element", overlap="random", density=0.01, cols=1,
                              ranks=ranks, variant=variant, size_bytes=size,
                              run_id="%s-%d" % (kind, i), t_avg_us=t, busy="yes" if i else "no",
                              other_cpu_during=0.1 + i)
                         for i, t in enumerate(launches)])


ORIGIN = runmeta.network_origin(NET, "measured")


def test_error_of_the_minimums_and_of_the_medians():
    d = pd.concat([rows("measured", ORIGIN, [100.0, 150.0, 300.0]),
                   rows("simulated", ORIGIN, [110.0, 120.0])], ignore_index=True)
    p = wire.points(d)
    assert len(p) == 1
    r = p.iloc[0]
    assert np.isclose(r["error_min"], 0.10)
    assert np.isclose(r["error_median"], 115.0 / 150.0 - 1)
    assert r["meas_launches"] == 3 and r["sim_launches"] == 2 and r["meas_busy"] == 2
    assert np.isclose(r["meas_spread"], 3.0)


def test_other_networks_do_not_match():
    other = ORIGIN.replace("1gbit", "100mbit")
    d = pd.concat([rows("measured", ORIGIN, [100.0]), rows("simulated", other, [110.0]),
                   rows("simulated", "", [100.0])], ignore_index=True)
    assert wire.points(d).empty


def test_summary_median_and_worst_per_rank_count():
    d = pd.concat([rows("measured", ORIGIN, [100.0], size=s) for s in (1, 2, 3)]
                  + [rows("simulated", ORIGIN, [t], size=s)
                     for s, t in ((1, 105.0), (2, 80.0), (3, 150.0))], ignore_index=True)
    s = wire.summary(wire.points(d)).iloc[0]
    assert s["points"] == 3 and s["rate"] == "1gbit"
    assert np.isclose(s["median_abs_err"], 0.20) and np.isclose(s["worst_abs_err"], 0.50)
    assert s["worst_point"].startswith("dense element d=0.01") and s["targets"] == "missed"


def test_long_calls_counted_apart():
    d = pd.concat([rows("measured", ORIGIN, [100.0], size=1), rows("measured", ORIGIN, [2e4], size=2),
                   rows("simulated", ORIGIN, [300.0], size=1), rows("simulated", ORIGIN, [2.2e4], size=2)],
                  ignore_index=True)
    s = wire.summary(wire.points(d)).iloc[0]
    assert s["long_points"] == 1 and np.isclose(s["long_median_abs_err"], 0.10)
    assert np.isclose(s["worst_abs_err"], 2.0)
    sizes = wire.per_size(wire.points(d))
    assert list(sizes["size_bytes"]) == [1, 2] and np.isclose(sizes["median_abs_err"].iloc[1], 0.10)
