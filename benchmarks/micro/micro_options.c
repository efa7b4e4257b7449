/* rb_micro's command line: the option table, its custom values and the
 * checks that span several options.
 *
 * A letter or long name that OSU Micro-Benchmarks' osu_allreduce takes (in
 * any of its builds: -c -d -f -h -i -m -M -P -r -T -v -x and their long
 * names) means here what it means there, so a command line copied from OSU
 * runs the same measurement or is refused; -b, -e and --stepfactor follow
 * nccl-tests, whose letters OSU's allreduce does not take. */
#include "micro.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness/bench_common.h"
#include "harness/memneed.h"
#include "harness/bench_papi.h"

/* ---------------------------------------------------------- custom values */

/* Each name of the comma list v registered and named once: twice in the
 * list it was measured twice, its rows counted as two repetitions by the
 * report (--repeat N is the way to repeat).  0, or -1 with msg. */
static int check_reducer_names(const char *v, char *msg, size_t len)
{
    char buf[sizeof ((micro_opts *)0)->reducers];
    const char *seen[MICRO_MAX_REDUCERS];
    size_t nseen = 0;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned t;
        if (rb_reducer_traits(tok, &t) != RB_OK) {
            snprintf(msg, len, "unknown reducer '%s'", tok);
            return -1;
        }
        for (size_t i = 0; i < nseen; i++)
            if (!strcmp(seen[i], tok)) {
                snprintf(msg, len, "'%s' names %s twice (use --repeat N to repeat a "
                         "measurement)", v, tok);
                return -1;
            }
        if (nseen < MICRO_MAX_REDUCERS)
            seen[nseen++] = tok;
    }
    return 0;
}

static int parse_reducers(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    if (strlen(v) >= sizeof o->reducers) {
        snprintf(msg, len, "list too long");
        return -1;
    }
    if (strcmp(v, "all")) {
        if (check_reducer_names(v, msg, len))
            return -1;
        if (!v[0] || v[0] == ',' || strstr(v, ",,") || v[strlen(v) - 1] == ',') {
            snprintf(msg, len, "'%s' is not a comma list of names", v);
            return -1;
        }
    }
    snprintf(o->reducers, sizeof o->reducers, "%s", v);
    return 0;
}

/* OSU's form: MIN:MAX, MIN: or :MAX keep the other bound, a bare MAX runs
 * from the default first size (4K, or MAX itself when smaller). */
static int parse_msg_range(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    const char *colon = strchr(v, ':');
    if (!colon) {
        if (bench_parse_size(v, &o->max_bytes)) {
            snprintf(msg, len, "'%s' is not [MIN:]MAX (bytes, K/M/G suffixes)", v);
            return -1;
        }
        o->min_bytes = o->max_bytes < 4096 ? o->max_bytes : 4096;
        return 0;
    }
    char lo[64] = "", hi[64] = "";
    if ((size_t)(colon - v) >= sizeof lo || strlen(colon + 1) >= sizeof hi) {
        snprintf(msg, len, "'%s' is not [MIN:]MAX", v);
        return -1;
    }
    memcpy(lo, v, (size_t)(colon - v));
    strcpy(hi, colon + 1);
    if ((lo[0] && bench_parse_size(lo, &o->min_bytes)) || (hi[0] && bench_parse_size(hi, &o->max_bytes))) {
        snprintf(msg, len, "'%s' is not [MIN:]MAX (bytes, K/M/G suffixes)", v);
        return -1;
    }
    return 0;
}

static int parse_shape(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    const char *x = strchr(v, 'x');
    char r[32] = "";
    if (!x || (size_t)(x - v) >= sizeof r) {
        snprintf(msg, len, "'%s' is not ROWSxCOLS", v);
        return -1;
    }
    memcpy(r, v, (size_t)(x - v));
    if (bench_parse_u64(r, &o->shape_rows) || bench_parse_u64(x + 1, &o->shape_cols) || o->shape_cols == 0) {
        snprintf(msg, len, "'%s' is not ROWSxCOLS (COLS >= 1)", v);
        return -1;
    }
    return 0;
}

