#!/bin/sh
# Memory need known before the run (issue 25), rb_train's side: it prints
# what a rank will hold (data as loaded; model, optimiser, reducer and
# batch buffers computed) and the limit, refuses with exit 2 and both
# numbers before the model is built when the need is larger than -M, the
# node's share under Slurm, or MemAvailable, and records both in the
# archive; the need is close to what the process really holds.
train="$top_builddir/benchmarks/rb_train"
[ -x "$train" ] || { echo "SKIP: rb_train not built (no BLAS)"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

refused() {  # NAME WANT ARGS...: exit 2, WANT in the output, refused before the model
    name=$1 want=$2; shift 2
    "$@" >"$tmp/$name" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "$name: exited $rc, expected 2: $(tail -2 "$tmp/$name")"
    grep -q "$want" "$tmp/$name" || bad "$name: no '$want': $(tail -2 "$tmp/$name")"
    grep -q "^rb_train: model" "$tmp/$name" && bad "$name: the model was built before the refusal"
    ls "$tmp"/"$name".h5* >/dev/null 2>&1 && bad "$name: a file was left: $(ls "$tmp")"
}
refused m1 "needs [0-9.e-]* GiB per rank (data .*), more than the 0.000977 GiB a rank may hold (-M)" \
    "$MPIRUN" 2 "$train" --model lenet --iterations 2 -M 1M -o "$tmp/m1.h5"
refused slurm "SLURM_MEM_PER_NODE / 2 rank(s) on the node" \
    env SLURM_MEM_PER_NODE=100 "$MPIRUN" 2 -x SLURM_MEM_PER_NODE "$train" --model lenet \
    --batch 4096 --iterations 2 -o none
# Too large for this machine (activations of 65536 samples x 65536 hidden
# units): refused from MemAvailable, not found by the OOM killer.
refused avail "MemAvailable / 2 rank(s) on the node" \
    "$MPIRUN" 2 "$train" --model wordlm --batch 65536 --hidden 65536 --iterations 1 -o none

# A run that fits: the preamble's line, the archive's figures, and the need
# against the largest resident set of the ranks (the process's own MPI and
# OpenBLAS add some 20-60 MiB the count leaves out).
# Under AddressSanitizer the shadow memory and redzones add to the resident
# set: there the need is only checked not to exceed it by much.
asan=0
grep -q "__asan_init" "$train" 2>/dev/null && asan=1
/usr/bin/python3 - "$MPIRUN" "$train" "$tmp" "$asan" <<'PY' || fail=1
import re, resource, subprocess, sys, h5py
mpirun, train, tmp, asan = sys.argv[1:5]
out = subprocess.run([mpirun, "1", train, "--model", "lenet", "--batch", "4096", "--iterations", "2",
                      "-o", tmp + "/ok.h5"], capture_output=True, text=True)
if out.returncode:
    sys.exit("FAIL: a run that fits exited %d: %s" % (out.returncode, out.stdout[-400:] + out.stderr[-400:]))
m = re.search(r"^memory: need ([0-9.e+]+) MiB per rank \(data .*\), limit ([0-9.e+]+) MiB \(MemAvailable / 1 rank",
              out.stdout, re.M)
if not m:
    sys.exit("FAIL: no memory line: " + out.stdout[:400])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0   # MiB, the largest child
a = h5py.File(tmp + "/ok.h5", "r").attrs
need, limit = a["mem_need_bytes"] / 1048576.0, a["mem_limit_bytes"] / 1048576.0
if abs(need - float(m.group(1))) > 0.01 * need or not limit > 0:
    sys.exit("FAIL: archive need %.4g MiB limit %.4g MiB vs printed %s" % (need, limit, m.group(1)))
low = 0.0 if asan == "1" else 0.75
if not (low * rss <= need <= 1.25 * rss):
    sys.exit("FAIL: need %.1f MiB but the rank's largest resident set was %.1f MiB" % (need, rss))
if asan == "1":
    print("AddressSanitizer build: the resident set includes its shadow memory; lower bound not checked")
print("ok: need %.1f MiB per rank, resident %.1f MiB; archive records need and limit" % (need, rss))
PY
exit $fail
