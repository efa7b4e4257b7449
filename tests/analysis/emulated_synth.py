#!/usr/bin/python3
"""Runs over an emulated network (root attribute network = "emulated",
jobscripts/emulated/sweep) on synthetic archives with known times
(synth.py): their own platform in the claims table, apart from this
machine's runs of the same configuration, with launches by srun and by
mpirun pooled; 4 nodes on a 2-core machine oversubscribed, 2 not; the
wire floor's CPU- or latency-bound mark; the link-rate crossover of S2
and the compute GossipGraD needs for 90%, interpolated from constructed
speedups; and rb-report on a results directory holding the sweep in a
subdirectory, as the main job will: an emulated headline line, the
crossover section, --compare of the data with itself."""

import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h5py
    import pandas as pd
    import synth
    from synth import QUIET, Checks, load_tables, write_micro
    from rbanalysis import claim_table, claims, crossover, micro, wire
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()
REPORT = os.path.join(synth.ANALYSIS, "rb-report")
LAUNCHES = 6
RATES = {"100mbit": 1e8, "1gbit": 1e9, "10gbit": 1e10}
# The S2 authors' setting, as the sweep's embedding point: 32768 x 256,
# row density 2%, sketch width 0.25 x density.
SHAPE = {"layout": "row", "cols": 256, "rows": 32768, "density": 0.02}
SIZE = 32768 * 256 * 4
S2_BYTES, BASE_BYTES = 100e3, 1.25e6
# Median times (us) per rate: s2 8x, 2x and 0.5x faster than sparcml.
TIMES = {"100mbit": (13_000.0, 104_000.0), "1gbit": (6_000.0, 12_000.0),
         "10gbit": (5_000.0, 2_500.0)}


def emulated(nodes, rate, launch):
    """Root attributes of launch number `launch` on an emulated cluster:
    by srun (a partition) on even launches, by mpirun on odd ones."""
    extra = {"network": "emulated", "network_link_rate": rate, "network_link_bps": RATES[rate],
             "network_transport": "tcp", "nodes": nodes, "machines": 1, "machine_ranks": nodes,
             "hostname": "node1", "launcher": "mpirun"}
    if launch % 2 == 0:
        extra.update(launcher="srun", slurm_partition="p100", slurm_job_id=str(100 + launch))
    return extra


def embedding_rows(s2_us, base_us, jitter):
    def row(reducer, t, nbytes):
        return dict(SHAPE, reducer=reducer, size_bytes=SIZE, t_avg_us=t * jitter,
                    bytes_sent_avg=nbytes, bytes_sent_max=nbytes, bytes_recv_avg=nbytes,
                    bytes_recv_max=nbytes, rel_l2_err=0.1 if reducer == "s2" else 0.0)
    return [row("s2", s2_us, S2_BYTES), row("sparcml", base_us, BASE_BYTES),
            row("agsparse", 1.2 * base_us, 1.1 * BASE_BYTES), row("dense", 50 * base_us, SIZE)]


def write_embedding(path, rows, ranks, extra, pus=64):
    write_micro(path, rows, ranks=ranks, machine=QUIET, extra=extra)
    with h5py.File(path, "a") as f:   # the authors' width, as rb_micro records options
        f["micro/results"].attrs["opt_sketch_width_mode"] = "fraction"
        f["micro/results"].attrs["opt_sketch_width"] = 0.005
        f["topology"].attrs["pus"] = pus


def write_gossip(path, extra, none_us, gossip_us, jitter):
    rows = [{"reducer": r, "size_bytes": 25_600_000, "t_avg_us": t * jitter,
             "bytes_sent_avg": b, "bytes_sent_max": b, "bytes_recv_avg": b, "bytes_recv_max": b}
            for r, t, b in (("none", none_us, 0.0), ("gossip", gossip_us, 25.6e6))]
    write_micro(path, rows, ranks=2, machine=QUIET, extra=dict(extra, compute_s=0.02))