static int parse_device(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    if (!strcmp(v, "host") || !strcmp(v, "cuda")) {
        o->device = !strcmp(v, "cuda") ? RB_DEVICE_CUDA : RB_DEVICE_HOST;
        return 0;
    }
    snprintf(msg, len, "'%s' is not host or cuda", v);
    return -1;
}

static int parse_layout(const char *v, void *opts, char *msg, size_t len)
{
    if (!bench_layout_parse(v, &((micro_opts *)opts)->layout))
        return 0;
    snprintf(msg, len, "'%s' is not element, row or block", v);
    return -1;
}

/* dense | rows, each optionally followed by ,trace:FILE (trace:FILE alone
 * is dense): the gradient recorded in FILE instead of a synthetic one. */
static int parse_input(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    const char *how = v, *trace = NULL;
    size_t how_len = strlen(v);
    const char *t = strstr(v, "trace:");
    if (t && (t == v || (t > v && t[-1] == ','))) {
        trace = t + 6;
        how_len = t == v ? 0 : (size_t)(t - v - 1);
    }
    int dense = how_len == 0 || (how_len == 5 && !strncmp(how, "dense", 5));
    int rows = how_len == 4 && !strncmp(how, "rows", 4);
    if ((dense || rows) && (!trace || trace[0])) {
        o->input_rows = rows;
        o->trace = trace;
        return 0;
    }
    snprintf(msg, len, "'%s' is not dense, rows, trace:FILE.h5 or rows,trace:FILE.h5", v);
    return -1;
}

static int parse_overlap(const char *v, void *opts, char *msg, size_t len)
{
    micro_opts *o = opts;
    if (!bench_overlap_parse_zipf(v, &o->overlap, &o->zipf_s))
        return 0;
    snprintf(msg, len, "'%s' is not random, all, none or zipf:S (0 < S <= 100)", v);
    return -1;
}

static int parse_bind(const char *v, void *opts, char *msg, size_t len)
{
    if (!bench_bind_parse(v, &((micro_opts *)opts)->bind))
        return 0;
    snprintf(msg, len, "'%s' is not none, core or socket", v);
    return -1;
}

/* OSU's -T/--type: the reducers sum floats, so of OSU's types only
 * mpi_float (any case, as OSU compares) measures what they do. */
static int parse_type(const char *v, void *opts, char *msg, size_t len)
{
    (void)opts;
    if (!strcasecmp(v, "mpi_float"))
        return 0;
    if (!strcasecmp(v, "mpi_char") || !strcasecmp(v, "mpi_int") || !strcasecmp(v, "all"))
        snprintf(msg, len, "'%s' is refused: the reducers sum float gradients, so only mpi_float "
                 "(OSU's name for them) is measured", v);
    else
        snprintf(msg, len, "'%s' is not mpi_float (OSU's data type; the time limit, -T before, "
                 "is --timeout SEC)", v);
    return -1;
}

static void print_version(const bench_cli *cli, void *opts)
{
    (void)opts;
    if (bench_world_rank() == 0)
        printf("%s (reducerbench) %s\n", cli->prog, RB_VERSION_STRING);
}

/* ---------------------------------------------------------- --help */

static const char *reducer_help(void)
{
    static char buf[512];
    return bench_cli_reducer_names("reducers to run:", buf, sizeof buf);
}

