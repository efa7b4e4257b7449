/* Where a run's ranks talked and who started them: the network (an
 * emulated cluster, a simulated platform, one node, or not recorded), its
 * link rate and transport, the launcher, and the Slurm step's allocation.
 * Root attributes network*, launcher*, slurm_step_* (results/README.md). */
#ifndef BENCH_NETINFO_H
#define BENCH_NETINFO_H

#include <hdf5.h>

/* What started the ranks, from the environment they inherited: "srun"
 * (Slurm's PMIx: PMIX_NAMESPACE slurm.pmix.*), "mpirun" (Open MPI's ORTE:
 * OMPI_COMM_WORLD_SIZE), "smpirun" (a SimGrid build), "hydra" (MPICH and
 * Intel MPI: PMI_RANK), "none" (a singleton). */
const char *bench_launcher(void);

/* Writes the network, launcher and Slurm step attributes on FILE.  NODES:
 * distinct hosts of the run.  The network is read from the file named by
 * RB_NETWORK_INFO (key=value lines: network, link_rate, link_bps,
 * transport, shaper, topology; jobscripts/emulated/start writes one and
 * its nodes export the variable); a file that cannot be read or holds a
 * malformed value is recorded as such, never taken for a network. */
int bench_netinfo_write_meta(hid_t file, int nodes);

#endif
