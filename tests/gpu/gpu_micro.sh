#!/bin/sh
# rb_micro -d cuda validates every reducer on device buffers (2 ranks on
# one GPU: staged transport), and every reducer over NCCL on one rank.
if ! "$top_builddir/tests/gpu/gpu_kernels" --probe 2>/tmp/gpu_micro_probe.$$; then
    cat /tmp/gpu_micro_probe.$$ >&2; rm -f /tmp/gpu_micro_probe.$$
    echo "SKIP: rb_micro -d cuda needs a GPU" >&2
    exit 77
fi
rm -f /tmp/gpu_micro_probe.$$
micro="$top_builddir/benchmarks/rb_micro"
set -e
"$MPIRUN" 2 "$micro" -d cuda -m 4K:256K -i 3 -x 1 -c -o none -q --reducer all
"$MPIRUN" 1 "$micro" -d cuda -m 4K:4M -i 5 -x 2 -c -o none --reducer all -O transport=nccl
