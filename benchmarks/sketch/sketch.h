/* benchmarks/sketch: rb_sketch, count-sketch throughput against memcpy
 * and s2's decode error, on one core (rb_sketch.c says what is counted).
 *   sketch_options.c  the command line
 *   rb_sketch.c       the measurements and main
 * Calls the harness and the library; nothing calls into it. */
#ifndef RB_SKETCH_H
#define RB_SKETCH_H

#include <stdint.h>

#include "harness/bench_cli.h"

typedef struct sketch_args {
    uint64_t rows, cols;
    double density, ratio;
    int ranks, iters, error;
    uint64_t seed;
    uint64_t mem_limit;   /* -M: bytes this process may hold; 0: from the node */
} sketch_args;

/* rb_sketch's option table (for tests/harness/test_cli). */
extern const bench_cli sketch_cli;
/* Parse and check the command line; exits 2 with a message naming the
 * option on bad input, 0 after --help. */
void sketch_parse_options(int argc, char **argv, sketch_args *a);

#endif
