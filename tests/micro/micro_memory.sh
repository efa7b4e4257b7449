#!/bin/sh
# Memory need known before the run: rb_micro prints its need per
# rank and the limit, records both, and refuses with exit 2 and both
# numbers, before allocating or creating any file, when the need is larger
# than -M or than the node's share (SLURM_MEM_PER_NODE here); the
# per-CPU share is SLURM_MEM_PER_CPU x SLURM_CPUS_PER_TASK.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

"$MPIRUN" 2 "$micro" -m 1G:1G -M 256M -o "$tmp/big.h5" >"$tmp/big" 2>&1
rc=$?
[ $rc -eq 2 ] || bad "-m 1G -M 256M exited $rc, expected 2"
grep -q "needs [0-9.]* GiB per rank .* more than the 0.25 GiB a rank may hold (-M)" "$tmp/big" ||
    bad "no message with both numbers: $(head -3 "$tmp/big")"
ls "$tmp"/big.h5* >/dev/null 2>&1 && bad "a file was left: $(ls "$tmp")"

SLURM_MEM_PER_NODE=1 "$MPIRUN" 2 -x SLURM_MEM_PER_NODE "$micro" -m 4M:4M -o none >"$tmp/slurm" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "SLURM_MEM_PER_NODE / 2 rank(s) on the node" "$tmp/slurm" ||
    bad "SLURM_MEM_PER_NODE=1 (MB): exit $rc: $(head -2 "$tmp/slurm")"

# SLURM_MEM_PER_CPU is per CPU: a rank may hold it times its
# SLURM_CPUS_PER_TASK, whatever the ranks on the node (--help says so).
env SLURM_MEM_PER_CPU=100 SLURM_CPUS_PER_TASK=2 "$MPIRUN" 2 -x SLURM_MEM_PER_CPU -x SLURM_CPUS_PER_TASK \
    "$micro" --reducer dense -m 4K:4K -i 1 -x 0 -P none -o none >"$tmp/percpu" 2>&1 ||
    bad "SLURM_MEM_PER_CPU=100 SLURM_CPUS_PER_TASK=2: exit $?: $(tail -2 "$tmp/percpu")"
grep -q "^# memory: need .* limit 200 MiB (SLURM_MEM_PER_CPU x 2 cpu(s) per task)" "$tmp/percpu" ||
    bad "SLURM_MEM_PER_CPU=100 x 2 cpus: $(grep '^# memory' "$tmp/percpu")"
"$micro" --help | tr -s ' \n' ' ' | grep -q "SLURM_MEM_PER_CPU x SLURM_CPUS_PER_TASK" ||
    bad "--help does not say the per-CPU limit is multiplied by SLURM_CPUS_PER_TASK"

"$MPIRUN" 2 "$micro" --reducer dense,s2 -m 4K:16K -i 2 -x 1 -P none -o "$tmp/ok.h5" >"$tmp/ok" 2>&1 ||
    bad "a small run exited $?"
grep -q "^# memory: need [0-9.e+]* MiB per rank, limit [0-9.e+]* MiB (MemAvailable / 2 rank(s) on the node)" "$tmp/ok" ||
    bad "no memory line in the preamble: $(grep '^# memory' "$tmp/ok")"
/usr/bin/python3 - "$tmp/ok.h5" <<'PY' || fail=1
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
need, lim = a["mem_need_bytes"], a["mem_limit_bytes"]
# At 16 KiB: input and work (2 x 16 KiB), the exact average (4.25 x 16 KiB).
if not (16384 * 6 <= need <= 1 << 24) or not lim > need:
    sys.exit("FAIL: mem_need_bytes %r, mem_limit_bytes %r" % (need, lim))
print("ok: need %.0f B, limit %.0f B recorded" % (need, lim))
PY
exit $fail
