#!/usr/bin/python3
"""replay_vs_generated.py: the same gradient replayed from a trace and
generated in memory (docs/workloads.md).  Made by:
  tests/workload/gradgen_trace.py /tmp/gg.h5 10000 64 0.02 2 1
  5 rounds of: rb_micro -q --reducer dense,agsparse,sparcml,parallax,zen,s2 -i 50 -x 5
    --shape 10000x64 --layout row --density 0.02 -o /tmp/same/syn_N.h5, then the same with
    --input trace:/tmp/gg.h5 -o /tmp/same/rep_N.h5 (2 ranks)."""
import glob, h5py, numpy as np, collections
best = collections.defaultdict(list); med = collections.defaultdict(list)
for path in sorted(glob.glob("/tmp/same/*_[0-9].h5")):
    kind = path.split("/")[-1].split("_")[0]
    f = h5py.File(path, "r"); r = f["micro/results"][()]
    for i, row in enumerate(r):
        slow = f["micro/samples/%d" % i][()].max(axis=1)
        best[(row["reducer"].decode(), kind)].append(slow.min())
        med[(row["reducer"].decode(), kind)].append(np.median(slow))
for red in ["dense", "agsparse", "sparcml", "parallax", "zen", "s2"]:
    s, p = best[(red, "syn")], best[(red, "rep")]
    ms, mp = med[(red, "syn")], med[(red, "rep")]
    if s and p:
        print("%-9s fastest synthetic %8.1f replay %8.1f ratio %.3f | median of rounds' medians %8.1f %8.1f ratio %.3f (rounds %d/%d)" % (
            red, min(s), min(p), min(p) / min(s), np.median(ms), np.median(mp), np.median(mp) / np.median(ms), len(s), len(p)))
