/* rb_sketch: count-sketch throughput against this machine's single-core
 * memcpy bandwidth, and s2's decode error for a sparse embedding gradient,
 * in one run on one core.
 *
 *   rb_sketch [--rows N] [--cols M] [--density D] [--ratio R] [--ranks P]
 *             [-i/--iterations N] [--seed S] [--no-error]
 *
 * Defaults: the S2 authors' GNMT setting, a 32317 x 1024 float embedding
 * gradient with 2% of its rows non-zero, sketch width c = N*M*D*R with
 * R = 0.25, for r = 1, 3, 5 sketch rows.
 *
 * Throughput.  encode = rb_cs_insert_run over the non-zero rows of one
 * rank's gradient (the s2 insert), decode = rb_cs_query_run over the same
 * rows.  "elem/s" counts elements encoded or decoded.  Two byte counts:
 *   stream B/s = 4 bytes per element: the gradient values encode reads and
 *                decode writes (what a memcpy of those rows would move);
 *   touched B/s = encode 4 + 8r (value read, counter read+write per row),
 *                 decode 4 + 4r (counter read per row, value written).
 * Times are CPU time of the thread (see now()), best of --iterations.
 * memcpy B/s is bytes copied per second for a buffer of the gradient's size
 * (the best of the iterations); "%memcpy" = stream B/s / memcpy B/s, the
 * figure the >= 25% target is about.  The s2 scan (finding non-zero rows,
 * a read of the whole gradient) is timed on its own line.
 *
 * Error.  P ranks' gradients (benchmarks/harness/gradgen, row layout, random
 * overlap) are sketched and summed exactly as s2 does on P ranks (merge =
 * sum-allreduce, then / P) and decoded on the union rows; against the exact
 * average: relative L2 error, recall of the true non-zero rows, max abs error,
 * for c = rows*cols*density*ratio x {0.25, 1, 4, 16} and r = 1, 3, 5, next to
 * sqrt(U/c), the relative error r = 1 should show (docs/s2.md). */
#include "sketch.h"

#include "reducer_sketch.h"
#include "harness/bench_common.h"
#include "harness/memneed.h"
#include "harness/gradgen.h"
#include "reducer.h"
#include "reducer_sparse.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds of CPU time of this thread: on a shared, oversubscribed machine
 * the time slices other processes take are not counted (their cache
 * pollution still is).  Wall time would measure the neighbours. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Visit maximal runs of set bits. */
typedef void (*run_fn)(void *ctx, size_t first, size_t count);
static void for_each_run(const uint64_t *bm, size_t nbits, run_fn fn, void *ctx)
{
    for (size_t i = 0; i < nbits;) {
        if (!rb_bitmap_test(bm, i)) { i++; continue; }
        size_t first = i;
        while (i < nbits && rb_bitmap_test(bm, i))
            i++;
        fn(ctx, first, i - first);
    }
}

typedef struct job {
    rb_countsketch *cs;
    float *x;
    size_t cols;
} job;

static void insert_fn(void *v, size_t first, size_t count)
{
    job *j = v;
    rb_cs_insert_run(j->cs, first * j->cols, j->x + first * j->cols, count * j->cols);
}

static void query_fn(void *v, size_t first, size_t count)
{
    job *j = v;
    rb_cs_query_run(j->cs, first * j->cols, j->x + first * j->cols, count * j->cols);
}

static double memcpy_bandwidth(size_t bytes, int iters)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) { free(a); free(b); return 0; }
    memset(a, 1, bytes);
    memset(b, 2, bytes);   /* touch both so page faults are not timed */
    double best = 1e30;
    for (int i = 0; i < iters; i++) {
        double t = now();
        memcpy(i & 1 ? a : b, i & 1 ? b : a, bytes);
        t = now() - t;
        best = t < best ? t : best;
    }
    volatile char sink = a[bytes / 2] + b[bytes / 3];
    (void)sink;
    free(a);
    free(b);
    return bytes / best;
}

static size_t sketch_width(const sketch_args *a, double scale)
{
    double c = ceil((double)a->rows * a->cols * a->density * a->ratio * scale);
    /* Not clamped to what fits: rb_cs_init says why a width is refused
     * (the cap only keeps the cast defined). */
    return c < 1 ? 1 : c > 1e18 ? (size_t)1e18 : (size_t)c;
}

