/* rb_micro: one reducer (or all) on synthetic sparse gradients, swept over
 * sizes.  Options follow OSU Micro-Benchmarks / nccl-tests; the output is a
 * stable text table (one block per reducer, first column the size) and,
 * with -o, an HDF5 archive (results/README.md). */
#include "archive.h"
#include "bench_common.h"
#include "bench_papi.h"
#include "bench_device.h"
#include "gradgen.h"
#include "metadata.h"
#include "micro_row.h"
#include "reducer.h"
#include "simmeta.h"
#include "topology.h"

#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "rb_micro"

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
    int phase_times;           /* 0: --no-phase-times */
} micro_opts;

/* Buffers sized once for the largest size (page faults are slow). */
typedef struct micro_bufs {
    size_t cap;
    float *input;    /* this rank's pristine gradient */
    float *work;     /* handed to the reducer */
    float *truth;    /* exact average */
    float *scratch;
    double *acc;
    unsigned char *union_mask;
    int shared;      /* input/work are SMPI shared buffers (garbage values) */
} micro_bufs;

static void usage(void)
{
    printf(
"Usage: " PROG " [OPTIONS]\n"
"Benchmark gradient reducers on synthetic sparse gradients (MPI; run with\n"
"mpirun/srun).  One table per reducer on stdout; -o writes an HDF5 archive.\n"
"\n"
"Reducers and data:\n"
"  --reducer NAME[,NAME]|all  reducers to run (default all):");
    for (size_t i = 0; i < rb_reducer_count(); i++)
        printf(" %s", rb_reducer_name_at(i));
    printf("\n"
"  --density D                fraction of non-zero units per rank, 0..1 (default 0.01)\n"
"  --layout element|row|block non-zero units: elements, rows of --cols, or\n"
"                             blocks of block_size elements (default element)\n"
"  --overlap random|all|none  how ranks' supports coincide (default random;\n"
"                             none needs density <= 1/ranks)\n"
"  --cols C                   gradient columns (row layout; default 1, rows = count/C)\n"
"  --shape RxC                one gradient of R rows x C columns instead of a sweep\n"
"  --seed S                   seed of the synthetic gradients (default 1)\n"
"  -O, --option KEY=VALUE     reducer option (repeatable), see below\n"
"\n"
"Sizes and timing (bytes of the dense float buffer):\n"
"  -m, --message-size [MIN:]MAX  sizes from MIN to MAX, x2 steps (default\n"
"                             4K:4M; a bare MAX starts at 4K or at MAX if smaller)\n"
"  -b, --minbytes N           first size (K/M/G suffixes)\n"
"  -e, --maxbytes N           last size\n"
"  -f, --stepfactor F         multiply the size by F each step (default 2)\n"
"  -i, --iterations N         timed calls per size (default 20)\n"
"  -x, --warmup N             untimed calls per size (default 3)\n"
"  -c, --check[=0|1]          validate against the exact average (default on;\n"
"      --no-check             off: faster sweeps of large sizes):\n"
"                             exact reducers count #wrong and exit 1 on any;\n"
"                             s2 reports rel. L2 error, recall, max error;\n"
"                             gossip reports the consensus distance\n"
"      --no-phase-times       time whole calls only, no clock read inside one (a\n"
"                             phase change costs one, ~25-50 ns); the archive's\n"
"                             phase times are NaN (anchors against OSU)\n"
"      --compute SEC          SEC s of modelled compute before each timed call\n"
"                             (training-iteration model; included in the time;\n"
"                             charged to simulated time under SimGrid SMPI)\n"
"  -T, --timeout SEC          stop after SEC seconds, exit 124 (default 0 = none)\n"
"  -d, --device host|cuda     where the gradient lives (default host)\n"
"\n"
"Output:\n"
"  -o, --output FILE.h5       HDF5 archive (default: under Slurm results/<job id>.h5,\n"
"                             results/<job id>_<task>.h5 in an array; else\n"
"                             results/rb_micro-<UTC time>-<pid>.h5; 'none' writes\n"
"                             no archive; a device, FIFO or link is refused)\n"
"      --force                overwrite an existing archive\n"
"  -P, --papi EVENTS          PAPI events counted per phase, comma list, 'none'\n"
"                             (default " RB_PAPI_DEFAULT_EVENTS "); counted\n"
"                             even in VMs: sde:::reducerbench::EVENT, EVENT =\n"
"                             cpu_time_ns minor_faults major_faults\n"
"                             vol_ctx_switches invol_ctx_switches\n"
"      --bind none|core|socket  bind each rank by its local rank (default none)\n"
"  -q, --quiet                no preamble\n"
"  -h, --help                 this help\n"
"\n"
"Timing: MPI_Barrier before every call, each rank times its own call with\n"
"MPI_Wtime; between calls only the input is reloaded (untimed), as in OSU.\n"
"avg/min/max: over ranks of each rank's mean; p50/p99: over iterations of\n"
"the slowest rank's time.  algbw = bytes/avg; busbw = algbw *\n"
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
        printf("  %-18s [%s] %s (default %s)\n", info->key, info->reducers, info->help, val);
        if (info->type == RB_OPT_ENUM)   /* the values it takes, spelled as -O wants them */
            printf("  %-18s values: %s\n", "", info->choices[0] == '|' ? info->choices + 1
                                                                     : info->choices);
    }
    printf("\n" BENCH_MALLOC_HELP);
    printf("\nExit status: 0 ok, 1 validation failure or error, 2 usage error, 124 timeout.\n");
}

