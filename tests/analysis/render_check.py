#!/usr/bin/python3
"""rb-report's rendering on small frames built here (no benchmark run):

  - formatting: sizes in B/KiB/MiB; a deterministic value (exact, or an
    interval of zero width) printed 'exact', never '[x, x]'; a pooled
    interval that does not cover its points printed with their range;
  - document: the report's Markdown (emphasis, code, links) rendered as
    HTML, everything else escaped; a contents list whose anchors exist;
    tables with a header row, long ones folded under a summary line; the headline box
    with verdict classes;
  - figures: one colour per reducer (a variant of a reducer takes its
    colour) in every figure; a log axis over less than a decade has three
    or more labelled ticks; a figure without data is not drawn (its entry
    says why); a group at one size is drawn as dots, not one-point lines;
  - the verdict figure from a claims table with the shared columns
    (claim_id ... verdict_class, why), one row missing, one exact, one
    simulated platform; and report.claims_for_report fills the columns an
    older claims table lacks.
"""

import os
import re
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
    import numpy as np
    import pandas as pd
except ImportError as e:
    print("SKIP: Debian python3-numpy/pandas/matplotlib missing (%s)" % e)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "analysis"))
from rbanalysis import cli, document, figures, plotting, formatting, report  # noqa: E402

cli._import_heavy()
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def test_formatting():
    check([formatting.size(v) for v in (512, 4096, 1536 * 1024, 3 * 2 ** 30)]
          == ["512 B", "4 KiB", "1.5 MiB", "3 GiB"], "sizes in B, KiB, MiB, GiB")
    pct = formatting.percent
    check(formatting.interval(0.873, 0.873, 0.873, pct) == "87.3% (exact)",
          "a zero-width interval is printed as exact: %s"
          % formatting.interval(0.873, 0.873, 0.873, pct))
    check(formatting.interval(0.873, np.nan, np.nan, pct, exact=True) == "87.3% (exact)",
          "exact=True: no interval needed")
    check(formatting.interval(0.9, 0.8, 0.95, pct) == "90.0% [80.0%, 95.0%]", "an interval")
    check(formatting.interval(0.9, np.nan, np.nan, pct) == "90.0% (no interval)",
          "below 6 repetitions: no interval, said")
    pooled = {"points": 5, "paper": "81%", "measured_median": -0.655, "measured_low": -0.655,
              "measured_high": -0.655, "measured_min": -0.779, "measured_max": 0.844, "exact": False}
    text = formatting.claim_value(pooled)
    check("[-65.5%, -65.5%]" not in text and "-77.9% to 84.4%" in text,
          "a pooled zero-width interval over points from -77.9%% to 84.4%%: %s" % text)
    covered = dict(pooled, measured_low=-0.8, measured_high=0.9)
    check(formatting.claim_value(covered) == "-65.5% [-80.0%, 90.0%] over 5 points",
          "a pooled interval that covers its points: %s" % formatting.claim_value(covered))
    narrow = dict(pooled, measured_low=-0.7, measured_high=-0.6)
    check("[-70.0%, -60.0%]" in formatting.claim_value(narrow)
          and "-77.9% to 84.4%" in formatting.claim_value(narrow),
          "a pooled interval narrower than its points: range beside it: %s"
          % formatting.claim_value(narrow))
    unknown = dict(narrow, measured_min=np.nan, measured_max=np.nan)
    check("not the points'" in formatting.claim_value(unknown),
          "a pooled interval whose points' range is unknown says whose interval it is: %s"
          % formatting.claim_value(unknown))
    diff = {"points": 1, "paper": "converges to the same accuracy", "measured_median": -0.25,
            "measured_low": -0.5, "measured_high": 0.1}
    check(formatting.claim_value(dict(diff, unit="points"))
          == "-0.25 [-0.50, +0.10] points",
          "an accuracy difference in points, every number with its unit: %s"
          % formatting.claim_value(dict(diff, unit="points")))
    check(formatting.claim_value(dict(diff, measured_median=0.00307, measured_low=np.nan,
                                      measured_high=np.nan, unit="rel"))
          == "+0.31% perplexity (no interval)", "a perplexity difference in percent of perplexity")
    check(formatting.claim_value({"points": 1, "paper": "O(1)", "unit": "x", "measured_median": 8.571,
                                  "measured_low": np.nan, "measured_high": np.nan, "exact": True})
          == "8.57x (exact)", "a growth ratio as x")
    check("(no unit)" in formatting.claim_value(diff),
          "a claim whose unit is unknown says so, never a bare number: %s" % formatting.claim_value(diff))
    check(formatting.claim_value({"points": 1, "paper": "1.8x", "measured_median": 0.935,
                                  "measured_low": 0.765, "measured_high": 1.143})
          == "0.94x [0.77x, 1.14x]", "a speedup as in the headline")