/* The fastest of --iterations encodes (x into cs) and decodes (cs into
 * work) over the rows of bm, in seconds: best[0] encode, best[1] decode.
 * Round -1 is untimed: it faults in the sketch and the output buffer
 * (with few --iterations, the first round's page faults made "best of"
 * under-report). */
static void best_encode_decode(const sketch_args *a, rb_countsketch *cs, float *x, float *work,
                               const uint64_t *bm, double best[2])
{
    best[0] = best[1] = 1e30;
    for (int i = -1; i < a->iters; i++) {
        job je = {cs, x, a->cols}, jd = {cs, work, a->cols};
        rb_cs_zero(cs);
        double t = now();
        for_each_run(bm, a->rows, insert_fn, &je);
        double te = now() - t;
        t = now();
        for_each_run(bm, a->rows, query_fn, &jd);
        double td = now() - t;
        if (i >= 0) {
            best[0] = te < best[0] ? te : best[0];
            best[1] = td < best[1] ? td : best[1];
        }
    }
}

static int throughput(const sketch_args *a, const bench_gradgen *g, float *x, uint64_t *bm, double mbw)
{
    size_t n = a->rows * a->cols;
    size_t elems = bench_gradgen_fill(g, 0, x);
    double t = now(), best_scan = 1e30;
    rb_bitmap_of_groups(x, n, a->cols, bm);   /* untimed: faults the bitmap in */
    for (int i = 0; i < a->iters; i++) {
        t = now();
        rb_bitmap_of_groups(x, n, a->cols, bm);
        t = now() - t;
        best_scan = t < best_scan ? t : best_scan;
    }
    printf("# memcpy (1 core, %zu MB): %.2f GB/s\n", n * 4 >> 20, mbw / 1e9);
    printf("# scan for non-zero rows (reads %zu MB): %.2f GB/s = %.0f%% of memcpy\n",
           n * 4 >> 20, n * 4.0 / best_scan / 1e9, 100.0 * n * 4.0 / best_scan / mbw);
    printf("# encode/decode over %zu elements (%.1f%% of rows), c = %zu; best of %d\n",
           elems, 100.0 * elems / n, sketch_width(a, 1), a->iters);
    printf("# stream = 4 B/element; touched = encode 4+8r, decode 4+4r B/element\n");
    printf("%-7s %2s %10s %9s %12s %13s %12s %13s\n", "phase", "r", "c", "Melem/s", "stream GB/s",
           "touched GB/s", "stream/memcpy", "touched/memcpy");
    float *work = malloc(n * sizeof *work);
    if (!work) {
        bench_fail(BENCH_NO_CODE, "throughput", "out of memory for %zu floats", n);
        return -1;
    }
    for (int r = 1; r <= 5; r += 2) {
        rb_countsketch cs;
        int rc = rb_cs_init(&cs, r, sketch_width(a, 1), a->seed);
        if (rc != RB_OK) {
            bench_fail(rc, "throughput: sketch", "%s", rb_last_error());
            free(work);
            return -1;
        }
        double best[2];
        best_encode_decode(a, &cs, x, work, bm, best);
        for (int d = 0; d < 2; d++) {
            double eps = elems / best[d];
            double touched = d == 0 ? 4.0 + 8.0 * r : 4.0 + 4.0 * r;
            printf("%-7s %2d %10zu %9.1f %12.2f %13.2f %12.0f%% %13.0f%%\n", d == 0 ? "encode" : "decode", r,
                   cs.cols, eps / 1e6, eps * 4 / 1e9, eps * touched / 1e9, 100.0 * eps * 4 / mbw,
                   100.0 * eps * touched / mbw);
        }
        rb_cs_free(&cs);
    }
    free(work);
    return 0;
}

/* One s2 step on a.ranks simulated ranks; errors against the exact average. */
/* Non-zero rows of m (rows x cols), and its squared norm in *norm2. */
static size_t nonzero_rows(const float *m, size_t rows, size_t cols, double *norm2)
{
    size_t found = 0;
    *norm2 = 0;
    for (size_t row = 0; row < rows; row++) {
        int nz = 0;
        for (size_t c = 0; c < cols; c++) {
            float v = m[row * cols + c];
            nz |= v != 0.0f;
            *norm2 += (double)v * v;
        }
        found += nz;
    }
    return found;
}