enum { OPT_REDUCER = 256, OPT_DENSITY, OPT_LAYOUT, OPT_OVERLAP, OPT_COLS, OPT_SHAPE,
       OPT_SEED, OPT_FORCE, OPT_NO_CHECK, OPT_BIND,
       OPT_COMPUTE, OPT_NO_PHASE_TIMES };

/* OSU's form: MIN:MAX, MIN: or :MAX keep the other bound, a bare MAX runs
 * from the default first size (4K, or MAX itself when smaller). */
static void parse_msg_range(const char *arg, micro_opts *o)
{
    const char *colon = strchr(arg, ':');
    if (!colon) {
        if (bench_parse_size(arg, &o->max_bytes))
            bench_usage_error(PROG, "-m/--message-size: '%s' is not [MIN:]MAX (bytes, K/M/G suffixes)", arg);
        o->min_bytes = o->max_bytes < 4096 ? o->max_bytes : 4096;
        return;
    }
    char lo[64] = "", hi[64] = "";
    if ((size_t)(colon - arg) >= sizeof lo || strlen(colon + 1) >= sizeof hi)
        bench_usage_error(PROG, "-m/--message-size: '%s' is not [MIN:]MAX", arg);
    memcpy(lo, arg, (size_t)(colon - arg));
    strcpy(hi, colon + 1);
    if ((lo[0] && bench_parse_size(lo, &o->min_bytes)) || (hi[0] && bench_parse_size(hi, &o->max_bytes)))
        bench_usage_error(PROG, "-m/--message-size: '%s' is not [MIN:]MAX (bytes, K/M/G suffixes)", arg);
}

static void parse_shape(const char *arg, micro_opts *o)
{
    const char *x = strchr(arg, 'x');
    char r[32] = "";
    if (!x || (size_t)(x - arg) >= sizeof r)
        bench_usage_error(PROG, "--shape: '%s' is not ROWSxCOLS", arg);
    memcpy(r, arg, (size_t)(x - arg));
    if (bench_parse_u64(r, &o->shape_rows) || bench_parse_u64(x + 1, &o->shape_cols) ||
        o->shape_cols == 0)
        bench_usage_error(PROG, "--shape: '%s' is not ROWSxCOLS (COLS >= 1)", arg);
}

static void check_reducer_list(const char *list)
{
    if (!strcmp(list, "all"))
        return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned t;
        if (rb_reducer_traits(tok, &t) != RB_OK)
            bench_usage_error(PROG, "--reducer: unknown reducer '%s'", tok);
    }
    if (!list[0] || list[0] == ',' || strstr(list, ",,") || list[strlen(list) - 1] == ',')
        bench_usage_error(PROG, "--reducer: '%s' is not a comma list of names", list);
}

