# tests/rows.mk: rb_reduce_rows (row-sparse input) against rb_reduce on
# 1, 2, 3, 5, 6, 8 and 11 ranks (11: 1/p is inexact, more ranks than cores);
# the reducers' state between calls saved and loaded (checkpoints).
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

# Reducer state for checkpoints: saved, loaded, and the calls after equal.
check_PROGRAMS += tests/lib/test_state
TESTS += tests/lib/state.sh
dist_check_SCRIPTS += tests/lib/state.sh
tests_lib_test_state_SOURCES = tests/lib/test_state.c
tests_lib_test_state_LDADD = $(BENCH_LIBS)
