# tests/anchors.mk: the dense reference against OSU Micro-Benchmarks:
# what the timed call holds, and benchmarks/anchors/osu-vs-dense.
check_PROGRAMS += tests/test_timed
TESTS += tests/timed_region.sh
dist_check_SCRIPTS += tests/timed_region.sh

tests_test_timed_SOURCES = tests/test_timed.c
tests_test_timed_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_timed_LDADD = $(LIBREDUCER)

check_PROGRAMS += tests/osu_format_allreduce
TESTS += tests/osu_vs_dense.sh tests/osu_vs_dense_real.sh
dist_check_SCRIPTS += tests/osu_vs_dense.sh tests/osu_vs_dense_real.sh
tests_osu_format_allreduce_SOURCES = tests/osu_format_allreduce.c
EXTRA_DIST += benchmarks/anchors/osu-vs-dense