static void parse_args(int argc, char **argv, micro_opts *o)
{
    static const struct option longopts[] = {
        {"reducer", required_argument, 0, OPT_REDUCER},
        {"density", required_argument, 0, OPT_DENSITY},
        {"layout", required_argument, 0, OPT_LAYOUT},
        {"overlap", required_argument, 0, OPT_OVERLAP},
        {"cols", required_argument, 0, OPT_COLS},
        {"shape", required_argument, 0, OPT_SHAPE},
        {"seed", required_argument, 0, OPT_SEED},
        {"option", required_argument, 0, 'O'},
        {"message-size", required_argument, 0, 'm'},
        {"minbytes", required_argument, 0, 'b'},
        {"maxbytes", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'},
        {"iterations", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, 'x'},
        {"check", optional_argument, 0, 'c'},
        {"no-check", no_argument, 0, OPT_NO_CHECK},
        {"compute", required_argument, 0, OPT_COMPUTE},
        {"no-phase-times", no_argument, 0, OPT_NO_PHASE_TIMES},
        {"timeout", required_argument, 0, 'T'},
        {"device", required_argument, 0, 'd'},
        {"output", required_argument, 0, 'o'},
        {"force", no_argument, 0, OPT_FORCE},
        {"papi", required_argument, 0, 'P'},
        {"bind", required_argument, 0, OPT_BIND},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    snprintf(o->reducers, sizeof o->reducers, "all");
    o->min_bytes = 4096;
    o->max_bytes = 4 << 20;
    o->factor = 2.0;
    o->cols = 1;
    o->iters = 20;
    o->warmup = 3;
    o->check = 1;
    o->phase_times = 1;
    o->density = 0.01;
    o->seed = 1;
    o->device = RB_DEVICE_HOST;
    rb_options_default(&o->ropts);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:b:e:f:i:x:c::T:d:o:O:P:qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_REDUCER:
            if (strlen(optarg) >= sizeof o->reducers)
                bench_usage_error(PROG, "--reducer: list too long");
            snprintf(o->reducers, sizeof o->reducers, "%s", optarg);
            check_reducer_list(o->reducers);
            break;
        case OPT_DENSITY:
            if (bench_parse_double(optarg, 0.0, 1.0, &o->density))
                bench_usage_error(PROG, "--density: '%s' is not a number in [0, 1]", optarg);
            break;
        case OPT_LAYOUT:
            if (rb_layout_parse(optarg, &o->layout))
                bench_usage_error(PROG, "--layout: '%s' is not element, row or block", optarg);
            break;
        case OPT_OVERLAP:
            if (rb_overlap_parse(optarg, &o->overlap))
                bench_usage_error(PROG, "--overlap: '%s' is not random, all or none", optarg);
            break;
        case OPT_COLS:
            if (bench_parse_u64(optarg, &o->cols) || o->cols == 0)
                bench_usage_error(PROG, "--cols: '%s' is not a positive integer", optarg);
            break;
        case OPT_SHAPE:
            parse_shape(optarg, o);
            break;
        case OPT_SEED:
            if (bench_parse_u64(optarg, &o->seed))
                bench_usage_error(PROG, "--seed: '%s' is not an unsigned integer", optarg);
            break;
        case 'O':
            if (rb_options_set(&o->ropts, optarg) != RB_OK)
                bench_usage_error(PROG, "-O/--option: %s", rb_last_error());
            break;
        case 'm':
            parse_msg_range(optarg, o);
            break;
        case 'b':
            if (bench_parse_size(optarg, &o->min_bytes))
                bench_usage_error(PROG, "-b/--minbytes: '%s' is not a size", optarg);
            break;
        case 'e':
            if (bench_parse_size(optarg, &o->max_bytes))
                bench_usage_error(PROG, "-e/--maxbytes: '%s' is not a size", optarg);
            break;
        case 'f':
            if (bench_parse_double(optarg, 1.0 + 1e-9, 1e6, &o->factor))
                bench_usage_error(PROG, "-f/--stepfactor: '%s' is not a number > 1", optarg);
            break;
        case 'i':
            if (bench_parse_int(optarg, 1, 100000000, &o->iters))
                bench_usage_error(PROG, "-i/--iterations: '%s' is not an integer >= 1", optarg);
            break;
        case 'x':
            if (bench_parse_int(optarg, 0, 100000000, &o->warmup))
                bench_usage_error(PROG, "-x/--warmup: '%s' is not an integer >= 0", optarg);
            break;
        case 'c':
            if (optarg && bench_parse_int(optarg, 0, 1, &o->check))
                bench_usage_error(PROG, "-c/--check: '%s' is not 0 or 1", optarg);
            if (!optarg)
                o->check = 1;
            break;
        case 'T':
            if (bench_parse_double(optarg, 0.0, 1e9, &o->timeout))
                bench_usage_error(PROG, "-T/--timeout: '%s' is not a number of seconds >= 0", optarg);
            break;
        case 'd':
            if (!strcmp(optarg, "host"))
                o->device = RB_DEVICE_HOST;
            else if (!strcmp(optarg, "cuda"))
                o->device = RB_DEVICE_CUDA;
            else
                bench_usage_error(PROG, "-d/--device: '%s' is not host or cuda", optarg);
            break;
        case 'o':
            o->output = optarg;
            break;
        case OPT_NO_CHECK:
            o->check = 0;
            break;
        case OPT_NO_PHASE_TIMES:
            o->phase_times = 0;
            break;
        case OPT_COMPUTE:
            if (bench_parse_double(optarg, 0.0, 1e6, &o->compute))
                bench_usage_error(PROG, "--compute: '%s' is not a number of seconds >= 0", optarg);
            break;
        case OPT_FORCE:
            o->force = 1;
            break;
        case 'P':
            o->papi_events = optarg;
            break;
        case OPT_BIND:
            if (rb_bind_parse(optarg, &o->bind))
                bench_usage_error(PROG, "--bind: '%s' is not none, core or socket", optarg);
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h': {
            int rank = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == 0)
                usage();
            bench_exit(RB_EXIT_OK);
        }
        case ':':
            bench_usage_error(PROG, "option '%s' needs a value", argv[optind - 1]);
        default:
            bench_usage_error(PROG, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        bench_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
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
    if (o->layout == RB_LAYOUT_ROW && o->cols == 1 && !o->shape_rows)
        bench_usage_error(PROG, "--layout row needs --cols C (> 1) or --shape RxC");
}

/* Shapes of the sweep: one for --shape, else min..max bytes by factor.
 * Sizes that are not a whole number of rows are rounded down to one. */
static size_t build_shapes(const micro_opts *o, uint64_t (*rows)[2], size_t max)
{
    if (o->shape_rows || (o->shape_cols && !o->shape_rows)) {
        rows[0][0] = o->shape_rows;
        rows[0][1] = o->shape_cols;
        return 1;
    }
    size_t k = 0;
    for (double b = (double)o->min_bytes; b <= (double)o->max_bytes && k < max;
         b = b < 4.0 ? 4.0 : b * o->factor) {
        uint64_t count = (uint64_t)b / 4;
        rows[k][0] = count / o->cols;
        rows[k][1] = o->cols;
        if (k == 0 || rows[k][0] != rows[k - 1][0])
            k++;
        if (b == 0.0 && o->max_bytes == 0)
            break;
    }
    return k;
}

/* Without validation (--no-check) the truth buffers are not needed, and
 * under SimGrid SMPI large input/work buffers may be shared between the
 * simulated ranks (simmeta.c): never when validating. */
static int alloc_bufs(micro_bufs *b, size_t n, int check)
{
    size_t cap = n ? n : 1;
    b->cap = cap;
    int shared_in = 0, shared_work = 0;
    b->input = rb_sim_alloc(cap * sizeof(float), !check, &shared_in);
    b->work = rb_sim_alloc(cap * sizeof(float), !check, &shared_work);
    b->shared = shared_in || shared_work;
    if (!check)
        return b->input && b->work ? 0 : -1;
    b->truth = calloc(cap, sizeof(float));
    b->scratch = calloc(cap, sizeof(float));
    b->acc = calloc(cap, sizeof(double));
    b->union_mask = calloc(cap, 1);
    return b->input && b->work && b->truth && b->scratch && b->acc && b->union_mask ? 0 : -1;
}

static void free_bufs(micro_bufs *b)
{
    rb_sim_free(b->input, b->shared), rb_sim_free(b->work, b->shared);
    free(b->truth), free(b->scratch), free(b->acc), free(b->union_mask);
}

/* Exact average over ranks (double accumulation in rank order) and the
 * union support; returns the union's non-zero count. */
static uint64_t compute_truth(const rb_gradgen *g, micro_bufs *b)
{
    size_t n = g->rows * g->cols;
    memset(b->acc, 0, n * sizeof *b->acc);
    memset(b->union_mask, 0, n);
    for (int r = 0; r < g->nranks; r++) {
        rb_gradgen_fill(g, r, b->scratch);
        for (size_t i = 0; i < n; i++) {
            b->acc[i] += b->scratch[i];
            b->union_mask[i] |= (b->scratch[i] != 0.0f);
        }
    }
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        b->truth[i] = (float)(b->acc[i] / g->nranks);
        k += b->union_mask[i];
    }
    return k;
}

