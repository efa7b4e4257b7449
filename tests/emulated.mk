# tests/emulated.mk: the emulated multi-node cluster (jobscripts/emulated/):
# each test starts its own cluster in a temporary state directory and always
# stops it; as root only (else skipped, as without namespaces or smpicc).
EMULATED_TESTS = tests/emulated/sim_wire.sh
TESTS += $(EMULATED_TESTS)
dist_check_SCRIPTS += $(EMULATED_TESTS)
dist_check_DATA += tests/emulated/dense_time.c
EXTRA_DIST += jobscripts/sim/pingpong.c jobscripts/sim/platform-from-wire \
	jobscripts/emulated/sim-vs-wire.sh jobscripts/emulated/start jobscripts/emulated/stop \
	jobscripts/emulated/node jobscripts/emulated/mpirun jobscripts/emulated/rsh \
	jobscripts/emulated/lib.sh jobscripts/emulated/site.sh
