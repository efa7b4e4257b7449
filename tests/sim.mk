# tests/sim.mk
