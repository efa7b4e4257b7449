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

/* A private zeroed buffer of `bytes` whose pages take memory only once
 * written (an anonymous mapping, transparent huge pages off): a sparse
 * input filled with bench_gradgen_fill_zeroed holds only the pages of its
 * non-zeros, and reading the rest reads the kernel's zero page.  Under SMPI
 * one process holds every simulated rank's input: at 128 ranks x 32 MiB
 * (rows of 256 floats, row density 0.02) 4.3 GB become ~0.3 GB, the values
 * every rank's own.  NULL when the mapping fails. */
void *bench_ondemand_alloc(size_t bytes);
/* 1 under SMPI unless RB_SIM_ONDEMAND_INPUT=0 (then inputs are calloc'ed,
 * as before on-demand inputs existed): whether rb_micro holds each rank's
 * input with bench_ondemand_alloc. */
int bench_sim_ondemand_inputs(void);
/* All zero again, its pages given back; 0 or -1. */
int bench_ondemand_clear(void *p, size_t bytes);
void bench_ondemand_free(void *p, size_t bytes);

/* SEC seconds of modelled compute (a training iteration's forward/backward):
 * charged to simulated time under SMPI, a busy loop on real runs. */
void bench_sim_compute(double sec);

#endif
