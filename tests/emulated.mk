# tests/emulated.mk: the emulated multi-node cluster (jobscripts/emulated/):
# network namespaces, tbf-shaped links and a real Slurm with one slurmd per
# node.  Root only (else skipped); a kernel that refuses namespaces, veth
# or tbf skips them with start's reason.
EMULATED_TESTS = tests/emulated/emulated_cluster.sh
TESTS += $(EMULATED_TESTS)
dist_check_SCRIPTS += $(EMULATED_TESTS)
EXTRA_DIST += tests/emulated/emulated_lib.sh \
	jobscripts/emulated/start jobscripts/emulated/stop jobscripts/emulated/node \
	jobscripts/emulated/mpirun jobscripts/emulated/rsh jobscripts/emulated/lib.sh \
	jobscripts/emulated/site.sh jobscripts/emulated/sweep
