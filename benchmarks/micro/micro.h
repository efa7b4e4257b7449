/* benchmarks/micro: rb_micro, the microbenchmark.  One reducer (or all) on
 * synthetic sparse gradients, swept over sizes; a text table on stdout and
 * an HDF5 archive (results/README.md).
 *
 * What lives here, each file one step of a row:
 *   micro_options.c  the command line (table for bench_cli) and its checks
 *   rb_micro.c       main: set-up, the sweep, the exit status
 * The room calls the harness (benchmarks/harness) and the library (src/);
 * nothing below calls into it (docs/architecture.md). */
#ifndef RB_MICRO_H
#define RB_MICRO_H

#include <stdint.h>

#include "harness/bench_cli.h"
#include "harness/gradgen.h"
#include "harness/topology.h"
#include "reducer.h"

#define PROG "rb_micro"

/* What the command line asks for. */
typedef struct micro_opts {
    char reducers[512];        /* comma list or "all" */
    uint64_t min_bytes, max_bytes;
    double factor;
    uint64_t shape_rows, shape_cols;  /* --shape RxC: one size */
    uint64_t cols;
    int iters, warmup, check;
    double timeout;
    double density;
    rb_layout layout;
    rb_overlap overlap;
    uint64_t seed;
    rb_options ropts;
    const char *output;
    int force;
    int quiet;
    rb_device device;
    const char *papi_events;   /* -P: NULL = default */
    rb_bind_mode bind;
    double compute;            /* --compute: modelled compute seconds per call */
} micro_opts;

/* rb_micro's option table (for tests/test_cli). */
extern const bench_cli micro_cli;
/* Parse and check the command line; exits 2 with a message naming the
 * option on bad input, 0 after --help.  ranks: for the checks that
 * depend on the job size. */
void micro_parse_options(int argc, char **argv, int ranks, micro_opts *o);

#endif
