# tests/slurm.mk: the sbatch scripts against a real single-node Slurm.
# Each test starts its own cluster (jobscripts/local/start) in a
# unique temporary directory and always stops it; they need root (else
# skipped) and install slurmctld slurmd slurm-client munge with apt-get when
# missing.  About 1 min each on 2 busy cores; they run in parallel.
SLURM_TESTS = tests/slurm/slurm_jobs.sh tests/slurm/slurm_array.sh tests/slurm/slurm_cluster.sh \
	tests/slurm/slurm_requeue.sh
TESTS += $(SLURM_TESTS) tests/slurm/jobscripts_args.sh tests/slurm/jobscripts_duplicate.sh \
	tests/slurm/jobscripts_generated.sh
dist_check_SCRIPTS += $(SLURM_TESTS) tests/slurm/jobscripts_args.sh tests/slurm/jobscripts_duplicate.sh \
	tests/slurm/jobscripts_generated.sh
EXTRA_DIST += tests/slurm/slurm_lib.sh tests/slurm/cluster_lib.sh tests/slurm/jobs_lib.sh jobscripts/lib.sh jobscripts/submit jobscripts/main.sh \
	jobscripts/generate \
	jobscripts/local/start jobscripts/local/stop jobscripts/local/common.sh \
	jobscripts/p100/micro.sbatch jobscripts/p100/train.sbatch jobscripts/p100/scaling.sbatch \
	jobscripts/knl/micro.sbatch jobscripts/knl/train.sbatch jobscripts/knl/scaling.sbatch \
	jobscripts/generic/micro.sbatch jobscripts/generic/train.sbatch jobscripts/generic/scaling.sbatch
