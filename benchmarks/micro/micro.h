/* benchmarks/micro: rb_micro, the microbenchmark.  One reducer (or all) on
 * synthetic sparse gradients, swept over sizes; a text table on stdout and
 * an HDF5 archive (results/README.md).
 *
 * One row, in the order its data flows (docs/architecture.md):
 *   micro_input.c    the sweep's shapes, the buffers, this rank's synthetic
 *                    gradient (harness/gradgen.h) and the exact average
 *   micro_measure.c  one row: the reducer, warm-up and timed rb_reduce
 *                    calls, failures agreed by every rank
 *   micro_stats.c    the timed calls' per-rank figures -> the row's
 *                    statistics (micro_row, micro_row.h)
 *   micro_check.c    validation against the exact average
 *   micro_output.c   the row's writers: the stdout table, the archive
 *   micro_row.c      the columns of /micro/results and the row's HDF5 type
 *   micro_archive.c  the row, its samples and PAPI counts into the archive
 *                    (/micro; the harness's archive owns the file)
 * and around it:
 *   micro_options.c  the command line (a bench_cli table) and its checks
 *   micro_jsonl.c    -J: the finished archive's rows as JSON lines
 *   rb_micro.c       main: set-up, the sweep over reducers and sizes, the
 *                    exit status
 *
 * A new column: a field of micro_row and of the column table (micro_row.c),
 * its value in micro_stats.c, its printing in micro_output.c.  A new output format: a writer in micro_output.c that
 * micro_write_row calls.  The room calls the harness and the library;
 * nothing below calls into it. */
#ifndef RB_MICRO_H
#define RB_MICRO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/archive.h"
#include "harness/bench_cli.h"
#include "harness/bench_papi.h"
#include "harness/gradgen.h"
#include "harness/topology.h"
#include "harness/trace.h"
#include "micro_archive.h"
#include "micro_row.h"
#include "reducer.h"

#define PROG "rb_micro"
#define MICRO_MAX_SHAPES 64
#define MICRO_MAX_REDUCERS 32

/* ---------------------------------------------------------- options */

/* What the command line asks for. */
typedef struct micro_opts {
    char reducers[512];        /* comma list or "all" */
    uint64_t min_bytes, max_bytes;
    double factor;
    uint64_t shape_rows, shape_cols;  /* --shape RxC: one size */
    uint64_t cols;
    int iters, warmup, check;
    int repeat;                /* --repeat: repetitions of the whole sweep */
    double timeout;            /* --timeout: seconds; 0 = none */
    double stall_timeout;      /* --stall-timeout: seconds; 0 = off (bench_stall.h) */
    double density;
    bench_layout layout;
    bench_overlap overlap;
    double zipf_s;             /* --overlap zipf:S */
    const char *trace;         /* --input [rows,]trace:FILE.h5, or NULL */
    const char *trace_layer;   /* --trace-layer: NULL = the first */
    uint64_t seed;
    rb_options ropts;
    const char *output;
    const char *json;          /* -J: JSON lines of the rows, or NULL */
    const char *save_result;   /* --save-result: rank 0's last result as raw float32, or NULL */
    int force;
    int quiet;
    rb_device device;
    const char *papi_events;   /* -P: NULL = default */
    bench_bind_mode bind;
    double compute;            /* --compute: modelled compute seconds per call */
    double alpha, beta;        /* --alpha/--beta for the model; < 0: measured */
    uint64_t mem_limit;        /* -M: bytes a rank may hold; 0: from the node */
    int input_rows;            /* --input rows (or rows,trace:): rb_reduce_rows */
    int phase_times;           /* 0: --no-phase-times */
    int full;                  /* -f/--full: OSU's full listing, which the
                                  tables always are (nothing reads it) */
} micro_opts;

/* rb_micro's option table (for tests/harness/test_cli). */
extern const bench_cli micro_cli;
/* Parse and check the command line; exits 2 with a message naming the
 * option on bad input, 0 after --help.  ranks: for the checks that
 * depend on the job size. */
void micro_parse_options(int argc, char **argv, int ranks, micro_opts *o);

/* ---------------------------------------------------------- input */

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
    int ondemand;    /* input is an on-demand mapping (bench_ondemand_alloc):
                        under SMPI when validating, unless RB_SIM_ONDEMAND_INPUT=0 */
    /* Under SMPI every rank but 0 reads rank 0's truth and union mask (one
     * process: the simulated ranks share its address space) instead of
     * computing p gradients itself; such a rank never frees them. */
    int truth_borrowed;
    /* The gradient the input and truth were last made for: the next row
     * of the same shape and settings (every reducer of a sweep) reuses
     * them instead of making them again. */
    bench_gradgen made;
    int have_made;
    size_t made_nnz;
    uint64_t made_union;
    uint64_t made_union_rows;
    /* --input rows: the input's non-zero rows (ids, values), made untimed */
    int64_t *row_ids;
    float *row_values;
    rb_rows rows;
} micro_bufs;

/* How the input buffers are held, for the archive (sim_input). */
const char *micro_bufs_placement(const micro_bufs *b);
/* Shapes (rows, cols) of the sweep, at most max; how many. */
size_t micro_shapes(const micro_opts *o, uint64_t (*shapes)[2], size_t max);
/* Buffers for n elements (the truth's only when check, and under SMPI only
 * on rank 0: the others borrow its truth in micro_truth); 0 or -1. */
