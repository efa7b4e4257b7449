#!/usr/bin/python3
"""The claims table on synthetic archives with known values (synth.py):
accuracy parity by two one-sided tests (inside the margin, outside it,
inconclusive), time to accuracy from known curves (a run that never
reaches the target included), launch-level intervals (a 2x launch offset
is not called significant), O(1) and the platform of simulated runs.
busy_synth.py: busy runs."""

import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from synth import QUIET, Checks, load_tables, write_micro, write_train
    from rbanalysis import micro
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()
DENSE_FINAL = [88.0, 88.4, 87.6, 88.2, 87.9]     # one per seed 1..5


def curve(final, wall_end=2.0):
    """Two evaluations: at iteration 50 (5 points below) and 100 (final)."""
    return [50, 100], [wall_end / 2, wall_end], [final - 5.0, final]


def parity_runs(d, diffs, reducer):
    os.makedirs(d, exist_ok=True)
    for seed, (base, delta) in enumerate(zip(DENSE_FINAL, diffs), start=1):
        write_train(os.path.join(d, "dense-%d.h5" % seed), "dense", seed, *curve(base))
        write_train(os.path.join(d, "%s-%d.h5" % (reducer, seed)), reducer, seed,
                    *curve(base + delta))


def parity_row(ctab, claim_id):
    r = ctab[(ctab["claim_id"] == claim_id) & (ctab["points"] > 0)]
    return r.iloc[0] if len(r) == 1 else None


def test_parity(tmp):
    cases = (
        ("inside", "gossip", [0.1, -0.2, 0.3, 0.0, -0.1], "equivalent", (0.0, -0.2, 0.3)),
        ("outside", "gossip", [-1.2, -0.9, -1.5, -0.8, -1.1], "below", (-1.1, -1.5, -0.8)),
        ("straddle", "gossip", [-0.8, 0.1, -0.2, 0.3, -0.1], "inconclusive", (-0.1, -0.8, 0.3)),
        ("s2-inside", "s2", [0.2, 0.1, -0.3, 0.0, 0.1], "equivalent", (0.1, -0.3, 0.2)),
    )
    for name, reducer, diffs, want, (med, lo, hi) in cases:
        d = os.path.join(tmp, "parity-" + name)
        parity_runs(d, diffs, reducer)
        _, _, _, _, ctab = load_tables([d])
        cid = "%s_accuracy_parity" % reducer
        r = parity_row(ctab, cid)
        ok = (r is not None and r["verdict_class"] == want and r["points"] == 5
              and math.isclose(r["measured_median"], med, abs_tol=1e-9)
              and math.isclose(r["measured_low"], lo, abs_tol=1e-9)
              and math.isclose(r["measured_high"], hi, abs_tol=1e-9))
        check(ok, "parity %s: %s - dense paired by seed, median %g [%g, %g], %s (got %s)"
              % (name, reducer, med, lo, hi, want,
                 None if r is None else (r["measured_median"], r["measured_low"],
                                         r["measured_high"], r["verdict_class"], r["verdict"])))
    # Four seeds: no 90% interval, inconclusive, and the row says why.
    d = os.path.join(tmp, "parity-four")
    parity_runs(d, [0.0, 0.1, 0.0, 0.1], "gossip")
    _, _, _, _, ctab = load_tables([d])
    r = parity_row(ctab, "gossip_accuracy_parity")
    check(r is not None and r["verdict_class"] == "inconclusive" and "need >= 5" in r["verdict"],
          "parity with 4 seeds: inconclusive, needs 5 (%s)" % (None if r is None else r["verdict"]))
    # The same seed every time (as the main job ran before --seed): one pair.
    d = os.path.join(tmp, "parity-one-seed")
    os.makedirs(d)
    for k in range(5):
        write_train(os.path.join(d, "dense-%d.h5" % k), "dense", 1, *curve(88.0 + 0.1 * k))
        write_train(os.path.join(d, "gossip-%d.h5" % k), "gossip", 1, *curve(88.0))
    _, _, _, _, ctab = load_tables([d])
    r = parity_row(ctab, "gossip_accuracy_parity")
    check(r is not None and r["points"] == 1 and r["verdict_class"] == "inconclusive",
          "parity with one seed run 5 times: one pair, inconclusive")
    # Perplexity: a relative margin of 2%.
    d = os.path.join(tmp, "parity-ppl")
    os.makedirs(d)
    for seed, base in enumerate([100.0, 102.0, 98.0, 101.0, 99.0], start=1):
        for red, f in (("dense", 1.0), ("gossip", 1.01)):
            write_train(os.path.join(d, "%s-%d.h5" % (red, seed)), red, seed, [50, 100],
                        [1.0, 2.0], [base * 1.5, base * f], metric="val_perplexity",
                        model="wordlm")
    _, _, _, _, ctab = load_tables([d])
    r = parity_row(ctab, "gossip_accuracy_parity")
    check(r is not None and r["verdict_class"] == "equivalent" and r["unit"] == "rel"
          and math.isclose(r["measured_median"], 0.01, rel_tol=1e-9),
          "perplexity 1% higher: relative difference 0.01, equivalent within 2%")


