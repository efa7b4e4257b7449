# Sourced by every test (AM_TESTS_ENVIRONMENT).  Open MPI as root, more
# ranks than cores, sanitizer settings.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Containers often forbid cross-memory attach; shared memory still works.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Open MPI's internals leak by design; report only our leaks.
export LSAN_OPTIONS="suppressions=${top_srcdir}/tests/lsan.supp:print_suppressions=0"
# Slow unwinding lets LSan see through Open MPI's and CUDA's frame-pointer-less
# libraries, so the suppressions below match them.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MPIRUN="${top_srcdir}/tests/mpirun.sh"
