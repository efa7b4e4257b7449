# tests/rows.mk: rb_reduce_rows (row-sparse input) against rb_reduce on
# 1, 2, 3, 5, 6, 8 and 11 ranks (11: 1/p is inexact, more ranks than cores).
check_PROGRAMS += tests/lib/test_rows
TESTS += tests/lib/rows.sh
dist_check_SCRIPTS += tests/lib/rows.sh

tests_lib_test_rows_SOURCES = tests/lib/test_rows.c
tests_lib_test_rows_LDADD = $(BENCH_LIBS)

# The memory-floor probe (tests/lib/floor_probe.c): built with the tests, run
# by hand (a measurement, no pass or fail).
check_PROGRAMS += tests/lib/floor_probe
tests_lib_floor_probe_SOURCES = tests/lib/floor_probe.c
tests_lib_floor_probe_LDADD = $(BENCH_LIBS)
