#!/usr/bin/python3
"""A small results directory with a bit of every section of the report,
from synthetic archives in the real writers' layout (synth.py): the
emulated sweep of emulated_synth.py (claims rows, the crossover section),
a size sweep of six reducers over five sizes and six repetitions (latency
and speedup figures), a group of two reducers at one size (two points: a
table row, no figure), gossip with a consensus distance over sizes, an S2
sketch-width sweep, and short training runs of five reducers, two seeds
each.  Used by the layout tests (layout_browser.sh, terminal_check.py):

    report_synth.py DIR     writes the archives into DIR (created)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import emulated_synth  # noqa: E402
from synth import ANALYSIS  # noqa: E402,F401  (rb-report is ANALYSIS/rb-report)
from synth import QUIET, write_micro, write_train  # noqa: E402

SIZES = [4096, 16384, 65536, 262144, 1048576]
SWEEP = {"dense": 1.0, "agsparse": 0.45, "sparcml": 0.5, "s2": 0.4, "gossip": 0.6, "none": 0.01}


def sweep_rows(scale, repeat):
    rows = []
    for reducer, f in SWEEP.items():
        for size in SIZES:
            t = (5.0 + size / 4096.0) * f * scale * (1 + 0.01 * repeat)
            nbytes = 0.0 if reducer == "none" else size * (1.0 if reducer == "dense" else 0.05)
            r = {"reducer": reducer, "size_bytes": size, "t_avg_us": t, "repeat": repeat,
                 "layout": "row", "cols": 16, "rows": size // 64, "density": 0.01,
                 "bytes_sent_avg": nbytes, "bytes_sent_max": nbytes, "bytes_recv_avg": nbytes,
                 "bytes_recv_max": nbytes, "busbw_gbs": size / t / 1e3}
            if reducer == "gossip":
                r["consensus"] = 0.05 * (1 + SIZES.index(size))
            if reducer == "s2":
                r.update(rel_l2_err=0.02, recall=0.97)
            rows.append(r)
    return rows


def make_results(top):
    os.makedirs(top, exist_ok=True)
    emulated_synth.make_results(top)
    for k in range(6):
        write_micro(os.path.join(top, "micro-sweep-L%d.h5" % k), sweep_rows(1.0, k), ranks=4,
                    machine=QUIET)
    # two reducers at one size: two points, no figure
    write_micro(os.path.join(top, "micro-two-points.h5"),
                [{"reducer": r, "size_bytes": 8192, "t_avg_us": t, "density": 0.2,
                  "repeat": k} for r, t in (("dense", 30.0), ("agsparse", 41.0)) for k in range(6)],
                ranks=3, machine=QUIET)
    # s2 at three sketch widths (an option of the run)
    for w in (0.5, 1.0, 2.0):
        path = write_micro(os.path.join(top, "micro-s2-width-%g.h5" % w),
                           [{"reducer": "s2", "size_bytes": s, "t_avg_us": 10.0 + s / 1e4,
                             "layout": "row", "cols": 16, "rows": s // 64, "density": 0.01, "repeat": k,
                             "rel_l2_err": 0.1 / w, "recall": 1 - 0.05 / w}
                            for s in SIZES[:3] for k in range(2)],
                           ranks=2, machine=QUIET)
        import h5py
        with h5py.File(path, "a") as f:
            f["micro/results"].attrs["opt_sketch_width"] = w
    # training: five reducers, two seeds
    for seed in (1, 2):
        for reducer, final, t_iter in (("none", 88.0, 0.010), ("dense", 88.1, 0.020),
                                       ("s2", 87.8, 0.012), ("agsparse", 88.0, 0.016),
                                       ("gossip", 87.5, 0.013)):
            its = [10, 20, 30, 40, 50]
            write_train(os.path.join(top, "train-%s-%d.h5" % (reducer, seed)), reducer, seed,
                        its, [i * t_iter for i in its],
                        [final - 30.0 / i + 0.1 * seed for i in its], t_iter=t_iter, machine=QUIET)
    return top


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    make_results(sys.argv[1])