def tta_runs(d, s2_walls, base_walls, target_hit=80.0):
    """Runs that reach target_hit at the given wall time (None: never)."""
    os.makedirs(d, exist_ok=True)
    for red, walls in (("s2", s2_walls), ("sparcml", base_walls), ("dense", base_walls)):
        for seed, w in enumerate(walls, start=1):
            if w is None:
                it, wall, val = [50, 100], [1.0, 3.0], [70.0, 79.0]
            else:
                it, wall, val = [50, 100], [w, w + 1.0], [target_hit + 0.5, target_hit + 1.0]
            write_train(os.path.join(d, "%s-%d.h5" % (red, seed)), red, seed, it, wall, val,
                        t_iter=0.02 if red == "sparcml" else 0.01)


def test_time_to_accuracy(tmp):
    d = os.path.join(tmp, "tta")
    tta_runs(d, [1.0, 1.0, 1.1, 1.2, 1.3, None], [2.0, 2.1, 2.2, 2.3, 2.4, 2.5])
    _, summ, truns, chosen, ctab = load_tables([d], {"test_accuracy": 80.0})
    s2 = summ[summ["reducer"] == "s2"].iloc[0]
    check(math.isclose(s2["tt_target_s_median"], 1.15) and s2["tt_target_s_ci_low"] == 1.0
          and s2["tt_target_s_ci_high"] == math.inf and s2["n_reached"] == 5,
          "time to 80%%: s2 median 1.15 s [1.0, inf], 5 of 6 reached (got %s [%s, %s], %s)"
          % (s2["tt_target_s_median"], s2["tt_target_s_ci_low"], s2["tt_target_s_ci_high"],
             s2["n_reached"]))
    never = truns[(truns["reducer"] == "s2") & ~truns["reached"]]
    check(len(never) == 1 and never["tt_target_s"].iloc[0] == math.inf,
          "the run that never reached the target is censored (inf)")
    rows = ctab[ctab["claim_id"] == "s2_train_speedup"]
    tta = rows[(rows["measure"] == "time to accuracy") & (rows["points"] > 0)]
    tpi = rows[(rows["measure"] == "time per iteration") & (rows["points"] > 0)]
    check(len(tta) == 1 and math.isclose(tta["measured_median"].iloc[0], 2.25 / 1.15)
          and tta["measured_low"].iloc[0] == 0.0 and math.isclose(tta["measured_high"].iloc[0], 2.5)
          and tta["verdict_class"].iloc[0] == "inconclusive",
          "time to accuracy speedup sparcml/s2 = 2.25/1.15 [0, 2.5]: not significantly different "
          "from 1.8 (got %s)" % tta[["measured_median", "measured_low", "measured_high",
                                     "verdict"]].to_dict("records"))
    check(len(tpi) == 1 and math.isclose(tpi["measured_median"].iloc[0], 2.0)
          and tpi["verdict_class"].iloc[0] == "meets",
          "time per iteration speedup 0.02/0.01 = 2x: meets 1.8x (a row of its own)")
    # s2 never reaches the target: not reached, infinitely slow, below.
    d = os.path.join(tmp, "tta-never")
    tta_runs(d, [None] * 6, [2.0, 2.1, 2.2, 2.3, 2.4, 2.5])
    _, summ, _, _, ctab = load_tables([d], {"test_accuracy": 80.0})
    s2 = summ[summ["reducer"] == "s2"].iloc[0]
    tta = ctab[(ctab["claim_id"] == "s2_train_speedup") & (ctab["measure"] == "time to accuracy")
               & (ctab["points"] > 0)]
    check(s2["tt_target_s_median"] == math.inf and s2["n_reached"] == 0 and len(tta) == 1
          and tta["measured_median"].iloc[0] == 0 and tta["verdict_class"].iloc[0] == "below",
          "s2 never reaches the target: time inf, speedup 0, below the claim")
    # The same with 5 seeds (too few for an interval): still below, exactly.
    d = os.path.join(tmp, "tta-never-5")
    tta_runs(d, [None] * 5, [2.0, 2.1, 2.2, 2.3, 2.4])
    _, _, _, _, ctab = load_tables([d], {"test_accuracy": 80.0})
    tta = ctab[(ctab["claim_id"] == "s2_train_speedup") & (ctab["measure"] == "time to accuracy")
               & (ctab["points"] > 0)]
    check(len(tta) == 1 and tta["verdict_class"].iloc[0] == "below"
          and str(tta["exact"].iloc[0]).lower() == "true",
          "s2 never reaches the target in 5 seeds: speedup exactly 0, below (no interval needed)")
    # Default target: dense's lowest best less the 0.5-point margin.
    _, _, _, chosen, _ = load_tables([d])
    metric, target, how = next(iter(chosen.values()))
    check(math.isclose(target, 80.5) and "dense" in how,
          "default target: dense's lowest best 81.0 less 0.5 = 80.5 (%s: %s)" % (target, how))


