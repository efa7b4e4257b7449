# tests/emulated.mk: the emulated multi-node cluster (jobscripts/emulated/):
# network namespaces, tbf-shaped links and a real Slurm with one slurmd per
# node.  Each test starts its own cluster in a temporary state directory and
# always stops it.  Root only (else skipped); a kernel that refuses
# namespaces, veth or tbf skips them with start's reason, as a missing
# smpicc skips sim_wire.sh.
EMULATED_TESTS = tests/emulated/emulated_cluster.sh tests/emulated/sim_wire.sh
TESTS += $(EMULATED_TESTS)
dist_check_SCRIPTS += $(EMULATED_TESTS)
dist_check_DATA += tests/emulated/dense_time.c
EXTRA_DIST += tests/emulated/emulated_lib.sh \
	jobscripts/emulated/start jobscripts/emulated/stop jobscripts/emulated/node \
	jobscripts/emulated/mpirun jobscripts/emulated/rsh jobscripts/emulated/lib.sh \
	jobscripts/emulated/site.sh jobscripts/emulated/sweep jobscripts/emulated/sim-vs-wire.sh \
	jobscripts/sim/pingpong.c jobscripts/sim/platform-from-wire