def make_results(top):
    """results/ as the main job leaves it: this machine's runs at the top,
    the emulated sweep under emulated/N<nodes>-<rate>/."""
    for k in range(LAUNCHES):
        j = 1 + 0.01 * (k - 2.5)   # launch medians: exactly the times
        write_embedding(os.path.join(top, "micro-embedding-L%d.h5" % k),
                        embedding_rows(3_000.0, 1_500.0, j), 2, {"machine_ranks": 2})
        for rate, (s2_us, base_us) in TIMES.items():
            d = os.path.join(top, "emulated", "N2-%s" % rate)
            os.makedirs(d, exist_ok=True)
            write_embedding(os.path.join(d, "micro-embedding-L%d.h5" % k),
                            embedding_rows(s2_us, base_us, j), 2, emulated(2, rate, k), pus=2)
        write_gossip(os.path.join(top, "emulated", "N2-1gbit", "micro-gossip-L%d.h5" % k),
                     emulated(2, "1gbit", k), 20_000.0, 220_000.0, j)
        d = os.path.join(top, "emulated", "N4-1gbit")
        os.makedirs(d, exist_ok=True)
        write_embedding(os.path.join(d, "micro-embedding-L%d.h5" % k),
                        embedding_rows(9_000.0, 20_000.0, j), 4, emulated(4, "1gbit", k), pus=2)


def row_of(ctab, claim_id, platform):
    r = ctab[(ctab["claim_id"] == claim_id) & (ctab["platform"] == platform)
             & (ctab["setting"] == "paper")]
    return r.iloc[0] if len(r) == 1 else None


def test_claims_rows(top):
    agg, _, _, _, ctab = load_tables([top])
    for rate, (s2_us, base_us) in TIMES.items():
        plat = "emulated network, 2 nodes, %s" % rate
        r = row_of(ctab, "s2_speedup", plat)
        want = base_us / s2_us
        check(r is not None and math.isclose(r["measured_median"], want, rel_tol=1e-9)
              and r["launches"] == LAUNCHES and r["busy"] == "no" and r["oversubscribed"] == "no"
              and r["data"] == "measured",
              "s2_speedup on %s: %.2fx over %d launches by srun and mpirun pooled, a core per "
              "rank (got %s)" % (plat, want, LAUNCHES, None if r is None else
                                 (r["measured_median"], r["launches"], r["oversubscribed"])))
        c = row_of(ctab, "s2_comm_reduction", plat)
        check(c is not None and bool(c["exact"])
              and math.isclose(c["measured_median"], 1 - S2_BYTES / BASE_BYTES, rel_tol=1e-9),
              "s2_comm_reduction on %s: exact %.1f%%" % (plat, 100 * (1 - S2_BYTES / BASE_BYTES)))
    here = row_of(ctab, "s2_speedup", "this machine, 2 ranks")
    check(here is not None and math.isclose(here["measured_median"], 0.5, rel_tol=1e-9),
          "this machine's run of the same configuration: a row of its own (0.50x)")
    four = row_of(ctab, "s2_speedup", "emulated network, 4 nodes, 1gbit")
    check(four is not None and four["oversubscribed"] == "yes",
          "4 emulated nodes x 1 rank on a 2-core machine: oversubscribed")
    groups = agg[agg["platform"].str.startswith("emulated network, 2 nodes")]["gid"].nunique()
    check(groups == 4, "2-node emulated points: one group per rate and point (got %d)" % groups)
    slow = row_of(ctab, "s2_speedup", "emulated network, 2 nodes, 10gbit")
    check(slow is not None and "CPU- or latency-bound at 10 Gbit/s" in slow["why"],
          "the 10 Gbit row says it is CPU- or latency-bound (%s)" % (None if slow is None
                                                                     else slow["why"]))
    check(slow is not None and "faster than the best baseline below 3.16 Gbit/s (interpolated "
          "between 1 Gbit/s and 10 Gbit/s" in slow["why"],
          "the s2_speedup rows cite the crossover")
    g = row_of(ctab, "gossip_efficiency", "emulated network, 2 nodes, 1gbit")
    check(g is not None and math.isclose(g["measured_median"], 20 / 220, rel_tol=1e-9)
          and ">= 1.8 s [1.75 s, 1.85 s] of compute per step" in g["why"],
          "gossip_efficiency over 1 Gbit: 9.1%%, and the compute 90%% would need (%s)"
          % (None if g is None else g["why"]))
    head = claim_table.headline_rows(ctab)
    plats = set(head["platform"])
    check("emulated network, 2 nodes, 1gbit" in plats and "this machine, 2 ranks" in plats
          and "emulated network, 4 nodes, 1gbit" not in plats,
          "headline rows: emulated 2 nodes and this machine, not the oversubscribed 4 nodes")
    lines = claim_table.headline(ctab)
    emul = [l for l in lines if "over an emulated network" in l]
    check(len(emul) == 1 and "on emulated network, 2 nodes, 10gbit" in emul[0]
          and not any("emulated" in l for l in lines if l not in emul),
          "the headline has a line of its own for the emulated network, each value naming "
          "its platform")
    return agg


