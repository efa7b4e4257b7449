#!/usr/bin/python3
"""The frontier and the joint verdicts on synthetic archives with known
values (synth.py): an embedding model where s2 at the authors' width and
at 1 x nnz lose accuracy and 4 x and 16 x nnz keep it, so the parity
setting is 4 x nnz (the fewer bytes of the two); rb_micro's s2 at that
sketch beside agsparse gives the joint row its reduction and speedup; the
front is the set no other point beats; gossip's joint row on an image
classifier; every row carries what would change its verdict; a gossip
efficiency from two points says it is the median of only 2, and one
whose point lies wholly below 90% is not called met."""

import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from synth import QUIET, Checks, load_tables, write_micro, write_train
    from rbanalysis import claim_table, frontier
except ImportError as e:
    print("SKIP: Debian python3-numpy/h5py/pandas missing (%s)" % e)
    sys.exit(77)

check = Checks()
DENSE_PPL = [17.40, 17.50, 17.45, 17.42, 17.48]
EMBED = (32768, 64, 26944)          # rows, cols, non-zeros a step: density 1.28%
# name: (reducer, options, /train attrs, perplexity factor, bytes/step, s/iter)
EMBEDLM = {
    "dense": ("dense", {}, {}, 1.0, 9179648, 0.011),
    "none": ("none", {}, {}, 1.10, 0, 0.008),
    "agsparse": ("agsparse", {}, {"dense_reducer": "dense"}, 1.0, 2000000, 0.012),
    "sparcml": ("sparcml", {}, {"dense_reducer": "dense"}, 1.0, 2400000, 0.0115),
    "s2-authors": ("s2", {"sketch_width_mode": "fraction", "sketch_width": 0.0032},
                   {"dense_reducer": "dense"}, 2.8, 820000, 0.0090),
    "s2-nnz1": ("s2", {"sketch_width_mode": "nnz", "sketch_width": 1.0},
                {"dense_reducer": "dense"}, 1.08, 900000, 0.0095),
    "s2-nnz4": ("s2", {"sketch_width_mode": "nnz", "sketch_width": 4.0},
                {"dense_reducer": "dense"}, 1.001, 1200000, 0.0100),
    "s2-nnz16": ("s2", {"sketch_width_mode": "nnz", "sketch_width": 16.0},
                 {"dense_reducer": "dense"}, 0.999, 3500000, 0.0130),
}
NOISE = [0.0, 0.0005, -0.0005, 0.0003, -0.0002]


def embedlm_runs(d):
    os.makedirs(d, exist_ok=True)
    for name, (reducer, opts, attrs, factor, nbytes, t_iter) in EMBEDLM.items():
        for seed, (base, eps) in enumerate(zip(DENSE_PPL, NOISE), start=1):
            final = base * (factor + (eps if name != "dense" else 0.0))
            write_train(os.path.join(d, "%s-%d.h5" % (name, seed)), reducer, seed, [50, 100],
                        [0.5, 1.0], [final * 1.5, final], metric="val_perplexity", model="embedlm",
                        t_iter=t_iter * (1 + 0.01 * seed), options=opts, bytes_per_step=nbytes,
                        embedding=EMBED, attrs=attrs)


def micro_runs(d, width=4.0, extra=None, name="micro"):
    """6 launches of agsparse and s2 (nnz x width) at the authors' shape;
    extra: root attributes (a simulated platform)."""
    size = 32768 * 256 * 4
    for launch in range(6):
        rows = [{"reducer": r, "size_bytes": size, "t_avg_us": t * (1 + 0.02 * launch),
                 "layout": "row", "cols": 256, "rows": 32768, "density": 0.02, "count": size // 4,
                 "bytes_sent_avg": b, "rel_l2_err": e}
                for r, t, b, e in (("agsparse", 2000.0, 1.3e6, float("nan")),
                                   ("s2", 500.0, 0.2e6, 0.3))]
        write_micro(os.path.join(d, "%s-L%d.h5" % (name, launch)), rows, machine=QUIET, extra=extra,
                    options={"sketch_width_mode": "nnz", "sketch_width": width, "sketch_rows": 1})


