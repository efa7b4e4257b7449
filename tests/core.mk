# tests/core.mk: libreducer unit tests, the multi-rank test of the exact
# reducers and of the cost model.
check_PROGRAMS += tests/lib/test_sparse_unit tests/lib/test_reducers tests/lib/test_model
TESTS += tests/lib/test_sparse_unit tests/lib/reducers.sh tests/lib/model.sh
dist_check_SCRIPTS += tests/lib/reducers.sh tests/lib/model.sh

tests_lib_test_sparse_unit_SOURCES = tests/lib/test_sparse_unit.c
tests_lib_test_sparse_unit_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_sparse_unit_LDADD = $(LIBREDUCER)

tests_lib_test_reducers_SOURCES = tests/lib/test_reducers.c
tests_lib_test_reducers_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_reducers_LDADD = $(BENCH_LIBS)

tests_lib_test_model_SOURCES = tests/lib/test_model.c
tests_lib_test_model_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_model_LDADD = $(BENCH_LIBS)