int micro_bufs_alloc(micro_bufs *b, size_t n, int check, int rows, int rank);
/* The non-zero rows of b->input (n elements, rows of cols) into b->rows. */
void micro_rows_of_input(micro_bufs *b, size_t n, size_t cols);
void micro_bufs_free(micro_bufs *b);
/* Collective: exact average of every rank's gradient g into b->truth, and
 * the union support; returns the union's non-zero count, its rows in
 * *union_rows.  Under SMPI rank 0 computes it once and the other ranks
 * point at it. */
uint64_t micro_truth(const bench_gradgen *g, micro_bufs *b, MPI_Comm comm, uint64_t *union_rows);

/* ---------------------------------------------------------- one row */

/* This machine for the cost model (micro_model.c): seconds per message,
 * seconds per byte, bytes per second of a local pass and of the sums
 * inside MPI reductions. */
typedef struct micro_machine {
    double alpha, beta, mem_bw, coll_bw;
    int alpha_given, beta_given;   /* from --alpha/--beta, not measured */
} micro_machine;

/* What every row of the run shares. */
typedef struct micro_run {
    const micro_opts *o;
    MPI_Comm comm;
    MPI_Comm agree;      /* any_failed's own: never matched against comm's collectives */
    int repeat;          /* the repetition being measured (--repeat) */
    micro_machine machine;
    double mem_need, mem_limit;   /* bytes per rank (micro_memory.c) */
    char mem_source[96];          /* where the limit comes from */
    int rank, p;
    micro_bufs *bufs;
    bench_archive *archive;
    bench_papi *papi;       /* counters per phase (hook of every reducer) */
    double *samples;     /* rank 0: iters x p */
    double *times;       /* this rank's time of each timed call */
    float *dev;          /* device copy of the gradient (-d cuda) */
    const bench_trace *trace;   /* --input trace: (NULL: synthetic) */
    size_t trace_step;       /* the step the row replays */
} micro_run;

/* ROW_ARCHIVE: the row was measured but the archive could not take it (a
 * full disk, a file size limit): no later row could be written either. */
enum micro_row_status { ROW_OK = 0, ROW_WRONG = 1, ROW_ERROR = 2, ROW_TIMEOUT = 3, ROW_ARCHIVE = 4 };

/* Measure, validate and write one row (collective); a micro_row_status. */
int micro_run_row(micro_run *c, const char *reducer, uint64_t rows, uint64_t cols, micro_row *row);

/* ---------------------------------------------------------- memory */

/* Bytes a rank will hold at the largest size (max_n elements) with the
 * reducers names: buffers, the exact average when checking, the largest
 * reducer state (bounded from its algorithm), the samples. */
double micro_memory_need(const micro_opts *o, int p, size_t max_n, const char *const *names,
                         size_t nred);

/* ---------------------------------------------------------- cost model */

/* Collective: alpha and beta from a ping-pong of ranks 0 and 1 (SimGrid's
 * platform under SMPI; 0 on one rank) unless given, the local bandwidth
 * from a copy over the run's buffers (c->bufs set). */
void micro_probe_machine(micro_run *c, size_t max_n, micro_machine *m);
/* The row's model time (t_model_us, NaN for a reducer without a model)
 * and measured / model; nnz_max: the largest input over ranks. */
void micro_model_row(micro_run *c, const micro_machine *m, double nnz_max, micro_row *row);
/* Before the calls: the model's seconds for one call of the row on this
 * rank's nnz input non-zeros (NaN without a model), what the progress
 * watchdog expects of a call. */
double micro_model_expect(micro_run *c, const micro_row *row, double nnz);

/* ---------------------------------------------------------- statistics */

/* This rank's figures of the timed calls of one row. */
typedef struct micro_calls {
    double *times;       /* per iteration */
    double phase[RB_PHASE_COUNT_];
    double sent, recv, nnz_local;
    double msgs;         /* messages sent, summed over the timed calls */
} micro_calls;

/* Timed call i (t seconds, the reducer's stats) into c. */
void micro_calls_add(micro_calls *c, int i, double t, const rb_stats *st);
/* Collective: the row's statistics from every rank's calls; the samples
 * (iteration x rank, microseconds) gathered into samples on rank 0. */
void micro_summarise(const micro_calls *c, int iters, MPI_Comm comm, micro_row *row,
                     double *samples);

/* ---------------------------------------------------------- validation */

/* Largest error allowed for an exact reducer on p ranks. */
double micro_exact_tolerance(int p);
/* Collective: the result in c->bufs->work against the exact average of g
 * into the row's error columns (checked = 1). */
void micro_validate(micro_run *c, const bench_gradgen *g, unsigned traits, micro_row *row);

/* ---------------------------------------------------------- output */

/* The machine the cost model column uses, one preamble line. */
void micro_print_machine(const micro_machine *m);
/* The memory need and limit, one preamble line. */
void micro_print_memory(const micro_run *c);
void micro_print_preamble(const micro_opts *o, int p, int argc, char **argv);
/* The block of one reducer in repetition rep (said when --repeat > 1). */
void micro_print_block_header(const char *reducer, unsigned traits, const micro_opts *o, int rep);
/* Collective: the row to every writer (the table on rank 0, the archive
 * with its samples and PAPI counts); 0, or non-zero on every rank. */
int micro_write_row(micro_run *c, const micro_row *row, unsigned traits);

#endif