def row_of(ctab, cid, text):
    r = ctab[(ctab["claim_id"] == cid) & ctab["claim"].str.contains(text, regex=False)]
    return r.iloc[0] if len(r) else None


def test_s2(tmp):
    d = os.path.join(tmp, "s2")
    embedlm_runs(d)
    micro_runs(d)
    micro_runs(d, extra={"simulated": 1, "sim_platform": "knl-aries"}, name="sim")
    agg, summ, truns, chosen, ctab = load_tables([d])
    fp = frontier.points(summ, truns)
    by = {frontier.sketch_of(r["options"], r["embed_density"])[:3]: r
          for _, r in fp[fp["reducer"] == "s2"].iterrows()}
    check(len(by) == 4, "four s2 settings, told apart (%s)" % sorted(fp["variant"]))
    p = fp.set_index("variant")
    parity = {v: p.at[v, "parity"] for v in p.index}
    s2_eq = sorted(v for v in parity if v.startswith("s2") and parity[v] == "equivalent")
    check(len(s2_eq) == 2 and all("sketch_width=4" in v or "sketch_width=16" in v for v in s2_eq),
          "s2 at 4 and 16 x nnz equivalent to dense, the others not (%s)" % parity)
    # The front on bytes (equivalent points count as dense's accuracy):
    # none (0 B, +10%), s2 at 1 x nnz (more bytes, +8%: better), s2 at
    # 4 x nnz (equivalent with the fewest bytes); the authors' width (+180%
    # with more bytes than none) and every other equivalent point are beaten.
    front = set(fp.loc[fp["front_bytes"], "variant"])
    nnz = {w: [v for v in p.index if "sketch_width=%s," % w in v][0] for w in (1, 4, 16)}
    check(front == {"none", nnz[1], nnz[4]},
          "bytes front: none, s2 at 1 and 4 x nnz (%s)" % sorted(front))
    joint = ctab[ctab["claim_id"] == "s2_joint"]
    sim = joint[joint["platform"].str.contains("knl-aries") & joint["claim"].str.startswith("S2 at parity")]
    check(len(sim) == 1 and sim["verdict_class"].iloc[0] == "meets"
          and "not judged here" in sim["why"].iloc[0],
          "joint on a simulated platform: judged on its reduce (meets), the training speedup "
          "left to the platform that trained (%s)" % list(sim["verdict"]))
    at_parity = row_of(ctab[~ctab["platform"].str.contains("knl-aries")], "s2_joint", "S2 at parity")
    check(at_parity is not None and "width 4 x" in at_parity["claim"],
          "the parity setting is 4 x nnz (the fewest bytes at parity) (%s)"
          % list(joint["claim"]))
    if at_parity is not None:
        # reduction 1 - 0.2/1.3 = 84.6% (meets 81%), reduce speedup 4x
        # (meets), training 0.0115/0.0100 = 1.15x (below 1.8x): below,
        # naming the training speedup.
        check(math.isclose(at_parity["measured_median"], 4.0, rel_tol=1e-6)
              and at_parity["verdict_class"] == "below"
              and "training speedup" in at_parity["verdict"]
              and "reduction" not in at_parity["verdict"]
              and "84.6%" in at_parity["why"],
              "joint at parity: reduce speedup 4x, reduction 84.6%% met, training 1.15x below "
              "(%s | %s)" % (at_parity["verdict"], at_parity["why"]))
        check("link" in at_parity["would_change"],
              "what would change it names the link (%s)" % at_parity["would_change"])
    authors = row_of(ctab, "s2_joint", "authors' width")
    check(authors is not None and authors["verdict_class"] == "below"
          and "accuracy" in authors["verdict"],
          "joint at the authors' width: below, naming accuracy, though rb_micro never ran it (%s)"
          % (None if authors is None else authors["verdict"]))
    check(ctab["would_change"].astype(str).str.len().gt(0).all(),
          "every claims row says what would change its verdict (%s)"
          % list(ctab.loc[ctab["would_change"].astype(str) == "", "claim_id"]))


