# tests/anchors.mk: the dense reference against OSU Micro-Benchmarks:
# what the timed call holds, and benchmarks/anchors/osu-vs-dense.
check_PROGRAMS += tests/lib/test_timed
TESTS += tests/lib/timed_region.sh
dist_check_SCRIPTS += tests/lib/timed_region.sh

tests_lib_test_timed_SOURCES = tests/lib/test_timed.c
tests_lib_test_timed_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_timed_LDADD = $(LIBREDUCER)

check_PROGRAMS += tests/anchors/osu_format_allreduce
TESTS += tests/anchors/osu_vs_dense.sh tests/anchors/osu_vs_dense_real.sh
dist_check_SCRIPTS += tests/anchors/osu_vs_dense.sh tests/anchors/osu_vs_dense_real.sh
tests_anchors_osu_format_allreduce_SOURCES = tests/anchors/osu_format_allreduce.c
EXTRA_DIST += benchmarks/anchors/osu-vs-dense
