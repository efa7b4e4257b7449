# Sourced by tests/slurm_*.sh: a private single-node Slurm cluster per test
# run (jobscripts/local/start), always stopped on exit, and helpers to wait
# for jobs and read archive attributes.
. "$top_srcdir/tests/slurm/cluster_lib.sh"
test_cluster slurm RB_SLURM_DIR local/stop "starting munged/slurmctld/slurmd needs root"

slurm_start() {
    "$JS/local/start" || fail "jobscripts/local/start failed (slurmctld slurmd slurm-client munge installed? apt-get install -y slurmctld slurmd slurm-client munge)"
    # shellcheck disable=SC1091
    . "$RB_SLURM_DIR/env"
}

. "$top_srcdir/tests/slurm/jobs_lib.sh"
