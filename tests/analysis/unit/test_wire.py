#!/usr/bin/python3
"""analysis/rbanalysis/wire.py and crossover.py, function by function, on
constructed numbers: the wire floor of a point over an emulated network
(the busiest rank's bytes in its busier direction at the link's rate),
its share of the time and the CPU- or latency-bound mark; the log-log
interpolation of a crossover rate and the model's crossing on its grid.
emulated_synth.py checks the same on whole archives."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import math

import numpy as np
import pandas as pd
import pytest

from rbanalysis import crossover, wire

NAN = float("nan")


# ------------------------------------------------------------ the floor

def test_busiest_bytes_takes_the_busier_direction_of_the_busiest_rank():
    r = {"bytes_sent_max_median": 1000.0, "bytes_sent_avg_median": 800.0,
         "bytes_recv_max_median": 3000.0, "bytes_recv_avg_median": 1500.0}
    assert wire.busiest_bytes(r) == 3000.0     # parallax's server receives the most
    assert wire.busiest_bytes(dict(r, bytes_recv_max_median=10.0, bytes_recv_avg_median=10.0)) == 1000.0


def test_busiest_bytes_without_received_counts_is_symmetric():
    assert wire.busiest_bytes({"bytes_sent_avg_median": 500.0}) == 500.0
    assert wire.busiest_bytes({"bytes_sent_max_median": 0.0, "bytes_sent_avg_median": 500.0,
                               "bytes_recv_max_median": NAN}) == 500.0
    assert math.isnan(wire.busiest_bytes({}))


def test_floor_and_share():
    # 125 MB at 1 Gbit/s: one second
    assert wire.floor_us(125e6, 1e9) == pytest.approx(1e6)
    assert math.isnan(wire.floor_us(125e6, NAN))      # unshaped or not emulated
    assert math.isnan(wire.floor_us(125e6, 0.0))
    # the modelled compute of rb_micro --compute is no wire time
    assert wire.share(200e3, 420e3, compute_s=0.02) == pytest.approx(0.5)
    assert math.isnan(wire.share(0.0, 100.0))          # nothing on the wire: no share
    assert math.isnan(wire.share(100.0, 10e3, compute_s=0.02))   # time all compute


@pytest.mark.parametrize("share, mark", [
    (0.49, wire.CPU_BOUND), (0.5, wire.WIRE_BOUND), (1.3, wire.WIRE_BOUND), (NAN, "")])
def test_bound(share, mark):
    assert wire.bound(share) == mark


def test_add_floor_marks_points_over_an_emulated_network_only():
    agg = pd.DataFrame({
        "t_avg_us_median": [10_000.0, 10_000.0, 10_000.0, 5.0],
        "bytes_sent_max_median": [1.25e6, 0.25e6, 1.25e6, 0.0],
        "bytes_recv_max_median": [1.25e6, 0.25e6, 1.25e6, 0.0],
        "compute_s": [0.0, 0.0, 0.0, 0.0],
        "link_bps": [1e9, 1e9, NAN, 1e9]})
    out = wire.add_floor(agg)
    assert list(out["wire_floor_us"][:2]) == pytest.approx([10_000.0, 2_000.0])
    assert list(out["wire_share"][:2]) == pytest.approx([1.0, 0.2])
    assert list(out["wire_bound"]) == [wire.WIRE_BOUND, wire.CPU_BOUND, "", ""]
    assert math.isnan(out["wire_floor_us"][2])          # this machine: no link, no floor
    shown = wire.annotate(out)
    assert list(shown["wire_text"]) == ["100%", "20% (CPU- or latency-bound)", "-", "-"]


# ------------------------------------------------------------ crossovers

def test_rate_text():
    assert crossover.rate_text(1e9) == "1 Gbit/s"
    assert crossover.rate_text(3.16e9) == "3.16 Gbit/s"
    assert crossover.rate_text(1e8) == "100 Mbit/s"
    assert crossover.rate_text(NAN) == "-"


def test_interpolate_in_log_rate_and_log_speedup():
    rates = [1e8, 1e9, 1e10]
    # 8x, 2x, 0.5x: 1x lies half way (in logs) between 1 and 10 Gbit/s
    assert crossover._interpolate(rates, [8.0, 2.0, 0.5], 1.0) == pytest.approx(10 ** 9.5)
    assert crossover._interpolate(rates, [8.0, 2.0, 0.5], 4.0) == pytest.approx(10 ** 8.5)
    assert crossover._interpolate(rates, [8.0, 2.0, 1.5], 1.0) is None      # never below 1x
    assert crossover._interpolate(rates, [0.8, 0.6, 0.5], 1.0) is None      # never above
    # not monotonic: the crossing at the highest rate counts, and none when
    # the highest rate is above t again (the model extrapolates from there)
    assert crossover._interpolate(rates, [2.0, 0.5, 2.0], 1.0) is None
    assert crossover._interpolate([1e8, 1e9, 1e10, 1e11], [2.0, 0.5, 2.0, 0.5], 1.0) == \
        pytest.approx(10 ** 10.5)


def test_model_crossing_on_its_grid():
    # s2: 5 ms of CPU + 100 kB; baseline: 2 ms + 1.25 MB.  They meet where
    # 3000 us = (1.25e6 - 1e5) x 8e6 / R: R = 3.07 Gbit/s.
    times = {"s2": (5000.0, 1e5), "sparcml": (2000.0, 1.25e6)}
    curve = crossover._speedup_curve(times, "s2", crossover.GRID)
    rate = crossover._crossing_on_grid(curve, 1.0, upward=True, start=1e9)
    assert rate == pytest.approx(9.2e12 / 3000, rel=0.02)
    # going down from 100 Mbit/s it never falls under 1x: s2 sends 12.5x fewer bytes
    assert crossover._crossing_on_grid(curve, 1.0, upward=False, start=1e8) is None
    assert curve[0] == pytest.approx(12.5, rel=0.01)


def test_compute_90_is_nine_exchanges():
    g = {"t_avg_us_median": 220_000.0, "t_avg_us_ci_low": 215_000.0, "t_avg_us_ci_high": 230_000.0,
         "bytes_sent_max_median": 25.6e6, "bytes_recv_max_median": 25.6e6,
         "t_model_us_median": NAN, "compute_s": 0.02, "size_bytes": 25_600_000}
    n = {"t_avg_us_median": 20_000.0, "t_avg_us_ci_low": 19_000.0, "t_avg_us_ci_high": 21_000.0}
    p = {"gid": "G1", "nodes": 2, "ranks": 2, "link_bps": 1e9, "variant": "gossip",
         "compute_s": 0.02, "compute_efficiency": 20 / 220, "busy": "no",
         "oversubscribed": False, "launches": 6}
    row = crossover._gossip_row(p, g, n)
    assert row["exchange_us"] == pytest.approx(200_000.0)
    assert row["compute_90_s"] == pytest.approx(1.8)
    assert (row["compute_90_low_s"], row["compute_90_high_s"]) == pytest.approx((9 * 0.194, 9 * 0.211))
    assert row["wire_floor_us"] == pytest.approx(204_800.0)
    assert crossover.compute_90_text(row).startswith("1.8 s [1.75 s, 1.9 s] (exchange 200 ms")
    # efficiency c / (c + x) at c = 9x is 90%
    c, x = row["compute_90_s"], row["exchange_us"] * 1e-6
    assert c / (c + x) == pytest.approx(0.9)


def test_model_limits_when_it_never_crosses():
    # s2's CPU part is also smaller: faster at every rate above
    times = {"s2": (1000.0, 1e5), "sparcml": (2000.0, 1.25e6)}
    curve = crossover._speedup_curve(times, "s2", crossover.GRID)
    # (at the grid's 1 Tbit/s the wire still adds 0.8 and 10 us: 2010 / 1000.8)
    assert crossover._limit(curve, 1.0, upward=True) == (crossover.EVERY_RATE,
                                                         "2.01x as the wire becomes free")
    # s2 sends more bytes than its baseline: 1.8x at no rate below
    times = {"s2": (1000.0, 2e6), "sparcml": (2000.0, 1.25e6)}
    curve = crossover._speedup_curve(times, "s2", crossover.GRID)
    where, why = crossover._limit(curve, 1.8, upward=False)
    assert where == crossover.NO_RATE and why.startswith("0.63x, its byte ratio")