/* Largest error allowed for an exact reducer: summing p values of
 * magnitude <= 1 in another order, then dividing by p. */
static double exact_tolerance(int p) { return 8.0 * p * FLT_EPSILON; }

typedef struct check_result {
    int64_t wrong;
    double rel_l2, max_abs, recall, consensus;
} check_result;

/* Compare this rank's result with the truth; reduce over ranks. */
static void check_result_of(const micro_bufs *b, const rb_gradgen *g, unsigned traits,
                            MPI_Comm comm, check_result *out)
{
    size_t n = g->rows * g->cols;
    double tol = exact_tolerance(g->nranks);
    double err2 = 0, ref2 = 0, maxabs = 0;
    int64_t wrong = 0;
    uint64_t true_rows = 0, hit_rows = 0;
    for (size_t i = 0; i < n; i++) {
        /* the truth is finite: a NaN result is an infinite error */
        double d = fabs((double)b->work[i] - (double)b->truth[i]);
        if (isnan(d))
            d = INFINITY;
        err2 += d * d;
        ref2 += (double)b->truth[i] * b->truth[i];
        if (d > maxabs)
            maxabs = d;
        wrong += d > tol;
    }
    for (size_t r = 0; r < g->rows; r++) {
        int truth_nz = 0, got_nz = 0;
        for (size_t c = 0; c < g->cols; c++) {
            truth_nz |= b->union_mask[r * g->cols + c];
            got_nz |= b->work[r * g->cols + c] != 0.0f;
        }
        true_rows += truth_nz;
        hit_rows += truth_nz && got_nz;
    }
    double rel = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    double local[3] = {rel, maxabs, (double)wrong}, worst[3];
    MPI_Allreduce(local, worst, 3, MPI_DOUBLE, MPI_MAX, comm);
    uint64_t rows_local[2] = {true_rows, hit_rows}, rows_min[2];
    MPI_Allreduce(rows_local, rows_min, 2, MPI_UINT64_T, MPI_MIN, comm);
    out->rel_l2 = worst[0];
    out->max_abs = worst[1];
    long long wrong_total = 0, wl = (long long)wrong;
    MPI_Allreduce(&wl, &wrong_total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    out->wrong = (traits & RB_TRAIT_EXACT) ? wrong_total : 0;
    out->recall = rows_min[0] ? (double)rows_min[1] / (double)rows_min[0] : 1.0;
    out->consensus = (traits & RB_TRAIT_GOSSIP) ? worst[0] : 0.0;
}

typedef struct call_acc {
    double *times;       /* per iteration, this rank */
    double phase[RB_PHASE_COUNT_];
    double sent, recv, nnz_local;
} call_acc;

/* Per-rank statistics reduced into the row; samples gathered on rank 0. */
static void summarise(const call_acc *acc, int iters, MPI_Comm comm, rb_micro_row *row,
                      double *samples)
{
    int p = row->ranks, rank;
    MPI_Comm_rank(comm, &rank);
    double mean = 0;
    for (int i = 0; i < iters; i++)
        mean += acc->times[i];
    mean /= iters;
    struct { double v; int r; } mine = {mean, rank}, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    double sums[8] = {mean, acc->phase[0] / iters, acc->phase[1] / iters, acc->phase[2] / iters,
                      acc->sent / iters, acc->recv / iters, acc->nnz_local, 0}, tot[8];
    MPI_Allreduce(sums, tot, 8, MPI_DOUBLE, MPI_SUM, comm);
    double maxes[3] = {acc->sent / iters, acc->recv / iters, 0}, mx[3];
    MPI_Allreduce(maxes, mx, 3, MPI_DOUBLE, MPI_MAX, comm);
    double tmin = 0;
    MPI_Allreduce(&mean, &tmin, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Gather(acc->times, iters, MPI_DOUBLE, samples, iters, MPI_DOUBLE, 0, comm);

    row->t_avg_us = tot[0] / p * 1e6;
    row->t_min_us = tmin * 1e6;
    row->t_max_us = slowest.v * 1e6;
    row->slowest_rank = slowest.r;
    row->t_encode_us = tot[1] / p * 1e6;
    row->t_comm_us = tot[2] / p * 1e6;
    row->t_decode_us = tot[3] / p * 1e6;
    row->bytes_sent_avg = tot[4] / p;
    row->bytes_recv_avg = tot[5] / p;
    row->bytes_sent_max = mx[0];
    row->bytes_recv_max = mx[1];
    row->nnz_local_avg = tot[6] / p;
    double t = row->t_avg_us * 1e-6;
    row->algbw_gbs = t > 0 ? (double)row->size_bytes / t / 1e9 : 0;
    row->busbw_gbs = row->algbw_gbs * (p > 1 ? 2.0 * (p - 1) / p : 0.0);
    if (rank == 0) {
        /* samples arrive rank-major from the gather; the archive wants
         * iteration-major, and p50/p99 use the slowest rank per iteration. */
        double *per_iter = malloc((size_t)iters * sizeof *per_iter);
        double *tmp = malloc((size_t)iters * (size_t)p * sizeof *tmp);
        if (per_iter && tmp) {
            for (int i = 0; i < iters; i++) {
                per_iter[i] = 0;
                for (int r = 0; r < p; r++) {
                    double v = samples[(size_t)r * iters + i];
                    tmp[(size_t)i * p + r] = v * 1e6;
                    if (v > per_iter[i])
                        per_iter[i] = v;
                }
            }
            memcpy(samples, tmp, (size_t)iters * (size_t)p * sizeof *tmp);
            row->t_p50_us = bench_quantile(per_iter, (size_t)iters, 0.50) * 1e6;
            row->t_p99_us = bench_quantile(per_iter, (size_t)iters, 0.99) * 1e6;
        }
        free(per_iter);
        free(tmp);
    }
    MPI_Bcast(&row->t_p50_us, 1, MPI_DOUBLE, 0, comm);
    MPI_Bcast(&row->t_p99_us, 1, MPI_DOUBLE, 0, comm);
}

static void print_block_header(const char *reducer, unsigned traits, const micro_opts *o)
{
    const char *kind = traits & RB_TRAIT_EXACT ? "exact" : traits & RB_TRAIT_LOSSY ? "lossy"
                     : traits & RB_TRAIT_GOSSIP ? "gossip" : "no communication";
    bench_printf0("#\n# Reducer: %s (%s): %s\n", reducer, kind, rb_reducer_description(reducer));
    for (size_t i = 0; i < rb_option_count(); i++) {
        char val[64];
        if (rb_option_applies(i, reducer) && rb_option_format(&o->ropts, i, val, sizeof val) == RB_OK)
            bench_printf0("#   option %s = %s\n", rb_option_info_at(i)->key, val);
    }
    const char *errcol = traits & RB_TRAIT_LOSSY ? "rel_l2_err" : traits & RB_TRAIT_GOSSIP ? "consensus" : "error";
    bench_printf0("# %10s %12s %11s %11s %11s %11s %11s %11s %9s %9s %13s %13s %9s %8s %10s %7s\n",
                  "size(B)", "count", "nnz/rank", "avg(us)", "min(us)", "max(us)", "p50(us)",
                  "p99(us)", "algbw", "busbw", "sent(B)", "sent_max(B)", "wire/bnd", "#wrong",
                  errcol, "recall");
}

static void print_row(const rb_micro_row *r, unsigned traits)
{
    char wrong[24], err[24], recall[24];
    if (!r->checked) {
        snprintf(wrong, sizeof wrong, "-");
        snprintf(err, sizeof err, "-");
        snprintf(recall, sizeof recall, "-");
    } else {
        snprintf(wrong, sizeof wrong, (traits & RB_TRAIT_EXACT) ? "%lld" : "-", (long long)r->wrong);
        snprintf(err, sizeof err, "%.3e", traits & RB_TRAIT_GOSSIP ? r->consensus : r->rel_l2_err);
        snprintf(recall, sizeof recall, "%.4f", r->recall);
    }
    char bound[24];
    if (r->bound_bytes > 0)
        snprintf(bound, sizeof bound, "%.3f", r->wire_to_bound);
    else
        snprintf(bound, sizeof bound, "-");
    bench_printf0("%12llu %12llu %11.0f %11.2f %11.2f %11.2f %11.2f %11.2f %9.3f %9.3f %13.0f %13.0f %9s %8s %10s %7s\n",
                  (unsigned long long)r->size_bytes, (unsigned long long)r->count,
                  r->nnz_local_avg, r->t_avg_us, r->t_min_us, r->t_max_us, r->t_p50_us, r->t_p99_us,
                  r->algbw_gbs, r->busbw_gbs, r->bytes_sent_avg, r->bytes_sent_max, bound, wrong,
                  err, recall);
    fflush(stdout);
}

typedef struct run_ctx {
    const micro_opts *o;
    MPI_Comm comm;
    MPI_Comm agree;      /* any_failed's own: never matched against comm's collectives */
    int rank, p;
    micro_bufs *bufs;
    rb_archive *archive;
    rb_papi *papi;       /* counters per phase (hook of every reducer) */
    double *samples;     /* rank 0: iters x p */
    double *times;
    float *dev;          /* device copy of the gradient (-d cuda) */
} run_ctx;

/* dst = src with ordinary stores: a loop the compiler cannot turn into a
 * memcpy call (the XOR with a key it cannot see is 0), which vectorises. */
static volatile uint32_t store_copy_key;
static void store_copy(float *restrict dst, const float *restrict src, size_t n)
{
    uint32_t key = store_copy_key;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, src + i, sizeof u);
        u ^= key;
        memcpy(dst + i, &u, sizeof u);
    }
}

