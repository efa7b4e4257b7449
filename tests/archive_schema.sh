#!/bin/sh
# A real rb_micro run (3 ranks, two reducers, binding, PAPI) produces an
# archive that conforms to results/README.md, carries the run metadata,
# loads into pandas, and the schema checker itself catches deviations.
. "$top_srcdir/tests/archive_lib.sh"

out="$tmp/run.h5"
# Binding needs hwloc; without it the file must say why the topology is absent.
bind=none
grep -q '^#define HAVE_HWLOC 1' "$top_builddir/config.h" && bind=core
"$MPIRUN" 3 -x GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$micro" --reducer dense,s2 -m 4K:16K -i 4 -x 1 \
    -O block_size=128 --bind $bind -P PAPI_TOT_CYC -o "$out" >"$tmp/log" 2>&1
rc=$?
[ $rc -eq 0 ] || { bad "rb_micro exited $rc"; cat "$tmp/log"; exit 1; }
[ -f "$out" ] || { bad "no archive $out"; cat "$tmp/log"; exit 1; }
ls "$tmp" | grep -q '\.tmp\.' && bad "temporary file left behind: $(ls "$tmp")"
grep -q "archive written: $out" "$tmp/log" || bad "no 'archive written' line"

$PY "$check" "$schema" "$out" || bad "archive does not conform to results/README.md"

# Metadata values, table contents, samples, options, binding.
RB_OUT="$out" RB_BIND=$bind $PY - <<'PYEOF' || bad "metadata/table checks"
import os, sys, h5py, numpy as np, pandas as pd
f = h5py.File(os.environ["RB_OUT"], "r")
a = f.attrs
errs = []
def want(cond, msg):
    if not cond: errs.append(msg)
want(a["tool"] == "rb_micro", "tool %r" % a["tool"])
want(a["complete"] == 1, "complete")
want(a["schema_version"] == 1, "schema_version")
want(a["ranks"] == 3 and a["nodes"] == 1, "ranks/nodes %s/%s" % (a["ranks"], a["nodes"]))
bind = os.environ["RB_BIND"]
want("--reducer dense,s2" in a["command_line"] and "--bind " + bind in a["command_line"], "command_line %r" % a["command_line"])
want(a["start_time"] <= a["end_time"] and a["start_time"].endswith("Z") and "T" in a["start_time"], "times")
want(a["hostlist"] == a["hostname"] != "", "hostlist %r" % a["hostlist"])
want(a["mpi_library_version"].startswith(("Open MPI", "MPICH", "Intel")), "mpi %r" % a["mpi_library_version"])
want(a["version"] and a["compiler"] and a["user"], "version/compiler/user")
import re
want(re.match(r"^(unknown|[0-9A-Za-z._-]*[0-9a-f]{7,}(-dirty)?)$", a["git_revision"]), "git_revision %r" % a["git_revision"])
want(a["env_GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1", "GLIBC_TUNABLES %r" % a["env_GLIBC_TUNABLES"])
want("GLIBC_TUNABLES=glibc.malloc.hugetlb=1" in a["environment"], "environment")
want(a["simulated"] == 0, "simulated")
want(a["malloc_policy"].startswith(("keep freed memory", "allocator default (mallopt refused")),
     "malloc_policy %r" % a["malloc_policy"])
for k in ("cuda_version", "nccl_version", "cudnn_version", "papi_version", "hwloc_version"):
    want(a[k] != "", k)
df = pd.DataFrame(f["/micro/results"][...])
want(len(df) == 6, "rows %d" % len(df))
red = [r.decode() for r in df["reducer"]]
want(red == ["dense"] * 3 + ["s2"] * 3, "reducers %s" % red)
want(list(df["size_bytes"]) == [4096, 8192, 16384] * 2, "sizes")
want((df["t_avg_us"] > 0).all() and (df["ranks"] == 3).all() and (df["iters"] == 4).all(), "timings")
want((df.loc[df.reducer == b"dense", "wrong"] == 0).all(), "dense wrong")
for i in range(6):
    s = f["/micro/samples/%d" % i]
    want(s.shape == (4, 3) and (s[...] > 0).all(), "samples %d shape %s" % (i, s.shape))
    # The table's max over ranks of the per-rank means comes from these samples.
    want(abs(s[...].mean(axis=0).max() - df["t_max_us"][i]) <= 1e-6 * df["t_max_us"][i] + 1e-9, "samples vs t_max row %d" % i)
    r = s.attrs["reducer"]
    want(r == red[i], "sample reducer")
    opts = {k for k in s.attrs if k.startswith("opt_")}
    if r == "s2":
        want("opt_sketch_rows" in opts and "opt_block_size" not in opts, "s2 options %s" % opts)
    else:
        want(not any(k.startswith(("opt_sketch", "opt_block", "opt_gossip")) for k in opts), "dense options %s" % opts)
    want("block_size=128" in s.attrs["options"], "options text")
    p = f["/micro/papi/%d" % i]
    want(p.shape == (3, 3, 1) and list(p.attrs["events"]) == ["PAPI_TOT_CYC"], "papi shape")
t = f["/topology"].attrs
if t["available"] == 1:
    want(t["pus"] >= t["cores"] >= t["packages"] >= 1, "topology counts")
    xml = f["/topology/xml"][()]
    want(b"<topology" in (xml if isinstance(xml, bytes) else xml.encode()), "xml")
b = f["/topology/binding"][...]
want(list(b["rank"]) == [0, 1, 2] and sorted(b["local_rank"]) == [0, 1, 2], "binding ranks")
want(all(m == bind.encode() for m in b["mode"]), "binding mode")
if t["available"] != 1:
    want(t["reason"] != "" and "xml" not in f["/topology"], "no reason for the missing topology")
if bind == "core":
    # Bound to one core each: a single CPU (or the PUs of one core).
    want(all(x.startswith(b"core ") for x in b["target"]), "binding target %s" % b["target"])
    want(all(b"," not in c for c in b["cpuset"]), "cpusets %s" % b["cpuset"])
for e in errs: print("  ", e)
sys.exit(1 if errs else 0)
PYEOF

# The revision recorded is a commit of this repository (when built from git).
rev=$($PY -c 'import sys,h5py; print(h5py.File(sys.argv[1]).attrs["git_revision"])' "$out")
if [ -e "$top_srcdir/.git" ] && [ "$rev" != unknown ]; then
    rev=${rev%-dirty}; rev=${rev##*-g}
    git -C "$top_srcdir" cat-file -e "$rev^{commit}" 2>/dev/null || bad "git_revision $rev is not a commit here"
fi

# The checker must notice an undocumented attribute, a missing one, a
# wrong type and a missing per-row dataset.
cp "$out" "$tmp/mut.h5"
$PY - "$tmp/mut.h5" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    f.attrs["bogus"] = "x"
    del f.attrs["user"]
    f.attrs["ranks"] = "three"
    del f["/micro/samples/5"]
PYEOF
$PY "$check" "$schema" "$tmp/mut.h5" >"$tmp/mut.log" 2>&1 && bad "checker accepted a mutated file"
for what in "/@bogus is not documented" "/@user is missing" "/@ranks has type" "/micro/samples/5 is missing"; do
    grep -q -- "$what" "$tmp/mut.log" || bad "checker did not report '$what'"
done
[ $fail -eq 0 ] || cat "$tmp/log" "$tmp/mut.log"
exit $fail
