#!/usr/bin/python3
"""Busy machines (machine_* attributes, schema item 1) on synthetic
archives (synth.py): a busy run is marked, kept out of the headline, warned
of in report.md, and named by --compare when a contradiction involves it;
a reversal within the 5% minimum effect is no contradiction; the cost
model's 128-rank prediction of the gossip efficiency."""

import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import synth
    from synth import BUSY, QUIET, Checks, load_tables, write_micro
    from claims_synth import launch_rows
    from rbanalysis import claim_table
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()
REPORT = os.path.join(synth.ANALYSIS, "rb-report")


def gossip_launch(path, none_us, gossip_us, machine):
    rows = []
    for rep in range(3):
        for red, t in (("none", none_us), ("gossip", gossip_us)):
            rows.append({"reducer": red, "size_bytes": 1 << 20, "t_avg_us": t + 0.5 * rep,
                         "repeat": rep, "bytes_sent_avg": 0.0 if red == "none" else float(1 << 20),
                         "t_model_us": 1000.0 if red == "none" else 1100.0})
    write_micro(path, rows, machine=machine, extra={"compute_s": 0.001})


def test_busy(tmp):
    quiet, busy = os.path.join(tmp, "gossip-quiet"), os.path.join(tmp, "gossip-busy")
    os.makedirs(quiet)
    os.makedirs(busy)
    for k in range(6):
        gossip_launch(os.path.join(quiet, "l%d.h5" % k), 1000.0 + k, 1050.0 + k, QUIET)
        gossip_launch(os.path.join(busy, "l%d.h5" % k), 1000.0 + k, 1050.0 + k,
                      BUSY if k == 2 else QUIET)
    _, _, _, _, ctab = load_tables([quiet])
    head = claim_table.headline_rows(ctab)
    g = head[head["claim_id"] == "gossip_efficiency"]
    check(len(g) == 1 and g["busy"].iloc[0] == "no" and g["launches"].iloc[0] == 6
          and g["verdict_class"].iloc[0] == "meets",
          "6 quiet launches: the gossip efficiency (about 95%) is a headline number, meets >= 90%")
    _, _, _, _, ctab = load_tables([busy])
    g = ctab[(ctab["claim_id"] == "gossip_efficiency") & (ctab["data"] == "measured")]
    head = claim_table.headline_rows(ctab)
    lines = claim_table.headline(ctab)
    check(len(g) == 1 and g["busy"].iloc[0] == "yes" and head.empty
          and "busy machine" in lines[0],
          "one busy launch of six: the point is busy, out of the headline: %s" % lines[0])
    # The model row predicts 128 ranks (no simulation): a prediction.
    m = ctab[(ctab["claim_id"] == "gossip_efficiency") & (ctab["data"] == "model")]
    check(len(m) == 1 and m["platform"].iloc[0] == "cost model, 128 ranks (prediction)"
          and math.isclose(m["measured_median"].iloc[0], 1000.0 / 1100.0),
          "cost-model row at 128 ranks: compute / model time = 1000/1100")
    # The report marks it, and names the busy run.
    out = os.path.join(tmp, "rep-busy")
    p = subprocess.run([REPORT, busy, "-o", out], capture_output=True, text=True)
    md = open(os.path.join(out, "report.md")).read() if p.returncode == 0 else ""
    check(p.returncode == 0 and "1 of 6 measured run(s) ran on a busy machine" in md
          and "| yes |" in md.split("### Runs", 1)[1].split("###", 1)[0],
          "report.md warns of the busy run and marks it in the Runs table (rc %d)" % p.returncode)


def test_compare_busy(tmp):
    a, b = os.path.join(tmp, "cmp-a"), os.path.join(tmp, "cmp-b")
    os.makedirs(a)
    os.makedirs(b)
    for k in range(6):
        write_micro(os.path.join(a, "l%d.h5" % k), launch_rows(4.6 + 0.01 * k, 5.6, 2), machine=QUIET)
        write_micro(os.path.join(b, "l%d.h5" % k), launch_rows(5.6 + 0.01 * k, 4.6, 2),
                    machine=BUSY if k == 0 else QUIET)
    p = subprocess.run([REPORT, "--compare", a, b], capture_output=True, text=True)
    check(p.returncode == 1 and "agsparse > dense in A, agsparse < dense in B" in p.stdout
          and "a busy run in B" in p.stdout and "B holds 2 point(s) measured on a busy machine"
          in p.stdout,
          "--compare: a reversed difference names the busy run (rc %d)\n%s" % (p.returncode, p.stdout))
    # Both within 5%: significant and reversed, but no contradiction.
    a2, b2 = os.path.join(tmp, "cmp-a2"), os.path.join(tmp, "cmp-b2")
    os.makedirs(a2)
    os.makedirs(b2)
    for k in range(6):
        write_micro(os.path.join(a2, "l%d.h5" % k), launch_rows(4.6 + 0.001 * k, 4.7, 2), machine=QUIET)
        write_micro(os.path.join(b2, "l%d.h5" % k), launch_rows(4.7 + 0.001 * k, 4.6, 2), machine=QUIET)
    p = subprocess.run([REPORT, "--compare", a2, b2], capture_output=True, text=True)
    check(p.returncode == 0 and "no contradiction" in p.stdout,
          "--compare: a 2%% reversal, significant in both, is within 5%%: no contradiction (rc %d)"
          % p.returncode)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_busy(tmp)
        test_compare_busy(tmp)
    return check.exit()


if __name__ == "__main__":
    sys.exit(main())