/* Copy the pristine input into the buffer the reducer works on (on the
 * device for -d cuda); untimed.  With ordinary stores, as a backward pass
 * writes the gradient: glibc's memcpy (rep movsb, non-temporal stores when
 * large) leaves its destination out of the first-level cache on AMD Zen,
 * where a dense call of 4 KiB then took 7-14% longer than on a buffer held
 * as OSU's loop holds its send buffer. */
static int load_input(run_ctx *c, size_t n)
{
    if (!c->dev) {
        store_copy(c->bufs->work, c->bufs->input, n);
        return RB_OK;
    }
    char msg[256];
    if (bench_dev_upload(c->dev, c->bufs->input, n, msg, sizeof msg)) {
        fprintf(stderr, PROG ": %s\n", msg);
        return RB_ERR_DEVICE;
    }
    return RB_OK;
}

/* Bring the device result back for validation. */
static int fetch_result(run_ctx *c, size_t n)
{
    char msg[256];
    if (c->dev && bench_dev_download(c->bufs->work, c->dev, n, msg, sizeof msg)) {
        fprintf(stderr, PROG ": %s\n", msg);
        return RB_ERR_DEVICE;
    }
    return RB_OK;
}

enum row_status { ROW_OK = 0, ROW_WRONG = 1, ROW_ERROR = 2, ROW_TIMEOUT = 3 };

