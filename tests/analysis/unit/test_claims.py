#!/usr/bin/python3
"""analysis/rbanalysis/claims.py, function by function: the verdict class
of a claim (claim_verdict: meets, equivalent, below, inconclusive,
missing) at and around each boundary, the S2 paper's setting, and which
claims-table rows may make the headline.  claims_synth.py and
busy_synth.py check the whole table on synthetic archives."""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run_pytest import main
    sys.exit(main(__file__))

import math

import pandas as pd
import pytest

from rbanalysis import claim_table, claims, stats

NAN = float("nan")
INF = math.inf


def verdict_class(claim_id, value, med, lo, hi, exact=False):
    return claims.claim_verdict(claim_id, value, med, lo, hi, exact)[1]


# ------------------------------------------------------------- verdicts

@pytest.mark.parametrize("med, lo, hi, want", [
    (2.0, 1.9, 2.1, "meets"),           # the whole interval at or above 1.8
    (1.9, 1.8, 2.0, "meets"),           # low end exactly at the claim
    (1.75, 1.72, 1.79, "equivalent"),   # below, but within 5% (1.75 x 1.05 >= 1.8)
    (1.5, 1.4, 1.6, "below"),           # below by more than 5%
    (1.8, 1.7, 1.9, "inconclusive"),    # the interval holds the claim
    (1.7, 1.6, 1.8, "inconclusive"),    # high end at the claim: not below it
])
def test_verdict_with_an_interval(med, lo, hi, want):
    assert verdict_class("s2_speedup", 1.8, med, lo, hi) == want


def test_verdict_words_match_the_class():
    words, cls = claims.claim_verdict("s2_speedup", 1.8, 1.5, 1.4, 1.6)
    assert (words, cls) == ("below the claim", "below")
    words, cls = claims.claim_verdict("s2_speedup", 1.8, 1.8, 1.7, 1.9)
    assert cls == "inconclusive" and "not significantly different" in words


@pytest.mark.parametrize("med, want", [
    (1.0, "meets"), (0.81, "meets"), (0.78, "equivalent"), (0.70, "below")])
def test_verdict_of_an_exact_value(med, want):
    # A deterministic value (bytes on the wire) needs no interval.
    assert verdict_class("s2_comm_reduction", 0.81, med, NAN, NAN, exact=True) == want


def test_verdict_without_an_interval_is_inconclusive_and_says_why():
    words, cls = claims.claim_verdict("s2_speedup", 1.8, 2.5, NAN, NAN)
    assert cls == "inconclusive"
    assert words.startswith("meets the claim by its median only")
    assert "fewer than %d" % stats.MIN_REPETITIONS in words
    words, cls = claims.claim_verdict("s2_speedup", 1.8, 1.0, NAN, NAN)
    assert cls == "inconclusive" and words.startswith("below the claim by its median only")


def test_verdict_with_a_censored_interval():
    # Time to accuracy: the slow end is +inf (runs that never reached the
    # target); a finite low end at or above the claim still meets it.
    assert verdict_class("s2_train_speedup", 1.8, 2.5, 2.0, INF) == "meets"
    assert verdict_class("s2_train_speedup", 1.8, 2.5, 1.5, INF) == "inconclusive"


def test_verdict_of_no_value():
    assert claims.claim_verdict("s2_speedup", 1.8, NAN, NAN, NAN) == ("no value", "missing")


def test_verdict_beyond_the_plausible_is_inconclusive():
    # A compute efficiency above 110%: the reference ran slower.
    assert verdict_class("gossip_efficiency", 0.9, 1.2, 1.15, 1.25) == "inconclusive"
    assert verdict_class("gossip_efficiency", 0.9, 1.05, 1.0, 1.1) == "meets"


def test_every_claim_has_its_order_and_a_short_name():
    assert set(claims.ORDER) == set(claims.CLAIMS) == set(claims.SHORT)


# --------------------------------------------------- the S2 paper's setting

def test_s2_setting_of_the_paper():
    # The authors' GNMT: 32317 rows, width = density x 0.25.
    assert claims.s2_setting("row", 256, 0.02, "fraction", 0.005, rows=32768) == ("paper", "")
    # The ratio within a factor of 2 of one the authors used.
    assert claims.s2_setting("row", 64, 0.02, "fraction", 0.02 * 0.13)[0] == "paper"
    assert claims.s2_setting("row", 64, 0.02, "fraction", 0.02 * 0.6)[0] == "other"


@pytest.mark.parametrize("args, why", [
    (("element", 256, 0.02, "fraction", 0.005), "element layout"),
    (("row", 32, 0.02, "fraction", 0.005), "32 columns"),
    (("row", 256, 0.10, "fraction", 0.025), "row density 0.1"),
    (("row", 256, 0.02, "fixed", 4096), "sketch_width_mode fixed"),
])
def test_s2_setting_says_why_a_point_is_other(args, why):
    setting, reason = claims.s2_setting(*args, rows=32768)
    assert setting == "other" and why in reason


def test_s2_setting_small_embedding():
    setting, reason = claims.s2_setting("row", 256, 0.02, "fraction", 0.005, rows=1000)
    assert setting == "other" and "1000 rows" in reason


# ------------------------------------------------------------ headline rows

def row(**fields):
    base = dict(setting="paper", oversubscribed="no", busy="no", points=4, data="measured",
                launches=6, exact=False, measured_median=2.0, measured_low=1.9,
                measured_high=2.1, verdict="meets the claim", verdict_class="meets")
    base.update(fields)
    return claim_table._row("s2_speedup", **base)


@pytest.mark.parametrize("fields, kept", [
    ({}, True),
    ({"busy": "unknown"}, True),                  # not recorded is not busy
    ({"busy": "yes"}, False),
    ({"oversubscribed": "yes"}, False),
    ({"launches": "one"}, False),                 # an interval without the launch effect
    ({"launches": "one", "exact": True}, True),   # a deterministic value needs none
    ({"data": "model"}, False),
    ({"setting": "other"}, False),
    ({"points": 0}, False),
])
def test_headline_rows(fields, kept):
    ctab = pd.DataFrame([row(**fields)], columns=claims.COLUMNS)
    assert len(claim_table.headline_rows(ctab)) == (1 if kept else 0)


def test_headline_names_why_paper_rows_gave_no_number():
    ctab = pd.DataFrame([row(busy="yes"), row(launches="one")], columns=claims.COLUMNS)
    text = claim_table.headline(ctab)[0]
    assert text.startswith("**Headline**: no number")
    assert "busy machine" in text and "one launch" in text


def test_headline_states_the_verdict():
    ctab = pd.DataFrame([row()], columns=claims.COLUMNS)
    text = claim_table.headline(ctab)[0]
    assert "S2 speedup (reduce) 2.00x [1.90x, 2.10x]" in text and "meets the claim" in text


def test_platform_name_drops_the_rank_count_keeps_the_link_rate():
    # gossip_o1 compares rank counts within one platform: an emulated
    # network's node counts at one link rate, never two link rates
    assert claims._platform_name("this machine, 4 ranks") == "this machine"
    assert claims._platform_name("p100-ib-edr, 128 ranks (simulated)") == "p100-ib-edr"
    assert claims._platform_name("emulated network, 4 nodes, 1gbit") == "emulated network, 1gbit"
    assert claims._platform_name("emulated network, 2 nodes, 1gbit, 4 ranks") == \
        "emulated network, 1gbit"
