# tests/gossip.mk: the gossip reducer.  One C program, one mode per
# property; each script runs it over the rank counts that property needs.
check_PROGRAMS += tests/lib/test_gossip
tests_lib_test_gossip_CPPFLAGS = $(AM_CPPFLAGS)
tests_lib_test_gossip_SOURCES = tests/lib/test_gossip.c
tests_lib_test_gossip_LDADD = $(LIBREDUCER)
GOSSIP_TESTS = tests/lib/gossip_exact.sh tests/lib/gossip_spread.sh \
	tests/lib/gossip_rotation.sh tests/lib/gossip_async.sh tests/lib/gossip_options.sh \
	tests/lib/gossip_wire.sh
TESTS += $(GOSSIP_TESTS)
dist_check_SCRIPTS += $(GOSSIP_TESTS) tests/lib/ranks.sh
