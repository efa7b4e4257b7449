"""The report rb-report writes: build_report and its sections (inputs,
warnings, the key results, the claims' verdicts); the microbenchmark and
training sections and the figures' placing are in report_sections.py.
Imported once the command line is known to be valid (pandas, h5py and
matplotlib take seconds)."""

import datetime
import importlib
import os
import re

import pandas as pd

from . import (__version__, claim_table, compare, crossover, figures, formatting, frontier, micro,
               plotting, runmeta, stats, training, wire)
from .document import Document

from .report_sections import draw, section_micro, section_training
from .report_terms import CLAIM_COLUMNS, GLOSSARY


def build_report(archive, outdir, inputs, targets):
    doc = Document(outdir)
    rows = micro.add_group(micro.micro_rows(archive))
    agg = micro.summarise_repeats(rows)
    recs = training.records(archive)
    curv = training.curves(recs)
    phases = training.phase_times(recs)
    summ, chosen = training.summary(curv, phases, targets)
    truns, _ = training.runs(curv, phases, targets)
    ctab, cpoints = claim_table.claims_table(agg, summ, truns, chosen)

    doc.heading(1, "reducerbench report")
    doc.para("Generated %s by rb-report %s from: %s" % (
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        __version__, ", ".join("`%s`" % p for p in inputs)))
    doc.para(platforms_text(archive))
    section_claims(doc, ctab, cpoints, key_items(rows, curv))
    figs = crossover.section(doc, cpoints, agg, draw)
    figs += frontier.section(doc, cpoints.get("frontier"), draw,
                             [r.path for r in archive.refusals if r.reason.startswith("diverged")])
    section_inputs(doc, archive, rows)
    if not rows.empty:
        figs += section_micro(doc, rows, agg)
        figs += importlib.import_module(".workload", __package__).section(doc, rows)
    else:
        doc.heading(2, "Microbenchmarks")
        doc.para("No rb_micro results in these data.")
    if recs:
        figs += section_training(doc, curv, summ, chosen)
    else:
        doc.heading(2, "Training")
        doc.para("No rb_train results in these data.")
    doc.csv(compare.verdict_points(agg, summ), "verdict_points")
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(doc.markdown())
    with open(os.path.join(outdir, "report.html"), "w") as f:
        f.write(doc.html("reducerbench report"))
    return {"rows": rows, "agg": agg, "claims": ctab, "figures": figs, "summary": summ,
            "crowded": oversubscription_warning(archive.runs),
            "loaded": busy_warning(archive.runs),
            "tables": doc.csv_files}


def section_inputs(doc, archive, rows):
    runs = archive.runs
    kinds = pd.Series([runmeta.run_kind(r.meta) for r in runs]).value_counts().to_dict()
    doc.heading(2, "Inputs")
    doc.para("%d file(s), %d run(s) used (%s), %d refused." % (
        len(archive.files), len(runs),
        ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())), len(archive.refusals)))
    if archive.refusals:
        doc.heading(3, "Refused (not reported)")
        doc.para("A run is refused when its file cannot be read, its schema version is "
                 "unknown, it is not marked complete (complete=1), it stopped early "
                 "(timed out: a partial run; diverged: a loss became NaN, so no accuracy "
                 "or perplexity is shown), it holds a value no run can have (the rules: "
                 "analysis/rbanalysis/validate.py), or another run has its run_id with "
                 "different contents (conflicting copies: both refused).")
        doc.table(pd.DataFrame([{"file": r.path, "run": r.run or "-", "reason": r.reason}
                                for r in archive.refusals]), "refused")
    doc.heading(3, "Runs")
    meta = pd.DataFrame([{
        "run": r.label, "tool": r.meta["tool"], "kind": runmeta.run_kind(r.meta),
        "holds": run_contents(r),
        "host": r.meta["host"], "cluster": r.meta["cluster"], "job_id": r.meta["job_id"],
        "array_task": r.meta["array_task"], "partition": r.meta["partition"],
        "ranks": r.meta["ranks"], "nodes": r.meta["nodes"],
        "pus/node": r.meta["pus"] if r.meta["pus"] else "-", "busy": runmeta.busy(r.meta),
        "version": r.meta["version"],
        "schema": r.meta["schema_version"], "git": r.meta["git_revision"],
        "start": r.meta["date"], "end": r.meta["end_time"], "file": r.path} for r in runs])
    doc.table(meta, "runs", columns={c: c for c in meta.columns if c != "file"})
    warns = micro.comparability_warnings(rows) if not rows.empty else []
    crowded = oversubscription_warning(runs)
    if crowded:
        warns.insert(0, crowded)
    loaded = busy_warning(runs)
    if loaded:
        warns.insert(0, loaded)
    policies = malloc_policy_warning(runs)
    if policies:
        warns.insert(0, policies)
    if any(runmeta.run_kind(r.meta) == "simulated" for r in runs):
        warns.insert(0, "simulated results (root attribute simulated=1) are present: every "
                        "table has a `kind` column and they are never pooled with measured ones")
    if warns:
        doc.heading(3, "Comparability")
        doc.bullets(warns)


