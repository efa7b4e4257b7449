#!/usr/bin/python3
"""Intervals, significance, settings and --compare of rb-report.

usage: verdict_check.py REPORT ROW_TEMPLATE GOSSIP_TEMPLATE ELEMENT_DIR REAL_DIR WORKDIR

ROW_TEMPLATE is one real rb_micro file at the S2 paper's setting (row
layout, 64 columns, row density 2%, sketch_width_mode=fraction, width
0.005) with none, dense, agsparse and s2 at one size; GOSSIP_TEMPLATE one
with none and gossip run with --compute (GossipGraD's setting); ELEMENT_DIR holds
real rb_micro files of element-sparse gradients only; REAL_DIR six real
rb_micro files of one configuration.  From ROW_TEMPLATE this script writes
files that follow results/README.md, with t_avg_us set per repetition from
TIMES (so the expected medians and intervals are known), in two forms:
  within/  one file, 9 `repeat` rows per (reducer, size), rounds
           interleaved over reducers (what rb_micro --repeat 9 writes);
  across/  9 files, one per repetition, each with its own run_id.
Each check prints ok or FAIL; exit 1 if any failed.
"""

import os
import secrets
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd

REPEATS = 9                     # 95% interval of the median: [x_(2), x_(8)]
ROUNDS = [3, 7, 0, 5, 8, 1, 6, 2, 4]   # value order differs from round order
# t_avg_us of repetition r (in ROUNDS order) per reducer: s2 and agsparse
# overlap (no significant difference); dense is clearly slower than both.
TIMES = {
    "none": lambda r: 5.0 + 0.1 * r,
    "dense": lambda r: 100.0 + r,        # sorted 100..108: [101, 107], median 104
    "agsparse": lambda r: 50.0 + 2 * r,  # 50..66: [52, 64], median 58
    "s2": lambda r: 54.0 + 2 * r,        # 54..70: [56, 68], median 62
}

# GossipGraD with modelled compute: efficiency 1004/1108 = 0.906 with the
# interval [1001/1114, 1007/1102], which straddles the 0.9 of the claim.
GOSSIP_TIMES = {"none": lambda r: 1000.0 + r, "gossip": lambda r: 1100.0 + 2 * r}

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


# ------------------------------------------------------------ writing files

