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
import importlib
import re
import os
import shutil
import sys
import traceback
import warnings

from . import __version__
from .publish import UNCHANGED, output_problem, publish_output, start_output


# pandas, h5py and matplotlib take seconds to import on a busy node: they
# are imported once the arguments are known to be valid (_import_heavy).
pd = claims = compare = figures = formatting = load = micro = stats = training = None
crossover = wire = Document = fmt = report = runmeta = plotting = None


def _import_heavy():
    global pd, claims, compare, figures, formatting, load, micro, stats, training, Document, fmt
    global crossover, wire, frontier, report, runmeta, plotting
    pd = importlib.import_module("pandas")
    claims, compare, figures, formatting, load, micro, stats, training, document = (
        importlib.import_module("." + m, __package__)
        for m in ("claims", "compare", "figures", "formatting", "load", "micro", "stats", "training",
                  "document"))
    crossover, wire, frontier, report, runmeta, plotting = (
        importlib.import_module("." + m, __package__)
        for m in ("crossover", "wire", "frontier", "report", "runmeta", "plotting"))
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
        result = report.build_report(archive, work, args.paths, targets)
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


VERDICT_CLASSES = ("meets", "below", "equivalent", "not-equivalent", "inconclusive", "missing")


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
    lines = [ln.replace("**", "").replace("*", "") for ln in report.headline_lines(ctab)]
    rows = report._headline_table(ctab)
    names = sorted({str(v) for v in getattr(claims, "SHORT", {}).values()}
                   | set(getattr(claims, "JOINT_NAMES", ())), key=len, reverse=True)
    split = re.compile(r"; (?=(?:%s) )" % "|".join(re.escape(n) for n in names)) if names else None
    groups = []
    if not rows.empty:
        over = rows["platform"].map(runmeta.is_emulated_platform).rename("emulated")
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
            items.append((p, report._text(r.get("why")) if r is not None else "",
                          report._text(r.get("would_change")) if r is not None else ""))
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
    measure = report._text(r.get("measure"))
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
        groups = plotting.natural_groups(agg, "gid")
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
    ctab = report.claims_for_report(result["claims"])
    print_headline(ctab)
    print("\nHeadline claims (oversub.: more ranks than cores; busy: other load on the machine; "
          "verdict's words under its row):")
    rows, notes = [], []
    for _, r in ctab.iterrows():
        where = "%s%s%s" % (r["setting"], ", oversub." if r["oversubscribed"] == "yes" else "",
                            ", busy" if r["busy"] == "yes" else "")
        cls = plotting.display_class(r["verdict_class"], r["verdict"])
        rows.append((claim_label(r), r["platform"], r["data"], where, formatting.claim_value(r), cls))
        text = report._text(r["verdict"])
        # the verdict's own words where they say more than its class
        notes.append("" if not text or text.split(" (")[0] in ("meets the claim", "below the claim",
                                                             "not measured", cls) else text)
    lines = formatting.text_table(("claim", "platform", "data", "setting", "measured", "verdict"),
                                  rows, (26, 24, 9, 16, 22, 14), notes=notes)
    for line in lines:
        print(line)