def malloc_policy_warning(runs):
    """One line when measured runs freed memory under different policies:
    under the C library's, MPI's per-call scratch is page-faulted in on
    every call (a 64 MiB dense allreduce 12x slower on this project's VM)."""
    seen = {}
    for r in runs:
        if runmeta.run_kind(r.meta) == "measured":
            policy = runmeta.malloc_policy(r.meta)
            seen[policy] = seen.get(policy, 0) + 1
    if len(seen) < 2:
        return ""
    return ("measured runs used different allocator policies (malloc_policy: %s): under the "
            "C library's, MPI's per-call scratch can be page-faulted in on every call, which "
            "slows large dense allreduces, so their times are in separate groups"
            % ", ".join("%s in %d" % (k, v) for k, v in sorted(seen.items())))


def oversubscription_warning(runs):
    """One line when measured runs had more ranks on a machine than cores
    (runmeta.oversubscribed: an emulated cluster's nodes share one machine)."""
    crowded = [r for r in runs if runmeta.oversubscribed(r.meta)]
    if not crowded:
        return ""
    r = crowded[0]
    return ("%d of %d measured run(s) ran more ranks on a machine than it has processing "
            "units (e.g. %s: %s): their times include waiting for a core and "
            "vary from run to run, so use them for correctness and bytes, not for speed"
            % (len(crowded), sum(runmeta.run_kind(x.meta) == "measured" for x in runs),
               r.label, runmeta.ranks_per_core_text(r.meta)))


def busy_warning(runs):
    """One line when measured runs shared the machine (runmeta.busy)."""
    flags = [runmeta.busy(r.meta) for r in runs if runmeta.run_kind(r.meta) == "measured"]
    if "yes" not in flags:
        return ""
    return ("%d of %d measured run(s) ran on a busy machine (more than %g cores busy with other "
            "processes before or during the run, or more than %g%% of CPU time stolen; the "
            "*Runs* table's `busy`): their times are marked busy = yes and give no headline "
            "number" % (flags.count("yes"), len(flags), runmeta.BUSY_OTHER_CPU,
                        100 * runmeta.BUSY_STEAL))


def run_contents(run):
    """One line on what a run measured."""
    parts = []
    m = run.micro
    if m is not None and len(m):
        dens = ",".join("%g" % d for d in sorted(set(m["density"])))
        parts.append("%s; %s..%s; density %s; %s" % (
            " ".join(sorted(set(m["reducer"]))), formatting.size(float(m["size_bytes"].min())),
            formatting.size(float(m["size_bytes"].max())), dens,
            "/".join(sorted(set(m["layout"]) | set(m["overlap"])))))
    for rec in run.train:
        parts.append("%s with %s" % (rec.attrs.get("model", "?"), rec.attrs.get("reducer", "?")))
    return "; ".join(parts) or "-"


