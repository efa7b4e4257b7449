#!/bin/sh
# rb_micro --repeat N: N rows per (reducer, size), their repetition in
# the archive's repeat column (0..N-1), measured interleaved (repetition 0
# of every reducer before repetition 1 of any), and rb-report pools them
# into one point with n = N.
micro="$top_builddir/benchmarks/rb_micro"
report="$top_srcdir/analysis/rb-report"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

"$MPIRUN" 2 "$micro" --reducer dense,agsparse -m 4K:8K -i 2 -x 1 --repeat 3 -o "$tmp/r.h5" \
    >"$tmp/out" 2>&1 || { echo "FAIL: rb_micro --repeat 3 exited $?"; cat "$tmp/out"; exit 1; }
n=$(grep -c "^# repetition [123] of 3" "$tmp/out")
[ "$n" -eq 6 ] || { echo "FAIL: $n repetition headers, expected 6"; fail=1; }
/usr/bin/python3 - "$tmp/r.h5" <<'PY' || fail=1
import sys, h5py, pandas as pd
d = pd.DataFrame(h5py.File(sys.argv[1], "r")["/micro/results"][...])
d["reducer"] = d["reducer"].str.decode("ascii")
order = list(zip(d["repeat"], d["reducer"], d["size_bytes"]))
want = [(r, red, s) for r in range(3) for red in ("dense", "agsparse") for s in (4096, 8192)]
if order != want:
    sys.exit("FAIL: rows (repeat, reducer, size) %s, expected %s" % (order, want))
if (d["wrong"] != 0).any() or (d["checked"] != 1).any():
    sys.exit("FAIL: a repetition was not validated clean")
print("ok: 12 rows, repetitions 0-2 interleaved over 2 reducers, all validated")
PY
mkdir -p "$tmp/in" && cp "$tmp/r.h5" "$tmp/in/"
"$report" "$tmp/in" -o "$tmp/rep" >"$tmp/rep.out" 2>&1 || { echo "FAIL: rb-report exited $?"; cat "$tmp/rep.out"; fail=1; }
/usr/bin/python3 - "$tmp/rep/tables" <<'PY' || fail=1
import sys, glob, pandas as pd
lat = pd.read_csv(sys.argv[1] + "/micro_latency.csv") if glob.glob(sys.argv[1] + "/micro_latency.csv") else None
if lat is None:
    sys.exit("FAIL: no latency table: %s" % glob.glob(sys.argv[1] + "/*"))
if not (lat["n_repeats"] == 3).all():
    sys.exit("FAIL: report points have n_repeats %s, expected 3" % sorted(set(lat["n_repeats"])))
print("ok: rb-report pools the 3 repetitions of each point")
PY
exit $fail
