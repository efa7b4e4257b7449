#!/bin/sh
# Memory need known before the run, rb_train's side: it prints
# what a rank will hold (data as loaded; model, optimiser, reducer and
# batch buffers computed) and the limit, refuses with exit 2 and both
# numbers before the model is built when the need is larger than -M, the
# node's share under Slurm, or MemAvailable, and records both in the
# archive; the need grows as what the process really holds.
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

# Runs that fit: the preamble's line and the archive's figures; and the
# need against what the rank really holds.  A rank's resident set also
# holds what no option changes (MPI, OpenBLAS and, in a CUDA build, the
# CUDA libraries: 80-250 MiB here), so the check compares the growth of
# the need from --batch 64 to --batch 4096 with the growth of the largest
# resident set of the ranks.  Under AddressSanitizer the resident set also
# holds shadow memory: there only the need's upper bound is checked.
asan=0
grep -q "__asan_init" "$train" 2>/dev/null && asan=1
/usr/bin/python3 - "$MPIRUN" "$train" "$tmp" "$asan" <<'PY' || fail=1
import os, re, subprocess, sys, h5py
mpirun, train, tmp, asan = sys.argv[1:5]

def run(batch):
    """(need MiB printed, largest resident set of the job in MiB) of one run."""
    h5, log = "%s/ok%d.h5" % (tmp, batch), "%s/ok%d.out" % (tmp, batch)
    with open(log, "w") as out:
        p = subprocess.Popen([mpirun, "1", train, "--model", "lenet", "--batch", str(batch),
                              "--iterations", "2", "-o", h5], stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)   # usage: mpirun and the ranks it waited for
    text = open(log).read()
    if os.waitstatus_to_exitcode(status):
        sys.exit("FAIL: --batch %d exited %d: %s" % (batch, os.waitstatus_to_exitcode(status), text[-400:]))
    m = re.search(r"^memory: need ([0-9.e+]+) MiB per rank \(data .*\), limit ([0-9.e+]+) MiB "
                  r"\(MemAvailable / 1 rank", text, re.M)
    if not m:
        sys.exit("FAIL: --batch %d: no memory line: %s" % (batch, text[:400]))
    a = h5py.File(h5, "r").attrs
    need, limit = a["mem_need_bytes"] / 1048576.0, a["mem_limit_bytes"] / 1048576.0
    if abs(need - float(m.group(1))) > 0.01 * need or not limit > 0:
        sys.exit("FAIL: archive need %.4g MiB limit %.4g MiB vs printed %s" % (need, limit, m.group(1)))
    return need, usage.ru_maxrss / 1024.0

need0, rss0 = run(64)
need1, rss1 = run(4096)
dneed, drss = need1 - need0, rss1 - rss0
print("need %.1f -> %.1f MiB (+%.1f), resident %.1f -> %.1f MiB (+%.1f)" % (need0, need1, dneed, rss0, rss1, drss))
low = 0.0 if asan == "1" else 0.75
if not (low * drss <= dneed <= 1.25 * drss):
    sys.exit("FAIL: from --batch 64 to 4096 the need grew by %.1f MiB, the resident set by %.1f MiB"
             % (dneed, drss))
if asan == "1":
    print("AddressSanitizer build: the growth of the resident set includes shadow memory; "
          "lower bound not checked")
print("ok: the need follows the resident set; the archive records need and limit")
PY
exit $fail
