#!/usr/bin/python3
"""Check an rb-report output directory against the HDF5 files it came from.

usage: report_check.py REPORT_DIR [--runs N] [--refused NAME...] [--training]

Checks (each failure is printed; exit 1 if any, 0 otherwise):
  - report.md, report.html exist; the HTML embeds every figure as base64 PNG;
  - every figure the report names exists, starts with the PNG signature and
    is more than 2 kB; at least one latency figure exists;
  - tables/micro_rows.csv: every row equals the /micro/results row of the
    file (and merged-archive run) it names, field by field;
  - tables/micro_latency.csv: each median / min / max equals the median /
    min / max of the HDF5 t_avg_us values of the rows of that group,
    variant and size (recomputed here from the HDF5 files, via the row
    mapping of micro_rows.csv); the 95% interval of the median is the
    order-statistic one (binomial, computed here), absent below 6 rows;
  - the Latency table of report.md shows those numbers (4 significant
    digits);
  - the number of runs used and the refused files named;
  - the claims table: every claim is either measured or says 'not measured
    in these data' (training claims must say so when --training is absent);
  - the S2 communication-reduction claim (and, with --training, the
    GossipGraD compute efficiency) recomputed here from the HDF5 values
    equals the claims table, per setting (`paper` / `other`, decided here
    from the rows' layout, columns, density and s2 options), per
    oversubscription (ranks sharing a machine against its cores) and per platform
    (this machine, N ranks);
  - with --training: tables/train_curves.csv equals each run's /train/curves
    (accuracy or perplexity per evaluation), and each reducer's seconds per
    iteration in tables/train_summary.csv equals the sum of the medians of
    /train/phases forward_s, backward_s, reduce_s, update_s.
"""

import argparse
import math
import os
import re
import sys

import h5py
import numpy as np
import pandas as pd

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def close(a, b, rel=1e-12):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def h5_rows(path, run):
    with h5py.File(path, "r") as f:
        g = f["runs"][run] if run else f
        return g["micro/results"][...]


def check_files(d):
    for name in ("report.md", "report.html"):
        if not os.path.isfile(os.path.join(d, name)):
            fail("%s missing" % name)
            sys.exit(1)
    md = open(os.path.join(d, "report.md")).read()
    html = open(os.path.join(d, "report.html")).read()
    figs = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", md)
    if not any(f.startswith("latency_") for f in figs):
        fail("no latency figure in report.md")
    for f in figs:
        p = os.path.join(d, f)
        if not os.path.isfile(p):
            fail("figure %s missing" % f)
            continue
        data = open(p, "rb").read()
        if not data.startswith(PNG_MAGIC):
            fail("figure %s is not a PNG" % f)
        if len(data) < 2048:
            fail("figure %s is suspiciously small (%d bytes)" % (f, len(data)))
    n_inline = html.count("data:image/png;base64,")
    if n_inline != len(figs):
        fail("report.html embeds %d figures, report.md names %d" % (n_inline, len(figs)))
    print("ok: %d figures, all PNG" % len(figs))
    return md


# What an unchecked row did not measure: empty in the tables, never 0.
UNKNOWN_UNCHECKED = ("wrong", "rel_l2_err", "recall", "max_abs_err", "consensus")


def check_rows(d):
    rows = pd.read_csv(os.path.join(d, "tables", "micro_rows.csv"), keep_default_na=False,
                       na_values=[""])
    cache = {}
    numeric = ["size_bytes", "count", "rows", "cols", "density", "ranks", "iters", "t_avg_us",
               "t_min_us", "t_max_us", "t_p50_us", "t_p99_us", "bytes_sent_avg", "bytes_sent_max",
               "bytes_recv_avg", "nnz_union", "wrong", "rel_l2_err", "recall", "consensus"]
    checked = 0
    h5vals = []
    for _, r in rows.iterrows():
        run = r["run"].split(":", 1)[1] if ":" in r["run"] else ""
        key = (r["file"], run)
        if key not in cache:
            cache[key] = h5_rows(*key)
        rec = cache[key][int(r["row"])]
        if rec["reducer"].decode().rstrip("\0") != r["reducer"]:
            fail("%s row %d: reducer %s in CSV, %s in HDF5" % (key, r["row"], r["reducer"], rec["reducer"]))
        for col in numeric:
            if col in UNKNOWN_UNCHECKED and int(rec["checked"]) == 0:
                if not math.isnan(float(r[col])):   # --no-check, reducer none
                    fail("%s row %d: %s = %r in CSV for an unchecked row, want empty"
                         % (key, r["row"], col, r[col]))
            elif col in rec.dtype.names and not close(float(rec[col]), float(r[col])):
                fail("%s row %d: %s = %r in CSV, %r in HDF5" % (key, r["row"], col, r[col], rec[col]))
        h5vals.append((float(rec["t_avg_us"]), float(rec["bytes_sent_avg"]), int(rec["wrong"])))
        checked += 1
    print("ok: %d micro rows match their HDF5 rows" % checked)
    rows["h5_t_avg_us"] = [v[0] for v in h5vals]
    rows["h5_bytes"] = [v[1] for v in h5vals]
    rows["h5_wrong"] = [v[2] for v in h5vals]
    rows["h5_crowded"] = [bool(crowded(f, r.split(":", 1)[1] if ":" in r else None))
                          for f, r in zip(rows["file"], rows["run"])]
    return rows


