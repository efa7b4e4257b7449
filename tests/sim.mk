# tests/sim.mk: SimGrid SMPI; the test builds its own SMPI rb_micro.
SIM_TESTS = tests/sim/sim_smpi.sh tests/sim/sim_claims.sh
TESTS += $(SIM_TESTS)
dist_check_SCRIPTS += $(SIM_TESTS)
EXTRA_DIST += jobscripts/sim/rb-smpirun jobscripts/sim/platforms/thismachine.xml \
	jobscripts/sim/platforms/p100-ib-edr.xml jobscripts/sim/platforms/knl-aries.xml \
	jobscripts/sim/platforms/eth1g.xml jobscripts/sim/scaling.sh jobscripts/sim/train-model.sh \
	jobscripts/sim/s2-eth.sh jobscripts/sim/s2-iteration.sh jobscripts/sim/validate.sh \
	jobscripts/sim/ranks.sh jobscripts/sim/collcheck.sh jobscripts/sim/collcheck.c \
	jobscripts/sim/claims.sh
