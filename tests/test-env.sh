# Sourced by every test (AM_TESTS_ENVIRONMENT).  Open MPI as root, more
# ranks than cores, sanitizer settings.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Containers often forbid cross-memory attach; shared memory still works.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Open MPI's internals leak by design; report only our leaks.  use_tls=0:
# LeakSanitizer (GCC 12) crashes scanning a dynamic-TLS block with a bogus
# range when a singleton MPI process exits ("Tracer caught signal 11",
# "DTLS 13 at 0x3d40"; every rb_micro usage error, on this machine since
# 2026-11-24, from before any of that day's changes).  Not using TLS as a
# root can only add leak reports, never hide one.
export LSAN_OPTIONS="suppressions=${top_srcdir}/tests/lsan.supp:print_suppressions=0:use_tls=0"
# Slow unwinding lets LSan see through Open MPI's and CUDA's frame-pointer-less
# libraries, so the suppressions below match them.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MPIRUN="${top_srcdir}/tests/mpirun.sh"
