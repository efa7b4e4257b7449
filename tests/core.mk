# tests/core.mk: libreducer unit tests, the multi-rank test of the exact
# reducers and of the cost model.
check_PROGRAMS += tests/test_sparse_unit tests/test_reducers tests/test_model
TESTS += tests/test_sparse_unit tests/reducers.sh tests/model.sh
dist_check_SCRIPTS += tests/reducers.sh tests/model.sh

tests_test_sparse_unit_SOURCES = tests/test_sparse_unit.c
tests_test_sparse_unit_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_sparse_unit_LDADD = $(LIBREDUCER)

tests_test_reducers_SOURCES = tests/test_reducers.c
tests_test_reducers_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_reducers_LDADD = $(BENCH_LIBS)

tests_test_model_SOURCES = tests/test_model.c
tests_test_model_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_model_LDADD = $(BENCH_LIBS)
