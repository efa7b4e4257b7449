# tests/core.mk: libreducer unit tests and the multi-rank test of the exact
# reducers (issue 2).
check_PROGRAMS += tests/test_sparse_unit tests/test_reducers
TESTS += tests/test_sparse_unit tests/reducers.sh
dist_check_SCRIPTS += tests/reducers.sh

tests_test_sparse_unit_SOURCES = tests/test_sparse_unit.c
tests_test_sparse_unit_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_sparse_unit_LDADD = $(LIBREDUCER)

tests_test_reducers_SOURCES = tests/test_reducers.c
tests_test_reducers_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_reducers_LDADD = $(BENCH_LIBS)