def test_inline():
    h = document._inline("*meets* or *below the claim*, `sketch_width_mode=fraction`, "
                         "[tables/a.csv](tables/a.csv), **Headline**, _(no data)_, t_iter(none), "
                         "2 * 3 and <b>")
    check(h.count("<i>") == 3 and "<code>sketch_width_mode=fraction</code>" in h
          and "<a href='tables/a.csv'>tables/a.csv</a>" in h and "<b>Headline</b>" in h
          and "t_iter(none)" in h and "2 * 3" in h and "&lt;b&gt;" in h,
          "Markdown emphasis, code, links, bold rendered; the rest escaped: %s" % h)
    left = re.sub(r"<[^>]+>", "", h)
    check("`" not in left and "](" not in left and "*meets*" not in left, "no Markdown left")


def test_document(tmp):
    doc = document.Document(tmp)
    doc.heading(1, "report")
    doc.heading(2, "Headline claims")
    doc.headline(["**Headline**: x"], [("S2 speedup", "this machine", "0.94x [0.77x, 1.14x]",
                                        "1.8x", "below the claim", "below")])
    doc.heading(3, "Where S2 is not designed to win (setting `other`)")
    doc.table(pd.DataFrame({"size_bytes": [4096.0] * 20, "comm_reduction": [0.832] * 20,
                            "reading": "~100% read as >= 90% of `none`'s time"}), "t",
              columns={"size_bytes": "size", "comm_reduction": "reduction", "reading": "read as"})
    doc.heading(2, "Headline claims")      # the same text twice: two anchors
    page = doc.html("t")
    ids = re.findall(r"<h\d id='([^']+)'", page)
    links = re.findall(r"href='#([^']+)'", page)
    check(len(ids) == 4 and len(set(ids)) == 4 and set(links) == set(ids[1:]),
          "contents list: a unique anchor per heading, every link has its target: %s %s"
          % (ids, links))
    check("<code>other</code>" in page and "`" not in page.split("</style>")[1],
          "backticks in a heading rendered as code")
    check("<details class='fold'><summary>table of 20 rows" in page
          and "<div class='tablebox'><table><thead>" in page and "<td class='n'>4 KiB</td>" in page
          and "<td class='n'>83.2%</td>" in page,
          "a long table folded under a line saying what it holds, with a header row; sizes and "
          "reductions with units")
    check("class='verdict below'" in page, "the headline box carries the verdict class")
    md = doc.markdown()
    check("<td>~100% read as &gt;=<wbr> 90% of <code>none</code>&#x27;s time</td>" in page,
          "Markdown in a table cell rendered: %s" % re.findall(r"<td>~100%[^\n]*?</td>", page)[:1])
    check("| 4 KiB | 83.2% | ~100% read as >= 90% of `none`'s time |" in md,
          "report.md shows the same cells")


def test_palette():
    reds = list(plotting.REDUCER_COLOURS)
    check(len({plotting.reducer_colour(r) for r in reds}) == len(reds), "a colour per reducer")
    check(plotting.reducer_colour("s2[sketch_width=2]") == plotting.reducer_colour("s2"),
          "a variant takes its reducer's colour")
    import matplotlib.colors as mc
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    df = pd.DataFrame({"variant": ["dense", "dense", "s2", "s2"], "size_bytes": [1, 2, 1, 2],
                       "t": [1.0, 2.0, 3.0, 4.0]})
    plotting._lines(ax, df, "variant", "size_bytes", "t")
    got = [mc.to_hex(ln.get_color()) for ln in ax.get_lines()]
    check(got == [plotting.reducer_colour("dense"), plotting.reducer_colour("s2")],
          "lines take the palette's colours: %s" % got)
    plt.close(fig)


def test_log_ticks():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0.8, 1.0, 1.2])
    ax.set_yscale("log")
    ax.set_ylabel("speedup")
    plotting._readable_ticks(ax)
    fig.canvas.draw()
    lo, hi = ax.get_ylim()
    labels = [t.get_text() for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi and t.get_text()]
    check(3 <= len(labels) <= 7, "a log axis over 0.8..1.2 has 3 to 7 labelled ticks: %s" % labels)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("dense gradient size")
    ax.set_xlim(1024, 2 ** 20)
    plotting._readable_ticks(ax)
    fig.canvas.draw()
    xl = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    check(any("KiB" in x for x in xl) and "1MiB" in xl, "a size axis in KiB/MiB: %s" % xl)
    plt.close(fig)


