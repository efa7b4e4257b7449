/* SimGrid SMPI support for the benchmarks: the archive's
 * simulation metadata, shared-malloc buffers for large simulated sweeps and
 * the compute model of --compute.  On a normal MPI build these are thin
 * fallbacks (malloc, a busy loop, simulated = 0). */
#ifndef BENCH_SIMMETA_H
#define BENCH_SIMMETA_H

#include <stddef.h>
#include <hdf5.h>

/* Root attributes: simulated (0/1); under SMPI also sim_platform (content
 * of $RB_SIM_PLATFORM), sim_platform_path, sim_platform_sha256,
 * simgrid_version, sim_calibration ($RB_SIM_CALIBRATION) and
 * sim_smpi_options ($RB_SIM_SMPI_OPTIONS, set by rb-smpirun).  0 on success. */
int bench_sim_write_meta(hid_t file);

/* 1 when built for SimGrid SMPI. */
int bench_sim_is_simulated(void);

/* Zeroed buffer of `bytes`; under SMPI and when `may_share` and bytes >=
 * $RB_SIM_SHARED_MIN (default 16 MiB), an SMPI shared buffer: every
 * simulated rank sees the same memory, so its values are garbage and must
 * never be validated or used as indices.  *shared tells which. */
void *bench_sim_alloc(size_t bytes, int may_share, int *shared);
void bench_sim_free(void *p, int shared);

/* SEC seconds of modelled compute (a training iteration's forward/backward):
 * charged to simulated time under SMPI, a busy loop on real runs. */
void bench_sim_compute(double sec);

#endif
