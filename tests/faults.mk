# Faults on the wire and from outside end in bounded time, named, and keep
# what was measured: the signals that end a job and SIGKILL (local ranks),
# the progress watchdog (a stopped peer, local ranks), a link down and a
# rank killed on the emulated 2-node cluster (root and network namespaces,
# else skipped), rb_train stopped twice and resumed from its checkpoints, a
# disk that fills and a file size limit under a sweep.
# Each under a minute on 2 busy cores.
FAULT_TESTS = tests/faults/fault_signals.sh tests/faults/fault_kill.sh tests/faults/fault_stall.sh \
	tests/faults/fault_link.sh tests/faults/fault_peer.sh tests/faults/fault_resume.sh \
	tests/faults/fault_disk.sh
TESTS += $(FAULT_TESTS)
dist_check_SCRIPTS += $(FAULT_TESTS)
EXTRA_DIST += tests/faults/fault_lib.sh tests/faults/emul_lib.sh \
	jobscripts/emulated/start jobscripts/emulated/stop jobscripts/emulated/node jobscripts/emulated/mpirun \
	jobscripts/emulated/rsh jobscripts/emulated/lib.sh jobscripts/emulated/site.sh
