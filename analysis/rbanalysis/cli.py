"""rb-report: HDF5 results (files, directories, merged archives) -> report;
rb-report --compare A B: do two data sets contradict each other?

Exit status: 0 when at least one run was usable (refused files are named on
stderr and in the report), 1 when nothing usable was found, 2 on a usage
error or an output directory that cannot be written, 3 on an internal
error (a bug: the traceback is printed).  A report is written whole or not
at all: on exit 2 or 3 the output directory is as it was.  With
--compare: 0 no contradiction, 1 contradictions (listed), 2 a side that
cannot be read or holds nothing usable."""

import argparse
import datetime
import importlib
import re
import os
import shutil
import sys
import tempfile
import traceback
import warnings

from . import __version__

# pandas, h5py and matplotlib take seconds to import on a busy node: they
# are imported once the arguments are known to be valid (_import_heavy).
pd = claims = compare = figures = formatting = load = micro = stats = training = None
crossover = wire = Document = fmt = None


def _import_heavy():
    global pd, claims, compare, figures, formatting, load, micro, stats, training, Document, fmt
    global crossover, wire, frontier
    pd = importlib.import_module("pandas")
    claims, compare, figures, formatting, load, micro, stats, training, document = (
        importlib.import_module("." + m, __package__)
        for m in ("claims", "compare", "figures", "formatting", "load", "micro", "stats", "training",
                  "document"))
    crossover, wire, frontier = (importlib.import_module("." + m, __package__)
                                 for m in ("crossover", "wire", "frontier"))
    Document, fmt = document.Document, formatting.number


def _float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text)


def _accuracy(text):
    """--target-accuracy: a percentage above 0 (nan was taken, and no run
    reached it; -5 was reached by every run at its start)."""
    v = _float(text)
    if not 0 < v <= 100:
        raise argparse.ArgumentTypeError("%r is not an accuracy in (0, 100] percent" % text)
    return v


def _perplexity(text):
    """--target-perplexity: finite and >= 1, the least a perplexity can be."""
    v = _float(text)
    if not 1 <= v < float("inf"):
        raise argparse.ArgumentTypeError("%r is not a perplexity (finite, >= 1)" % text)
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="rb-report",
        description="Turn reducerbench HDF5 results (files, directories searched "
                    "recursively for *.h5, merged archives) into report.md, "
                    "report.html, PNG figures and CSV tables.",
        epilog="Exit status: 0 if at least one run was usable (refused files are "
               "listed), 1 if nothing usable was found, 2 on a usage error or an "
               "output directory that cannot be written, 3 on an internal error "
               "(on 2 or 3 the output directory is left as it was: a report is "
               "written whole or not at all).  With --compare: 0 if the two data "
               "sets do not contradict each other, 1 if they do (the contradictions are "
               "listed), 2 if one cannot be read.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="HDF5 file or directory")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="compare two data sets (results directories or rb-report output "
                        "directories) instead of writing a report: list every difference "
                        "between two reducers that both call significant (and beyond 5%%) in "
                        "opposite directions, and every headline number whose intervals in A "
                        "and B do not overlap with medians more than 5%% apart, or that only "
                        "one of them has")
    p.add_argument("-o", "--output", default="report", metavar="DIR",
                   help="output directory (created; default: report)")
    p.add_argument("--target-accuracy", type=_accuracy, metavar="A",
                   help="time-to-target test accuracy, in the runs' unit (rb_train: "
                        "percent).  Default: the runs' own --target-accuracy when they "
                        "agree, else the lowest best accuracy of the runs compared, so "
                        "that every run reaches it")
    p.add_argument("--target-perplexity", type=_perplexity, metavar="P",
                   help="time-to-target validation perplexity (default: the runs' own "
                        "target, else the highest best perplexity)")
    p.add_argument("--version", action="version", version="rb-report " + __version__)
    args = p.parse_args(argv)
    if args.compare and args.paths:
        p.error("give either PATH... or --compare A B, not both")
    if not args.compare and not args.paths:
        p.error("the following arguments are required: PATH")
    return args


def main_compare(a, b):
    _import_heavy()
    try:
        return compare.compare(a, b, sys.stdout)
    except compare.DatasetError as e:
        print("rb-report: --compare: %s" % e, file=sys.stderr)
        return 2


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.compare:
        return main_compare(*args.compare)
    problem = output_problem(args.output)   # fail before loading anything
    if problem:
        print("rb-report: cannot write the report into %s: %s" % (args.output, problem),
              file=sys.stderr)
        return 2
    _import_heavy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = _main_report(args)
    # a warning that came many times (one per group, per point) is said once, with its count
    say_counted(["%s: %s" % (w.category.__name__, w.message) for w in caught],
                "rb-report: warning: ", sys.stderr)
    return status


