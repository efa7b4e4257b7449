#!/bin/sh
# configure refuses a GPU architecture the CUDA toolkit cannot build, with
# a message that says what to do (CUDA 13 cannot build sm_60 for P100).
nvcc=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
if [ -z "$nvcc" ]; then
    echo "SKIP: no nvcc on PATH or in /usr/local/cuda/bin" >&2
    exit 77
fi
archs=$("$nvcc" --list-gpu-code 2>/dev/null | sed -n 's/^sm_//p' | tr '\n' ' ')
case " $archs " in
*" 60 "*) echo "SKIP: this nvcc can build sm_60 (CUDA <= 12): nothing to refuse" >&2; exit 77 ;;
esac
dir=$(mktemp -d "${TMPDIR:-/tmp}/rb-gpuconf.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 99
"$top_srcdir/configure" --with-cuda --with-cuda-arch=90,60 >out.log 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    echo "FAIL: configure --with-cuda-arch=90,60 succeeded with nvcc that builds: $archs" >&2
    exit 1
fi
if grep -q "cannot compile and link a CUDA runtime program" out.log; then
    # nvcc is here but its runtime library is not (a toolkit without
    # libcudart): the architecture check is never reached.
    echo "SKIP: nvcc found but the CUDA runtime does not link:" >&2
    tail -1 out.log >&2
    exit 77
fi
if ! grep -q "cannot target sm_60" out.log || ! grep -q "CUDA <= 12" out.log; then
    echo "FAIL: configure failed without the expected message:" >&2
    tail -5 out.log >&2
    exit 1
fi
grep "cannot target sm_60" out.log
exit 0