static void epilogue(FILE *out)
{
    fprintf(out, "\n"
"Timing: MPI_Barrier before every call, each rank times its own call with\n"
"MPI_Wtime.  avg/min/max: over ranks of each rank's mean; p50/p99: over\n"
"iterations of the slowest rank's time.  algbw = bytes/avg; busbw = algbw *\n"
"2(p-1)/p (nccl-tests).  sent: payload bytes per rank per call (collectives\n"
"by the ring model, docs/wire-bytes.md); bound: 2k(p-1)/p x 8 B for the k\n"
"non-zeros of the aggregate.\n"
"\n"
"Reducer options (-O KEY=VALUE):\n");
    rb_options defaults;
    rb_options_default(&defaults);
    for (size_t i = 0; i < rb_option_count(); i++) {
        const rb_option_info *info = rb_option_info_at(i);
        char val[64];
        rb_option_format(&defaults, i, val, sizeof val);
        fprintf(out, "  %-18s [%s] %s (default %s)\n", info->key, info->reducers, info->help, val);
        if (info->type == RB_OPT_ENUM)   /* the values it takes, spelled as -O wants them */
            fprintf(out, "  %-18s values: %s\n", "", info->choices[0] == '|' ? info->choices + 1
                                                                          : info->choices);
    }
    fprintf(out, "\n" BENCH_MALLOC_HELP);
    fprintf(out, "  RB_TEST_CORRUPT_RESULT=1  for the tests: rank 0 adds 1 to one element of every\n"
                 "                        result before validation, which must then fail (exit 1).\n");
    fprintf(out, "\nExit status: 0 ok, 1 validation failure or error, 2 usage error, 3 no progress\n"
                 "(--stall-timeout: a network or peer fault), 124 timeout; killed by SIGTERM, SIGINT,\n"
                 "SIGHUP, SIGUSR1, SIGUSR2 or SIGPIPE after keeping the rows finished in\n"
                 "FILE.h5.interrupted (complete = 0, the reason in its first 512 bytes).\n");
}

/* ---------------------------------------------------------- the table */