BASELINES = ("agsparse", "sparcml", "parallax", "omnireduce")


def claim_row(d, words, kind, setting=None, oversubscribed=None, ranks=None):
    claims = pd.read_csv(os.path.join(d, "tables", "claims.csv"), keep_default_na=False,
                         na_values=[""])
    c = claims[claims["claim"].str.contains(words) & (claims["data"] == kind)]
    if setting is not None:
        c = c[(c["setting"] == setting) & (c["oversubscribed"] == ("yes" if oversubscribed else "no"))]
    if ranks is not None:
        # One row per platform: measured runs are "this machine, N ranks".
        c = c[c["platform"] == "this machine, %d rank%s" % (ranks, "" if ranks == 1 else "s")]
    return c.iloc[0] if len(c) else None


def claim_value(d, words, kind, setting=None, oversubscribed=None):
    c = claim_row(d, words, kind, setting, oversubscribed)
    return None if c is None else float(c["measured_median"])


def s2_setting(layout, cols, density, options):
    """The S2 paper's regime (docs/report.md), decided here independently:
    row layout, >= 64 columns, 0 < density <= 5%, sketch_width_mode=fraction
    and sketch_width / density within a factor 2 of 0.25 or 0.001."""
    opts = dict(p.split("=", 1) for p in str(options).split(",") if "=" in p)
    if layout != "row" or cols < 64 or not 0 < density <= 0.05:
        return "other"
    if opts.get("sketch_width_mode") != "fraction":
        return "other"
    ratio = float(opts.get("sketch_width", "nan")) / density
    return "paper" if 0.125 <= ratio <= 0.5 or 0.0005 <= ratio <= 0.002 else "other"


def check_s2_claim(d, rows):
    """1 - s2 bytes / fewest bytes of a validated baseline, per group and
    size, median over points: recomputed from the HDF5 values, per kind,
    setting and oversubscription."""
    points = {}
    for (gid, size), sub in rows.groupby(["gid", "size_bytes"]):
        if (sub["ranks"] < 2).all():
            continue                  # one rank communicates nothing: no point
        med = sub.groupby(["reducer", "variant"]).agg(
            b=("h5_bytes", "median"), w=("h5_wrong", "max"), o=("options", "first"),
            c=("h5_crowded", "max"))
        base = med[med.index.get_level_values(0).isin(BASELINES) & (med["w"] == 0)]
        s2 = med[med.index.get_level_values(0) == "s2"]
        if base.empty or s2.empty:
            continue
        first = sub.iloc[0]
        for _, r in s2.iterrows():
            key = (first["kind"], s2_setting(first["layout"], int(first["cols"]),
                                             float(first["density"]), r["o"]), bool(r["c"]),
                   int(first["ranks"]))
            points.setdefault(key, []).append(1 - r["b"] / base["b"].min())
    for key, vals in points.items():
        got = claim_row(d, "communication reduction", *key)
        want = float(np.median(vals))
        if got is None or not close(float(got["measured_median"]), want, 1e-9):
            fail("S2 reduction claim %s: table %r, HDF5 gives %r" % (key, got, want))
        n = claim_row(d, "reduce time", *key)
        if n is None or int(n["points"]) != len(vals):
            fail("S2 speedup claim %s: %s points, want %d (groups of 2+ ranks)"
                 % (key, None if n is None else n["points"], len(vals)))
    claims = pd.read_csv(os.path.join(d, "tables", "claims.csv"))
    s2rows = claims[claims["claim"].str.contains("communication reduction") & (claims["points"] > 0)]
    if len(s2rows) != len(points):
        fail("claims table has %d S2 reduction rows with points, HDF5 gives %d" % (len(s2rows), len(points)))
    print("ok: S2 communication-reduction claim recomputed from HDF5 (%s)"
          % (", ".join("%s: %d points" % ("/".join(map(str, k)), len(v)) for k, v in points.items())
             or "no points"))


