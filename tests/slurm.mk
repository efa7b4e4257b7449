# tests/slurm.mk