def _main_report(args):
    archive = load.load(args.paths)
    say_counted([r.message() for r in archive.refusals], "rb-report: ", sys.stderr)
    if not archive.runs:
        print("rb-report: nothing usable in %s (%d file(s) found, %d refused); no report written"
              % (" ".join(args.paths), len(archive.files), len(archive.refusals)), file=sys.stderr)
        return 1
    try:
        work = start_output(args.output)
    except OSError as e:
        print("rb-report: cannot write the report into %s: %s" % (args.output, e), file=sys.stderr)
        return 2
    targets = {}
    if args.target_accuracy is not None:
        targets["test_accuracy"] = targets["accuracy"] = args.target_accuracy
    if args.target_perplexity is not None:
        targets["val_perplexity"] = targets["perplexity"] = args.target_perplexity
    try:
        result = build_report(archive, work, args.paths, targets)
        publish_output(work, args.output)
    except OSError as e:
        print("rb-report: cannot write the report into %s: %s; %s" % (args.output, e, UNCHANGED),
              file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 -- a bug: say so, leave no half report
        traceback.print_exc()
        print("rb-report: internal error while building the report (please report it with "
              "the traceback above); no report written, %s" % UNCHANGED, file=sys.stderr)
        return 3
    finally:   # whatever stopped it (a full disk, a bug, ^C): no half report
        shutil.rmtree(work, ignore_errors=True)
    print_summary(archive, args.output, result)
    return 0


# ---------------------------------------------------------------- report

FIGURE_PREFIXES = ("verdict", "latency_", "speedup_", "wire_bytes_", "scaling_", "s2_error_",
                   "sim_vs_wire_",
                   "gossip_consensus_", "train_", "phases_", "efficiency", "workload_",
                   "crossover_")


def output_problem(outdir):
    """Why outdir cannot take a report (None if it can), checked before
    anything is read or created: an existing directory must be writable,
    a new one must have a writable parent."""
    if os.path.lexists(outdir) and not os.path.isdir(outdir):
        return "exists and is not a directory"
    probe = outdir if os.path.isdir(outdir) else os.path.dirname(os.path.abspath(outdir))
    if not os.path.isdir(probe):
        return "its parent directory %s does not exist" % probe
    try:
        tempfile.TemporaryFile(dir=probe).close()
    except OSError as e:
        return "%s is not writable (%s)" % (probe, e.strerror or e)
    return None


UNCHANGED = "the output directory is as it was"


def start_output(outdir):
    """The empty directory the report is written into, on outdir's file
    system, so that a failure midway (a full disk) leaves no partial report:
    beside outdir when outdir does not exist yet (publish_output renames it
    onto outdir), inside outdir when it does (publish_output moves its files
    in, so that files of others there stay)."""
    where = outdir if os.path.isdir(outdir) else os.path.dirname(os.path.abspath(outdir))
    name = os.path.basename(os.path.abspath(outdir))
    work = tempfile.mkdtemp(prefix=".%s.tmp." % name, dir=where)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(work, 0o777 & ~umask)   # mkdtemp's 0700 would be the report's mode
        os.mkdir(os.path.join(work, "tables"))
    except BaseException:   # ^C or a full disk right after mkdtemp: nothing left behind
        shutil.rmtree(work, ignore_errors=True)
        raise
    return work


def publish_output(work, outdir):
    """Put the whole report in work at outdir: one rename when outdir does
    not exist; else the earlier report in outdir is removed and the new
    one's files renamed in, report.md last.  Renames and removals only:
    nothing here needs disk space."""
    if not os.path.isdir(outdir):
        os.rename(work, outdir)
        return
    remove_earlier_report(outdir)
    tables = os.path.join(outdir, "tables")
    os.makedirs(tables, exist_ok=True)
    for name in os.listdir(os.path.join(work, "tables")):
        os.replace(os.path.join(work, "tables", name), os.path.join(tables, name))
    os.rmdir(os.path.join(work, "tables"))
    for name in sorted(os.listdir(work), key=lambda n: n == "report.md"):
        os.replace(os.path.join(work, name), os.path.join(outdir, name))
    os.rmdir(work)


def remove_earlier_report(outdir):
    """Remove the report outdir holds, if any (report.md and .html first, so
    that a failure never leaves one pointing at removed files), its figures
    and tables (only files rb-report names) so that none goes stale."""
    if not os.path.exists(os.path.join(outdir, "report.md")):
        return
    os.remove(os.path.join(outdir, "report.md"))
    if os.path.exists(os.path.join(outdir, "report.html")):
        os.remove(os.path.join(outdir, "report.html"))
    for name in os.listdir(outdir):
        if name.endswith(".png") and name.startswith(FIGURE_PREFIXES):
            os.remove(os.path.join(outdir, name))
    tables = os.path.join(outdir, "tables")
    if os.path.isdir(tables):
        for name in os.listdir(tables):
            if name.endswith(".csv"):
                os.remove(os.path.join(tables, name))


def draw(doc, fn, *args):
    """Draw figures with fn(*args) and add them to doc.  A figure that
    cannot be drawn is reported, never the end of the report; one that
    cannot be written (a full disk) ends it: no report lacking figures."""
    figs = draw_only(doc, fn, *args)
    return place(doc, figs, fn.__name__) if figs is not None else []


def draw_only(doc, fn, *args):
    """fn(*args)'s figure entries, or None (said in doc) when it failed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all-NaN series, empty legends
            return fn(*args)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 -- any plotting failure
        msg = "figure %s could not be drawn: %s: %s" % (fn.__name__, type(e).__name__, e)
        print("rb-report: warning: " + msg, file=sys.stderr)
        doc.note("(%s)" % msg)
        return None


def place(doc, figs, kind):
    """Add figure entries to doc: the figures, a line for each that had
    nothing to plot, and one table of those with too few points."""
    drawn = [f[:2] for f in figs if f[0]]
    few = []
    for entry in figs:
        name, caption = entry[0], entry[1]
        if name:
            doc.figure(name, caption, figures.CLIPPED.get(name))
        elif len(entry) > 2:   # too few points for a figure: a table row
            few.append(entry[2])
        else:   # nothing to plot: said in text, never an empty frame
            doc.note(caption)
    if few:
        table = "few_points_" + kind
        while os.path.join("tables", table + ".csv") in doc.csv_files:
            table += "_"
        doc.table(pd.DataFrame(few), table, columns={"figure": "not drawn", "points": "points",
                                                     "values": "its points (median [interval])"},
                  caption="Fewer than %d points: no figure, the values instead."
                          % figures.MIN_POINTS)
    return drawn


def build_report(archive, outdir, inputs, targets):
    doc = Document(outdir)
    rows = micro.add_group(micro.micro_rows(archive))
    agg = micro.summarise_repeats(rows)
    recs = training.records(archive)
    curv = training.curves(recs)
    phases = training.phase_times(recs)
    summ, chosen = training.summary(curv, phases, targets)
    truns, _ = training.runs(curv, phases, targets)
    ctab, cpoints = claims.claims_table(agg, summ, truns, chosen)

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
    kinds = pd.Series([load.run_kind(r.meta) for r in runs]).value_counts().to_dict()
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
        "run": r.label, "tool": r.meta["tool"], "kind": load.run_kind(r.meta),
        "holds": run_contents(r),
        "host": r.meta["host"], "cluster": r.meta["cluster"], "job_id": r.meta["job_id"],
        "array_task": r.meta["array_task"], "partition": r.meta["partition"],
        "ranks": r.meta["ranks"], "nodes": r.meta["nodes"],
        "pus/node": r.meta["pus"] if r.meta["pus"] else "-", "busy": load.busy(r.meta),
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
    if any(load.run_kind(r.meta) == "simulated" for r in runs):
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
        if load.run_kind(r.meta) == "measured":
            policy = load.malloc_policy(r.meta)
            seen[policy] = seen.get(policy, 0) + 1
    if len(seen) < 2:
        return ""
    return ("measured runs used different allocator policies (malloc_policy: %s): under the "
            "C library's, MPI's per-call scratch can be page-faulted in on every call, which "
            "slows large dense allreduces, so their times are in separate groups"
            % ", ".join("%s in %d" % (k, v) for k, v in sorted(seen.items())))


def oversubscription_warning(runs):
    """One line when measured runs had more ranks on a machine than cores
    (load.oversubscribed: an emulated cluster's nodes share one machine)."""
    crowded = [r for r in runs if load.oversubscribed(r.meta)]
    if not crowded:
        return ""
    r = crowded[0]
    return ("%d of %d measured run(s) ran more ranks on a machine than it has processing "
            "units (e.g. %s: %s): their times include waiting for a core and "
            "vary from run to run, so use them for correctness and bytes, not for speed"
            % (len(crowded), sum(load.run_kind(x.meta) == "measured" for x in runs),
               r.label, load.ranks_per_core_text(r.meta)))


def busy_warning(runs):
    """One line when measured runs shared the machine (load.busy)."""
    flags = [load.busy(r.meta) for r in runs if load.run_kind(r.meta) == "measured"]
    if "yes" not in flags:
        return ""
    return ("%d of %d measured run(s) ran on a busy machine (more than %g cores busy with other "
            "processes before or during the run, or more than %g%% of CPU time stolen; the "
            "*Runs* table's `busy`): their times are marked busy = yes and give no headline "
            "number" % (flags.count("yes"), len(flags), load.BUSY_OTHER_CPU,
                        100 * load.BUSY_STEAL))


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


# The claim, the paper's number and how it is read head each claim's rows
# (claim_sections); the rows say where and what was measured.
CLAIM_COLUMNS = {"platform": "platform", "data": "data", "oversubscribed": "oversub.",
                 "busy": "busy", "launches": "launches", "measured": "measured",
                 "verdict": "verdict"}


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
VERDICT_CLASSES = ("meets", "below", "equivalent", "not-equivalent", "inconclusive", "missing")


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
    rows = claims.headline_rows(ctab)
    return rows[rows["busy"] != "yes"] if "busy" in rows else rows


def headline_rows(ctab):
    """The headline box: (claim, platform, value, paper, verdict, colour
    class, why, would change it); the class is figures.display_class's (a
    verdict by the median alone has its own)."""
    return [(r["claim"], r["platform"], formatting.claim_value(r), r["paper"], r["verdict"],
             figures.display_class(r["verdict_class"], r["verdict"]), _text(r.get("why")),
             _text(r.get("would_change")))
            for _, r in _headline_table(ctab).iterrows()]


def headline_lines(ctab):
    """The headline in report.md and on stdout: claims.py's lines (its
    wording, its rule); the HTML box shows the same rows (headline_rows)."""
    return claims.headline(ctab)


def platforms_text(archive):
    """The first screen's words on where the numbers come from."""
    hosts = sorted({str(r.meta["host"]) for r in archive.runs
                    if load.run_kind(r.meta) == "measured" and not load.emulated(r.meta)}
                   - {"", "-", "None"})
    return ("**Platforms**: *this machine* is the computer the measured runs ran on%s, their "
            "ranks as processes on it; an *emulated network* is several nodes emulated on one "
            "machine, joined by links shaped to a chosen rate (docs/emulated.md); *simulated* "
            "rows are predictions of the SimGrid simulator (SMPI) for a modelled cluster "
            "platform, never pooled with measured ones; *model* rows are the cost model's "
            "predictions. Group ids (G1, T1, ...) and terms are defined under *Key* below."
            % (" (%s)" % ", ".join(hosts[:3]) + (" and %d more" % (len(hosts) - 3) if len(hosts) > 3 else "")
               if hosts else ""))


GLOSSARY = (
    ("dense", "MPI_Allreduce of the whole gradient buffer: the exact reference"),
    ("none", "no communication (local SGD): the compute-efficiency reference"),
    ("agsparse", "allgather of (index, value) pairs and a local sum: exact"),
    ("sparcml", "SparCML's sparse recursive doubling, switching to dense as it fills in: exact"),
    ("parallax", "Parallax's sparse parameter server, indices sharded over ranks: exact"),
    ("omnireduce", "OmniReduce's bitmap of non-zero blocks, blocks sum-allreduced: exact"),
    ("oktopk", "Ok-Topk's sparse allreduce (PPoPP'22), exact unless oktopk_select=topk"),
    ("zen", "Zen's sparse allreduce (OSDI'25), indices hash-partitioned over ranks: exact"),
    ("s2", "S2 Reducer: a bitmap of non-zero rows plus a count sketch: approximate"),
    ("gossip", "GossipGraD: each rank averages with one partner per step: approximate"),
    ("validated", "a reducer's rows in which no check found a wrong value (an unchecked "
                  "run, e.g. simulated, still counts); only validated baselines are compared"),
    ("nnz", "number of non-zero values (per rank, or of the union over ranks)"),
    ("busbw", "bus bandwidth in GB/s: the algorithm bandwidth (size / time, algbw) scaled "
              "by 2(p-1)/p as for an allreduce, comparable across rank counts"),
    ("launch", "one start of the benchmark's processes; intervals over launches include "
               "launch-to-launch variation"),
    ("exact", "a value every repetition gave alike (bytes): no interval needed"),
    ("oversubscribed / busy", "more ranks than cores / other processes on the machine: "
                              "such times never make the headline"),
    ("95% CI", "the 95% confidence interval of a median (from 6 repetitions on)"),
)


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
        items += sorted(t.items(), key=lambda kv: figures.natural_key(kv[0]))
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


def point_interval_text(lo, hi, unit, n_units):
    """A latency interval and what it is over: '4.4..9.3 (6 launches)',
    '3 launches < 6' (no interval), or '4.4..4.9 (one launch)': over the
    repetitions of one launch, leaving out launch-to-launch variation."""
    if unit == "launch":
        if stats.has_interval(lo, hi):
            return "%s..%s (%d launches)" % (fmt(lo), fmt(hi), n_units)
        return "%d launches < %d" % (n_units, stats.MIN_REPETITIONS)
    text = interval_text(lo, hi)
    return text + " (one launch)" if unit and stats.has_interval(lo, hi) else text


def tta_interval_text(lo, hi):
    """A time-to-target interval: an end may be a run that never reached it."""
    inf = float("inf")
    if hi == inf:
        return "not reached" if lo == inf else "%s..not reached" % fmt(lo)
    return interval_text(lo, hi)


def interval_text(lo, hi):
    """'12.3..14.5', or why there is none."""
    if stats.has_interval(lo, hi):
        return "%s..%s" % (fmt(lo), fmt(hi))
    return "n < %d" % stats.MIN_REPETITIONS


def speedup_text(value, verdict):
    """A speedup cell: the number only where the difference is significant."""
    if verdict in ("faster", "slower"):
        return "%sx (%s)" % (fmt(value), verdict)
    return verdict or "-"


def subsection(doc, heading, df, name, columns, absent, figure=None, intro=None):
    """A table (and its figures) under a heading, or one line saying the
    data do not hold it; returns the figures drawn."""
    doc.heading(3, heading)
    if df.empty:
        doc.para("Not measured in these data: %s." % absent)
        return []
    if intro:
        doc.para(intro)
    doc.table(df, name, columns=columns)
    return draw(doc, figure, df, doc.outdir) if figure else []


def section_latency_speedup(doc, agg):
    """Latency with intervals, then speedups and ranks from significant
    differences only."""
    out = []
    outdir = doc.outdir
    doc.heading(3, "Latency vs size")
    lat = agg.copy()
    lat["iter_iqr"] = [("%s..%s" % (fmt(a), fmt(b))) for a, b in
                       zip(lat.get("iter_q25_us_median", []), lat.get("iter_q75_us_median", []))]
    lat["ci"] = [point_interval_text(a, b, u, n) for a, b, u, n in
                 zip(lat["t_avg_us_ci_low"], lat["t_avg_us_ci_high"],
                     lat.get("interval_unit", [""] * len(lat)), lat.get("n_units", lat["n_repeats"]))]
    doc.table(wire.annotate(lat), "micro_latency", caption="Per point: %s." % LATENCY_COLUMNS, columns={
        "gid": "group", "kind": "kind", "variant": "reducer", "size_bytes": "size",
        "n_repeats": "n", "n_samples": "samples", "t_avg_us_median": "median us",
        "ci": "95% CI us", "t_avg_us_min": "min us", "t_avg_us_max": "max us",
        "iter_iqr": "iter IQR us", "busbw_gbs_median": "busbw GB/s", "wrong_max": "wrong",
        **wire.SHOWN})
    lat_figs = draw_only(doc, figures.latency, agg, outdir) or []

    doc.heading(3, "Speedup vs dense and vs the best exact sparse baseline")
    doc.para("Median time of dense (of the fastest other validated baseline) / median time of "
             "the reducer, at the same size; > 1 is faster. A number is shown only where the "
             "difference is significant (the two 95% intervals do not overlap); otherwise "
             "**no significant difference**. rank = 1 + the number of reducers significantly "
             "faster at that point (ties share a rank). `none` is left out: it does not "
             "communicate (see compute efficiency).",
             fold="Speedup = median time of dense (or of the fastest other validated baseline) / "
                  "the reducer's; how it is read (show)")
    sp = micro.speedups(agg)
    if not sp.empty:
        sp["vs dense"] = [speedup_text(v, t) for v, t in zip(sp["speedup_vs_dense"], sp["vs_dense"])]
        sp["vs baseline"] = [speedup_text(v, t) for v, t in
                             zip(sp["speedup_vs_best_baseline"], sp["vs_best_baseline"])]
    doc.table(sp, "micro_speedup", columns={
        "gid": "group", "variant": "reducer", "size_bytes": "size", "rank": "rank",
        "n_repeats": "n", "t_avg_us_median": "median us", "vs dense": "vs dense",
        "best_baseline": "fastest other baseline", "vs baseline": "vs it"})
    sp_figs = draw_only(doc, figures.speedup, sp, outdir) or []
    # each group's latency beside its speedup: one row of the page
    doc.heading(3, "Latency and speedup per group")
    if lat_figs or sp_figs:
        doc.para("Per group, time per call vs size (median; bars: 95%% CI of the median, from "
                 "%d repetitions) beside the speedup vs dense and vs the fastest other exact "
                 "baseline (a bar that crosses 1: no significant difference); the groups run at "
                 "one size together, first (no speedup figure: see the table)."
                 % stats.MIN_REPETITIONS)
    order = {}
    for e in lat_figs + sp_figs:
        m = re.search(r"_(G\d+)\.png$", str(e[0] or (e[2]["figure"].replace(" ", "_") + ".png"
                                                      if len(e) > 2 else "")))
        order.setdefault(m.group(1) if m else "G0", []).append(e)
    merged = [e for k in sorted(order, key=figures.natural_key) for e in order[k]]
    doc.fold_figures("every group's latency beside its speedup, in group order")
    out += place(doc, merged, "latency_speedup")
    doc.fold_figures()
    return out


LATENCY_COLUMNS = ("n = repetitions; samples = timed calls behind them; CI = 95% confidence interval "
                   "of the median; iter IQR = interquartile range of one run's per-iteration times; "
                   "busbw = bus bandwidth (Key)")


def section_micro(doc, rows, agg):
    out = []
    outdir = doc.outdir
    doc.heading(2, "Microbenchmarks (rb_micro)")
    doc.para("Rows are compared only inside a group (same kind, machine, version, device, "
             "layout, overlap, density, ranks, columns, timing). Times are each row's t_avg_us "
             "(mean over iterations, averaged over ranks). A point (group, reducer variant, "
             "size) has n repetitions: rows from several files of the same configuration, or "
             "the `repeat` rows of rb_micro --repeat within one file. Each point shows the median "
             "over its repetitions and, from %d repetitions on, the 95%% confidence interval "
             "of that median (order statistics, no distribution assumed); `samples` counts the "
             "timed calls behind them. Two reducers differ significantly only when their "
             "intervals do not overlap; speedups and ranks count only such differences. iter "
             "IQR is the interquartile range of the per-iteration time of the slowest rank, "
             "from the raw samples: it describes one run's spread, and is not used for the "
             "intervals (consecutive calls of one run are not independent)."
             % stats.MIN_REPETITIONS)
    doc.csv(rows, "micro_rows")
    doc.para("Tidy table of every measurement with its run metadata: "
             "[tables/micro_rows.csv](tables/micro_rows.csv).")
    doc.heading(3, "Groups")
    # what each group is: the key at the top; here what it holds
    doc.table(micro.groups_table(rows), "micro_groups",
              columns={"gid": "group", "runs": "runs", "rows": "rows", "reducers": "reducers",
                       "sizes": "sizes"},
              caption="What each group is: *Key* at the top (and the CSV).")

    out += section_latency_speedup(doc, agg)

    # the figures of the short sections below share rows at their end
    doc.begin_gallery()
    doc.heading(3, "Wire bytes per rank vs density")
    doc.para("bytes sent per rank per call (median over repeats); bound = 2k(p-1)/p x 8 B "
             "for k non-zeros of the aggregate; wire/bound is how far above that bound.")
    doc.table(micro.wire_bytes(agg), "micro_wire_bytes", columns={
        "gid": "group", "layout": "layout", "ranks": "ranks", "density": "density",
        "size_bytes": "size", "variant": "reducer", "bytes_sent_avg_median": "sent/rank",
        "bytes_sent_max_median": "max sent", "bound_bytes_median": "bound",
        "wire_to_bound_median": "wire/bound"})
    out += draw(doc, figures.wire_bytes, agg, outdir)

    out += subsection(doc, "Scaling with ranks", micro.scaling(agg), "micro_scaling", {
        "kind": "kind", "layout": "layout", "density": "density", "variant": "reducer",
        "size_bytes": "size", "ranks": "ranks", "t_avg_us_median": "median us",
        "t_avg_us_ci_low": "CI low", "t_avg_us_ci_high": "CI high", "n_repeats": "n"},
        "no configuration was run at more than one rank count", figures.scaling)
    out += subsection(doc, "S2 error and recall vs sketch width", micro.s2_error(agg),
                      "micro_s2_error", {
        "gid": "group", "density": "density", "size_bytes": "size",
        "sketch_width_mode": "width mode", "sketch_width": "width", "sketch_rows": "rows",
        "rel_l2_err_median": "rel L2 err", "recall_median": "recall",
        "max_abs_err_median": "max abs err", "bytes_sent_avg_median": "sent/rank"},
        "no s2 rows", figures.s2_error)

    out += subsection(doc, "Measured against the cost model", micro.model_fit(agg), "micro_model", {
        "kind": "kind", "variant": "reducer", "points": "points", "ratio_median": "meas/model",
        "ratio_min": "min", "ratio_max": "max", "within_0.5_2": "share in 0.5-2x",
        "floor_over_model": "floor/model", "explained": "why (where the data say)"},
        "no row has a model time (archives before rb_micro's model column)",
        intro="measured median / the cost model's time (docs/cost-model.md): a reducer far off "
              "its model has a bug, a missing optimisation, or a cost the model leaves out.")
    out += draw(doc, figures.model_vs_measured, agg, outdir)
    out += subsection(doc, "Against the memory floor", micro.memory_floor(agg), "micro_floor", {
        "gid": "group", "input": "input", "layout": "layout", "density": "density",
        "ranks": "ranks", "variant": "reducer", "size_bytes": "size",
        "t_avg_us_median": "median us", "t_floor_us_median": "floor us",
        "t_over_floor": "time/floor", "local_over_floor": "(time - comm)/floor"},
        "no row has a memory floor (archives before rb_micro's floor column)",
        intro="floor: one read pass of the input on the same buffers, measured before each "
              "row (rb_micro's floor(us)); (time - comm)/floor is the reducer's local work "
              "against the traffic it cannot avoid.")
    out += subsection(doc, "Where each reducer crosses dense", micro.dense_crossover(agg),
                      "micro_crossover", {
        "kind": "kind", "layout": "layout", "density": "density", "size_bytes": "size",
        "variant": "reducer", "ranks_run": "ranks run", "faster_than_dense_at": "faster at",
        "crosses_at": "slower than dense from"},
        "no configuration was run at more than one rank count (simulated sweeps: "
        "jobscripts/sim/scaling.sh)",
        intro="agsparse's volume relative to dense is about density x ranks, so it loses near "
              "ranks = 1/density; the measured (or simulated) rank count from which each "
              "reducer's median is no longer below dense's.")

    mvs = micro.measured_vs_simulated(agg)
    if not mvs.empty:
        doc.heading(3, "Measured and simulated, side by side")
        doc.para("The same configuration measured on a machine and simulated (SimGrid SMPI, "
                 "root attribute simulated=1): medians and the ratio simulated / measured. "
                 "They are never pooled; this table only puts them next to each other.")
        doc.table(mvs, "micro_measured_vs_simulated", columns={
            "variant": "reducer", "layout": "layout", "density": "density", "ranks": "ranks",
            "size_bytes": "size", "machine_measured": "measured on",
            "t_avg_us_median_measured": "measured us", "machine_simulated": "simulated platform",
            "t_avg_us_median_simulated": "simulated us", "time_sim_over_measured": "sim/meas",
            "bytes_sent_avg_median_measured": "sent/rank meas.",
            "bytes_sent_avg_median_simulated": "sent/rank sim."})

    simwire = importlib.import_module(".simwire", __package__)
    pts = simwire.points(rows)
    if not pts.empty:
        simwire.section(doc, pts)
        out += draw(doc, figures.sim_vs_wire, pts, outdir)

    out += subsection(doc, "Gossip consensus distance", micro.gossip_consensus(agg), "micro_gossip", {
        "gid": "group", "ranks": "ranks", "density": "density", "size_bytes": "size",
        "options": "options", "consensus_median": "consensus",
        "bytes_sent_avg_median": "sent/rank"}, "no gossip rows", figures.gossip_consensus,
        intro="consensus = max over ranks of |x_r - mean| / |mean| after one call: how far "
              "one gossip step leaves the ranks from the exact average.")
    doc.end_gallery("Figures: wire bytes, scaling, S2 error, cost model, SimGrid, gossip consensus")
    return out


def section_training(doc, curv, summ, chosen):
    out = []
    outdir = doc.outdir
    doc.heading(2, "Training (rb_train, rb-torch-train)")
    if not curv.empty:
        doc.csv(curv, "train_curves")
        doc.para("Tidy table of every evaluation point: "
                 "[tables/train_curves.csv](tables/train_curves.csv).")
    if summ.empty:
        doc.para("No training curves or phase times could be read.")
        return out
    doc.heading(3, "Summary per group and reducer")
    if chosen:
        doc.bullets("%s: target %s = %s (%s)" % (tid, m, fmt(t), how)
                    for tid, (m, t, how) in sorted(chosen.items()))
    nan = pd.Series([float("nan")] * len(summ))
    summ = summ.assign(
        tt_target_text=["not reached" if v == float("inf") else v
                        for v in summ.get("tt_target_s_median", nan)],
        tt_target_ci=[tta_interval_text(lo, hi) for lo, hi in
                      zip(summ.get("tt_target_s_ci_low", nan), summ.get("tt_target_s_ci_high", nan))])
    doc.table(summ, "train_summary", columns={
        "tid": "group", "kind": "kind", "model": "model", "ranks": "ranks", "variant": "reducer",
        "n_repeats": "n", "metric": "metric", "final_median": "final", "best_median": "best",
        "t_iter_s_median": "s/iter", "t_iter_s_ci_low": "CI low", "t_iter_s_ci_high": "CI high",
        "t_iter_s_min": "min", "t_iter_s_max": "max",
        "tt_target_text": "time to target s", "tt_target_ci": "95% CI s", "n_reached": "reached",
        "it_target_median": "iters to target",
        "compute_efficiency": "compute eff."})
    # the curves, the phase breakdown and the efficiency share rows at the end
    doc.begin_gallery()
    out += draw(doc, figures.training_curves, curv, outdir)
    out += draw(doc, figures.phase_bars, summ, outdir)
    out += subsection(doc, "Compute efficiency vs ranks", training.efficiency_vs_ranks(summ),
                      "train_efficiency", None,
                      "no group has both `none` and another reducer", figures.efficiency)
    doc.end_gallery("Figures: training curves, phase breakdown (time per iteration by phase), "
                    "compute efficiency")
    return out


# ---------------------------------------------------------------- stdout

def say(text="", file=None, indent="    "):
    """Print text wrapped to the terminal's 120 columns (continuation lines
    indented); nothing is cut."""
    text = str(text)
    for para in text.split("\n"):
        if not para.strip():
            print(file=file or sys.stdout)
            continue
        lead = para[:len(para) - len(para.lstrip())]
        for line in wrap_lines(para.strip(), lead, lead + indent):
            print(line, file=file or sys.stdout)


def wrap_lines(text, indent="", subsequent=None):
    return formatting.wrap_lines(plain(text), formatting.TERMINAL_WIDTH, indent, subsequent)


def plain(text):
    """The report's Markdown as terminal text: no emphasis marks or
    backticks."""
    return re.sub(r"\*\*?([^*]+?)\*\*?|`([^`]+)`", lambda m: m.group(1) or m.group(2), str(text))


def say_counted(messages, prefix, file=None):
    """Each distinct message once, with how many times it came (one line
    each: on stderr a line names its file whole, for grep)."""
    counts = {}
    for m in messages:
        counts[m] = counts.get(m, 0) + 1
    for m, n in counts.items():
        print("%s%s%s" % (prefix, "(%d times) " % n if n > 1 else "", m), file=file or sys.stdout)


def headline_items(ctab):
    """claims.py's headline lines, each as (lead, [(item, why, would change
    it)]): the lead 'Headline (measured, ...):' and an item per claim row
    (the line's '; '-separated parts), with the row's why and would_change
    where the headline rows line up with the parts."""
    lines = [ln.replace("**", "").replace("*", "") for ln in headline_lines(ctab)]
    rows = _headline_table(ctab)
    names = sorted({str(v) for v in getattr(claims, "SHORT", {}).values()}
                   | set(getattr(claims, "JOINT_NAMES", ())), key=len, reverse=True)
    split = re.compile(r"; (?=(?:%s) )" % "|".join(re.escape(n) for n in names)) if names else None
    groups = []
    if not rows.empty:
        over = rows["platform"].map(load.is_emulated_platform).rename("emulated")
        groups = [sub for _, sub in rows.groupby([rows["data"], over], sort=True)]
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"^(Headline(?: \([^:]*\))?:)\s*(.*?)\.?$", line, re.S)
        if not m or split is None or line.startswith("Headline: no number"):
            out.append((line, []))
            continue
        lead, body = m.groups()
        parts = split.split(body)
        sub = groups[i] if i < len(groups) and len(groups[i]) == len(parts) else None
        items = []
        for k, p in enumerate(parts):
            r = sub.iloc[k] if sub is not None else None
            items.append((p, _text(r.get("why")) if r is not None else "",
                          _text(r.get("would_change")) if r is not None else ""))
        out.append((lead, items))
    return out


WHY_LINES = 3     # lines of a why under a headline item; the rest in report.md


def print_headline(ctab):
    """The headline: its lead line, an item per claim, and under each its
    why and what would change it (at most WHY_LINES lines each, the rest
    said to be in report.md)."""
    for lead, items in headline_items(ctab):
        say(lead)
        for item, why, change in items:
            for x in wrap_lines(item, "  - ", "      "):
                print(x)
            for label, text in (("why", why), ("would change it", change)):
                if not text:
                    continue
                lines = wrap_lines("%s: %s" % (label, text), "      ", "        ")
                if len(lines) > WHY_LINES:
                    lines = lines[:WHY_LINES]
                    lines[-1] = (lines[-1][:formatting.TERMINAL_WIDTH - 24].rstrip()
                                 + " ... (in report.md)")
                for x in lines:
                    print(x)


def claim_label(r):
    """A claims row's claim, short (claims.SHORT, with its measure)."""
    short = getattr(claims, "SHORT", {}).get(r.get("claim_id", ""), "")
    if not short or str(r.get("claim_id", "")).endswith("_joint"):   # its setting in its name
        return str(r["claim"])
    measure = _text(r.get("measure"))
    return "%s (%s)" % (short, measure) if measure and measure not in short else short


def print_summary(archive, outdir, result):
    say("rb-report: %d run(s) used, %d refused; report: %s (and report.html, %d figure(s), "
        "tables in %s)" % (len(archive.runs), len(archive.refusals),
                           os.path.join(outdir, "report.md"), len(result["figures"]),
                           os.path.join(outdir, "tables")))
    agg = result["agg"]
    if not agg.empty:
        say("\nMicrobenchmarks, largest size of each group: fastest reducer that "
            "communicates (with those not significantly slower: a = b is a tie), and dense "
            "(median us):")
        groups = figures.natural_groups(agg, "gid")
        rows = []
        for gid, sub in groups[:10]:
            sub = sub[(sub["size_bytes"] == sub["size_bytes"].max()) & (sub["reducer"] != "none")]
            top, alone = micro.fastest(sub)
            if not top:
                continue
            best = sub[sub["variant"] == top[0]].iloc[0]
            dense = sub[sub["reducer"] == "dense"]["t_avg_us_median"]
            label = "%s %s %s/%s d=%g p=%d" % (best["kind"], best.get("machine", ""), best["layout"],
                                               best["overlap"], float(best["density"]),
                                               int(best["ranks"]))
            name = top[0] if alone else "%s = %s" % (top[0], " = ".join(top[1:]))
            rows.append((gid, label, formatting.size(best["size_bytes"]), name,
                         fmt(best["t_avg_us_median"]), fmt(dense.min()) if len(dense) else "-"))
        for line in formatting.text_table(("grp", "group", "size", "fastest", "its us", "dense us"),
                                          rows, (4, 44, 9, 30, 10, 10), right=(2, 4, 5)):
            print(line)
        if len(groups) > 10:
            say("  ... %d more groups in the report" % (len(groups) - 10))
    for warning in (result["crowded"], result["loaded"]):
        if warning:
            say("\nWarning: " + warning)
    print()
    ctab = claims_for_report(result["claims"])
    print_headline(ctab)
    print("\nHeadline claims (oversub.: more ranks than cores; busy: other load on the machine; "
          "verdict's words under its row):")
    rows, notes = [], []
    for _, r in ctab.iterrows():
        where = "%s%s%s" % (r["setting"], ", oversub." if r["oversubscribed"] == "yes" else "",
                            ", busy" if r["busy"] == "yes" else "")
        cls = figures.display_class(r["verdict_class"], r["verdict"])
        rows.append((claim_label(r), r["platform"], r["data"], where, formatting.claim_value(r), cls))
        text = _text(r["verdict"])
        # the verdict's own words where they say more than its class
        notes.append("" if not text or text.split(" (")[0] in ("meets the claim", "below the claim",
                                                             "not measured", cls) else text)
    lines = formatting.text_table(("claim", "platform", "data", "setting", "measured", "verdict"),
                                  rows, (26, 24, 9, 16, 22, 14), notes=notes)
    for line in lines:
        print(line)
