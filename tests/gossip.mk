# tests/gossip.mk: the gossip reducer.  One C program, one mode per
# property; each script runs it over the rank counts that property needs.
check_PROGRAMS += tests/test_gossip
tests_test_gossip_CPPFLAGS = $(AM_CPPFLAGS)
tests_test_gossip_SOURCES = tests/test_gossip.c
tests_test_gossip_LDADD = $(LIBREDUCER)
GOSSIP_TESTS = tests/gossip_exact.sh tests/gossip_spread.sh \
	tests/gossip_rotation.sh tests/gossip_async.sh tests/gossip_options.sh \
	tests/gossip_wire.sh
TESTS += $(GOSSIP_TESTS)
dist_check_SCRIPTS += $(GOSSIP_TESTS) tests/gossip-run.sh