#define F(field) offsetof(micro_opts, field)
#define SECTION(text) {.type = BENCH_OPT_SECTION, .help = text}
static const bench_opt options[] = {
    SECTION("Reducers and data:"),
    {BENCH_OPT_CUSTOM, "reducer", 0, "NAME[,NAME]|all", .def = "all", .parse = parse_reducers,
     .help_fn = reducer_help},
    {BENCH_OPT_DOUBLE, "density", 0, "D", F(density), 0.0, 1.0, "0.01",
     .help = "fraction of non-zero units per rank, 0..1", .expect = "a number in [0, 1]"},
    {BENCH_OPT_CUSTOM, "layout", 0, "element|row|block", .def = "element", .parse = parse_layout,
     .help = "non-zero units: elements, rows of --cols, or blocks of block_size elements"},
    {BENCH_OPT_CUSTOM, "input", 0, "dense|rows|[rows,]trace:FILE.h5", .def = "dense", .parse = parse_input,
     .help = "how the gradient is handed over: a dense buffer (rb_reduce), or its non-zero rows "
     "as row ids and rows (rb_reduce_rows, as PyTorch's sparse embedding gradient and TensorFlow's "
     "IndexedSlices hold it; the result into the dense buffer, validated alike); with trace:FILE.h5 "
     "the gradients recorded in a trace (rb_train --record-gradients, rb-torch-trace) replace the "
     "synthetic ones: one row per recorded step, the layer's shape (no -m, --shape, --density, "
     "--layout, --overlap); a trace of P ranks replays on P ranks or fewer, rank r of Q summing "
     "trace ranks r, r+Q, ... (results/README.md)"},
    {BENCH_OPT_STRING, "trace-layer", 0, "NAME", F(trace_layer),
     .help = "the trace's layer to replay", .def_text = "the first in name order"},
    {BENCH_OPT_CUSTOM, "overlap", 0, "random|all|none|zipf:S", .def = "random", .parse = parse_overlap,
     .help = "how ranks' supports coincide (none needs density <= 1/ranks); zipf:S: each rank draws "
     "its own batch of density x units from a Zipf law of exponent S over the units (unit 0 the most "
     "frequent), its support the distinct units drawn"},
    {BENCH_OPT_U64, "cols", 0, "C", F(cols), 1, 1.8e19, "1",
     .help = "gradient columns (row layout; rows = count/C)", .expect = "a positive integer"},
    {BENCH_OPT_CUSTOM, "shape", 0, "RxC", .parse = parse_shape,
     .help = "one gradient of R rows x C columns instead of a sweep"},
    {BENCH_OPT_U64, "seed", 0, "S", F(seed), .def = "1", .help = "seed of the synthetic gradients",
     .expect = "an unsigned integer"},
    {BENCH_OPT_REDUCER_OPTION, "option", 'O', "KEY=VALUE", F(ropts),
     .help = "reducer option (repeatable), see below"},
    SECTION("Sizes and timing (bytes of the dense float buffer):"),
    {BENCH_OPT_CUSTOM, "message-size", 'm', "[MIN:]MAX", .def = "4K:4M", .parse = parse_msg_range,
     .help = "sizes from MIN to MAX in --stepfactor steps; a bare MAX starts at 4K, or at MAX if "
             "smaller"},
    {BENCH_OPT_SIZE, "minbytes", 'b', "N", F(min_bytes), .help = "first size (K/M/G suffixes)",
     .expect = "a size"},
    {BENCH_OPT_SIZE, "maxbytes", 'e', "N", F(max_bytes), .help = "last size", .expect = "a size"},
    {BENCH_OPT_DOUBLE, "stepfactor", 0, "F", F(factor), 1.0 + 1e-9, 1e6, "2",
     .help = "multiply the size by F each step (nccl-tests' -f; -f here is OSU's --full)",
     .expect = "a number > 1"},
    {BENCH_OPT_INT, "iterations", 'i', "N", F(iters), 1, 100000000, "20", .help = "timed calls per size",
     .expect = "an integer >= 1"},
    {BENCH_OPT_INT, "warmup", 'x', "N", F(warmup), 0, 100000000, "3", .help = "untimed calls per size",
     .expect = "an integer >= 0"},
    {BENCH_OPT_INT, "repeat", 0, "N", F(repeat), 1, 100000, "1",
     .help = "repeat the whole measurement N times, interleaved: repetition 0 of every reducer and "
     "size, then repetition 1, ...; every repetition is a row (its index in the archive's repeat "
     "column), so the report gives a median and a 95% interval over repetitions (6 or more)",
     .expect = "an integer >= 1"},
    {BENCH_OPT_MOVED, NULL, 'r', .help = "repetitions are --repeat N (OSU's -r, the target of its "
     "CUDA dummy compute, has no counterpart here)"},
    {BENCH_OPT_INT, "check", 'c', "0|1", F(check), 0, 1, "1",
     .help = "validate against the exact average: exact reducers count #wrong and exit 1 on any; s2 "
     "reports rel. L2 error, recall, max error; gossip reports the consensus distance",
     .def_text = "on", .expect = "0 or 1", .flag_value = 1, .optional = 1},
    {BENCH_OPT_INT, "validation", 0, "0|1", F(check), 0, 1, NULL, .help = "OSU's name of -c/--check",
     .def_text = "on", .expect = "0 or 1 (OSU's log:DIR is not taken)", .flag_value = 1, .optional = 1},
    {BENCH_OPT_FLAG, "no-check", 0, NULL, F(check), .help = "no validation: faster sweeps of large sizes",
     .flag_value = 0},
    {BENCH_OPT_FLAG, "no-phase-times", 0, NULL, F(phase_times),
     .help = "time whole calls only, no clock read inside one (a phase change costs one, ~25-50 ns); "
     "the archive's phase times are NaN (the anchor against OSU)", .flag_value = 0},
    {BENCH_OPT_DOUBLE, "alpha", 0, "SEC", F(alpha), 0.0, 1.0, NULL,
     .help = "latency per message for the cost model column",
     .def_text = "measured by a ping-pong of ranks 0 and 1 at start", .expect = "seconds >= 0"},
    {BENCH_OPT_DOUBLE, "beta", 0, "SEC", F(beta), 0.0, 1.0, NULL,
     .help = "seconds per byte on the wire for the cost model column",
     .def_text = "measured, as --alpha", .expect = "seconds per byte >= 0"},
    {BENCH_OPT_DOUBLE, "compute", 0, "SEC", F(compute), 0.0, 1e6, NULL,
     .help = "SEC s of modelled compute before each timed call (training-iteration model; included in "
     "the time; charged to simulated time under SimGrid SMPI)",
     .expect = "a number of seconds >= 0"},
    {BENCH_OPT_DOUBLE, "timeout", 0, "SEC", F(timeout), 0.0, 1e9, "0",
     .help = "stop after SEC seconds, exit 124; the rows finished stay in the archive, marked "
             "timed_out=1 (was -T, which is OSU's --type)", .def_text = "0 = none",
     .expect = "a number of seconds >= 0"},
    {BENCH_OPT_DOUBLE, "stall-timeout", 0, "SEC", F(stall_timeout), 0.0, 1e9, BENCH_STALL_DEFAULT,
     .help = "a rank that made no progress (no call finished) for max(SEC, 10 x the slowest call so "
             "far, 10 x the cost model's call) names where it is stuck and exits 3: a link down or a "
             "peer gone; rank 0 keeps the rows finished in FILE.h5.interrupted (complete = 0)",
     .def_text = BENCH_STALL_DEFAULT " s; 0 = off", .expect = "a number of seconds >= 0"},
    {BENCH_OPT_CUSTOM, "type", 'T', "mpi_float", .def = "mpi_float", .parse = parse_type,
     .help = "OSU's MPI data type: the reducers sum floats, so mpi_float (any case) is the one "
             "taken; mpi_char, mpi_int and all are refused"},
    {BENCH_OPT_CUSTOM, "device", 'd', "host|cuda", .def = "host", .parse = parse_device,
     .help = "where the gradient lives"},
    {BENCH_OPT_CUSTOM, "accelerator", 0, "cuda", .parse = parse_device,
     .help = "OSU's name of -d/--device (its managed, openacc, rocm and cxl are refused)"},
    SECTION("Output:"),
    {BENCH_OPT_STRING, "output", 'o', "FILE.h5", F(output),
     .help = "HDF5 archive; 'none' writes no archive; a device, FIFO or link is refused",
     .def_text = "under Slurm results/<job id>.h5, results/<job id>_<task>.h5 in an array; else "
                 "results/rb_micro-<UTC time>-<pid>.h5"},
    {BENCH_OPT_FLAG, "force", 0, NULL, F(force), .help = "overwrite an existing archive (and -J, --save-result file)",
     .flag_value = 1},
    {BENCH_OPT_SIZE, "mem-limit", 'M', "BYTES", F(mem_limit),
     .help = "bytes a rank may hold (K/M/G suffixes, as OSU's -M): the run is refused before "
     "allocating anything when its need (printed in the preamble) is larger",
     .def_text = BENCH_MEM_LIMIT_DEFAULT " divided by the ranks on the node", .min = 1,
     .expect = BENCH_MEM_LIMIT_EXPECT},
    {BENCH_OPT_STRING, "json", 'J', "FILE", F(json),
     .help = "also write the archive's rows as JSON lines (one object per row: every column and the "
     "run metadata; schema in results/README.md), when the run completes; needs an archive (-o)"},
    {BENCH_OPT_STRING, "save-result", 0, "FILE", F(save_result),
     .help = "rank 0 writes the result of each row's last timed call to FILE as raw float32 "
     "(rows x cols, native byte order; each row overwrites the last): to compare a reducer's "
     "output with another program's"},
    {BENCH_OPT_STRING, "papi", 'P', "EVENTS", F(papi_events),
     .help = "PAPI events counted per phase, comma list, 'none'; counted even in VMs: "
             "sde:::reducerbench::EVENT, EVENT = cpu_time_ns minor_faults major_faults "
             "vol_ctx_switches invol_ctx_switches",
     .def_text = BENCH_PAPI_DEFAULT_EVENTS},
    {BENCH_OPT_CUSTOM, "bind", 0, "none|core|socket", .def = "none", .parse = parse_bind,
     .help = "bind each rank by its local rank"},
    {BENCH_OPT_FLAG, "full", 'f', NULL, F(full), .flag_value = 1,
     .help = "OSU's full listing (min and max beside the average, the iterations): always on here, "
             "the tables have avg, min, max, p50, p99 and the preamble the iterations"},
    {BENCH_OPT_FLAG, "quiet", 'q', NULL, F(quiet), .help = "no preamble", .flag_value = 1},
    {BENCH_OPT_ACTION, "version", 'v', .help = "print the version and exit", .action = print_version},
    {BENCH_OPT_ACTION, "help", 'h', .help = "this help", .action = bench_cli_help_action},
    {.type = BENCH_OPT_END},
};
#undef SECTION
#undef F

