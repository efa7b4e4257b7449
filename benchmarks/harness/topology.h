/* Node topology (hwloc) for the run metadata, and binding of ranks to cores
 * or packages by their LOCAL rank (SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK,
 * MPI_COMM_TYPE_SHARED; never SLURM_PROCID, which is global). */
#ifndef BENCH_TOPOLOGY_H
#define BENCH_TOPOLOGY_H

#include <hdf5.h>
#include <mpi.h>

typedef enum { BENCH_BIND_NONE = 0, BENCH_BIND_CORE = 1, BENCH_BIND_SOCKET = 2 } bench_bind_mode;

/* "none" | "core" | "socket"; 0 on success, -1 otherwise. */
int bench_bind_parse(const char *s, bench_bind_mode *mode);
const char *bench_bind_name(bench_bind_mode mode);
/* Collective.  Bind this process: core = the (local rank mod cores)-th
 * core, socket = packages shared out evenly among the node's ranks.  The
 * mode and the cpuset obtained are remembered for bench_topology_write.
 * Returns 0, or non-zero on every rank (message printed by the failing
 * rank) when binding was asked for and failed or hwloc is absent. */
int bench_bind(MPI_Comm comm, bench_bind_mode mode);
/* Collective.  On root's open file: group /topology with rank 0's node
 * summary (attributes) and full hwloc XML (dataset "xml"), and the
 * compound dataset /topology/binding (one row per rank: what each rank is
 * actually bound to, whether bench_bind or the launcher did it).  Returns
 * non-zero on every rank if root failed to write. */
int bench_topology_write(MPI_Comm comm, int root, hid_t file);
/* "2.9.0", or "not built". */
const char *bench_hwloc_version(void);

#endif