/* Every rank's gradient sketched (r rows, width `width`), the sketches
 * summed and scaled by 1/ranks, decoded over the union of the ranks' rows
 * (into uni) into est, zeroed first; *cols the width the sketch took.
 * RB_OK or the library's code. */
static int sketch_average(const sketch_args *a, bench_gradgen *g, float *x, uint64_t *bm, uint64_t *uni,
                          int r, size_t width, float *est, size_t *cols)
{
    size_t n = a->rows * a->cols, words = rb_bitmap_words(a->rows);
    rb_countsketch sum, one;
    int rc = rb_cs_init(&sum, r, width, a->seed);
    if (rc == RB_OK && (rc = rb_cs_init(&one, r, width, a->seed)) != RB_OK)
        rb_cs_free(&sum);
    if (rc != RB_OK)
        return rc;
    memset(uni, 0, words * sizeof *uni);
    for (int k = 0; k < a->ranks; k++) {
        bench_gradgen_fill(g, k, x);
        rb_bitmap_of_groups(x, n, a->cols, bm);
        rb_bitmap_or(uni, bm, words);
        rb_cs_zero(&one);
        job j = {&one, x, a->cols};
        for_each_run(bm, a->rows, insert_fn, &j);
        rb_cs_merge(&sum, &one);
    }
    rb_cs_scale(&sum, 1.0f / (float)a->ranks);
    memset(est, 0, n * sizeof *est);
    job j = {&sum, est, a->cols};
    for_each_run(uni, a->rows, query_fn, &j);
    *cols = sum.cols;
    rb_cs_free(&sum);
    rb_cs_free(&one);
    return RB_OK;
}

/* One line of the table: est against the exact average avg. */
static void error_line(const sketch_args *a, double scale, size_t cols, int r, const float *avg,
                       const float *est, const uint64_t *uni, size_t true_rows, double norm2)
{
    size_t n = a->rows * a->cols, found = 0;
    double err2 = 0, maxerr = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)est[i] - avg[i];
        err2 += d * d;
        maxerr = fabs(d) > maxerr ? fabs(d) : maxerr;
    }
    for (size_t row = 0; row < a->rows; row++) {
        int t = 0, e = 0;
        for (size_t c = 0; c < a->cols; c++) {
            t |= avg[row * a->cols + c] != 0.0f;
            e |= est[row * a->cols + c] != 0.0f;
        }
        found += t && e;
    }
    double decoded = (double)rb_bitmap_popcount(uni, a->rows) * a->cols;
    printf("%-8g %10zu %2d %12.4g %10.4g %8.4f %12.4g\n", scale * a->ratio, cols, r,
           norm2 > 0 ? sqrt(err2 / norm2) : 0.0, sqrt(decoded / cols),
           true_rows ? (double)found / true_rows : 1.0, maxerr);
}

static int error_table(const sketch_args *a, bench_gradgen g, float *x, uint64_t *bm)
{
    size_t n = a->rows * a->cols, words = rb_bitmap_words(a->rows);
    g.nranks = a->ranks;
    float *avg = malloc(n * sizeof *avg), *est = calloc(n, sizeof *est);
    uint64_t *uni = calloc(words ? words : 1, sizeof *uni);
    int rc = 0;
    if (!avg || !est || !uni || bench_gradgen_average(&g, avg, x) != 0) {
        bench_fail(BENCH_NO_CODE, "error table", "out of memory for the exact average of %zu floats", n);
        rc = -1;
    }
    double norm2 = 0;
    size_t true_rows = rc ? 0 : nonzero_rows(avg, a->rows, a->cols, &norm2);
    if (!rc) {
        printf("# s2 error: %d ranks, row density %g, random overlap, exact average has %zu non-zero "
               "rows\n", a->ranks, a->density, true_rows);
        printf("# sqrt(U/c): the r = 1 prediction, U = elements decoded (union rows x cols)\n");
        printf("%-8s %10s %2s %12s %10s %8s %12s\n", "c/nmd", "c", "r", "rel_l2_err", "sqrt(U/c)",
               "recall", "max_abs_err");
    }
    const double scales[] = {0.25, 1.0, 4.0, 16.0};
    for (size_t si = 0; !rc && si < sizeof scales / sizeof scales[0]; si++) {
        for (int r = 1; !rc && r <= 5; r += 2) {
            size_t cols = 0;
            int lib = sketch_average(a, &g, x, bm, uni, r, sketch_width(a, scales[si]), est, &cols);
            if (lib != RB_OK) {
                bench_fail(lib, "error table: sketch", "%s", rb_last_error());
                rc = -1;
            } else {
                error_line(a, scales[si], cols, r, avg, est, uni, true_rows, norm2);
            }
        }
    }
    free(avg);
    free(est);
    free(uni);
    return rc;
}