def test_wire_marks(agg):
    pts = agg[agg["platform"] == "emulated network, 2 nodes, 10gbit"].set_index("reducer")
    s2 = pts.loc["s2"]
    check(math.isclose(s2["wire_floor_us"], 80.0) and s2["wire_bound"] == wire.CPU_BOUND,
          "s2 at 10 Gbit: floor 100 kB x 8 / 10 Gbit/s = 80 us, CPU- or latency-bound")
    slow = agg[agg["platform"] == "emulated network, 2 nodes, 100mbit"].set_index("reducer")
    check(slow.loc["sparcml", "wire_bound"] == wire.WIRE_BOUND
          and math.isclose(slow.loc["sparcml", "wire_share"], 100_000 / 104_000, rel_tol=0.02),
          "sparcml at 100 Mbit: the wire explains 96% of it")
    here = agg[agg["platform"] == "this machine, 2 ranks"]
    check(here["wire_floor_us"].isna().all() and (here["wire_bound"] == "").all(),
          "this machine's points have no wire floor")


def test_crossovers(agg):
    s2x = crossover.rate_crossover(agg)
    two = s2x[s2x["nodes"] == 2].set_index("threshold")
    want = {1.0: 10 ** 9.5, 1.8: 1e9 * 10 ** (math.log(2 / 1.8) / math.log(4))}
    for t, rate in want.items():
        got = two.loc[t, "crossover_bps"] if t in two.index else float("nan")
        check(math.isclose(got, rate, rel_tol=1e-9)
              and two.loc[t, "how"].startswith("interpolated between 1 Gbit/s and 10 Gbit/s"),
              "s2 beats the best baseline by %gx below %s (interpolated; got %s)"
              % (t, crossover.rate_text(rate), got))
    g90 = crossover.compute_90(agg)
    check(len(g90) == 1 and math.isclose(g90["compute_90_s"].iloc[0], 1.8, rel_tol=1e-9)
          and math.isclose(g90["wire_floor_us"].iloc[0], 204_800.0),
          "gossip at 1 Gbit: exchange 200 ms, 90% needs 1.8 s of compute per step")


def test_report(top, tmp):
    out = os.path.join(tmp, "report")
    p = subprocess.run([sys.executable, REPORT, top, "-o", out], capture_output=True, text=True)
    check(p.returncode == 0, "rb-report on results/ with the sweep in a subdirectory: exit 0 (%s)"
          % p.stderr[-300:])
    md = open(os.path.join(out, "report.md")).read() if p.returncode == 0 else ""
    check("over an emulated network" in md and "## " + crossover.HEADING in md,
          "report.md: the emulated headline line and the crossover section")
    check("Headline (measured over an emulated network" in p.stdout,
          "stdout: the emulated headline line")
    if p.returncode == 0:
        t = pd.read_csv(os.path.join(out, "tables", "crossover_s2_rate.csv"))
        lat = pd.read_csv(os.path.join(out, "tables", "micro_latency.csv"))
        check(os.path.exists(os.path.join(out, "crossover_s2_1.png"))
              and os.path.exists(os.path.join(out, "crossover_s2_2.png"))
              and "crossover_s2_1.png" in md,
              "the crossover figure, one per configuration (2 and 4 nodes)")
        curves = pd.read_csv(os.path.join(out, "tables", "crossover_s2_curves.csv"))
        check(set(curves["source"]) == {"measured", "model", "model alone"},
              "crossover_s2_curves.csv: measured, model and model alone")
        check(len(t) == 4 and (lat["wire_bound"] == wire.CPU_BOUND).any(),
              "tables: crossover_s2_rate.csv (2 configurations x 2 thresholds) and the wire mark "
              "in micro_latency.csv, as pandas reads them")
    c = subprocess.run([sys.executable, REPORT, "--compare", top, top], capture_output=True,
                       text=True)
    check(c.returncode == 0, "--compare of the data with itself: no contradiction (emulated and "
          "this machine's points kept apart) (%s)" % (c.stdout + c.stderr)[-300:])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        top = os.path.join(tmp, "results")
        os.makedirs(top)
        make_results(top)
        agg = test_claims_rows(top)
        test_wire_marks(agg)
        test_crossovers(agg)
        test_report(top, tmp)
    return check.exit()


if __name__ == "__main__":
    sys.exit(main())