def _text(v):
    return "" if formatting.missing(v) else str(v).strip()


def claim_sections(t):
    """The line above a claim's rows: the claim, the paper's number, how it
    is read."""
    return ["**%s** (paper: %s)%s" % (r["claim"], r["paper"],
                                      " -- read as: %s" % _text(r.get("reading")) if _text(r.get("reading")) else "")
            for _, r in t.iterrows()]


def claim_notes(t):
    """A line per claims row under it: why the verdict came out so, and
    what would change it (the claims table's why and would_change columns,
    where it has them)."""
    out = []
    for _, r in t.iterrows():
        parts = [("why", _text(r.get("why"))), ("would change it", _text(r.get("would_change")))]
        out.append("; ".join("*%s*: %s" % (k, v) for k, v in parts if v))
    return out


def _paper_number(text):
    """'81%' -> 0.81, '1.8x' -> 1.8, '~100%' -> 1.0 (NaN if none)."""
    m = re.search(r"[-+]?\d+(?:\.\d+)?", str(text))
    if not m:
        return float("nan")
    return float(m.group()) / (100 if "%" in str(text) else 1)


def _verdict_class(verdict, points):
    v = str(verdict)
    if not points or v.startswith("not measured"):
        return "missing"
    for prefix, cls in (("meets", "meets"), ("below", "below"), ("not-equivalent", "not-equivalent"),
                        ("not equivalent", "not-equivalent"), ("equivalent", "equivalent")):
        if v.startswith(prefix):
            return cls
    return "inconclusive"


def claims_for_report(ctab):
    """The claims table with every column the report shows (the shared
    claims-table columns): one an older claims.py lacks is derived from the
    columns it has, or defaulted."""
    t = ctab.copy()
    if t.empty:
        return t
    if "paper_value" not in t:
        t["paper_value"] = [_paper_number(p) for p in t["paper"]]
    if "reading" not in t:
        t["reading"] = ""
    if "platform" not in t:
        t["platform"] = ["this machine" if d == "measured" else str(d) for d in t["data"]]
    for col, default in (("busy", "no"), ("exact", False), ("why", "")):
        if col not in t:
            t[col] = t["context"] if col == "why" and "context" in t else default
    if "verdict_class" not in t:
        t["verdict_class"] = [_verdict_class(v, n) for v, n in zip(t["verdict"], t["points"])]
    t["exact"] = t["exact"].fillna(False).astype(bool)
    return t


def _headline_table(ctab):
    """The claims rows that make the headline: claims.py decides (papers'
    setting, a core per rank, ...); never a row from a busy machine."""
    if ctab.empty:
        return ctab
    rows = claim_table.headline_rows(ctab)
    return rows[rows["busy"] != "yes"] if "busy" in rows else rows


def headline_rows(ctab):
    """The headline box: (claim, platform, value, paper, verdict, colour
    class, why, would change it); the class is plotting.display_class's (a
    verdict by the median alone has its own)."""
    return [(r["claim"], r["platform"], formatting.claim_value(r), r["paper"], r["verdict"],
             plotting.display_class(r["verdict_class"], r["verdict"]), _text(r.get("why")),
             _text(r.get("would_change")))
            for _, r in _headline_table(ctab).iterrows()]


def headline_lines(ctab):
    """The headline in report.md and on stdout: claims.py's lines (its
    wording, its rule); the HTML box shows the same rows (headline_rows)."""
    return claim_table.headline(ctab)


def platforms_text(archive):
    """The first screen's words on where the numbers come from."""
    hosts = sorted({str(r.meta["host"]) for r in archive.runs
                    if runmeta.run_kind(r.meta) == "measured" and not runmeta.emulated(r.meta)}
                   - {"", "-", "None"})
    return ("**Platforms**: *this machine* is the computer the measured runs ran on%s, their "
            "ranks as processes on it; an *emulated network* is several nodes emulated on one "
            "machine, joined by links shaped to a chosen rate (docs/emulated.md); *simulated* "
            "rows are predictions of the SimGrid simulator (SMPI) for a modelled cluster "
            "platform, never pooled with measured ones; *model* rows are the cost model's "
            "predictions. Group ids (G1, T1, ...) and terms are defined under *Key* below."
            % (" (%s)" % ", ".join(hosts[:3]) + (" and %d more" % (len(hosts) - 3) if len(hosts) > 3 else "")
               if hosts else ""))