def launch_rows(dense_us, agsparse_us, repeats=9):
    rows = []
    for rep in range(repeats):
        for red, t in (("dense", dense_us), ("agsparse", agsparse_us)):
            rows.append({"reducer": red, "size_bytes": 65536, "t_avg_us": t + 0.01 * rep,
                         "repeat": rep, "bytes_sent_avg": 65536.0 if red == "dense" else 2000.0})
    return rows


def test_launches(tmp):
    # Two launches of the same configuration, the second 2x slower (as
    # dense at 64 KiB took 4.64 us in one main job and 9.29 us in the
    # next); agsparse 10% slower than dense inside each launch.
    d = os.path.join(tmp, "two-launches")
    os.makedirs(d)
    write_micro(os.path.join(d, "l1.h5"), launch_rows(4.64, 5.1), machine=QUIET)
    write_micro(os.path.join(d, "l2.h5"), launch_rows(9.29, 10.2), machine=QUIET)
    agg, _, _, _, _ = load_tables([d])
    dense = agg[agg["reducer"] == "dense"].iloc[0]
    check(dense["interval_unit"] == "launch" and dense["n_units"] == 2
          and math.isnan(dense["t_avg_us_ci_low"]),
          "2 launches: the unit is the launch, no 95%% interval from 2 (got %s, n %s)"
          % (dense["interval_unit"], dense["n_units"]))
    sp = micro.speedups(agg)
    v = sp.loc[sp["variant"] == "agsparse", "vs_dense"].iloc[0]
    check(v.startswith("no significant difference"),
          "2 launches with a 2x offset: agsparse vs dense not called significant (%r)" % v)
    # Six launches alternating 1x and 2x: an interval over launches, wide
    # enough to hold both levels: still nothing significant.
    d = os.path.join(tmp, "six-launches")
    os.makedirs(d)
    for k in range(6):
        f = 1.0 if k % 2 == 0 else 2.0
        write_micro(os.path.join(d, "l%d.h5" % k), launch_rows(4.64 * f, 5.1 * f, 3), machine=QUIET)
    agg, _, _, _, _ = load_tables([d])
    dense = agg[agg["reducer"] == "dense"].iloc[0]
    sp = micro.speedups(agg)
    v = sp.loc[sp["variant"] == "agsparse", "vs_dense"].iloc[0]
    check(dense["n_units"] == 6 and dense["t_avg_us_ci_low"] < 5 and dense["t_avg_us_ci_high"] > 9
          and v == "no significant difference",
          "6 launches, 1x/2x: interval [%.3g, %.3g] over launches, agsparse vs dense %r"
          % (dense["t_avg_us_ci_low"], dense["t_avg_us_ci_high"], v))
    # Each launch alone is one launch: its interval is marked.
    agg1, _, _, _, _ = load_tables([os.path.join(tmp, "two-launches", "l1.h5")])
    check((agg1["interval_unit"] == "one launch: the interval leaves out launch-to-launch "
                                   "variation").all(),
          "one launch: every point marked")