static int one_call(run_ctx *c, rb_reducer *red, size_t n, rb_stats *st, double *t)
{
    int rc = load_input(c, n);
    if (rc != RB_OK)
        return rc;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    rb_sim_compute(c->o->compute);  /* --compute: the training-iteration model */
    rc = rb_reduce(red, c->dev ? c->dev : c->bufs->work, st);
    *t = MPI_Wtime() - t0;
    return rc;
}

/* Seconds a rank whose call failed waits for the others to agree. */
#define AGREE_TIMEOUT_S 30.0

/* All ranks learn whether any call of a loop failed (so no rank waits in
 * the next collective for one that gave up).  A failure in the middle of an
 * exchange (no memory for a stream, an MPI error; reducer.h says which
 * errors are collective) leaves the peers inside the reducer's collective,
 * where they would wait forever: the failing rank then aborts the job with
 * the reason instead of hanging.  Non-blocking on every rank, since MPI
 * never matches a blocking collective with a non-blocking one. */
static int any_failed(MPI_Comm comm, int rc)
{
    int worst = 0;
#ifdef HAVE_SIMGRID
    /* SMPI 3.32 deadlocks on MPI_Iallreduce + MPI_Wait here (seen with the
     * 'none' reducer at 4 ranks); a simulation is one process anyway. */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
#else
    int done = 0;
    MPI_Request req;
    MPI_Iallreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm, &req);
    if (rc == RB_OK) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return worst;
    }
    double t0 = MPI_Wtime();
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        if (MPI_Wtime() - t0 > AGREE_TIMEOUT_S) {
            int me = 0;
            MPI_Comm_rank(comm, &me);
            fprintf(stderr, PROG ": rank %d: the reducer failed (%s: %s) while the other ranks "
                    "are still inside its exchange; aborting the job rather than hang\n",
                    me, rb_strerror(rc), rb_last_error());
            MPI_Abort(comm, RB_EXIT_FAILED);
        }
        usleep(1000);
    }
#endif
    return worst;
}

static int papi_counts(const rb_papi *p)
{
    for (int i = 0; i < rb_papi_nevents(p); i++)
        if (rb_papi_available(p, i))
            return 1;
    return 0;
}

/* The warm-up (acc NULL) or timed calls of a row, back to back as in
 * OSU's loop: between two calls only the input's reload and the barrier (a
 * collective there, even agreeing on one int, slowed the next 4 KiB call
 * by ~5%; the deadline is checked only under -T).  A failure ends this
 * rank's loop; the ranks agree on it after the loop (any_failed). */
static int call_loop(run_ctx *c, rb_reducer *red, size_t n, int iters, call_acc *acc,
                     int *timed_out)
{
    rb_stats st;
    double t = 0.0;
    int rc = RB_OK;
    for (int i = 0; i < iters && rc == RB_OK; i++) {
        rc = one_call(c, red, n, &st, &t);
        if (rc != RB_OK || !acc)
            continue;
        acc->times[i] = t;
        for (int ph = 0; ph < RB_PHASE_COUNT_; ph++)
            acc->phase[ph] += st.t_phase[ph];
        acc->sent += (double)st.bytes_sent;
        acc->recv += (double)st.bytes_recv;
        if (c->o->timeout > 0 && bench_deadline_passed(c->comm)) {
            *timed_out = 1;
            break;
        }
    }
    return any_failed(c->agree, rc);
}

