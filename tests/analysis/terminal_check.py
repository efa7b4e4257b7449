#!/usr/bin/python3
"""rb-report's terminal output on a synthetic results directory
(report_synth.py): every line of stdout at most 120 characters; no
warning line said twice (a repeated warning is said once with its count);
the claims table aligned (every row's cells start at the header's
columns) with every claim's name whole (wrapped in its column, never cut);
the headline an item per claim, each with its why under it."""

import io
import os
import re
import subprocess
import sys
import tempfile
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import report_synth
    from synth import Checks
    from rbanalysis import cli
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas/matplotlib missing (%s)" % e)
    sys.exit(77)

check = Checks()
WIDTH = 120


def table_after(lines, title):
    """The lines of the text table under the line starting with title:
    header, rule, rows (to the first empty line)."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    out = []
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        out.append(ln)
    return out


def main():
    with tempfile.TemporaryDirectory() as tmp:
        top = report_synth.make_results(os.path.join(tmp, "results"))
        p = subprocess.run([sys.executable, os.path.join(report_synth.ANALYSIS, "rb-report"), top,
                            "-o", os.path.join(tmp, "report")], capture_output=True, text=True)
    check(p.returncode == 0, "rb-report exits 0 (%s)" % p.stderr[-300:])
    lines = p.stdout.splitlines()
    long = [ln for ln in lines if len(ln) > WIDTH]
    check(not long, "every stdout line at most %d characters (%d longer; longest %d: %s)"
          % (WIDTH, len(long), max(map(len, lines or [""])), (long or [""])[0][:80]))
    warns = [ln for ln in lines + p.stderr.splitlines() if re.search(r"warning", ln, re.I)]
    check(len(warns) == len(set(warns)), "no warning line said twice: %s" % warns)

    rows = table_after(lines, "Headline claims")
    check(len(rows) > 3 and set(rows[1].strip()) <= {"-", " "}, "the claims table has a header and a rule")
    starts = [m.start() for m in re.finditer(r"-+", rows[1])] if rows else []
    misaligned = [ln for ln in rows[2:] if not ln.startswith("      ")    # a note line under a row
                  and any(s > 0 and len(ln) > s and ln[s - 1] != " " for s in starts)]
    check(not misaligned, "every claims row's cells start at the header's columns: %s" % misaligned[:2])
    first = " ".join(ln[starts[0]:starts[1]].strip() for ln in rows[2:]
                     if len(starts) > 1 and not ln.startswith("      "))
    names = ["S2 communication reduction", "S2 speedup (reduce)", "GossipGraD compute efficiency",
             "GossipGraD accuracy parity"]
    check(all(n in first for n in names), "claim names whole in the claims table: %s" % first[:200])

    head = [i for i, ln in enumerate(lines) if ln.startswith("Headline")]
    items = [i for i, ln in enumerate(lines) if ln.startswith("  - ")]
    check(head and len(items) >= 4, "the headline: a lead line and an item per claim (%d)" % len(items))
    why = [i for i in items if i + 1 < len(lines) and any(
        lines[j].startswith("      why: ") for j in range(i + 1, min(len(lines), i + 4)))]
    check(len(why) >= len(items) - 1, "a why under each headline item (%d of %d)" % (len(why), len(items)))

    cli._import_heavy()
    out = io.StringIO()
    with redirect_stdout(out):
        cli.say_counted(["w1", "w2", "w1", "w1"], "rb-report: warning: ")
    check(out.getvalue().splitlines() == ["rb-report: warning: (3 times) w1", "rb-report: warning: w2"],
          "a repeated warning said once, with its count: %s" % out.getvalue().splitlines())
    out = io.StringIO()
    with redirect_stdout(out):
        cli.say("x " * 200)
    check(max(len(x) for x in out.getvalue().splitlines()) <= WIDTH
          and out.getvalue().split() == ["x"] * 200, "a long line wrapped at %d, nothing cut" % WIDTH)
    from rbanalysis import formatting
    for text, w in (("S2 speedup (training) (time per iteration)", 26),
                    ("agsparse = s2[sketch_width=0.005,sketch_width_mode=fraction] = sparcml", 30),
                    ("x" * 70, 30)):
        got = formatting.cell_wrap(text, w)
        check(max(map(len, got)) <= w and "".join(got).replace(" ", "") == text.replace(" ", ""),
              "a table cell wraps within its %d columns, nothing lost: %s" % (w, got))
    return check.exit()


if __name__ == "__main__":
    sys.exit(main())