def test_o1_simulated(tmp):
    """Simulated archives at 8, 16 and 32 ranks (root simulated=1 and
    sim_platform_path): the platform is named from the file, O(1) is
    judged from bytes (simulated) and messages (the cost model)."""
    d = os.path.join(tmp, "sim")
    os.makedirs(d)
    n = 1 << 18
    for p in (8, 16, 32):
        rows = [{"reducer": "gossip", "size_bytes": n, "t_avg_us": 100.0, "ranks": p,
                 "bytes_sent_avg": float(n)},
                {"reducer": "dense", "size_bytes": n, "t_avg_us": 50.0 * p.bit_length(), "ranks": p,
                 "bytes_sent_avg": 2.0 * (p - 1) / p * n}]
        write_micro(os.path.join(d, "p%d.h5" % p), rows, ranks=p,
                    extra={"simulated": 1,
                           "sim_platform_path": "/opt/simgrid/platforms/p100-ib-edr.xml"})
    agg, _, _, _, ctab = load_tables([d])
    check(set(agg["platform"]) == {"p100-ib-edr, %d ranks (simulated)" % p for p in (8, 16, 32)},
          "simulated platform named from sim_platform_path: %s" % sorted(set(agg["platform"])))
    o1 = ctab[(ctab["claim_id"] == "gossip_o1") & (ctab["points"] > 0)]
    msg = o1[o1["measure"] == "messages"]
    byt = o1[o1["measure"] == "bytes"]
    check(len(msg) == 1 and msg["data"].iloc[0] == "model" and msg["measured_median"].iloc[0] == 1.0
          and msg["verdict_class"].iloc[0] == "meets" and "prediction" in msg["verdict"].iloc[0]
          and "3 at 8 ranks, 5 at 32 ranks" in msg["why"].iloc[0],
          "O(1) messages: from the cost model (no message column), gossip 1 at 8-32 ranks, dense "
          "L 3 -> 5, labelled a prediction (%s)" % msg[["data", "verdict", "why"]].to_dict("records"))
    check(len(byt) == 1 and byt["data"].iloc[0] == "simulated" and byt["measured_median"].iloc[0] == 1.0
          and byt["verdict_class"].iloc[0] == "meets"
          and byt["platform"].iloc[0] == "p100-ib-edr, 8-32 ranks (3 counts) (simulated)",
          "O(1) bytes: simulated gossip bytes per rank flat from 8 to 32 ranks: meets")
    # A writer that counts messages: the archive's count is used, not the
    # model's; gossip's growing with p is below the claim.
    d = os.path.join(tmp, "sim-msgs")
    os.makedirs(d)
    for p in (8, 16, 32):
        rows = [{"reducer": "gossip", "size_bytes": n, "t_avg_us": 100.0, "ranks": p,
                 "bytes_sent_avg": float(n), "msgs_sent_avg": float(p.bit_length() - 3)},
                {"reducer": "dense", "size_bytes": n, "t_avg_us": 100.0, "ranks": p,
                 "bytes_sent_avg": float(n), "msgs_sent_avg": 2.0 * (p.bit_length() - 1)}]
        write_micro(os.path.join(d, "p%d.h5" % p), rows, ranks=p, columns=[("msgs_sent_avg", "<f8")],
                    extra={"simulated": 1, "sim_platform": "knl-aries"})
    _, _, _, _, ctab = load_tables([d])
    msg = ctab[(ctab["claim_id"] == "gossip_o1") & (ctab["measure"] == "messages")
               & (ctab["points"] > 0)]
    check(len(msg) == 1 and msg["data"].iloc[0] == "simulated"
          and msg["platform"].iloc[0] == "knl-aries, 8-32 ranks (3 counts) (simulated)"
          and msg["measured_median"].iloc[0] == 3.0 and msg["verdict_class"].iloc[0] == "below",
          "O(1) from the archive's msgs_sent_avg: gossip 1 -> 3 messages: below (%s)"
          % msg[["data", "platform", "measured_median", "verdict"]].to_dict("records"))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_parity, test_time_to_accuracy, test_launches, test_o1_simulated):
            test(tmp)
    return check.exit()


if __name__ == "__main__":
    sys.exit(main())