def median_interval(values):
    """[x_(l), x_(n+1-l)] with the largest l whose binomial coverage is
    >= 95%; None below 6 values."""
    x, n = sorted(values), len(values)
    best = None
    for l in range(1, n // 2 + 1):
        if sum(math.comb(n, i) for i in range(l, n - l + 1)) / 2 ** n < 0.95:
            break
        best = (x[l - 1], x[n - l])
    return best


def shown_bytes(text):
    """'4 KiB' -> 4096, '512 B' -> 512 (the report writes sizes in units)."""
    num, unit = text.split()
    return round(float(num) * {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30}[unit])


def check_latency(d, rows, md):
    lat = pd.read_csv(os.path.join(d, "tables", "micro_latency.csv"))
    for _, r in lat.iterrows():
        sel = rows[(rows["gid"] == r["gid"]) & (rows["variant"] == r["variant"])
                   & (rows["size_bytes"] == r["size_bytes"])]["h5_t_avg_us"].to_numpy()
        if len(sel) != r["n_repeats"]:
            fail("latency %s %s %d: %d repeats in HDF5, %d in table"
                 % (r["gid"], r["variant"], r["size_bytes"], len(sel), r["n_repeats"]))
            continue
        for col, val in (("t_avg_us_median", np.median(sel)), ("t_avg_us_min", sel.min()),
                         ("t_avg_us_max", sel.max())):
            if not close(float(r[col]), float(val), 1e-9):
                fail("latency %s %s %d: %s %r, HDF5 gives %r"
                     % (r["gid"], r["variant"], r["size_bytes"], col, r[col], val))
        ci = median_interval(list(sel))
        got = (float(r["t_avg_us_ci_low"]), float(r["t_avg_us_ci_high"]))
        if (ci is None and not all(math.isnan(v) for v in got)) or (
                ci is not None and not (close(got[0], ci[0]) and close(got[1], ci[1]))):
            fail("latency %s %s %d: interval %r, HDF5 gives %r (%d repetitions)"
                 % (r["gid"], r["variant"], r["size_bytes"], got, ci, len(sel)))
    # The Markdown table shows the same numbers at 4 significant digits.
    section = md.split("### Latency vs size", 1)[1].split("\n\n_(full table", 1)[0]
    lines = [ln for ln in section.strip().splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    shown = [dict(zip(head, [c.strip() for c in ln.strip("|").split("|")])) for ln in lines[2:]]
    if len(shown) != len(lat):
        fail("report.md latency table has %d rows, CSV %d" % (len(shown), len(lat)))
    for s, (_, r) in zip(shown, lat.iterrows()):
        if s["reducer"] != r["variant"] or shown_bytes(s["size"]) != int(r["size_bytes"]):
            fail("report.md latency row order differs from CSV: %s" % s)
            break
        if not close(float(s["median us"]), float(r["t_avg_us_median"]), 5e-4):
            fail("report.md median %s vs CSV %r" % (s["median us"], r["t_avg_us_median"]))
    print("ok: %d latency medians/min/max match HDF5; report.md shows them" % len(lat))


def check_inputs(d, md, runs, refused, training):
    m = re.search(r"(\d+) run\(s\) used", md)
    if runs is not None and (not m or int(m.group(1)) != runs):
        fail("report.md says %s runs used, expected %d" % (m.group(1) if m else "?", runs))
    for name in refused:
        if not re.search(r"\| [^|]*%s \|" % re.escape(name), md):
            fail("refused file %s not named in report.md" % name)
    if ".tmp" in md.split("## Inputs", 1)[1].split("## Micro", 1)[0]:
        fail("a temporary (*.tmp*) file was read")
    claims = pd.read_csv(os.path.join(d, "tables", "claims.csv"))
    for _, c in claims.iterrows():
        measured = c["points"] > 0
        if not measured and "not measured in these data" not in c["verdict"]:
            fail("claim %r has no points but does not say so" % c["claim"])
        if not training and ("training" in c["claim"] or "Gossip" in c["claim"]) and measured:
            fail("claim %r measured without training data" % c["claim"])
        # An efficiency above 110% means the `none` reference was the slower
        # run: never a "meets the claim".
        if "efficiency" in c["claim"] and measured:
            odd = c["measured_median"] > 1.1
            if odd != c["verdict"].startswith("inconclusive"):
                fail("efficiency %.3f has verdict %r" % (c["measured_median"], c["verdict"]))
    check_crowding(d, md)
    print("ok: inputs, refusals and claims table")


def crowded(path, name):
    """None for a simulated run, else whether the ranks on rank 0's
    machine (machine_ranks) outnumber its processing units (/topology's,
    else machine_cores); in archives without machine_ranks, ranks per node
    against /topology's (name: the run in a merged archive)."""
    with h5py.File(path, "r") as f:
        g = f["runs"][name] if name else f
        a, t = g.attrs, g["topology"].attrs if "topology" in g else {}
        if int(a.get("simulated", 0)) == 1:
            return None
        pus = int(t["pus"]) if int(t.get("available", 0)) == 1 else None
        if int(a.get("machine_ranks", 0)) > 0:
            limit = pus or int(a.get("machine_cores", 0))
            return bool(limit) and int(a["machine_ranks"]) > limit
        rpn = -(-int(a["ranks"]) // max(int(a.get("nodes", 1)), 1))
        return pus is not None and rpn > pus


def check_crowding(d, md):
    """The oversubscription warning, recomputed from each run's HDF5 file:
    ranks sharing a machine against its processing units."""
    runs = pd.read_csv(os.path.join(d, "tables", "runs.csv"))
    flags = [crowded(r["file"], r["run"].split(":", 1)[1] if ":" in r["run"] else None)
             for _, r in runs.iterrows()]
    measured = sum(f is not None for f in flags)
    n_crowded = sum(bool(f) for f in flags)
    want = "%d of %d measured run(s) ran more ranks on a machine" % (n_crowded, measured)
    if n_crowded and want not in md:
        fail("report.md lacks the warning %r" % want)
    if not n_crowded and "ran more ranks on a machine" in md:
        fail("report.md warns of oversubscription, but no run had more ranks than cores")
    print("ok: oversubscription warning matches HDF5 (%d of %d runs)" % (n_crowded, measured))


def train_tables(path, label):
    run = label.split(":", 1)[1] if ":" in label else ""
    with h5py.File(path, "r") as f:
        g = f["runs"][run] if run else f
        return g["train/curves"][...], g["train/phases"][...]


def check_training(d):
    curv = pd.read_csv(os.path.join(d, "tables", "train_curves.csv"))
    summ = pd.read_csv(os.path.join(d, "tables", "train_summary.csv"))
    n = 0
    per_run, reducer_of, kind_of = {}, {}, {}
    for (path, label), sub in curv.groupby(["file", "run"]):
        c, p = train_tables(path, label)
        metric = sub["metric"].iloc[0]
        h5 = dict(zip(c["iteration"].tolist(), c[metric].tolist()))
        for _, r in sub.iterrows():
            if not close(float(r["value"]), float(h5.get(int(r["iteration"]), float("nan")))):
                fail("%s iteration %d: %s %r in CSV, %r in HDF5"
                     % (path, r["iteration"], metric, r["value"], h5.get(int(r["iteration"]))))
            n += 1
        t = sum(float(np.median(p[c])) for c in ("forward_s", "backward_s", "reduce_s", "update_s"))
        per_run[(sub["tid"].iloc[0], sub["variant"].iloc[0])] = per_run.get(
            (sub["tid"].iloc[0], sub["variant"].iloc[0]), []) + [t]
        reducer_of[(sub["tid"].iloc[0], sub["variant"].iloc[0])] = sub["reducer"].iloc[0]
        kind_of[sub["tid"].iloc[0]] = sub["kind"].iloc[0]
    if n == 0:
        fail("no training curve points in train_curves.csv")
    for _, r in summ.iterrows():
        exp = per_run.get((r["tid"], r["variant"]))
        if exp is None:
            fail("train summary %s %s: no run found" % (r["tid"], r["variant"]))
        elif not close(float(r["t_iter_s_median"]), float(np.median(exp)), 1e-9):
            fail("train summary %s %s: s/iter %r, HDF5 phases give %r"
                 % (r["tid"], r["variant"], r["t_iter_s_median"], np.median(exp)))
    print("ok: %d training curve points and %d s/iter values match HDF5" % (n, len(summ)))
    # GossipGraD compute efficiency: t_iter(none) / t_iter(gossip) per group.
    eff = {}
    for tid in set(k[0] for k in per_run):
        t = {reducer_of[k]: np.median(v) for k, v in per_run.items() if k[0] == tid}
        if "none" in t and "gossip" in t:
            eff.setdefault(kind_of[tid], []).append(t["none"] / t["gossip"])
    for kind, vals in eff.items():
        got = claim_value(d, "GossipGraD: compute efficiency", kind)
        if got is None or not close(got, float(np.median(vals)), 1e-9):
            fail("gossip efficiency claim (%s): table %r, HDF5 gives %r" % (kind, got, np.median(vals)))
    if eff:
        print("ok: GossipGraD compute-efficiency claim recomputed from HDF5")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--refused", nargs="*", default=[])
    ap.add_argument("--training", action="store_true")
    a = ap.parse_args()
    md = check_files(a.dir)
    rows = check_rows(a.dir)
    check_latency(a.dir, rows, md)
    check_s2_claim(a.dir, rows)
    check_inputs(a.dir, md, a.runs, a.refused, a.training)
    if a.training:
        check_training(a.dir)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
