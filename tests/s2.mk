# tests/s2.mk: count sketch unit tests and the s2 reducer on 1..8 ranks.
check_PROGRAMS += tests/lib/test_countsketch tests/lib/test_s2
tests_lib_test_countsketch_SOURCES = tests/lib/test_countsketch.c
tests_lib_test_countsketch_LDADD = $(LIBREDUCER)
tests_lib_test_s2_SOURCES = tests/lib/test_s2.c
tests_lib_test_s2_LDADD = $(BENCH_LIBS)
TESTS += tests/lib/test_countsketch tests/lib/s2.sh tests/sketch/sketch_bench.sh
dist_check_SCRIPTS += tests/lib/s2.sh tests/sketch/sketch_bench.sh
