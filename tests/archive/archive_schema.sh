#!/bin/sh
# The archive schema (docs/archive-schema.json) is the one home of the
# archive's rules: results/README.md's tables are its tables, and a real
# rb_micro run (3 ranks, two reducers, binding, PAPI) produces an archive
# that conforms to it, carries the run metadata, loads into pandas, and the
# schema checker itself catches deviations.
# Tiny rb_train runs (lenet, --bench-sgemm, gossip, wordlm) check the
# /train tables the same way.
. "$top_srcdir/tests/archive/archive_lib.sh"

$PY "$top_srcdir/tests/archive/schema_doc.py" ||
    bad "results/README.md's tables differ from docs/archive-schema.json (tests/archive/schema_doc.py --write makes them)"

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

$PY "$check" "$schema" "$out" || bad "archive does not conform to the archive schema"

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
for what in "/@bogus is not in the archive schema" "/@user is missing" "/@ranks has type" "/micro/samples/5 is missing"; do
    grep -q -- "$what" "$tmp/mut.log" || bad "checker did not report '$what'"
done
# rb_train archives conform too (the /train tables): lenet (image model),
# lenet with --bench-sgemm, mlp with gossip (more reducer options) and
# wordlm (its own attributes).  Tiny runs, 2 ranks.  rb_train needs BLAS
# and the Debian data sets; without them this part is skipped, with a note.
train="$top_builddir/benchmarks/rb_train"
fm=/usr/share/datasets/fashion-mnist fo=/usr/share/games/fortunes
tiny="--iterations 3 --train-limit 256 --test-limit 128 --batch 32"
train_run() { # name args...: archive $tmp/train-NAME.h5, checked
    n=$1; shift
    "$MPIRUN" 2 "$train" $tiny -o "$tmp/train-$n.h5" "$@" >"$tmp/train-$n.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { bad "rb_train $n exited $rc"; cat "$tmp/train-$n.log"; return; }
    [ -f "$tmp/train-$n.h5" ] || { bad "rb_train $n: no archive"; cat "$tmp/train-$n.log"; return; }
    $PY "$check" "$schema" "$tmp/train-$n.h5" || bad "rb_train $n archive does not conform to the archive schema"
}
if [ ! -x "$train" ]; then
    echo "note: no $train (built without BLAS): rb_train archives not checked"
elif [ ! -r "$fm/train-images-idx3-ubyte.gz" ]; then
    echo "note: $fm missing: rb_train archives not checked"
else
    train_run lenet --model lenet
    train_run sgemm --model lenet --bench-sgemm
    train_run gossip --model mlp --reducer gossip -O gossip_mix=params
    if [ -r "$fo/fortunes" ]; then
        train_run wordlm --model wordlm --hidden 16 --embed-dim 8 --vocab 500
    else
        echo "note: $fo/fortunes missing: rb_train wordlm archive not checked"
    fi
    # The runs wrote what they were asked for (the checker checks the layout).
    RB_TMP="$tmp" $PY - <<'PYEOF' || bad "rb_train archive contents"
import math, os, sys, h5py
tmp = os.environ["RB_TMP"]
errs = []
def want(cond, msg):
    if not cond: errs.append(msg)
def train(name):
    p = os.path.join(tmp, "train-%s.h5" % name)
    return h5py.File(p, "r") if os.path.exists(p) else None
for name, model in (("lenet", "lenet"), ("sgemm", "lenet"), ("gossip", "mlp"), ("wordlm", "wordlm")):
    f = train(name)
    if f is None:
        continue
    a, t = f.attrs, f["train"].attrs
    want(a["tool"] == "rb_train" and a["complete"] == 1 and a["ranks"] == 2, "%s: root attributes" % name)
    want(t["model"] == model and t["ranks"] == 2 and t["iterations"] == 3, "%s: /train model/ranks/iterations" % name)
    want(len(f["train/phases"]) == 3 and len(f["train/curves"]) >= 1, "%s: table lengths" % name)
    want(("context" in t) == (model == "wordlm"), "%s: wordlm attributes" % name)
    want(math.isnan(t["sgemm_gflops"]) != (name == "sgemm"), "%s: sgemm_gflops %r" % (name, t["sgemm_gflops"]))
    opts = f["train/reducer_options"].attrs
    if name == "gossip":
        want(opts.get("gossip_mix") == "params", "gossip: reducer_options %s" % dict(opts))
for e in errs: print("  ", e)
sys.exit(1 if errs else 0)
PYEOF
    # ...and the checker notices deviations inside /train.
    m=lenet; [ -f "$tmp/train-wordlm.h5" ] && m=wordlm
    cp "$tmp/train-$m.h5" "$tmp/tmut.h5"
    $PY - "$tmp/tmut.h5" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    t = f["train"]
    t.attrs["bogus"] = 1
    del t.attrs["iterations"]
    model = t.attrs["model"]
    del t.attrs["model"]
    t.attrs["model"] = np.bytes_(model)        # fixed-length: not the documented str
    if "hidden" in t.attrs:
        del t.attrs["hidden"]
    del f["train/phases"]
PYEOF
    $PY "$check" "$schema" "$tmp/tmut.h5" >"$tmp/tmut.log" 2>&1 && bad "checker accepted a mutated rb_train file"
    want="/train@bogus is not in the archive schema|/train@iterations is missing|/train@model has type|/train/phases is missing"
    [ $m = wordlm ] && want="$want|/train@hidden is missing"
    echo "$want" | tr '|' '\n' | while read -r what; do
        grep -q -- "$what" "$tmp/tmut.log" || { echo "FAIL: checker did not report '$what'"; exit 1; }
    done || fail=1
fi

[ $fail -eq 0 ] || cat "$tmp/log" "$tmp/mut.log" "$tmp/tmut.log" 2>/dev/null
exit $fail
