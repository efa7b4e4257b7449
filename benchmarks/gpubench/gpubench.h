/* benchmarks/gpubench: rb_gpubench, libreducer's CUDA kernels against the
 * device's copy bandwidth, and the NCCL transport (built only with CUDA).
 *   gpubench_options.c  the command line (no CUDA needed)
 *   rb_gpubench.c       the measurements and main
 * Calls the harness and the library; nothing calls into it. */
#ifndef RB_GPUBENCH_H
#define RB_GPUBENCH_H

#include <stdint.h>

#include "harness/bench_cli.h"

typedef struct gpubench_opts {
    uint64_t n;      /* floats per buffer */
    uint64_t iters;  /* timed repetitions per figure */
} gpubench_opts;

/* rb_gpubench's option table (for tests/harness/test_cli). */
extern const bench_cli gpubench_cli;
/* Exits 2 with a message naming the option on bad input, 0 after --help. */
void gpubench_parse_options(int argc, char **argv, gpubench_opts *o);

#endif
