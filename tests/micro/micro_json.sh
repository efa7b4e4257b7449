#!/bin/sh
# rb_micro -J FILE: JSON lines that pandas reads
# (pd.read_json(lines=True)) with the same values as /micro/results and the
# run metadata of the archive's root; refused (exit 2) over an existing file
# without --force and with -o none.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

"$MPIRUN" 2 "$micro" --reducer dense,agsparse,s2,gossip -m 4K:16K -i 2 -x 1 --repeat 2 -P none \
    -o "$tmp/r.h5" -J "$tmp/r.jsonl" >"$tmp/out" 2>&1 ||
    { echo "FAIL: rb_micro -J exited $?"; cat "$tmp/out"; exit 1; }
/usr/bin/python3 - "$tmp/r.h5" "$tmp/r.jsonl" <<'PY' || fail=1
import sys, h5py, numpy as np, pandas as pd
f = h5py.File(sys.argv[1], "r")
h5 = pd.DataFrame(f["/micro/results"][...])
js = pd.read_json(sys.argv[2], lines=True)
# pandas' default float parser keeps about 15 digits after the decimal
# point: 0.0040445822371644865 read as 0.004044582237164 (1.2e-13 off), and
# %.17g prints numbers down to 1e-4 without an exponent, so up to ~1e-11
# off; the default read is held to 1e-10.  precise_float=True reads the 17
# digits exactly: equal to the bit there.
exact = pd.read_json(sys.argv[2], lines=True, precise_float=True)
if len(js) != len(h5):
    sys.exit("FAIL: %d JSON lines, %d HDF5 rows" % (len(js), len(h5)))
if set(js["schema"]) != {"reducerbench-jsonl/1"}:
    sys.exit("FAIL: schema %s" % set(js["schema"]))
for col in h5.columns:
    a, b = h5[col], js[col]
    if isinstance(a.iloc[0], bytes):
        same = (a.str.decode("ascii") == b).all()
    else:
        a, b, c = (x.astype(float).to_numpy() for x in (a, b, exact[col]))
        same = np.array_equal(a, c, equal_nan=True) and np.allclose(a, b, rtol=1e-10, atol=0,
                                                                    equal_nan=True)
    if not same:
        sys.exit("FAIL: column %s differs: HDF5 %s, JSON %s" % (col, list(h5[col]), list(js[col])))
for key in ("run_id", "hostname", "mpi_library_version", "command_line"):
    if not (js[key] == f.attrs[key]).all():
        sys.exit("FAIL: metadata %s: %s vs %s" % (key, js[key][0], f.attrs[key]))
if not (js["run_ranks"] == f.attrs["ranks"]).all():
    sys.exit("FAIL: the root's ranks is not run_ranks")
print("ok: %d rows, %d columns equal to /micro/results, metadata of the root" % (len(js), h5.shape[1]))
PY
ls "$tmp"/r.jsonl.tmp.* >/dev/null 2>&1 && { echo "FAIL: a temporary JSON file was left"; fail=1; }

before=$(md5sum <"$tmp/r.jsonl")
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 1 -x 0 -o "$tmp/s.h5" -J "$tmp/r.jsonl" >"$tmp/o2" 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: -J over an existing file exited $rc, expected 2"; fail=1; }
grep -q "refusing to overwrite existing .*r.jsonl (use --force)" "$tmp/o2" || { echo "FAIL: no reason given"; cat "$tmp/o2"; fail=1; }
[ -e "$tmp/s.h5" ] && { echo "FAIL: an archive was written although -J was refused"; fail=1; }
[ "$(md5sum <"$tmp/r.jsonl")" = "$before" ] || { echo "FAIL: the existing JSON file changed"; fail=1; }
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 1 -x 0 -o none -J "$tmp/n.jsonl" >"$tmp/o3" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "not with -o none" "$tmp/o3" || { echo "FAIL: -J with -o none: exit $rc"; cat "$tmp/o3"; fail=1; }
exit $fail
