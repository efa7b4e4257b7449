# tests/s2.mk: count sketch unit tests and the s2 reducer on 1..8 ranks.
check_PROGRAMS += tests/test_countsketch tests/test_s2
tests_test_countsketch_SOURCES = tests/test_countsketch.c
tests_test_countsketch_LDADD = $(LIBREDUCER)
tests_test_s2_SOURCES = tests/test_s2.c
tests_test_s2_LDADD = $(BENCH_LIBS)
TESTS += tests/test_countsketch tests/s2.sh tests/sketch_bench.sh
dist_check_SCRIPTS += tests/s2.sh tests/sketch_bench.sh
