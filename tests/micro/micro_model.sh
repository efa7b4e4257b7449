#!/bin/sh
# rb_micro's cost model column: alpha and beta measured by a
# ping-pong (2 ranks) or given (--alpha/--beta), recorded in the archive's
# root; per row t_model_us from rb_model with them and model_ratio =
# t_avg_us / t_model_us; on one rank nothing is sent, so alpha = beta = 0.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
run() {  # RANKS FILE ARGS...
    np=$1 f=$2; shift 2
    "$MPIRUN" "$np" "$micro" --reducer none,dense,agsparse,s2 -m 4K:16K -i 2 -x 1 -P none \
        -o "$tmp/$f" "$@" >"$tmp/$f.out" 2>&1 || { echo "FAIL: $f: exit $?"; cat "$tmp/$f.out"; fail=1; }
}
run 2 measured.h5
run 2 given.h5 --alpha 1 --beta 1e-9
run 1 one.h5
grep -q "^# cost model (docs/cost-model.md): alpha .* us (measured), beta .* (measured)" "$tmp/measured.h5.out" ||
    { echo "FAIL: no cost model line in the preamble"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import sys, h5py, numpy as np, pandas as pd
d = sys.argv[1]
def load(name):
    f = h5py.File(d + "/" + name, "r")
    t = pd.DataFrame(f["/micro/results"][...])
    t["reducer"] = t["reducer"].str.decode("ascii")
    return f.attrs, t.set_index(["reducer", "size_bytes"])
bad = []
a, m = load("measured.h5")
if a["model_alpha_beta_source"] != "measured" or not a["model_alpha_s"] > 0 or not a["model_beta_s_per_byte"] > 0:
    bad.append("measured: alpha %r beta %r (%s)" % (a["model_alpha_s"], a["model_beta_s_per_byte"],
                                                   a["model_alpha_beta_source"]))
for r in ("dense", "agsparse", "s2"):
    x = m.loc[r]
    if not (np.isfinite(x["t_model_us"]) & (x["t_model_us"] > 0)).all():
        bad.append("%s: model times %s" % (r, list(x["t_model_us"])))
    if not np.allclose(x["model_ratio"], x["t_avg_us"] / x["t_model_us"], rtol=1e-12):
        bad.append("%s: model_ratio is not t_avg / t_model" % r)
if m.loc["none", "model_ratio"].notna().any():
    bad.append("none: a model ratio for a call that does nothing")
a, g = load("given.h5")
if a["model_alpha_s"] != 1 or a["model_beta_s_per_byte"] != 1e-9 or a["model_alpha_beta_source"] != "given":
    bad.append("given: %r %r %r" % (a["model_alpha_s"], a["model_beta_s_per_byte"], a["model_alpha_beta_source"]))
# One second per message: every call that sends is modelled at >= 1 s.
for r in ("dense", "agsparse", "s2"):
    if not (g.loc[r, "t_model_us"] >= 1e6).all():
        bad.append("given alpha = 1 s: %s modelled at %s us" % (r, list(g.loc[r, "t_model_us"])))
a, o = load("one.h5")
if a["model_alpha_s"] != 0 or a["model_beta_s_per_byte"] != 0:
    bad.append("one rank: alpha %r beta %r, want 0" % (a["model_alpha_s"], a["model_beta_s_per_byte"]))
if bad:
    sys.exit("FAIL: " + "\nFAIL: ".join(bad))
print("ok: measured and given alpha/beta recorded; model times and ratios on every row")
PY
# The report: measured against the model per reducer, the figure, and the
# crossover table from the two rank counts (1 and 2) of the same setting.
mkdir "$tmp/in" && cp "$tmp/measured.h5" "$tmp/one.h5" "$tmp/in/"
"$top_srcdir/analysis/rb-report" "$tmp/in" -o "$tmp/rep" >"$tmp/rep.out" 2>&1 ||
    { echo "FAIL: rb-report exited $?"; cat "$tmp/rep.out"; fail=1; }
/usr/bin/python3 - "$tmp" <<'PY' || fail=1
import os, sys, h5py, numpy as np, pandas as pd
d = sys.argv[1]
t = pd.read_csv(d + "/rep/tables/micro_model.csv")
rows = pd.concat(pd.DataFrame(h5py.File(d + "/in/" + f, "r")["/micro/results"][...])
                 for f in ("measured.h5", "one.h5"))
rows["reducer"] = rows["reducer"].str.decode("ascii")
bad = []
for r in ("dense", "agsparse", "s2"):
    got = t[t["variant"] == r]
    sub = rows[(rows["reducer"] == r) & (rows["t_model_us"] > 0)]
    if got.empty or int(got["points"].iloc[0]) != len(sub):
        bad.append("%s: %s points in the model table, %d rows with a model time" %
                   (r, list(got["points"]), len(sub)))
        continue
    want = np.median(sub["t_avg_us"] / sub["t_model_us"])
    if not np.isclose(got["ratio_median"].iloc[0], want, rtol=1e-9):
        bad.append("%s: median meas/model %r, rows give %r" % (r, got["ratio_median"].iloc[0], want))
if not os.path.exists(d + "/rep/model_vs_measured.png"):
    bad.append("no model_vs_measured.png")
f = pd.read_csv(d + "/rep/tables/micro_floor.csv")
if f.empty or not (f["t_floor_us_median"] > 0).all() or not np.allclose(
        f["t_over_floor"], f["t_avg_us_median"] / f["t_floor_us_median"]):
    bad.append("floor table: %s" % f.head())
if not (rows["t_floor_us"] > 0).all():
    bad.append("a row without a memory floor")
x = pd.read_csv(d + "/rep/tables/micro_crossover.csv")
if set(x["ranks_run"]) != {"1 2"}:
    bad.append("crossover: ranks run %s, expected '1 2'" % set(x["ranks_run"]))
if bad:
    sys.exit("FAIL: " + "\nFAIL: ".join(bad))
print("ok: the report's model table matches the rows; figure and crossover table present")
PY

"$MPIRUN" 1 "$micro" --alpha -1 -o none >"$tmp/neg" 2>&1
[ $? -eq 2 ] || { echo "FAIL: --alpha -1 not refused with exit 2"; fail=1; }
exit $fail
