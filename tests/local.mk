# Tests.  Shell tests (*.sh) run under the environment below; MPI runs go
# through tests/mpirun.sh.
TEST_EXTENSIONS = .sh .py
SH_LOG_COMPILER = $(SHELL)
PY_LOG_COMPILER = /usr/bin/python3
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	export top_srcdir top_builddir; \
	. $(abs_top_srcdir)/tests/test-env.sh;
dist_check_SCRIPTS += tests/test-env.sh tests/mpirun.sh
dist_check_DATA += tests/lsan.supp

# One fragment per folder of tests/ (tests/X.mk registers tests/X/).
include tests/micro.mk
include tests/lib.mk
include tests/sketch.mk
include tests/harness.mk
include tests/archive.mk
include tests/train.mk
include tests/slurm.mk
include tests/emulated.mk
include tests/analysis.mk
include tests/gpu.mk
include tests/sim.mk
include tests/arch.mk
include tests/anchors.mk
include tests/workload.mk
include tests/faults.mk
