/* rb_gpubench's command line. */
#include "gpubench.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reducer_sparse.h"   /* RB_MAX_ELEMENTS */

/* A decimal or 0x count in [1, max] into *out. */
static int parse_count(const char *s, uint64_t max, uint64_t *out, char *msg, size_t len)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || strchr(s, '-') || errno || *end || v == 0 || v > max) {
        snprintf(msg, len, "'%s' is not a count from 1 to %llu", s, (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_n(const char *v, void *opts, char *msg, size_t len)
{
    return parse_count(v, RB_MAX_ELEMENTS, &((gpubench_opts *)opts)->n, msg, len);
}

static int parse_iters(const char *v, void *opts, char *msg, size_t len)
{
    return parse_count(v, 1000000, &((gpubench_opts *)opts)->iters, msg, len);
}

static const bench_opt options[] = {
    {BENCH_OPT_CUSTOM, NULL, 'n', "ELEMENTS", .def = "67108864", .def_text = "64 Mi = 256 MiB",
     .parse = parse_n, .help = "floats per buffer, 1 to 2^32 - 1"},
    {BENCH_OPT_CUSTOM, "iterations", 'i', "N", .def = "20", .parse = parse_iters,
     .help = "timed repetitions per figure, 1 to 10^6"},
    {BENCH_OPT_ACTION, "help", 'h', .action = bench_cli_help_action, .help = "this help"},
    {.type = BENCH_OPT_END},
};

const bench_cli gpubench_cli = {
    .prog = "rb_gpubench",
    .usage = "Usage: rb_gpubench [-n ELEMENTS] [-i N]   (one rank per GPU)\n"
             "Throughput of libreducer's CUDA kernels against the device copy bandwidth,\n"
             "NCCL dense allreduce and the bitmap merge methods.\n\n",
    .opts = options,
    .help_col = 20,
};

void gpubench_parse_options(int argc, char **argv, gpubench_opts *o)
{
    bench_cli_parse_or_exit(&gpubench_cli, argc, argv, o);
}