/* Bytes the run holds at its largest: the gradient, plus the largest of
 * what the phases allocate one after the other: memcpy's two copies; the
 * throughput's work buffer and a 5-row sketch; the error table's average
 * and estimate and two 5-row sketches at its widest scale (16x). */
static double memory_need(const sketch_args *a, double *sketches)
{
    double n = (double)a->rows * (double)a->cols, c1 = (double)sketch_width(a, 1.0);
    double c16 = a->error ? (double)sketch_width(a, 16.0) : 0.0;
    double phase = fmax(8.0 * n, 4.0 * n + 20.0 * c1);
    if (a->error)
        phase = fmax(phase, 8.0 * n + 40.0 * c16 + n / 8.0);
    *sketches = fmax(20.0 * c1, 40.0 * c16);
    return 4.0 * n + phase + (double)a->rows / 4.0;
}

/* Refuses (exit 2, both numbers) a run that does not fit, before it
 * allocates anything. */
static void check_memory(const sketch_args *a)
{
    char source[96] = "";
    double sk, need = memory_need(a, &sk);
    double limit = bench_mem_limit(MPI_COMM_WORLD, a->mem_limit, source, sizeof source);
    printf("# memory: need %.3g MiB (sketches %.3g), limit %.3g MiB (%s)\n", need / 1048576.0,
           sk / 1048576.0, limit / 1048576.0, limit > 0 ? source : "unknown: not checked");
    char what[64];
    snprintf(what, sizeof what, "(sketches %.3g)", sk / 1073741824.0);
    bench_mem_refuse_if("rb_sketch", need, limit, source, what, "this process",
                        "use smaller --rows, --cols or --ratio, --no-error");
}

/* Under mpirun -n P every process ran its own benchmark, P tables
 * interleaved on stdout, timed on shared cores (and, with different
 * command lines, only rank 0's shown): refused, exit 2.  Called before
 * parsing, so that no rank can leave alone on an option only it was
 * given. */
static void refuse_several_processes(void)
{
    int procs = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    if (procs > 1)
        bench_usage_error(bench_prog(), "runs on one process (--ranks P simulates P ranks); it was "
                          "started on %d: run it without mpirun, or with one rank", procs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);   /* not bench_mpi_init: the allocator keeps its policy */
    bench_set_prog("rb_sketch");
    refuse_several_processes();   /* before parsing: see there */
    sketch_args a;
    sketch_parse_options(argc, argv, &a);
    check_memory(&a);
    size_t n = a.rows * a.cols;
    bench_gradgen g = {.rows = a.rows, .cols = a.cols, .density = a.density, .layout = BENCH_LAYOUT_ROW,
                    .overlap = BENCH_OVERLAP_RANDOM, .nranks = a.ranks, .seed = a.seed};
    float *x = malloc(n * sizeof *x);
    uint64_t *bm = calloc(rb_bitmap_words(a.rows), sizeof *bm);
    if (!x || !bm) {
        bench_fail(BENCH_NO_CODE, "buffers", "out of memory for %zu floats", n);
        bench_exit(BENCH_EXIT_FAILED);
    }
    printf("# rb_sketch: %zu x %zu floats, row density %g, c = rows*cols*density*%g, one core\n",
           (size_t)a.rows, (size_t)a.cols, a.density, a.ratio);
    printf("# times are thread CPU time (CLOCK_THREAD_CPUTIME_ID), best of %d iterations;\n"
           "# on a shared machine they are still noisy\n", a.iters);
    double mbw = memcpy_bandwidth(n * sizeof(float), a.iters + 2);
    int rc = throughput(&a, &g, x, bm, mbw);
    if (rc == 0 && a.error)
        rc = error_table(&a, g, x, bm);
    free(x);
    free(bm);
    bench_exit(rc == 0 ? BENCH_EXIT_OK : BENCH_EXIT_FAILED);
}