static int run_row(run_ctx *c, const char *reducer, uint64_t rows, uint64_t cols, rb_micro_row *row)
{
    const micro_opts *o = c->o;
    unsigned traits = 0;
    rb_reducer_traits(reducer, &traits);
    size_t n = rows * cols;
    rb_gradgen g = {
        .rows = rows, .cols = cols, .density = o->density, .layout = o->layout,
        .block = (size_t)o->ropts.block_size, .overlap = o->overlap, .nranks = c->p, .seed = o->seed,
    };
    memset(row, 0, sizeof *row);
    snprintf(row->reducer, sizeof row->reducer, "%s", reducer);
    snprintf(row->layout, sizeof row->layout, "%s", rb_layout_name(o->layout));
    snprintf(row->overlap, sizeof row->overlap, "%s", rb_overlap_name(o->overlap));
    snprintf(row->device, sizeof row->device, "%s", o->device == RB_DEVICE_CUDA ? "cuda" : "host");
    row->size_bytes = n * 4;
    row->count = n;
    row->rows = rows;
    row->cols = cols;
    row->density = o->density;
    row->ranks = c->p;
    row->iters = o->iters;
    row->warmup = o->warmup;

    /* The nnz/rank column: counted here, untimed (reducers count only what
     * their algorithm needs). */
    size_t own_nnz = rb_gradgen_fill(&g, c->rank, c->bufs->input);
    /* The truth gives the union support (for the wire-byte bound) and the
     * reference for validation. */
    /* Without validation (--no-check) it is not computed: nnz_union = -1
     * (unknown) and no bound. */
    uint64_t k = o->check ? compute_truth(&g, c->bufs) : 0;
    row->nnz_union = o->check ? (double)k : -1.0;
    row->bound_bytes = o->check && c->p > 1 && (traits & (RB_TRAIT_EXACT | RB_TRAIT_LOSSY))
                     ? 2.0 * (double)k * (c->p - 1) / c->p * 8.0 : 0.0;

    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = reducer;
    cfg.comm = c->comm;
    cfg.rows = rows;
    cfg.cols = cols;
    cfg.device = o->device;
    cfg.opts = o->ropts;
    /* The hook only where a counter counts: with one, every phase change
     * of the timed call reads the clock twice. */
    cfg.hook = papi_counts(c->papi) ? rb_papi_reducer_hook : NULL;
    cfg.hook_ctx = c->papi;
    cfg.phase_times = o->phase_times;
    rb_reducer *red = NULL;
    int rc = rb_create(&cfg, &red);
    if (rc != RB_OK) {
        bench_printf0("# %s: cannot create reducer: %s: %s\n", reducer, rb_strerror(rc), rb_last_error());
        return ROW_ERROR;
    }
    call_acc acc = {.times = c->times, .nnz_local = (double)own_nnz};
    int timed_out = 0;
    rc = call_loop(c, red, n, o->warmup, NULL, &timed_out);
    rb_papi_reset(c->papi);  /* count the timed calls only */
    if (rc == RB_OK)
        rc = call_loop(c, red, n, o->iters, &acc, &timed_out);
    int status = rc != RB_OK ? ROW_ERROR : timed_out ? ROW_TIMEOUT : ROW_OK;
    if (status == ROW_ERROR) {
        bench_printf0("# %s: reduce failed at size %llu: %s: %s\n", reducer,
                      (unsigned long long)row->size_bytes, rb_strerror(rc), rb_last_error());
    }
    rb_destroy(red);
    if (status != ROW_OK)
        return status;

    summarise(&acc, o->iters, c->comm, row, c->samples);
    if (!o->phase_times)
        row->t_encode_us = row->t_comm_us = row->t_decode_us = NAN;
    row->wire_to_bound = row->bound_bytes > 0 ? row->bytes_sent_avg / row->bound_bytes : 0.0;
    if (any_failed(c->comm, fetch_result(c, n)) != RB_OK)
        return ROW_ERROR;
    if (o->check && !(traits & RB_TRAIT_NOCOMM)) {
        /* Test hook proving the validator catches a wrong value. */
        if (c->rank == 0 && n > 0 && getenv("RB_TEST_CORRUPT_RESULT"))
            c->bufs->work[n / 2] += 1.0f;
        check_result cr;
        check_result_of(c->bufs, &g, traits, c->comm, &cr);
        row->checked = 1;
        row->wrong = cr.wrong;
        row->rel_l2_err = cr.rel_l2;
        row->max_abs_err = cr.max_abs;
        row->recall = cr.recall;
        row->consensus = cr.consensus;
    }
    print_row(row, traits);
    if (rb_archive_micro_row(c->archive, row, &o->ropts, c->samples, o->iters, c->p)
        || rb_archive_micro_papi(c->archive, c->papi))
        return ROW_ERROR;
    return row->wrong > 0 ? ROW_WRONG : ROW_OK;
}

static void print_preamble(const micro_opts *o, int p, int argc, char **argv)
{
    if (o->quiet)
        return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    bench_printf0("# " PROG " (reducerbench %s)\n# command:", RB_VERSION_STRING);
    for (int i = 0; i < argc; i++)
        bench_printf0(" %s", argv[i]);
    bench_printf0("\n# MPI: %s\n# ranks: %d\n", lib, p);
    bench_printf0("# data: density %g, layout %s, overlap %s, cols %llu, seed %llu, device %s\n",
                  o->density, rb_layout_name(o->layout), rb_overlap_name(o->overlap),
                  (unsigned long long)o->cols, (unsigned long long)o->seed,
                  o->device == RB_DEVICE_CUDA ? "cuda" : "host");
    bench_printf0("# timing: %d warm-up + %d timed calls per size, back to back: reload the\n"
                  "#   input (untimed), MPI_Barrier, MPI_Wtime around rb_reduce (osu_allreduce's\n"
                  "#   cadence: MPI_Wtime around MPI_Allreduce, MPI_Barrier); phases %s;\n"
                  "#   avg/min/max over ranks of per-rank means, p50/p99 over iterations of\n"
                  "#   the slowest rank; algbw = size/avg (GB/s), busbw = algbw*2(p-1)/p\n",
                  o->warmup, o->iters,
                  o->phase_times ? "timed (a clock read per phase change)" : "not timed");
    bench_printf0("# validation: %s (exact tolerance %.2e absolute)\n",
                  o->check ? "on" : "off", exact_tolerance(p));
    bench_printf0("# malloc: %s\n", bench_malloc_policy());
}

/* -d cuda: pick this rank's GPU by node-local rank, allocate the device
 * gradient, record the GPU in the preamble and the archive.  Collective. */
