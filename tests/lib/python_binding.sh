#!/bin/sh
# The Python binding (rbreducer, src/python) on 2 ranks: binding_checks.py.
# Skipped (77) when configure built no binding, or without torch.
py=/usr/bin/python3
mod=$(ls "$top_builddir"/src/python/.libs/_rbreducer*.so 2>/dev/null | head -1)
[ -n "$mod" ] || { echo "SKIP: no Python binding built (configure: Python binding no)" >&2; exit 77; }
$py -c 'import torch, numpy, mpi4py' 2>/dev/null ||
    { echo "SKIP: python3-torch, python3-numpy or python3-mpi4py missing" >&2; exit 77; }
export PYTHONPATH="$top_srcdir/src/python:$top_builddir/src/python/.libs${PYTHONPATH:+:$PYTHONPATH}"
out=$(timeout 120 "$MPIRUN" 2 $py "$top_srcdir/tests/lib/binding_checks.py" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: binding_checks.py exited $rc"; exit 1; }
echo "$out" | grep -q '^ok: 2 of 2 ranks passed$' || { echo "FAIL: not every rank passed"; exit 1; }