def key_items(rows, curv):
    """The group ids (G1.. of rb_micro, T1.. of rb_train) and what each is."""
    items = []
    if not rows.empty:
        g = micro.groups_table(rows)
        parts = [str(x).split(" | ") for x in g["group"]]
        # what every group shares is said once
        common = set.intersection(*(set(p) for p in parts)) if len(parts) > 1 else set()
        if common:
            items.append(("all G groups", " | ".join(x for x in parts[0] if x in common)))
        items += [(r["gid"], " | ".join(x for x in p if x not in common))
                  for (_, r), p in zip(g.iterrows(), parts)]
    if curv is not None and not curv.empty and "tid" in curv:
        t = curv.groupby("tid", sort=False)["group"].first()
        items += sorted(t.items(), key=lambda kv: plotting.natural_key(kv[0]))
    return items


def section_key(doc, groups):
    doc.heading(2, "Key: groups and terms")
    if groups:
        doc.para("**Groups**: rows are compared only inside a group; G ids are rb_micro's, "
                 "T ids rb_train's (the *Groups* table lists what each holds).")
        doc.key(groups, columns=3)
    doc.para("**Terms**:")
    doc.key(GLOSSARY, columns=3)


def section_claims(doc, ctab, cpoints, groups=()):
    ctab = claims_for_report(ctab)
    doc.heading(2, "Headline claims checked on these data")
    doc.headline(headline_lines(ctab), headline_rows(ctab))
    section_key(doc, groups)
    doc.heading(2, "Claims in detail")
    draw(doc, figures.verdict, ctab, doc.outdir)
    doc.para("Each claim of the S2 Reducer and GossipGraD papers next to what these data "
             "show at the papers' setting (`paper`): for S2 a row-sparse gradient of >= 64 "
             "columns with row density <= 5%% and the authors' sketch width (rb's "
             "`sketch_width_mode=fraction`, width = density x 0.25 as for GNMT or x 0.001 as "
             "for the LSTM, within a factor 2); for GossipGraD a compute efficiency with a "
             "measured (rb_train) or modelled (rb_micro --compute) compute phase. "
             "Communication reduction = 1 - s2 bytes sent per rank / fewest bytes of a "
             "validated baseline (agsparse, sparcml, parallax, omnireduce); speedup = fastest "
             "baseline time / s2 time; compute efficiency = time per iteration of `none` / of "
             "gossip. Each point's value comes from medians over repetitions; `[low, high]` is "
             "its interval from the 95%% confidence intervals of those medians (over several "
             "points: the interval of their median, which need not cover every point, so the "
             "points' range is printed beside it when they reach outside it), given from %d "
             "repetitions on; a deterministic value (every repetition the same) is marked "
             "*exact*. "
             "The verdict says *meets* or *below the claim* only when that interval is on "
             "one side of it, and a shortfall within %d%% is *within 5%% of the claim*. "
             "Intervals are over launches (process starts) when a point has two or more: "
             "a point of one launch (`launches` = one) has an interval over its repetitions "
             "that leaves out launch-to-launch variation. The accuracy claims are two one-sided "
             "tests: the 90%% interval of the median difference to dense, paired by seed, "
             "against a margin of 0.5 accuracy points (2%% of perplexity). Oversubscribed rows "
             "(more ranks than cores), rows from a busy machine and one-launch rows (unless the "
             "value is exact, e.g. bytes) are shown but never make the headline; cost-model "
             "rows are predictions. A claim without data says so: nothing is assumed. "
             "docs/report.md says how each claim is read."
             % (stats.MIN_REPETITIONS, round(100 * stats.MIN_EFFECT)),
             fold="How the claims are read: settings, reductions, speedups, intervals, verdicts (show)")
    doc.para("Every claim row, both settings, in full precision: "
             "[tables/claims.csv](tables/claims.csv).")
    doc.csv(ctab, "claims")
    shown = ctab.assign(measured=[formatting.claim_value(r) for _, r in ctab.iterrows()])
    paper = shown[shown["setting"] == "paper"]
    doc.table(paper, "claims_paper", columns=CLAIM_COLUMNS, full=True, notes=claim_notes(paper),
              sections=claim_sections(paper))
    doc.heading(3, "Where S2 is not designed to win (setting `other`)")
    other = shown[shown["setting"] == "other"]
    if other.empty:
        doc.para("No point of these data lies outside the papers' settings.")
    else:
        doc.para("Points outside the papers' regime, e.g. element-sparse gradients, where "
                 "S2's bitmap of one bit per row is as large as the data, or another sketch "
                 "width. The per-point table below says why each point is `other`.")
        # outside the papers' setting: folded when long (the headline's claims stay open)
        doc.table(other, "claims_other", columns=CLAIM_COLUMNS, notes=claim_notes(other),
                  sections=claim_sections(other))
    yes_no = {True: "yes", False: "no"}
    if not cpoints["s2"].empty:
        doc.heading(3, "S2 vs the best baseline, per point")
        s2p = cpoints["s2"].assign(oversubscribed=cpoints["s2"]["oversubscribed"].map(yes_no))
        s2p = wire.annotate(wire.annotate(s2p, "s2_wire_share", "-", "s2_wire_text"),
                            "baseline_wire_share", "-", "baseline_wire_text")
        s2p = s2p.assign(
            reduction_text=[formatting.interval(m, lo, hi, formatting.percent) for m, lo, hi in
                            zip(s2p["comm_reduction"], s2p["comm_reduction_low"],
                                s2p["comm_reduction_high"])],
            speedup_text=[formatting.interval(m, lo, hi, formatting.times) for m, lo, hi in
                          zip(s2p["speedup"], s2p["speedup_low"], s2p["speedup_high"])])
        # the group's shape (layout, columns, density, ranks) is in the key: the
        # table keeps to what the claims read, so that it fits the page
        doc.table(s2p, "claims_s2_points", columns={
            "gid": "group", "platform": "platform", "setting": "setting",
            "why_other": "why other",
            "oversubscribed": "oversub.", "busy": "busy", "launches": "launches",
            "size_bytes": "size",
            "s2_variant": "s2", "fewest_bytes_baseline": "fewest-bytes baseline",
            "reduction_text": "reduction", "fastest_baseline": "fastest baseline",
            "speedup_text": "speedup", "speedup_verdict": "s2 is", "s2_rel_l2_err": "s2 rel err",
            "s2_wire_text": "wire share of s2", "baseline_wire_text": "of the baseline"})
    if not cpoints["gossip"].empty:
        doc.heading(3, "GossipGraD compute efficiency, per point")
        gp = cpoints["gossip"].assign(oversubscribed=cpoints["gossip"]["oversubscribed"].map(yes_no))
        gp = wire.annotate(gp, "wire_share", "-")
        gp = gp.assign(efficiency_text=[
            formatting.interval(m, lo, hi, formatting.percent) for m, lo, hi in
            zip(gp["compute_efficiency"], gp["compute_efficiency_low"], gp["compute_efficiency_high"])])
        doc.table(gp, "claims_gossip_points", columns={
            "where": "group", "kind": "kind", "platform": "platform", "setting": "setting",
            "oversubscribed": "oversub.", "busy": "busy", "launches": "launches",
            "compute": "compute", "ranks": "ranks",
            "variant": "gossip", "n_repeats": "n", "efficiency_text": "efficiency",
            "wire_text": "wire share of gossip"})
