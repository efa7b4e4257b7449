#!/bin/sh
# Device API on 1 and 3 ranks: with a GPU, every reducer on device buffers
# matches its host path (3 ranks share the GPU: transport auto = staged);
# without one, clean RB_ERR_DEVICE failures on every rank.
prog="$top_builddir/tests/gpu/gpu_device"
# In a sanitizer build, LeakSanitizer reports blocks the CUDA runtime leaks
# when its driver probe fails (no GPU): they come from a library it loads
# and unloads again, so no suppression can name them.  Our own leaks are
# still checked by the other tests of the same code paths.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
"$MPIRUN" 1 "$prog" || exit 1
"$MPIRUN" 3 "$prog" || exit 1
