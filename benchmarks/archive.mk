# Results archive (HDF5), run metadata, PAPI, hwloc: issue 5.
benchmarks_libbench_a_SOURCES += \
	benchmarks/archive.h benchmarks/archive.c \
	benchmarks/metadata.h benchmarks/metadata.c \
	benchmarks/bench_papi.h benchmarks/bench_papi.c \
	benchmarks/topology.h benchmarks/topology.c

# The git revision recorded in every result file, regenerated on every
# build but rewritten only when it changes.  Outside a git checkout (a
# release tarball, make distcheck) it is "unknown".
benchmarks/rb_gitrev.h: rb-gitrev-force
	@$(MKDIR_P) benchmarks; \
	rev=unknown; \
	if test -d '$(top_srcdir)/.git' || test -f '$(top_srcdir)/.git'; then \
	  rev=`cd '$(top_srcdir)' && git describe --always --dirty 2>/dev/null` || rev=unknown; \
	  test -n "$$rev" || rev=unknown; \
	fi; \
	echo "#define RB_GIT_REVISION \"$$rev\"" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
.PHONY: rb-gitrev-force
benchmarks/libbench_a-metadata.$(OBJEXT): benchmarks/rb_gitrev.h
CLEANFILES += benchmarks/rb_gitrev.h

# Archive tools.
dist_bin_SCRIPTS += analysis/rb-archive