def write_run(template, path, picks, with_repeat):
    """A run file from template: picks = [(template row, repeat, t_avg_us)]
    become its /micro/results rows (and /micro/samples/<row>, the row's
    times and samples scaled to the new average), with a
    `repeat` column when with_repeat; a new run_id."""
    with h5py.File(template, "r") as src, h5py.File(path, "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        dst.attrs["run_id"] = secrets.token_hex(16)
        # The times are set here, not measured: the template's machine load
        # (busy when this test runs beside other work) does not apply.
        for k in ("machine_other_cpu_before", "machine_other_cpu_during", "machine_steal_during"):
            if k in dst.attrs:
                dst.attrs[k] = 0.0
        for name in src:
            if name != "micro":
                src.copy(name, dst)
        res = src["micro/results"][...]
        # The template's own repeat column (rb_micro writes one) is left out:
        # without with_repeat the file stands for one written before -r.
        base = [n for n in res.dtype.names if n != "repeat"]
        names = base + (["repeat"] if with_repeat else [])
        dtype = np.dtype({"names": names, "formats": [res.dtype.fields[n][0] for n in base]
                                                     + ["<i4"] * with_repeat})
        out = np.zeros(len(picks), dtype)
        for j, (i, rep, t) in enumerate(picks):
            for n in base:
                out[n][j] = res[n][i]
            # the row's other times scaled with it: they must agree
            # (t_min <= t_avg <= t_max, the average among its samples)
            scale = t / res["t_avg_us"][i]
            for n in ("t_avg_us", "t_min_us", "t_max_us", "t_p50_us", "t_p99_us"):
                out[n][j] = res[n][i] * scale
            out["t_avg_us"][j] = t
            if with_repeat:
                out["repeat"][j] = rep
        g = dst.create_group("micro")
        ds = g.create_dataset("results", data=out, maxshape=(None,), chunks=True)
        for k, v in src["micro/results"].attrs.items():
            if k == "units":
                v = [u for n, u in zip(res.dtype.names, v) if n != "repeat"] + [""] * with_repeat
            ds.attrs[k] = v
        samples = g.create_group("samples")
        for j, (i, _, t) in enumerate(picks):
            ds = samples.create_dataset(str(j), data=src["micro/samples/%d" % i][...]
                                        * (t / res["t_avg_us"][i]))
            for k, v in src["micro/samples/%d" % i].attrs.items():
                ds.attrs[k] = v
            ds.attrs["row"] = j


def template_rows(template):
    with h5py.File(template, "r") as f:
        return [r.decode().rstrip("\0") for r in f["micro/results"]["reducer"]]


def write_datasets(template, work, times):
    """within/ and across/ from the same repetitions; returns both dirs."""
    reducers = template_rows(template)
    within, across = os.path.join(work, "within"), os.path.join(work, "across")
    os.makedirs(within)
    os.makedirs(across)
    rounds = [[(i, rnd, times[red](ROUNDS[rnd])) for i, red in enumerate(reducers)]
              for rnd in range(REPEATS)]
    # rb_micro --repeat: round 0 of every reducer, then round 1, ...
    write_run(template, os.path.join(within, "repeats.h5"), [p for rnd in rounds for p in rnd], True)
    for rnd, picks in enumerate(rounds):
        write_run(template, os.path.join(across, "run%d.h5" % rnd), picks, False)
    return within, across


# ------------------------------------------------------------ running

def report(rb_report, data, out):
    p = subprocess.run([rb_report, data, "-o", out], capture_output=True, text=True)
    check(p.returncode == 0, "rb-report %s exits 0 (got %d: %s)" % (data, p.returncode, p.stderr[-300:]))
    return out


def table(out, name):
    return pd.read_csv(os.path.join(out, "tables", name + ".csv"), keep_default_na=False,
                       na_values=[""])


def compare(rb_report, a, b):
    p = subprocess.run([rb_report, "--compare", a, b], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


# ------------------------------------------------------------ checks

def expected(values):
    """Median and [x_(2), x_(8)] of 9 values, computed here."""
    x = sorted(values)
    return float(np.median(x)), x[1], x[7]


def check_intervals(out, what):
    lat = table(out, "micro_latency")
    for red, f in TIMES.items():
        r = lat[lat["reducer"] == red]
        check(len(r) == 1, "%s: one %s point" % (what, red))
        if len(r) != 1:
            continue
        r = r.iloc[0]
        med, lo, hi = expected([f(v) for v in ROUNDS])
        check(int(r["n_repeats"]) == REPEATS and close(r["t_avg_us_median"], med)
              and close(r["t_avg_us_ci_low"], lo) and close(r["t_avg_us_ci_high"], hi),
              "%s: %s n=%d median %g [%g, %g] (want n=%d %g [%g, %g])"
              % (what, red, r["n_repeats"], r["t_avg_us_median"], r["t_avg_us_ci_low"],
                 r["t_avg_us_ci_high"], REPEATS, med, lo, hi))
    return lat


def check_significance(out, what):
    sp = table(out, "micro_speedup").set_index("variant")
    s2 = sp.loc["s2"]
    check(s2["best_baseline"] == "agsparse" and s2["vs_best_baseline"] == "no significant difference",
          "%s: s2 vs agsparse (overlapping intervals): %r" % (what, s2["vs_best_baseline"]))
    want = (104 / 62, 101 / 68, 107 / 56)
    check(s2["vs_dense"] == "faster" and close(s2["speedup_vs_dense"], want[0])
          and close(s2["speedup_vs_dense_low"], want[1]) and close(s2["speedup_vs_dense_high"], want[2]),
          "%s: s2 vs dense significant: %s %.4g [%.4g, %.4g]" % (
              what, s2["vs_dense"], s2["speedup_vs_dense"], s2["speedup_vs_dense_low"],
              s2["speedup_vs_dense_high"]))
    ranks = sp["rank"].to_dict()
    check(ranks == {"agsparse": 1, "s2": 1, "dense": 3}, "%s: ranks with ties %s" % (what, ranks))
    md = open(os.path.join(out, "report.md")).read()
    speed = md.split("### Speedup vs dense", 1)[1].split("_(full table", 1)[0]
    s2_line = next(ln for ln in speed.splitlines() if ln.startswith("| G1 | s2 |"))
    check("no significant difference" in s2_line and "1.677x (faster)" in s2_line,
          "%s: report.md speedup row says it: %s" % (what, s2_line))


def check_headline(out, what, one_launch):
    """The paper point's speedup row is the same from both forms; only the
    across-file form (9 launches) puts it in the headline: the within-file
    form is one launch, whose interval leaves out launch-to-launch
    variation (the exact communication reduction counts from one launch)."""
    claims = table(out, "claims")
    paper = claims[(claims["setting"] == "paper") & (claims["oversubscribed"] == "no")
                   & (claims["points"] > 0)]
    sp = paper[paper["claim_id"] == "s2_speedup"]
    check(len(sp) == 1 and close(sp["measured_median"].iloc[0], 58 / 62)
          and close(sp["measured_low"].iloc[0], 52 / 68) and close(sp["measured_high"].iloc[0], 64 / 56)
          and sp["verdict"].iloc[0] == "below the claim"
          and (str(sp["launches"].iloc[0]) == "one") == one_launch,
          "%s: speedup from the paper point, 0.935x [0.765, 1.143], below the claim, launches %s"
          % (what, sp["launches"].iloc[0] if len(sp) else "?"))
    md = open(os.path.join(out, "report.md")).read()
    first = md.split("## Headline claims", 1)[1].split("\n\n", 2)[1]
    if one_launch:
        check(first.startswith("**Headline** (measured") and "0.94x" not in first
              and "S2 communication reduction" in first,
              "%s: one launch: the speedup stays out of the headline, the exact reduction is in: %s"
              % (what, first[:160]))
    else:
        check(first.startswith("**Headline** (measured") and "0.94x [0.76x, 1.14x]" in first,
              "%s: the headline line shows the paper point with its interval" % what)
    return claims


def check_same(a, b, name, cols):
    ta, tb = table(a, name), table(b, name)
    same = len(ta) == len(tb) and all(
        np.allclose(ta[c].astype(float), tb[c].astype(float), equal_nan=True, rtol=1e-12) for c in cols)
    check(same, "within-file and across-file repeats: %s equal in %s" % (name, ", ".join(cols)))


def check_no_paper(rb_report, elem, work):
    out = report(rb_report, elem, os.path.join(work, "rep-element"))
    md = open(os.path.join(out, "report.md")).read()
    first = md.split("## Headline claims", 1)[1].split("\n\n", 2)[1]
    check(first.startswith("**Headline**: no number. These data hold no point at the papers' setting"),
          "element-sparse data: the headline says there is no paper point: %s" % first[:90])
    claims = table(out, "claims")
    paper, other = claims[claims["setting"] == "paper"], claims[claims["setting"] == "other"]
    check((paper["points"] == 0).all() and len(paper) == 9
          and set(paper["claim_id"]) == {"s2_accuracy_parity", "s2_comm_reduction", "s2_speedup",
                                         "s2_train_speedup", "gossip_o1", "gossip_efficiency",
                                         "gossip_accuracy_parity"},
          "element-sparse data: every paper row (seven claims, nine measures) has no point")
    check(set(other["claim_id"]) >= {"s2_comm_reduction", "s2_speedup"} and (other["points"] > 0).all(),
          "element-sparse data: the S2 points are under `other`")
    check("### Where S2 is not designed to win" in md, "element-sparse data: the `other` heading")
    pts = table(out, "claims_s2_points")
    check(pts["why_other"].str.contains("element layout").all(), "each point says why it is `other`")


def edited_copy(src_dir, dst_dir, edit):
    """dst_dir/repeats.h5: a copy of src_dir's, another run (new run_id),
    changed by edit(h5py file)."""
    os.makedirs(dst_dir)
    path = os.path.join(dst_dir, "repeats.h5")
    with open(os.path.join(src_dir, "repeats.h5"), "rb") as f, open(path, "wb") as g:
        g.write(f.read())
    with h5py.File(path, "r+") as f:
        f.attrs["run_id"] = secrets.token_hex(16)
        edit(f)
    return dst_dir


def crowd(f):
    f["topology"].attrs["available"] = 1
    f["topology"].attrs["pus"] = 1      # 2 ranks on a 1-core node


def check_oversubscribed(rb_report, within, work):
    crowded = edited_copy(within, os.path.join(work, "crowded"), crowd)
    out = report(rb_report, crowded, os.path.join(work, "rep-crowded"))
    claims = table(out, "claims")
    paper = claims[(claims["setting"] == "paper") & (claims["points"] > 0)]
    check(len(paper) and (paper["oversubscribed"] == "yes").all(),
          "oversubscribed paper points stay, marked")
    md = open(os.path.join(out, "report.md")).read()
    check("no number. The only points at the papers' setting ran more ranks than cores" in md,
          "oversubscribed paper points never make the headline")


def check_gossip(rb_report, template, work):
    """rb_micro --compute: a `paper` efficiency point with its interval;
    the same rows without --compute on the command line give none."""
    within, _ = write_datasets(template, os.path.join(work, "gossip"), GOSSIP_TIMES)
    out = report(rb_report, within, os.path.join(work, "rep-gossip"))
    c = table(out, "claims")
    g = c[(c["claim_id"] == "gossip_efficiency") & (c["setting"] == "paper") & (c["points"] > 0)
          & (c["data"] == "measured")]
    check(len(g) == 1 and close(g["measured_median"].iloc[0], 1004 / 1108)
          and close(g["measured_low"].iloc[0], 1001 / 1114) and close(g["measured_high"].iloc[0], 1007 / 1102)
          and g["verdict"].iloc[0] == "not significantly different from the claim",
          "gossip --compute: efficiency 0.906 [0.899, 0.914], not significantly different from 0.9")
    seen = []

    def no_compute(f):
        seen.append(f.attrs["command_line"])
        f.attrs["command_line"] = seen[0].replace("--compute 0.001", "")

    plain = edited_copy(within, os.path.join(work, "gossip-plain"), no_compute)
    cmd = seen[0]
    c = table(report(rb_report, plain, os.path.join(work, "rep-gossip-plain")), "claims")
    g = c[(c["claim_id"] == "gossip_efficiency") & (c["data"] != "model")]
    check("--compute 0.001" in cmd and (g["points"] == 0).all(),
          "gossip without --compute: no efficiency point")


def check_real(rb_report, real, work):
    """Six real rb_micro files: n = 6 and the interval [min, max] of the
    HDF5 values of each point."""
    out = report(rb_report, real, os.path.join(work, "rep-real"))
    vals = {}
    for name in sorted(os.listdir(real)):
        with h5py.File(os.path.join(real, name), "r") as f:
            for r in f["micro/results"][...]:
                vals.setdefault(r["reducer"].decode().rstrip("\0"), []).append(float(r["t_avg_us"]))
    lat = table(out, "micro_latency").set_index("reducer")
    for red, v in vals.items():
        r = lat.loc[red]
        check(len(v) == 6 and int(r["n_repeats"]) == 6 and close(r["t_avg_us_ci_low"], min(v))
              and close(r["t_avg_us_ci_high"], max(v)) and close(r["t_avg_us_median"], np.median(v)),
              "real repeats: %s n=6, [%g, %g] = min..max of the HDF5 values" % (
                  red, r["t_avg_us_ci_low"], r["t_avg_us_ci_high"]))


def check_compare(rb_report, template, within, across, rep_within, rep_across, work):
    """--compare on the across-file form (one launch per repetition, so the
    headline holds the speedup); the within-file form is one launch."""
    _, across2 = write_datasets(template, os.path.join(work, "again"), TIMES)
    rc, text = compare(rb_report, across, across2)
    check(rc == 0 and "no contradiction" in text
          and "S2: speedup vs best baseline (reduce time) (measured, this machine, 2 ranks)"
          in text.split("unchecked")[0], "--compare across across-again: no contradiction, "
          "headline checked (rc %d)\n%s" % (rc, text))
    rep_again = report(rb_report, across2, os.path.join(work, "rep-again"))
    rc2, text2 = compare(rb_report, rep_across, rep_again)
    check(rc2 == 0 and text2.split("\n", 2)[2] == text.split("\n", 2)[2],
          "--compare on the two report directories says the same (rc %d)" % rc2)
    # One launch against nine: the same medians, but only the nine-launch
    # data give a headline speedup: a headline one has and the other not.
    rc, text = compare(rb_report, within, across)
    check(rc == 1 and text.count("\n- ") == 1 and "A: no headline number" in text
          and "S2: speedup vs best baseline (reduce time)" in text,
          "--compare within across: only the headline speedup of the launches differs (rc %d)\n%s"
          % (rc, text))
    # s2 and agsparse swap their medians: a difference nobody called
    # significant, and the speedup stays inside A's interval.
    swapped = dict(TIMES, s2=lambda r: 46.0 + 2 * r)
    _, w2 = write_datasets(template, os.path.join(work, "swapped"), swapped)
    rc, text = compare(rb_report, across, w2)
    check(rc == 0 and "no contradiction" in text,
          "--compare: a non-significant order that flips is no contradiction (rc %d)\n%s" % (rc, text))
    # s2 a little faster: B's speedup median leaves A's interval but the two
    # intervals overlap: the same story told with noise, no contradiction.
    faster = dict(TIMES, s2=lambda r: 40.0 + 2 * r)
    _, w4 = write_datasets(template, os.path.join(work, "faster"), faster)
    rc, text = compare(rb_report, across, w4)
    check(rc == 0 and "no contradiction" in text,
          "--compare: a headline median outside A's interval with overlapping intervals is no "
          "contradiction (rc %d)\n%s" % (rc, text))
    # s2 slower than dense: the stated difference changes sign and the
    # headline speedup's intervals no longer overlap.
    slow = dict(TIMES, s2=lambda r: 150.0 + 2 * r)
    _, w3 = write_datasets(template, os.path.join(work, "slow"), slow)
    rc, text = compare(rb_report, across, w3)
    check(rc == 1 and "dense > s2 in A, dense < s2 in B" in text
          and "S2: speedup vs best baseline (reduce time) (measured, this machine, 2 ranks): A's "
              "and B's intervals do not overlap" in text,
          "--compare: a stated difference of the other sign and a headline outside the "
          "interval are contradictions, exit 1 (rc %d)\n%s" % (rc, text))
    # dense 4% slower in B than s2's 4% faster in A: significant both times,
    # in opposite directions, but within the 5% minimum effect: no
    # contradiction (and no difference stated).
    near_a = dict(TIMES, dense=lambda r: 100.0 + 0.1 * r, s2=lambda r: 104.0 + 0.1 * r)
    near_b = dict(TIMES, dense=lambda r: 104.0 + 0.1 * r, s2=lambda r: 100.0 + 0.1 * r)
    _, wa = write_datasets(template, os.path.join(work, "near-a"), near_a)
    _, wb = write_datasets(template, os.path.join(work, "near-b"), near_b)
    rc, text = compare(rb_report, wa, wb)
    check(rc == 0 and "no contradiction" in text,
          "--compare: opposite significant differences within 5%% contradict nothing (rc %d)\n%s"
          % (rc, text))
    rc, text = compare(rb_report, within, os.path.join(work, "no-such-dir"))
    check(rc == 2 and "--compare" in text, "--compare with a missing side exits 2 (rc %d)" % rc)


def main():
    rb_report, template, gossip, elem, real, work = sys.argv[1:7]
    within, across = write_datasets(template, work, TIMES)
    rep_within = report(rb_report, within, os.path.join(work, "rep-within"))
    rep_across = report(rb_report, across, os.path.join(work, "rep-across"))
    for out, what in ((rep_within, "within-file"), (rep_across, "across-file")):
        check_intervals(out, what)
        check_significance(out, what)
        check_headline(out, what, out == rep_within)
    check_same(rep_within, rep_across, "micro_latency",
               ["n_repeats", "n_samples", "t_avg_us_median", "t_avg_us_ci_low", "t_avg_us_ci_high"])
    check_same(rep_within, rep_across, "claims",
               ["points", "measured_median", "measured_low", "measured_high"])
    check_no_paper(rb_report, elem, work)
    check_oversubscribed(rb_report, within, work)
    check_gossip(rb_report, gossip, work)
    check_real(rb_report, real, work)
    check_compare(rb_report, template, within, across, rep_within, rep_across, work)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
