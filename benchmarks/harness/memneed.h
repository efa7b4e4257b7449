/* What a run will hold per rank, and what a rank may hold (memneed.c). */
#ifndef BENCH_MEMNEED_H
#define BENCH_MEMNEED_H

#include <mpi.h>
#include <stdint.h>

#include "reducer.h"

/* Bytes of reducer name's state for n elements, k non-zeros per rank, p
 * ranks: an upper bound of what it allocates, from its algorithm
 * (docs/wire-bytes.md's streams). */
double bench_reducer_state_bytes(const char *name, const rb_options *o, double n, double k, int p);

/* Collective over comm: the least, over its ranks, of the bytes a rank may
 * hold: override (-M) when non-zero, else SLURM_MEM_PER_CPU x cpus per
 * task, else SLURM_MEM_PER_NODE or MemAvailable divided by the ranks on
 * the node; source names where it came from; 0 when unknown. */
double bench_mem_limit(MPI_Comm comm, uint64_t override, char *source, size_t slen);
/* -M's default and expected value in each program's --help, worded once
 * (a program of several ranks adds " divided by the ranks on the node"). */
#define BENCH_MEM_LIMIT_DEFAULT \
    "SLURM_MEM_PER_CPU x SLURM_CPUS_PER_TASK when set, else SLURM_MEM_PER_NODE or MemAvailable"
#define BENCH_MEM_LIMIT_EXPECT \
    "a size of at least 1 byte (K/M/G suffixes; leave -M out for the limit of the node)"

/* When limit > 0 and need > limit: the usage error (exit 2, every rank)
 * "this run needs N GiB WHAT, more than the L GiB HOLDER may hold
 * (SOURCE); ADVICE, or -M to set the limit".  Else returns. */
void bench_mem_refuse_if(const char *prog, double need, double limit, const char *source,
                         const char *what, const char *holder, const char *advice);

#endif
