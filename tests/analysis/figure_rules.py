#!/usr/bin/python3
"""The figures' rules, on small frames built here:

  - a figure of fewer than 3 points is not drawn: no PNG, and its values
    become a row of the report's table of such figures (report_sections.place);
  - figures come in natural order of their group ids (G2 before G10);
  - a title far too long for a small figure is wrapped or shortened,
    never cut (plotting.CLIPPED stays empty), and a text that does reach
    outside a figure is found (clipped_texts);
  - phases are drawn in colours no reducer has; a training curve whose
    values span orders of magnitude gets a log axis;
  - a verdict by its median alone has its own colour class, apart from
    inconclusive.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import matplotlib  # noqa: F401
    import numpy as np
    import pandas as pd
    from synth import Checks   # the suite's ok / FAIL lines and exit status
except ImportError as e:
    print("SKIP: Debian python3-numpy/pandas/matplotlib/h5py missing (%s)" % e)
    sys.exit(77)

from rbanalysis import cli, document, figures, plotting, report_sections  # noqa: E402

cli._import_heavy()
check = Checks()


def agg_frame(groups):
    """groups: {gid: [(variant, size, us)]} as micro.summarise_repeats
    leaves them."""
    rows = []
    for gid, pts in groups.items():
        for v, size, us in pts:
            rows.append({"gid": gid, "group": "measured | vm | row/random | " + gid, "variant": v,
                         "reducer": v, "size_bytes": size, "t_avg_us_median": us,
                         "t_avg_us_ci_low": us * 0.9, "t_avg_us_ci_high": us * 1.1})
    return pd.DataFrame(rows)


def test_few_points(tmp):
    agg = agg_frame({"G3": [("dense", 4096, 30.0), ("agsparse", 4096, 41.0)],
                     "G4": [("dense", s, 10.0 + s / 1e3) for s in (4096, 8192, 16384)]})
    out = figures.latency(agg, tmp)
    few = [e for e in out if e[0] is None]
    check(len(few) == 1 and len(few[0]) == 3 and few[0][2]["points"] == 2
          and "dense 4 KiB: 30 us [27 us, 33 us]" in few[0][2]["values"]
          and not os.path.exists(os.path.join(tmp, "latency_G3.png")),
          "a group of 2 points: no PNG, its values for a table row: %s" % (few,))
    check(os.path.exists(os.path.join(tmp, "latency_G4.png")), "a group of 3 points: drawn")
    doc = document.Document(tmp)
    report_sections.place(doc, out, "latency")
    tables = [b for b in doc.blocks if b[0] == "table"]
    check(len(tables) == 1 and tables[0][2][0][0] == "latency G3" and "agsparse 4 KiB" in tables[0][2][0][2]
          and not any(b[0] == "fig" and "G3" in b[1] for b in doc.blocks),
          "the report shows it as a table row, not a figure: %s" % (tables[0][2] if tables else None))


def test_natural_order(tmp):
    sweep = lambda: [("dense", s, 10.0 + s / 1e3) for s in (4096, 8192, 16384)]  # noqa: E731
    agg = agg_frame({g: sweep() for g in ("G10", "G2", "G1", "G11", "G9")})
    names = [e[0] for e in figures.latency(agg, tmp)]
    check(names == ["latency_G1.png", "latency_G2.png", "latency_G9.png", "latency_G10.png",
                    "latency_G11.png"], "figures in natural order: %s" % names)
    check(sorted(["G10", "G2", "T1", "G1"], key=plotting.natural_key) == ["G1", "G2", "G10", "T1"],
          "natural_key: G2 before G10")


def test_nothing_cut(tmp):
    plotting.CLIPPED.clear()
    long = "measured | " + " | ".join("a rather long part %d of the group's label" % i for i in range(12))
    agg = agg_frame({"G1": [("s2[sketch_width=0.00319958,sketch_width_mode=fraction]", s, 5.0 + s / 1e3)
                            for s in (4096, 8192, 16384)] + [(v, s, 7.0) for v in
                                                            ("dense", "agsparse", "sparcml", "gossip",
                                                             "parallax", "omnireduce") for s in (4096, 8192)]})
    agg["group"] = long
    figures.latency(agg, tmp)
    check(not plotting.CLIPPED, "a long title and long legend entries: nothing cut: %s" % plotting.CLIPPED)
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=plotting.ONE, layout="constrained")
    ax.plot([1, 2], [1, 2])
    ax.set_xlabel("x" * 200)
    fig.canvas.draw()
    cut = plotting.clipped_texts(fig)
    plt.close(fig)
    check(cut and cut[0].startswith("x label"), "a label wider than its figure is found: %s" % cut)


def test_colours(tmp):
    summ = pd.DataFrame({"tid": "T1", "group": "g", "variant": ["dense", "s2"],
                         **{"t_%s_s_median" % p: [0.01, 0.02] for p in ("forward", "backward", "reduce", "update")}})
    import matplotlib.pyplot as plt
    seen = []
    orig = plt.Axes.bar

    def spy(self, *a, **k):
        seen.append(k.get("color"))
        return orig(self, *a, **k)
    plt.Axes.bar = spy
    try:
        figures.phase_bars(summ, tmp)
    finally:
        plt.Axes.bar = orig
    reds = {c.lower() for c in plotting.REDUCER_COLOURS.values()} | set(plotting.OTHER_COLOURS)
    check(len(seen) == 4 and len(set(seen)) == 4 and not set(seen) & reds,
          "phases in 4 colours no reducer has: %s" % seen)
    curv = pd.DataFrame([{"tid": "T1", "group": "g", "metric": "val_perplexity", "variant": v, "run": r,
                          "iteration": i, "wall_s": i / 10, "value": val}
                         for v, f in (("dense", 1.0), ("s2", 30.0)) for r in (1, 2)
                         for i, val in ((10, 5000.0 * f), (20, 500.0 * f), (30, 50.0 * f))])
    seen_scale = []
    orig_save = plotting._save

    def grab(fig, *a, **k):
        seen_scale.extend(ax.get_yscale() for ax in fig.get_axes())
        return orig_save(fig, *a, **k)
    plotting._save = grab
    try:
        figures.training_curves(curv, tmp)
    finally:
        plotting._save = orig_save
    check(seen_scale == ["log", "log"], "a perplexity over orders of magnitude on a log axis: %s" % seen_scale)


def test_verdict_classes():
    check(plotting.display_class("inconclusive", "meets the claim by its median only (no interval: ...)")
          == "median-only" and plotting.display_class("inconclusive", "not significantly different")
          == "inconclusive", "a verdict by its median alone has its own class")
    check(len({plotting.VERDICT_COLOURS[k] for k, _ in plotting.VERDICT_KEY}) == len(plotting.VERDICT_KEY),
          "one colour per meaning in the verdict key")
    check(document.VERDICT_COLOURS == plotting.VERDICT_COLOURS, "the page and the figure share the colours")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_few_points(tmp)
        test_natural_order(tmp)
        test_nothing_cut(tmp)
        test_colours(tmp)
        test_verdict_classes()
    return check.exit()


if __name__ == "__main__":
    sys.exit(main())