const bench_cli micro_cli = {
    .prog = PROG,
    .usage = "Usage: " PROG " [OPTIONS]\n"
             "Benchmark gradient reducers on synthetic sparse gradients (MPI; run with\n"
             "mpirun/srun).  One table per reducer on stdout; -o writes an HDF5 archive.\n",
    .opts = options,
    .help_col = 29,
    .epilogue = epilogue,
};

/* ---------------------------------------------------------- checks */

/* What no single option can check. */
static void check_combination(micro_opts *o, int ranks)
{
    if (o->min_bytes > o->max_bytes)
        bench_usage_error(PROG, "-m/--message-size: MIN %llu > MAX %llu",
                          (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes);
    if (o->max_bytes / 4 > UINT32_MAX)
        bench_usage_error(PROG, "-m/--message-size: MAX exceeds %llu bytes (2^32 elements)",
                          4ULL * UINT32_MAX);
    if (o->shape_rows && o->shape_rows > UINT32_MAX / o->shape_cols)   /* no wrap */
        bench_usage_error(PROG, "--shape: more than 2^32 - 1 elements");
    if (o->ropts.gossip_mix == RB_GOSSIP_MIX_PARAMS)   /* rb_reduce would time a no-op */
        bench_usage_error(PROG, "-O gossip_mix=params: rb_micro times rb_reduce, which mixes "
                          "nothing in that mode; use grad or both (rb_train mixes parameters)");
    if (o->shape_rows)
        o->cols = o->shape_cols;
    if (o->layout == BENCH_LAYOUT_ROW && o->cols == 1 && !o->shape_rows)
        bench_usage_error(PROG, "--layout row needs --cols C (> 1) or --shape RxC");
    if (o->input_rows && o->device == RB_DEVICE_CUDA)
        bench_usage_error(PROG, "--input rows: rows are taken in host memory only (rb_reduce_rows); "
                          "use --input dense with -d cuda");
    if (o->json && o->output && !strcmp(o->output, "none"))
        bench_usage_error(PROG, "-J: the JSON lines are made from the archive; not with -o none");
    if (o->trace_layer && !o->trace)
        bench_usage_error(PROG, "--trace-layer: only with --input trace:FILE.h5");
    if (o->trace && o->shape_rows)
        bench_usage_error(PROG, "--input trace: the trace's layer sets the shape; not with --shape");
    if (o->overlap == BENCH_OVERLAP_NONE && o->density * ranks > 1.0)
        bench_usage_error(PROG, "--overlap none: density %g x %d ranks exceeds 1", o->density, ranks);
}

void micro_parse_options(int argc, char **argv, int ranks, micro_opts *o)
{
    memset(o, 0, sizeof *o);
    o->phase_times = 1;
    o->alpha = o->beta = -1.0;
    rb_options_default(&o->ropts);
    bench_cli_parse_or_exit(&micro_cli, argc, argv, o);
    check_combination(o, ranks);
}