def test_empty_and_dots(tmp):
    sp = pd.DataFrame({"gid": "G2", "group": "g", "variant": ["dense", "s2"], "reducer": ["dense", "s2"],
                       "size_bytes": [4096, 8192]})
    for c in ("speedup_vs_dense", "speedup_vs_best_baseline"):
        for suffix in ("", "_low", "_high"):
            sp[c + suffix] = np.nan
    out = figures.speedup(sp, tmp)
    check(out and out[0][0] is None and "no value to plot" in out[0][1]
          and not os.path.exists(os.path.join(tmp, "speedup_G2.png")),
          "a speedup figure without a value is not drawn, and says so: %s" % (out,))
    agg = pd.DataFrame({"gid": "G4", "group": "paper", "variant": ["dense", "agsparse", "s2"],
                        "size_bytes": 524288, "t_avg_us_median": [78.0, 16.0, 20.0],
                        "t_avg_us_ci_low": [70.0, 15.0, 18.0], "t_avg_us_ci_high": [80.0, 17.0, 23.0]})
    out = figures.latency(agg, tmp)
    check(out[0][0] == "latency_G4.png" and os.path.getsize(os.path.join(tmp, out[0][0])) > 2000,
          "a group at one size: drawn (as dots per reducer)")


def claims_frame():
    base = {"paper": "81%", "paper_value": 0.81, "reading": "81%", "setting": "paper",
            "oversubscribed": "no", "busy": "no", "repetitions": 6, "exact": False, "why": "",
            "launches": "6"}     # launches: what claims.py's headline rule also reads
    rows = [
        dict(base, claim_id="s2_comm_reduction", claim="S2: communication reduction",
             platform="this machine, 2 ranks", data="measured", points=1, measured_median=0.832,
             measured_low=np.nan, measured_high=np.nan, exact=True, verdict="meets the claim",
             verdict_class="meets"),
        dict(base, claim_id="s2_comm_reduction", claim="S2: communication reduction",
             platform="p100-ib-edr, 128 ranks (simulated)", data="simulated", points=3,
             measured_median=0.7, measured_low=0.6, measured_high=0.78, verdict="below the claim",
             verdict_class="below"),
        dict(base, claim_id="s2_speedup", claim="S2: speedup", paper="1.8x", paper_value=1.8,
             platform="this machine, 2 ranks", data="measured", points=1, measured_median=0.94,
             measured_low=0.77, measured_high=1.14, verdict="below the claim", verdict_class="below"),
        dict(base, claim_id="gossip_efficiency", claim="GossipGraD: compute efficiency",
             paper="~100%", paper_value=1.0, reading="~100% read as >= 90%",
             platform="this machine, 2 ranks", data="-", points=0, measured_median=np.nan,
             measured_low=np.nan, measured_high=np.nan, verdict="not measured",
             verdict_class="missing", why="no gossip run"),
    ]
    return pd.DataFrame(rows)


def test_verdict(tmp):
    ctab = claims_frame()
    out = figures.verdict(ctab, tmp)
    check(out[0][0] == "verdict.png" and os.path.getsize(os.path.join(tmp, "verdict.png")) > 5000,
          "the verdict figure from a claims table with the shared columns")
    none = ctab.assign(points=0, measured_median=np.nan, verdict_class="missing")
    out = figures.verdict(none, tmp + "/none")
    check(out[0][0] is None and "no claim has a measured value" in out[0][1],
          "no measured claim: no verdict figure, said: %s" % (out,))
    old = ctab.drop(columns=["paper_value", "reading", "platform", "busy", "exact",
                             "verdict_class", "why"]).assign(context="c")
    filled = report.claims_for_report(old)
    check(list(filled["verdict_class"]) == ["meets", "below", "below", "missing"]
          and np.isclose(filled["paper_value"].iloc[0], 0.81)
          and np.isclose(filled["paper_value"].iloc[3], 1.0) and (filled["why"] == "c").all(),
          "claims_for_report fills an older claims table: %s" % list(filled["verdict_class"]))
    later = report.claims_for_report(ctab.assign(why="the interval is above 81%",
                                              would_change="a point below 81%"))
    notes = report.claim_notes(later)
    check(notes[0] == "*why*: the interval is above 81%; *would change it*: a point below 81%"
          and report.claim_notes(report.claims_for_report(ctab))[0] == "",
          "a claims row's why and would_change as its note, when the columns are there: %s" % notes[0])
    box = document._html_headline(["x"], report.headline_rows(later))
    check("<details class='why'><summary>why / what would change it</summary>" in box
          and "a point below 81%" in box,
          "the headline box: why and would_change folded under a row")
    rows = report.headline_rows(report.claims_for_report(ctab))
    check([r[5] for r in rows] == ["meets", "below", "below"] and rows[0][2] == "83.2% (exact)",
          "headline box rows: %s" % [r[2] for r in rows])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(tmp + "/none")
        test_formatting()
        test_inline()
        test_document(tmp)
        test_palette()
        test_log_ticks()
        test_empty_and_dots(tmp)
        test_verdict(tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
