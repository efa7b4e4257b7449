/* rb_sketch's command line.  Defaults: the S2 authors' GNMT setting, a
 * 32317 x 1024 float embedding gradient with 2% of its rows non-zero,
 * sketch width c = N*M*D*R with R = 0.25. */
#include "sketch.h"

#include <stddef.h>

#include "harness/bench_common.h"
#include "harness/memneed.h"
#include "reducer_sparse.h"

#define F(field) offsetof(sketch_args, field)
static const bench_opt options[] = {
    {BENCH_OPT_U64, "rows", 0, "N", F(rows), .def = "32317", .help = "gradient rows",
     .expect = "an integer >= 1"},
    {BENCH_OPT_U64, "cols", 0, "M", F(cols), .def = "1024", .help = "gradient columns",
     .expect = "an integer >= 1"},
    {BENCH_OPT_DOUBLE, "density", 0, "D", F(density), 1e-300, 1.0, "0.02",
     .help = "fraction of rows non-zero on each rank", .expect = "a number with 0 < D <= 1"},
    {BENCH_OPT_DOUBLE, "ratio", 0, "R", F(ratio), 1e-300, 1e300, "0.25",
     .help = "sketch width c = rows*cols*density*R", .expect = "a number > 0"},
    {BENCH_OPT_INT, "ranks", 0, "P", F(ranks), 1, 1 << 20, "8",
     .help = "ranks simulated by the error table"},
    {BENCH_OPT_INT, "iterations", 'i', "N", F(iters), 1, 1 << 20, "5",
     .help = "timed repetitions; the best counts (was --iters)"},
    {BENCH_OPT_MOVED, "iters", 0, .help = "the repetitions are -i/--iterations N, as in the other programs"},
    {BENCH_OPT_U64, "seed", 0, "S", F(seed), .def = "42", .help = "seed of gradients and hashes"},
    {BENCH_OPT_FLAG, "no-error", 0, NULL, F(error), .flag_value = 0, .help = "skip the error table"},
    {BENCH_OPT_SIZE, "mem-limit", 'M', "BYTES", F(mem_limit),
     .help = "bytes the run may hold (K/M/G suffixes): refused before allocating when its need "
     "(printed) is larger", .def_text = BENCH_MEM_LIMIT_DEFAULT,
     .min = 1, .expect = BENCH_MEM_LIMIT_EXPECT},
    {BENCH_OPT_ACTION, "help", 'h', .action = bench_cli_help_action, .help = "this help"},
    {.type = BENCH_OPT_END},
};
#undef F

const bench_cli sketch_cli = {
    .prog = "rb_sketch",
    .usage = "Usage: rb_sketch [OPTIONS]\n"
             "Count-sketch encode/decode throughput against single-core memcpy, and s2's\n"
             "decode error against the exact average (run on one core).\n\n",
    .opts = options,
    .help_col = 22,
};

void sketch_parse_options(int argc, char **argv, sketch_args *a)
{
    *a = (sketch_args){.error = 1};
    bench_cli_parse_or_exit(&sketch_cli, argc, argv, a);
    if (a->rows == 0 || a->cols == 0 || a->rows > RB_MAX_ELEMENTS / a->cols)
        bench_usage_error(sketch_cli.prog, "rows x cols must be 1 to %llu elements",
                          (unsigned long long)RB_MAX_ELEMENTS);
}
