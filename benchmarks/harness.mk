# benchmarks/harness: what every program shares (harness.h says what lives
# where).  Results archive, run metadata, PAPI, hwloc; SimGrid
# SMPI support; synthetic gradients, device buffers, helpers.  One job per
# file; libbench.a exports only bench_ names (tests/arch/harness_symbols.sh).
benchmarks_libbench_a_SOURCES += \
	benchmarks/harness/harness.h \
	benchmarks/harness/h5attr.h benchmarks/harness/h5attr.c \
	benchmarks/harness/bench_common.h \
	benchmarks/harness/bench_fail.h benchmarks/harness/bench_fail.c \
	benchmarks/harness/bench_usage.h benchmarks/harness/bench_usage.c \
	benchmarks/harness/bench_init.h benchmarks/harness/bench_init.c \
	benchmarks/harness/bench_parse.h benchmarks/harness/bench_parse.c \
	benchmarks/harness/bench_agree.h benchmarks/harness/bench_agree.c \
	benchmarks/harness/bench_quantile.h benchmarks/harness/bench_quantile.c \
	benchmarks/harness/bench_watchdog.h benchmarks/harness/bench_watchdog.c \
	benchmarks/harness/bench_stall.h benchmarks/harness/bench_stall.c \
	benchmarks/harness/bench_keep.h benchmarks/harness/bench_keep.c \
	benchmarks/harness/bench_fault.h benchmarks/harness/bench_fault.c \
	benchmarks/harness/bench_cli.h benchmarks/harness/bench_cli.c \
	benchmarks/harness/bench_device.h benchmarks/harness/bench_device.c \
	benchmarks/harness/gradgen.h benchmarks/harness/gradgen.c \
	benchmarks/harness/simmeta.h benchmarks/harness/simmeta.c \
	benchmarks/harness/sha256.h benchmarks/harness/sha256.c \
	benchmarks/harness/trace.h benchmarks/harness/trace.c \
	benchmarks/harness/bench_papi.h benchmarks/harness/bench_papi.c \
	benchmarks/harness/topology.h benchmarks/harness/topology.c \
	benchmarks/harness/metadata.h benchmarks/harness/metadata.c \
	benchmarks/harness/netinfo.h benchmarks/harness/netinfo.c \
	benchmarks/harness/machine_load.h benchmarks/harness/machine_load.c \
	benchmarks/harness/archive.h benchmarks/harness/archive.c \
	benchmarks/harness/tmpfiles.h benchmarks/harness/tmpfiles.c \
	benchmarks/harness/memneed.h benchmarks/harness/memneed.c

# The git revision recorded in every result file, regenerated on every
# build but rewritten only when it changes.  Outside a git checkout (a
# release tarball, make distcheck) it is "unknown".
benchmarks/harness/rb_gitrev.h: rb-gitrev-force
	@$(MKDIR_P) benchmarks/harness; \
	rev=unknown; \
	if test -d '$(top_srcdir)/.git' || test -f '$(top_srcdir)/.git'; then \
	  rev=`cd '$(top_srcdir)' && git describe --always --dirty 2>/dev/null` || rev=unknown; \
	  test -n "$$rev" || rev=unknown; \
	fi; \
	echo "#define RB_GIT_REVISION \"$$rev\"" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
.PHONY: rb-gitrev-force
benchmarks/harness/libbench_a-metadata.$(OBJEXT): benchmarks/harness/rb_gitrev.h
CLEANFILES += benchmarks/harness/rb_gitrev.h
