# tests/rows.mk: rb_reduce_rows (row-sparse input) against rb_reduce on
# 1, 2, 3, 5 and 8 ranks.
check_PROGRAMS += tests/test_rows
TESTS += tests/rows.sh
dist_check_SCRIPTS += tests/rows.sh

tests_test_rows_SOURCES = tests/test_rows.c
tests_test_rows_LDADD = $(BENCH_LIBS)

# The memory-floor probe (tests/floor_probe.c): built with the tests, run
# by hand (a measurement, no pass or fail).
check_PROGRAMS += tests/floor_probe
tests_floor_probe_SOURCES = tests/floor_probe.c
tests_floor_probe_LDADD = $(BENCH_LIBS)
