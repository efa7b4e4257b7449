# tests/lib.mk: libreducer (src/), the tests under tests/lib.  Unit tests of
# the sparse scans and the count sketch; the multi-rank tests, each run by
# tests/lib/ranks.sh over the rank counts it needs: the exact reducers
# against the exact average, the cost model's bytes against real calls,
# rb_reduce_rows against rb_reduce (1..11 ranks; 11: 1/p is inexact, more
# ranks than cores), the reducers' state saved and loaded (checkpoints),
# s2, gossip (one mode per property), what the timed call holds; error
# texts; oktopk's global top-k against the exact one; the library outside
# the tree (the installed shared library through pkg-config, the Python
# binding).
check_PROGRAMS += tests/lib/test_sparse_unit tests/lib/test_reducers tests/lib/test_wire \
	tests/lib/test_agreement tests/lib/test_values tests/lib/test_model \
	tests/lib/test_rows tests/lib/test_state tests/lib/test_countsketch tests/lib/test_s2 \
	tests/lib/test_gossip tests/lib/test_timed tests/lib/test_strerror
tests_lib_test_sparse_unit_SOURCES = tests/lib/test_sparse_unit.c
tests_lib_test_sparse_unit_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_sparse_unit_LDADD = $(LIBREDUCER)
# The multi-rank reducer tests, one concern each, on reducer_checks.c.
REDUCER_CHECKS = tests/lib/reducer_checks.c tests/lib/reducer_checks.h
tests_lib_test_reducers_SOURCES = tests/lib/test_reducers.c $(REDUCER_CHECKS)
tests_lib_test_reducers_LDADD = $(BENCH_LIBS)
tests_lib_test_wire_SOURCES = tests/lib/test_wire.c $(REDUCER_CHECKS)
tests_lib_test_wire_LDADD = $(BENCH_LIBS)
tests_lib_test_agreement_SOURCES = tests/lib/test_agreement.c $(REDUCER_CHECKS)
tests_lib_test_agreement_LDADD = $(BENCH_LIBS)
tests_lib_test_values_SOURCES = tests/lib/test_values.c $(REDUCER_CHECKS)
tests_lib_test_values_LDADD = $(BENCH_LIBS)
tests_lib_test_model_SOURCES = tests/lib/test_model.c
tests_lib_test_model_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_model_LDADD = $(BENCH_LIBS)
tests_lib_test_rows_SOURCES = tests/lib/test_rows.c
tests_lib_test_rows_LDADD = $(BENCH_LIBS)
tests_lib_test_state_SOURCES = tests/lib/test_state.c
tests_lib_test_state_LDADD = $(BENCH_LIBS)
tests_lib_test_countsketch_SOURCES = tests/lib/test_countsketch.c
tests_lib_test_countsketch_LDADD = $(LIBREDUCER)
tests_lib_test_s2_SOURCES = tests/lib/test_s2.c
tests_lib_test_s2_LDADD = $(BENCH_LIBS)
tests_lib_test_gossip_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_gossip_SOURCES = tests/lib/test_gossip.c tests/lib/gossip_checks.c tests/lib/gossip_checks.h
tests_lib_test_gossip_LDADD = $(LIBREDUCER)
tests_lib_test_timed_SOURCES = tests/lib/test_timed.c
tests_lib_test_timed_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_timed_LDADD = $(LIBREDUCER)
tests_lib_test_strerror_SOURCES = tests/lib/test_strerror.c
tests_lib_test_strerror_LDADD = $(LIBREDUCER)

LIB_TESTS = tests/lib/reducers.sh tests/lib/wire.sh tests/lib/agreement.sh tests/lib/values.sh \
	tests/lib/model.sh tests/lib/rows.sh tests/lib/state.sh \
	tests/lib/s2.sh tests/lib/gossip_exact.sh tests/lib/gossip_spread.sh \
	tests/lib/gossip_rotation.sh tests/lib/gossip_async.sh tests/lib/gossip_options.sh \
	tests/lib/gossip_wire.sh tests/lib/timed_region.sh tests/lib/oktopk_topk.sh \
	tests/lib/shared_install.sh tests/lib/python_binding.sh tests/lib/add_reducer.sh
TESTS += tests/lib/test_sparse_unit tests/lib/test_countsketch $(LIB_TESTS)
dist_check_SCRIPTS += $(LIB_TESTS) tests/lib/ranks.sh tests/lib/oktopk_topk_check.py \
	tests/lib/binding_checks.py
dist_check_DATA += tests/lib/pkgconfig_user.c tests/lib/reducer_example.c

# The memory-floor probe (tests/lib/floor_probe.c): built with the tests, run
# by hand (a measurement, no pass or fail).
check_PROGRAMS += tests/lib/floor_probe
tests_lib_floor_probe_SOURCES = tests/lib/floor_probe.c
tests_lib_floor_probe_LDADD = $(BENCH_LIBS)