static int setup_device(run_ctx *c, size_t max_n)
{
    char msg[256] = "";
    int gpu = -1, ok = rb_device_select(c->comm, &gpu) == RB_OK;
    if (!ok)
        snprintf(msg, sizeof msg, "%s", rb_last_error());
    else
        ok = bench_dev_alloc(&c->dev, max_n, msg, sizeof msg) == 0;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        if (!ok)
            fprintf(stderr, PROG ": -d cuda: %s\n", msg);
        return -1;
    }
    char desc[512] = "";
    if (rb_device_describe(desc, sizeof desc) != RB_OK)
        snprintf(desc, sizeof desc, "GPU %d (%s)", gpu, rb_last_error());
    bench_printf0("# device: %s\n# device timing: every call synchronises the device before it returns\n", desc);
    hid_t f = rb_archive_file(c->archive);
    if (f != H5I_INVALID_HID)
        rb_h5_attr_str(f, "device", desc);
    return 0;
}

static size_t reducer_list(const micro_opts *o, const char **names, size_t max)
{
    size_t k = 0;
    if (!strcmp(o->reducers, "all")) {
        for (size_t i = 0; i < rb_reducer_count() && k < max; i++)
            names[k++] = rb_reducer_name_at(i);
        return k;
    }
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", o->reducers);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && k < max;
         tok = strtok_r(NULL, ",", &save))
        names[k++] = tok;
    return k;
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv, "rb_micro");
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (!bench_argv_agree(comm, argc, argv))
        bench_usage_error(PROG, "ranks were started with different command lines");
    micro_opts o;
    parse_args(argc, argv, &o);
    if (o.overlap == RB_OVERLAP_NONE && o.density * p > 1.0)
        bench_usage_error(PROG, "--overlap none: density %g x %d ranks exceeds 1", o.density, p);

    uint64_t shapes[64][2];
    size_t nshapes = build_shapes(&o, shapes, 64);
    size_t max_n = 0;
    for (size_t s = 0; s < nshapes; s++)
        if (shapes[s][0] * shapes[s][1] > max_n)
            max_n = shapes[s][0] * shapes[s][1];

    /* Binding and counters first, so the archive records them. */
    if (rb_bind(comm, PROG, o.bind))
        bench_exit(RB_EXIT_FAILED);
    static const char *const phase_names[RB_PHASE_COUNT_] = {"encode", "comm", "decode"};
    rb_papi *papi = NULL;
    if (rb_papi_open(comm, PROG, o.papi_events, RB_PHASE_COUNT_, phase_names, &papi))
        bench_exit(RB_EXIT_USAGE);
    rb_archive *archive = NULL;
    if (rb_archive_open(comm, PROG, o.output, o.force, argc, argv, &archive))
        bench_exit(RB_EXIT_USAGE);

    micro_bufs bufs = {0};
    int ok = alloc_bufs(&bufs, max_n, o.check) == 0;
    double *times = malloc((size_t)o.iters * sizeof *times);
    double *samples = malloc((size_t)o.iters * (size_t)p * sizeof *samples);
    ok = ok && times && samples;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        bench_printf0(PROG ": out of memory for %zu-element buffers\n", max_n);
        rb_archive_close(archive, 0);
        bench_exit(RB_EXIT_FAILED);
    }

    print_preamble(&o, p, argc, argv);
    if (archive)
        bench_printf0("# archive: %s\n", rb_archive_path(archive));
    bench_watchdog_start(o.timeout);
    run_ctx ctx = {.o = &o, .comm = comm, .rank = rank, .p = p, .bufs = &bufs,
                   .archive = archive, .papi = papi, .samples = samples, .times = times};
    MPI_Comm_dup(comm, &ctx.agree);
    if (o.device == RB_DEVICE_CUDA && setup_device(&ctx, max_n) != 0) {
        rb_archive_close(archive, 0);
        bench_exit(RB_EXIT_FAILED);
    }
    const char *names[32];
    size_t nred = reducer_list(&o, names, 32);
    int exit_code = RB_EXIT_OK, had_error = 0;
    for (size_t ri = 0; ri < nred && exit_code != RB_EXIT_TIMEOUT; ri++) {
        unsigned traits = 0;
        rb_reducer_traits(names[ri], &traits);
        print_block_header(names[ri], traits, &o);
        for (size_t s = 0; s < nshapes; s++) {
            rb_micro_row row;
            int st = run_row(&ctx, names[ri], shapes[s][0], shapes[s][1], &row);
            if (st == ROW_TIMEOUT) {
                bench_printf0("# time limit of %g s reached; stopping\n", o.timeout);
                exit_code = RB_EXIT_TIMEOUT;
                break;
            }
            if (st != ROW_OK)
                exit_code = RB_EXIT_FAILED;
            if (st == ROW_ERROR) {
                had_error = 1;
                break;
            }
        }
    }
    /* A run with validation failures is a complete measurement (the file
     * records #wrong); errors and timeouts leave no complete-looking file. */
    int complete = !had_error && exit_code != RB_EXIT_TIMEOUT;
    /* rb_archive_close frees the archive: keep its path for the message. */
    char written[4096] = "";
    if (archive && complete)
        snprintf(written, sizeof written, "%s", rb_archive_path(archive));
    if (rb_archive_close(archive, complete))
        exit_code = RB_EXIT_FAILED;
    else if (written[0])
        bench_printf0("# archive written: %s\n", written);
    bench_dev_free(ctx.dev);
    MPI_Comm_free(&ctx.agree);
    rb_papi_close(papi);
    free_bufs(&bufs);
    free(times);
    free(samples);
    bench_exit(exit_code);
}