def test_no_parity(tmp):
    """No s2 setting reaches parity: a row says so, with what was tried."""
    d = os.path.join(tmp, "none-at-parity")
    os.makedirs(d)
    for name in ("dense", "agsparse", "s2-authors", "s2-nnz1"):
        reducer, opts, attrs, factor, nbytes, t_iter = EMBEDLM[name]
        for seed, base in enumerate(DENSE_PPL, start=1):
            write_train(os.path.join(d, "%s-%d.h5" % (name, seed)), reducer, seed, [50, 100],
                        [0.5, 1.0], [base * factor * 1.5, base * factor], metric="val_perplexity",
                        model="embedlm", t_iter=t_iter, options=opts, bytes_per_step=nbytes,
                        embedding=EMBED, attrs=attrs)
    _, _, _, _, ctab = load_tables([d])
    r = ctab[(ctab["claim_id"] == "s2_joint") & ctab["verdict"].str.contains("no s2 setting")]
    check(len(r) == 1 and r["verdict_class"].iloc[0] == "below" and "tried" in r["why"].iloc[0]
          and "wider sketch" in r["would_change"].iloc[0],
          "no s2 setting at parity: one row, below, the settings tried, a wider sketch (%s)"
          % list(r["verdict"]))


def test_gossip(tmp):
    """Gossip on an image classifier: parity at 2 settings, the faster is the
    joint setting; its efficiency against none of the group."""
    d = os.path.join(tmp, "gossip")
    os.makedirs(d)
    acc = [88.0, 88.4, 87.6, 88.2, 87.9]
    for name, reducer, opts, delta, t_iter in (
            ("dense", "dense", {}, 0.0, 0.020), ("none", "none", {}, -1.0, 0.010),
            ("gossip-params", "gossip", {"gossip_mix": "params"}, 0.05, 0.0105),
            ("gossip-grad", "gossip", {"gossip_mix": "grad"}, -0.05, 0.0125)):
        for seed, base in enumerate(acc, start=1):
            write_train(os.path.join(d, "%s-%d.h5" % (name, seed)), reducer, seed, [50, 100],
                        [0.5, 1.0], [base - 5, base + delta + 0.01 * seed * (name != "dense")],
                        model="lenet", t_iter=t_iter * (1 + 0.01 * seed), options=opts)
    _, summ, truns, _, ctab = load_tables([d])
    r = ctab[ctab["claim_id"] == "gossip_joint"]
    check(len(r) == 1 and "gossip_mix=params" in r["claim"].iloc[0]
          and math.isclose(r["measured_median"].iloc[0], 0.010 / 0.0105, rel_tol=0.02),
          "gossip joint at the faster setting at parity, efficiency ~95%% (%s, %s)"
          % (list(r["claim"]), list(r["measured_median"])))
    eff = ctab[(ctab["claim_id"] == "gossip_efficiency") & (ctab["points"] > 0)
               & (ctab["setting"] == "paper")]
    check(len(eff) == 1 and "the median of only 2 points" in eff["verdict"].iloc[0],
          "gossip efficiency from 2 settings says it is the median of only 2 points (%s)"
          % list(eff["verdict"]))


def test_disagreeing_points():
    """A median that meets while one point lies wholly below: inconclusive."""
    import pandas as pd
    p = pd.DataFrame({"compute_efficiency": [0.95, 0.85, 0.97],
                      "compute_efficiency_low": [0.93, 0.84, 0.96],
                      "compute_efficiency_high": [0.97, 0.86, 0.98]})
    v, cls = claim_table._point_caveats("gossip_efficiency", 0.9, p, "compute_efficiency", 0.95, False,
                                   "meets the claim", "meets")
    check(cls == "inconclusive" and "1 of 3 lie wholly below" in v,
          "a median that meets with one point wholly below: inconclusive, said (%s)" % v)


with tempfile.TemporaryDirectory() as tmp:
    test_s2(tmp)
    test_no_parity(tmp)
    test_gossip(tmp)
    test_disagreeing_points()
sys.exit(check.exit())
