/* Multi-rank test of every exact reducer (registry trait RB_TRAIT_EXACT)
 * and of the algorithm variants of sparcml / parallax / omnireduce, on the
 * deterministic gradients of benchmarks/harness/gradgen.h:
 *
 *   - result == exact average for densities {0, 1e-4, 1e-2, 0.3, 1},
 *     layouts {element, row, block}, overlaps {random, all, none}, sizes
 *     {0, 1, p - 1 (fewer elements than ranks), 13 (one row of 13), 1001}
 *     (and with --big, 2^22 elements for every variant); every non-zero on
 *     one rank, in one window, or on the even ranks only.  Reducers persist
 *     over a sweep: state between calls meets changing supports.
 *     Tolerance per element: |x - ref| <= 1e-5 * (1 + sum_r |x_r|) / p,
 *     ref = the average computed in double;
 *   - every reducer (s2, oktopk topk, gossip and none too) on NaN, +-inf,
 *     sums that overflow, denormals and -0.0 (check_special_values says
 *     what each must give; docs/values.md), and finite calls after them;
 *   - oktopk_select=topk keeps the top-min(k, union) sums on any rank
 *     count where every rank sends all its non-zeros, and sends and keeps
 *     at most 4k/3 after a first call without non-zeros;
 *   - stats: nnz_local, where the reducer counts it, is the rank's
 *     non-zero count;
 *   - wire bytes of agsparse and sparcml (recdbl and rsag) within 10% of the
 *     formulas of docs/wire-bytes.md, on a case whose union is known
 *     (overlap all: every rank has the same support);
 *   - ranks disagreeing on rows, options or reducer name get RB_ERR_MISMATCH
 *     on every rank (rows and cols for every reducer, 4x3 against 6x2
 *     too); a bad option value gives RB_ERR_ARG naming the key;
 *   - rb_node_rank refuses an inherited SLURM_LOCALID and world values on a
 *     sub-communicator, and keeps a valid permutation.
 *
 * Usage: test_reducers [--big | --small]; --small: the agreement checks, the
 * shapes of fewer than 14 elements and the value edges only (for many
 * oversubscribed ranks).  Exit 0 when every rank passed, 1 otherwise. */
#include "harness/gradgen.h"
#include "reducer.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5
#define MAX_VARIANTS 32

typedef struct variant {
    const char *name;
    const char *opts[2];
    char label[64];
} variant;

static int rank, nranks, failures, reported;

#define FAIL(...) do { failures++; if (reported++ < 20) { \
        fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)

static void add_variant(variant *v, int *nv, const char *name, const char *o1, const char *o2)
{
    variant *x = &v[(*nv)++];
    x->name = name;
    x->opts[0] = o1;
    x->opts[1] = o2;
    snprintf(x->label, sizeof x->label, "%s%s%s%s%s", name, o1 ? " " : "", o1 ? o1 : "",
             o2 ? " " : "", o2 ? o2 : "");
}

/* Every exact reducer with default options, plus the algorithm variants. */
static int make_variants(variant *v)
{
    int nv = 0;
    for (size_t i = 0; i < rb_reducer_count(); i++) {
        unsigned traits = 0;
        const char *name = rb_reducer_name_at(i);
        if (rb_reducer_traits(name, &traits) == RB_OK && (traits & RB_TRAIT_EXACT))
            add_variant(v, &nv, name, NULL, NULL);
    }
    add_variant(v, &nv, "sparcml", "sparcml_algo=recdbl", NULL);
    add_variant(v, &nv, "sparcml", "sparcml_algo=rsag", NULL);
    /* switches to dense part-way: mixed dense/sparse stages */
    add_variant(v, &nv, "sparcml", "sparcml_algo=recdbl", "sparcml_switch=0.02");
    add_variant(v, &nv, "sparcml", "sparcml_algo=rsag", "sparcml_switch=0.02");
    add_variant(v, &nv, "parallax", "parallax_servers=1", NULL);
    add_variant(v, &nv, "parallax", "parallax_servers=0", NULL);
    add_variant(v, &nv, "omnireduce", "block_size=7", NULL);
    add_variant(v, &nv, "oktopk", "oktopk_balance=off", NULL);
    /* boundaries re-estimated on every call, from every input */
    add_variant(v, &nv, "oktopk", "oktopk_repartition=1", "oktopk_throttle=1");
    add_variant(v, &nv, "oktopk", "oktopk_throttle=1000", NULL);   /* every step at once */
    add_variant(v, &nv, "zen", "zen_bitmap=on", NULL);
    add_variant(v, &nv, "zen", "zen_bitmap=off", "seed=7");
    return nv;
}

/* v's options set on o; RB_OK or the first failure's code. */
static int set_variant_options(const variant *v, rb_options *o)
{
    for (int i = 0; i < 2; i++) {
        int rc = v->opts[i] ? rb_options_set(o, v->opts[i]) : RB_OK;
        if (rc != RB_OK)
            return rc;
    }
    return RB_OK;
}

static int create(const variant *v, size_t rows, size_t cols, rb_reducer **r)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = v->name;
    cfg.rows = rows;
    cfg.cols = cols;
    if (set_variant_options(v, &cfg.opts) != RB_OK)
        return -1;
    return rb_create(&cfg, r);
}

/* Inputs the generator's overlaps do not give: every non-zero on one rank
 * (the last), or every rank's non-zeros in a window of 1/16 of the rows
 * starting half-way (even index ranges put it all in one range). */
typedef enum { SKEW_NONE, SKEW_ONE_RANK, SKEW_WINDOW, SKEW_ODD_EMPTY } skew;
static const char *const skew_names[] = {"", " on one rank", " in a window",
                                         ", odd ranks empty"};

static size_t fill_input(const bench_gradgen *g, skew kind, int r, float *x)
{
    size_t n = g->rows * g->cols;
    if (kind == SKEW_NONE)
        return bench_gradgen_fill(g, r, x);
    memset(x, 0, n * sizeof *x);
    if (kind == SKEW_ONE_RANK)
        return r == g->nranks - 1 ? bench_gradgen_fill(g, r, x) : 0;
    if (kind == SKEW_ODD_EMPTY)
        return r % 2 ? 0 : bench_gradgen_fill(g, r, x);
    bench_gradgen w = *g;
    w.rows = g->rows / 16 ? g->rows / 16 : g->rows;
    return bench_gradgen_fill(&w, r, x + g->rows / 2 * g->cols);
}

/* Exact average (double) and sum of |x_r| per element, from every rank's
 * input; ordered (if not NULL): agsparse's float sum, each rank's value
 * times 1/p added in rank order (its order is fixed: bit for bit). */
static void reference(const bench_gradgen *g, skew kind, double *avg, double *absum, float *scratch,
                      float *ordered)
{
    size_t n = g->rows * g->cols;
    const float inv_p = 1.0f / (float)g->nranks;
    memset(avg, 0, n * sizeof *avg);
    memset(absum, 0, n * sizeof *absum);
    if (ordered)
        memset(ordered, 0, n * sizeof *ordered);
    for (int r = 0; r < g->nranks; r++) {
        fill_input(g, kind, r, scratch);
        for (size_t i = 0; i < n; i++) {
            avg[i] += scratch[i];
            absum[i] += fabs(scratch[i]);
            if (ordered && scratch[i] != 0.0f)
                ordered[i] += scratch[i] * inv_p;
        }
    }
    for (size_t i = 0; i < n; i++)
        avg[i] /= g->nranks;
}

typedef struct bufs {
    float *own, *work, *scratch, *ordered;
    double *avg, *absum;
    int has_ordered;   /* ordered holds this input's rank-order sum */
} bufs;

static int alloc_bufs(bufs *b, size_t n)
{
    size_t m = n ? n : 1;
    b->own = malloc(m * sizeof(float));
    b->work = malloc(m * sizeof(float));
    b->scratch = malloc(m * sizeof(float));
    b->ordered = malloc(m * sizeof(float));
    b->avg = malloc(m * sizeof(double));
    b->absum = malloc(m * sizeof(double));
    b->has_ordered = 0;
    return b->own && b->work && b->scratch && b->ordered && b->avg && b->absum ? 0 : -1;
}

static void free_bufs(bufs *b)
{
    free(b->own);
    free(b->work);
    free(b->scratch);
    free(b->ordered);
    free(b->avg);
    free(b->absum);
}

static void describe(char *buf, size_t len, const bench_gradgen *g, skew kind)
{
    snprintf(buf, len, "%zux%zu density %g layout %s overlap %s%s", g->rows, g->cols, g->density,
             bench_layout_name(g->layout), bench_overlap_name(g->overlap), skew_names[kind]);
}

/* Where the summation order is fixed, bit for bit: dense is MPI_Allreduce
 * of the floats times 1/p, agsparse the rank-order sum of b->ordered
 * (zeros compared by value: agsparse leaves a -0.0 outside the union). */
static void check_fixed_order(const char *name, const bufs *b, size_t n, const char *what)
{
    int dense = !strcmp(name, "dense");
    if ((!dense && (strcmp(name, "agsparse") || !b->has_ordered)) || n == 0)
        return;
    const float *want = b->ordered;
    if (dense) {
        const float inv_p = 1.0f / (float)nranks;
        memcpy(b->scratch, b->own, n * sizeof(float));
        MPI_Allreduce(MPI_IN_PLACE, b->scratch, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (size_t i = 0; i < n; i++)
            b->scratch[i] *= inv_p;
        want = b->scratch;
    }
    for (size_t i = 0; i < n; i++)
        if (memcmp(&b->work[i], &want[i], sizeof(float)) && !(b->work[i] == 0.0f && want[i] == 0.0f)) {
            FAIL("%s, %s: [%zu] = %a, the %s sum gives %a", name, what, i, (double)b->work[i],
                 dense ? "MPI_Allreduce" : "rank-order", (double)want[i]);
            return;
        }
}

/* One reduction on r of this rank's input (b->own), checked against ref. */
static void check_one(rb_reducer *r, const variant *v, const bench_gradgen *g, skew kind,
                      const bufs *b, size_t own_nnz)
{
    size_t n = g->rows * g->cols;
    char what[160];
    describe(what, sizeof what, g, kind);
    memcpy(b->work, b->own, n * sizeof(float));
    rb_stats st;
    int rc = rb_reduce(r, b->work, &st);
    if (rc != RB_OK) {
        FAIL("%s, %s: rb_reduce -> %s (%s)", v->label, what, rb_strerror(rc), rb_last_error());
        return;
    }
    if ((st.counted & RB_COUNTED_NNZ_LOCAL) && st.nnz_local != own_nnz)
        FAIL("%s, %s: nnz_local %llu, expected %zu", v->label, what,
             (unsigned long long)st.nnz_local, own_nnz);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double tol = TOL * (1.0 + b->absum[i]) / nranks;
        if (!(fabs((double)b->work[i] - b->avg[i]) <= tol)) {
            if (!wrong)
                first = i;
            wrong++;
        }
    }
    if (wrong)
        FAIL("%s, %s: %zu wrong values, first [%zu] = %g, expected %g", v->label, what, wrong,
             first, (double)b->work[first], b->avg[first]);
    if (!v->opts[0])
        check_fixed_order(v->name, b, n, what);
}

static const double densities[] = {0.0, 1e-4, 1e-2, 0.3, 1.0};

/* All densities x layouts x overlaps on one shape, every variant.  The
 * reducers persist over the sweep, as over training steps: state kept
 * between calls (oktopk's regions) meets inputs unlike those it came from. */
static void sweep_shape(const variant *v, int nv, size_t rows, size_t cols, skew kind)
{
    size_t n = rows * cols;
    bufs b;
    rb_reducer *red[MAX_VARIANTS] = {0};
    if (alloc_bufs(&b, n)) {
        FAIL("no memory for %zu elements", n);
        free_bufs(&b);
        return;
    }
    for (int i = 0; i < nv; i++) {
        int rc = create(&v[i], rows, cols, &red[i]);
        if (rc != RB_OK)
            FAIL("%s: rb_create %zux%zu -> %d (%s)", v[i].label, rows, cols, rc, rb_last_error());
    }
    for (size_t d = 0; d < sizeof densities / sizeof densities[0]; d++)
        for (int layout = 0; layout < 3; layout++)
            for (int overlap = 0; overlap < 3; overlap++) {
                bench_gradgen g = {.rows = rows, .cols = cols, .density = densities[d],
                                .layout = (bench_layout)layout, .block = 16,
                                .overlap = (bench_overlap)overlap, .nranks = nranks,
                                .seed = 1000 + d * 10 + (uint64_t)layout * 3 + (uint64_t)overlap};
                reference(&g, kind, b.avg, b.absum, b.scratch, b.ordered);
                b.has_ordered = 1;
                size_t own_nnz = fill_input(&g, kind, rank, b.own);
                for (int i = 0; i < nv; i++)
                    if (red[i])
                        check_one(red[i], &v[i], &g, kind, &b, own_nnz);
            }
    for (int i = 0; i < nv; i++)
        rb_destroy(red[i]);
    free_bufs(&b);
}

/* Reference for the large case without p generator passes per rank:
 * sums of x and |x| in double by MPI_Allreduce (a dense reference that
 * shares no code with the reducers). */
static void dense_reference(const bufs *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        b->avg[i] = b->own[i];
        b->absum[i] = fabs((double)b->own[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, b->avg, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, b->absum, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++)
        b->avg[i] /= nranks;
}

/* 2^22 elements: every variant at 1% (element, random), the dense switch
 * of sparcml (auto, recdbl, rsag) at 50%. */
static void big_case(const variant *v, int nv)
{
    size_t n = (size_t)1 << 22;
    bufs b;
    if (alloc_bufs(&b, n)) {
        FAIL("no memory for %zu elements", n);
        free_bufs(&b);
        return;
    }
    const double dens[] = {1e-2, 0.5};
    for (int d = 0; d < 2; d++) {
        bench_gradgen g = {.rows = n, .cols = 1, .density = dens[d], .layout = BENCH_LAYOUT_ELEMENT,
                        .overlap = BENCH_OVERLAP_RANDOM, .nranks = nranks, .seed = 77 + (uint64_t)d};
        double t = MPI_Wtime();
        size_t own_nnz = bench_gradgen_fill(&g, rank, b.own);
        dense_reference(&b, n);
        if (getenv("RB_TEST_VERBOSE") && rank == 0)
            printf("  big reference: %.3f s\n", MPI_Wtime() - t);
        for (int i = 0; i < nv; i++) {
            if (d == 1 && (strcmp(v[i].name, "sparcml") || v[i].opts[1]))
                continue;
            rb_reducer *r = NULL;
            int rc = create(&v[i], n, 1, &r);
            if (rc != RB_OK) {
                FAIL("%s: rb_create big -> %d (%s)", v[i].label, rc, rb_last_error());
                continue;
            }
            double t = MPI_Wtime();
            check_one(r, &v[i], &g, SKEW_NONE, &b, own_nnz);
            if (getenv("RB_TEST_VERBOSE") && rank == 0)
                printf("  big %s density %g: %.3f s\n", v[i].label, dens[d], MPI_Wtime() - t);
            rb_destroy(r);
        }
    }
    free_bufs(&b);
}

static int within(uint64_t got, double want)
{
    return fabs((double)got - want) <= 0.1 * want + 1e-9;
}

/* Wire bytes against docs/wire-bytes.md with overlap all: every rank's
 * support is the same k indices, so every union has k elements. */
static void check_bytes(void)
{
    const size_t n = 100000;
    bench_gradgen g = {.rows = n, .cols = 1, .density = 0.01, .layout = BENCH_LAYOUT_ELEMENT,
                    .overlap = BENCH_OVERLAP_ALL, .nranks = nranks, .seed = 5};
    float *x = malloc(n * sizeof *x);
    if (!x) {
        FAIL("no memory");
        return;
    }
    double p = nranks, k = (double)bench_gradgen_fill(&g, rank, x);
    int p2 = 1, stages = 0;
    while (p2 * 2 <= nranks)
        p2 *= 2, stages++;
    int extra = nranks - p2;
    /* own pairs in each rsag range, for this rank's range and in all */
    double in_my_range = 0;
    size_t lo = (size_t)((uint64_t)n * (uint64_t)rank / (uint64_t)nranks);
    size_t hi = (size_t)((uint64_t)n * (uint64_t)(rank + 1) / (uint64_t)nranks);
    for (size_t i = lo; i < hi; i++)
        in_my_range += x[i] != 0.0f;

    struct { const char *name, *opt; double sent, recv; } cases[3];
    /* agsparse: allgather of counts + allgatherv of K = p k pairs */
    cases[0].name = "agsparse", cases[0].opt = NULL;
    cases[0].sent = 8 * (p - 1) + 8 * p * k * (p - 1) / p;
    cases[0].recv = 8 * (p - 1) + 8 * (p * k - k);
    /* sparcml recdbl: per exchange an 8-byte header + 8 bytes per pair */
    double fold = rank >= p2 ? 1 : 0, partner = rank < extra ? 1 : 0;
    cases[1].name = "sparcml", cases[1].opt = "sparcml_algo=recdbl";
    cases[1].sent = fold ? 8 + 8 * k : (stages + partner) * (8 + 8 * k);
    cases[1].recv = cases[1].sent;
    /* sparcml rsag: alltoall counts, pairs to other owners, allgather
     * counts, allgatherv of the U = k reduced pairs */
    cases[2].name = "sparcml", cases[2].opt = "sparcml_algo=rsag";
    cases[2].sent = 4 * (p - 1) + 8 * (k - in_my_range) + 8 * (p - 1) + 8 * k * (p - 1) / p;
    cases[2].recv = 4 * (p - 1) + 8 * (p - 1) * in_my_range + 8 * (p - 1) + 8 * (k - in_my_range);

    for (int c = 0; c < 3; c++) {
        variant v;
        v.name = cases[c].name;
        v.opts[0] = cases[c].opt;
        v.opts[1] = NULL;
        rb_reducer *r = NULL;
        if (create(&v, n, 1, &r) != RB_OK) {
            FAIL("bytes: rb_create %s failed: %s", v.name, rb_last_error());
            continue;
        }
        bench_gradgen_fill(&g, rank, x);
        rb_stats st;
        if (rb_reduce(r, x, &st) != RB_OK) {
            FAIL("bytes: %s failed: %s", v.name, rb_last_error());
        } else if (!within(st.bytes_sent, cases[c].sent) || !within(st.bytes_recv, cases[c].recv)) {
            FAIL("bytes: %s %s: sent %llu recv %llu, formula %.0f / %.0f (k = %.0f)", v.name,
                 v.opts[0] ? v.opts[0] : "", (unsigned long long)st.bytes_sent,
                 (unsigned long long)st.bytes_recv, cases[c].sent, cases[c].recv, k);
        }
        if ((st.counted & RB_COUNTED_NNZ_RESULT) && st.nnz_result != (uint64_t)k)
            FAIL("bytes: %s: nnz_result %llu, union is %.0f", v.name,
                 (unsigned long long)st.nnz_result, k);
        if (st.dense_stages != 0)
            FAIL("bytes: %s: %d dense stages at 1%% density", v.name, st.dense_stages);
        rb_destroy(r);
    }

    /* At 50% density sparcml (auto) must switch to dense: a dense
     * allreduce, 2(p-1)/p x 4n, plus the 8-byte allreduce of max nnz. */
    bench_gradgen half = g;
    half.density = 0.5;
    half.overlap = BENCH_OVERLAP_RANDOM;
    bench_gradgen_fill(&half, rank, x);
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = "sparcml";
    cfg.rows = n;
    rb_reducer *r = NULL;
    rb_stats st;
    if (rb_create(&cfg, &r) != RB_OK || rb_reduce(r, x, &st) != RB_OK) {
        FAIL("sparcml at 50%%: %s", rb_last_error());
    } else if (nranks > 1) {
        double want = 2 * (p - 1) / p * (4.0 * n + 8);
        if (st.dense_stages < 1 || !within(st.bytes_sent, want) || !within(st.bytes_recv, want))
            FAIL("sparcml at 50%%: %d dense stages, sent %llu recv %llu, dense formula %.0f",
                 st.dense_stages, (unsigned long long)st.bytes_sent,
                 (unsigned long long)st.bytes_recv, want);
    }
    rb_destroy(r);
    free(x);
}

/* One call of reducer name (options o1, o2) on this rank's input x of n
 * elements; its stats in *st.  0 on success. */
static int reduce_once(const char *name, const char *o1, const char *o2, float *x, size_t n,
                       rb_stats *st)
{
    variant v = {.name = name, .opts = {o1, o2}};
    rb_reducer *r = NULL;
    int rc = create(&v, n, 1, &r);
    if (rc == RB_OK)
        rc = rb_reduce(r, x, st);
    if (rc != RB_OK)
        FAIL("%s %s %s: %s", name, o1 ? o1 : "", o2 ? o2 : "", rb_last_error());
    rb_destroy(r);
    return rc;
}

/* Wire bytes of oktopk and zen against docs/wire-bytes.md, overlap all (the
 * union is every rank's k indices).  oktopk, balanced: every rank's
 * quantiles are the same, so region j holds pairs [j k / p, (j+1) k / p)
 * of the common support exactly.  zen: which pairs stay home depends on the
 * hash, so the sums over ranks are checked (every pair of the support is
 * reduced by exactly one owner: sum of u_r = k). */
static void check_peer_bytes(void)
{
    const size_t n = 100000;
    bench_gradgen g = {.rows = n, .cols = 1, .density = 0.01, .layout = BENCH_LAYOUT_ELEMENT,
                    .overlap = BENCH_OVERLAP_ALL, .nranks = nranks, .seed = 6};
    float *x = malloc(n * sizeof *x);
    if (!x) {
        FAIL("no memory");
        return;
    }
    double p = nranks, k = (double)bench_gradgen_fill(&g, rank, x);
    double own = floor((rank + 1) * k / p) - floor(rank * k / p);
    double counts = p > 1 ? 2 * 4 * (p - 1) : 0;   /* alltoall + allgather of ints */
    double votes = 2 * (p - 1) / p * 8 * (2 * p - 1);
    double sent = votes + counts + 8 * (k - own) + (p - 1) / p * 8 * k;
    double recv = votes + counts + 8 * (p - 1) * own + 8 * (k - own);
    rb_stats st;
    if (reduce_once("oktopk", NULL, NULL, x, n, &st) == RB_OK &&
        (!within(st.bytes_sent, sent) || !within(st.bytes_recv, recv) || st.nnz_result != k))
        FAIL("bytes: oktopk: sent %llu recv %llu nnz_result %llu, formula %.0f / %.0f / %.0f",
             (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_recv,
             (unsigned long long)st.nnz_result, sent, recv, k);

    /* zen, sums over ranks: counts, the k(p-1) pairs that leave home in
     * all, the gather: (p-1)/p of the T gathered bytes from every rank */
    double words = ceil(n / 64.0) + p / 2;   /* bitmap words: within p/2 */
    double gathered[2] = {8 * k, 8 * words + 4 * k};   /* pairs, bitmap */
    const char *mode[2] = {"zen_bitmap=off", "zen_bitmap=on"};
    for (int m = 0; m < 2; m++) {
        bench_gradgen_fill(&g, rank, x);
        if (reduce_once("zen", mode[m], NULL, x, n, &st) != RB_OK)
            continue;
        double mine[2] = {(double)st.bytes_sent, (double)st.bytes_recv}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double want_sent = p * counts + 8 * k * (p - 1) + (p - 1) * gathered[m];
        double want_recv = p * counts + 8 * k * (p - 1) + (p - 1) * gathered[m];
        if (!within((uint64_t)all[0], want_sent) || !within((uint64_t)all[1], want_recv) ||
            st.nnz_result != k)
            FAIL("bytes: zen %s: sent %.0f recv %.0f over ranks, nnz_result %llu, formula "
                 "%.0f / %.0f / %.0f", mode[m], all[0], all[1],
                 (unsigned long long)st.nnz_result, want_sent, want_recv, k);
    }
    free(x);
}

/* oktopk's balanced regions do balance: with every rank's non-zeros in one
 * window of the index space (the same support everywhere), even ranges
 * send all pairs to one owner, which receives (p-1) k pairs; balanced
 * regions give each owner about k/p from each rank, and the busiest rank
 * receives about 2 k (p-1)/p pairs in all (reduce + gather). */
static void check_balance(void)
{
    const size_t n = 64000;
    if (nranks < 4)
        return;   /* the ratio, 2/p, is too close to 1 to tell */
    bench_gradgen g = {.rows = n, .cols = 1, .density = 0.5, .layout = BENCH_LAYOUT_ELEMENT,
                    .overlap = BENCH_OVERLAP_ALL, .nranks = nranks, .seed = 8};
    float *x = malloc(n * sizeof *x);
    if (!x) {
        FAIL("no memory");
        return;
    }
    const char *balance[2] = {"oktopk_balance=off", "oktopk_balance=on"};
    double busiest[2] = {0, 0};
    for (int b = 0; b < 2; b++) {
        fill_input(&g, SKEW_WINDOW, rank, x);
        rb_stats st;
        if (reduce_once("oktopk", balance[b], NULL, x, n, &st) != RB_OK)
            break;
        double mine = (double)st.bytes_recv;
        MPI_Allreduce(&mine, &busiest[b], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (!(busiest[1] <= 0.6 * busiest[0]))
        FAIL("oktopk: busiest rank receives %.0f B with balanced regions, %.0f B with even "
             "ones: want at most 0.6x", busiest[1], busiest[0]);
    free(x);
}

/* Option values set in the struct, not parsed: out of range is RB_ERR_ARG
 * from rb_options_check and from rb_create on every rank (two values that
 * print alike, sparcml_algo -1 and auto, once passed the agreement check
 * and ran different protocols). */
typedef struct bad_option {
    const char *what, *reducer;
    void (*spoil)(rb_options *o);
} bad_option;
static void spoil_algo(rb_options *o) { o->sparcml_algo = -1; }
static void spoil_mix(rb_options *o) { o->gossip_mix = 0; }
static void spoil_block(rb_options *o) { o->block_size = 0; }
static void spoil_width(rb_options *o) { o->sketch_width = NAN; }
static void spoil_bool(rb_options *o) { o->gossip_async = 2; }
static void spoil_transport(rb_options *o) { o->transport = 3; }
static void spoil_repartition(rb_options *o) { o->oktopk_repartition = 0; }
static void spoil_balance(rb_options *o) { o->oktopk_balance = 2; }
static void spoil_bitmap(rb_options *o) { o->zen_bitmap = 3; }
static void spoil_throttle(rb_options *o) { o->oktopk_throttle = 0; }

static void check_option_ranges(void)
{
    static const bad_option bad[] = {
        {"sparcml_algo", "sparcml", spoil_algo},      {"gossip_mix", "gossip", spoil_mix},
        {"block_size", "omnireduce", spoil_block},    {"sketch_width", "s2", spoil_width},
        {"gossip_async", "gossip", spoil_bool},       {"transport", "dense", spoil_transport},
        {"oktopk_repartition", "oktopk", spoil_repartition},
        {"oktopk_balance", "oktopk", spoil_balance},  {"zen_bitmap", "zen", spoil_bitmap},
        {"oktopk_throttle", "oktopk", spoil_throttle},
    };
    rb_options o;
    rb_options_default(&o);
    if (rb_options_check(&o) != RB_OK)
        FAIL("rb_options_check of the defaults: %s", rb_last_error());
    char text[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rb_options_default(&o);
        bad[i].spoil(&o);
        if (rb_options_check(&o) != RB_ERR_ARG || !strstr(rb_last_error(), bad[i].what))
            FAIL("rb_options_check, bad %s: want RB_ERR_ARG naming it, got '%s'", bad[i].what,
                 rb_last_error());
        /* spoiled on the last rank only: every rank fails, none hangs */
        rb_config cfg;
        rb_config_default(&cfg);
        cfg.name = bad[i].reducer;
        cfg.rows = 64;
        if (rank == nranks - 1)
            bad[i].spoil(&cfg.opts);
        rb_reducer *r = NULL;
        int rc = rb_create(&cfg, &r);
        if (rc != RB_ERR_ARG || r)
            FAIL("bad %s on rank %d: rb_create -> %d (%s), want RB_ERR_ARG", bad[i].what,
                 nranks - 1, rc, rb_last_error());
        rb_destroy(r);
    }
    rb_options_default(&o);
    o.sparcml_algo = -1;
    size_t algo = 0;
    while (algo < rb_option_count() && strcmp(rb_option_info_at(algo)->key, "sparcml_algo"))
        algo++;
    if (rb_option_format(&o, algo, text, sizeof text) != RB_ERR_ARG)
        FAIL("rb_option_format of sparcml_algo -1 printed '%s', want RB_ERR_ARG", text);
}

/* rb_create must fail with RB_ERR_MISMATCH on every rank. */
/* rb_create of reducer name, rows x cols with opt (this rank's values,
 * which some other rank does not share) gives RB_ERR_MISMATCH and no
 * reducer. */
static void expect_mismatch(const char *what, const char *name, size_t rows, size_t cols,
                            const char *opt)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = name;
    cfg.rows = rows;
    cfg.cols = cols;
    if (opt)
        rb_options_set(&cfg.opts, opt);
    rb_reducer *r = NULL;
    int rc = rb_create(&cfg, &r);
    if (rc != RB_ERR_MISMATCH || r)
        FAIL("mismatch (%s) for %s: rb_create -> %d (%s), expected RB_ERR_MISMATCH", what, name,
             rc, rb_last_error());
    rb_destroy(r);
}

static void check_mismatch(void)
{
    rb_options o;
    rb_options_default(&o);
    if (rb_options_set(&o, "sparcml_switch=-1") != RB_ERR_ARG || !strstr(rb_last_error(), "sparcml_switch"))
        FAIL("bad option value: expected RB_ERR_ARG naming sparcml_switch, got '%s'", rb_last_error());
    if (rb_options_set(&o, "parallax_servers=3") != RB_ERR_ARG || !strstr(rb_last_error(), "parallax_servers"))
        FAIL("bad option value: expected RB_ERR_ARG naming parallax_servers, got '%s'", rb_last_error());
    if (rb_options_set(&o, "seed= -1") != RB_ERR_ARG || rb_options_set(&o, "seed=1-") != RB_ERR_ARG)
        FAIL("seed ' -1' / '1-': expected RB_ERR_ARG (strtoull negates a leading-blank minus)");
    check_option_ranges();
    if (nranks < 2)
        return;
    expect_mismatch("rows", "sparcml", rank == 0 ? 100 : 101, 1, NULL);
    expect_mismatch("options", "sparcml", 100, 1, rank == nranks - 1 ? "sparcml_switch=0.5" : NULL);
    expect_mismatch("options", "parallax", 100, 1, rank == 0 ? "parallax_servers=1" : NULL);
    expect_mismatch("reducer name", rank == 1 ? "agsparse" : "omnireduce", 100, 1, NULL);
    expect_mismatch("options", "oktopk", 100, 1, rank == 0 ? "oktopk_repartition=2" : NULL);
    expect_mismatch("options", "zen", 100, 1, rank == nranks - 1 ? "seed=9" : NULL);
    /* An unknown name on one rank: every rank fails, none hangs. */
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = rank == 0 ? "no-such-reducer" : "agsparse";
    cfg.rows = 10;
    rb_reducer *r = NULL;
    int rc = rb_create(&cfg, &r);
    if (rc == RB_OK || r)
        FAIL("unknown reducer on rank 0: rb_create succeeded on rank %d", rank);
    rb_destroy(r);
}

/* ---- every reducer at the edges of its values (docs/values.md) ----
 * Non-zero means x != 0.0f: -0.0 is zero, a NaN, an inf and a denormal
 * are non-zeros.  The library passes NaN and inf through as IEEE sums do:
 * an exact reducer's result is NaN or inf where the average in double is,
 * +-inf where the float sum overflows, the average elsewhere; a denormal
 * average is not flushed to zero.  Lossy reducers (s2, oktopk topk) deliver
 * a NaN or inf element as NaN or inf; with error feedback their residual
 * does not carry one into the next calls. */

/* Every registered reducer with its defaults, and the variants that keep
 * state between calls or change what a value does. */
static int make_all_variants(variant *v)
{
    int nv = 0;
    for (size_t i = 0; i < rb_reducer_count(); i++)
        add_variant(v, &nv, rb_reducer_name_at(i), NULL, NULL);
    add_variant(v, &nv, "oktopk", "oktopk_select=topk", "oktopk_density=0.2");
    add_variant(v, &nv, "oktopk", "oktopk_select=topk", "error_feedback=on");
    add_variant(v, &nv, "s2", "error_feedback=on", NULL);
    add_variant(v, &nv, "s2", "sketch_rows=3", NULL);
    add_variant(v, &nv, "sparcml", "sparcml_algo=rsag", NULL);
    add_variant(v, &nv, "omnireduce", "block_size=4", NULL);
    add_variant(v, &nv, "parallax", "parallax_servers=1", NULL);
    add_variant(v, &nv, "gossip", "gossip_schedule=dissemination", "gossip_rotate=on");
    return nv;
}

/* Overflow last: a residual may rightly keep 3e38, whose sums overflow. */
typedef enum {
    VAL_PLAIN, VAL_DENORMAL, VAL_NEGZERO, VAL_NAN, VAL_INF, VAL_INF_BOTH, VAL_OVERFLOW, VAL_COUNT
} value_case;
static const char *const value_names[VAL_COUNT] = {
    "plain", "denormals only", "-0.0 everywhere, one 1 on rank 0", "a NaN on rank 0",
    "+inf on the last rank", "-inf on rank 0, +inf on the last", "3e38 and -3e38 on every rank"};
#define SPECIAL_AT 5   /* the element a NaN or inf is put at */

/* Rank r's input of case c: plain values at every third element, then the
 * case's special values. */
static void fill_special(value_case c, int r, int p, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = i % 3 ? 0.0f : (float)(0.25 + 0.125 * r - 0.01 * (double)i);
    if (c == VAL_NAN && r == 0)
        x[SPECIAL_AT] = NAN;
    if ((c == VAL_INF || c == VAL_INF_BOTH) && r == p - 1)
        x[SPECIAL_AT] = INFINITY;
    if (c == VAL_INF_BOTH && r == 0 && p > 1)
        x[SPECIAL_AT] = -INFINITY;
    if (c == VAL_OVERFLOW) {
        x[7] = 3e38f;
        x[8] = -3e38f;
    }
    if (c == VAL_DENORMAL)
        for (size_t i = 0; i < n; i++)
            x[i] = i % 2 ? 1e-40f * (float)(1 + (i + (size_t)r) % 3) : 0.0f;
    if (c == VAL_NEGZERO) {
        for (size_t i = 0; i < n; i++)
            x[i] = -0.0f;
        if (r == 0)
            x[3] = 1.0f;
    }
}

/* An exact reducer's element against the average in double (ref) and the
 * float sum's overflow: NaN where ref is, the same inf, +-inf where
 * |sum| > FLT_MAX (a reducer that scales before it sums may get ref),
 * a denormal within (p + 2) ulps and not flushed, else the tolerance. */
static int exact_value_ok(float got, double ref, double absum)
{
    if (isnan(ref))
        return isnan(got);
    if (isinf(ref))
        return got == (float)ref;
    if (fabs(ref * nranks) > FLT_MAX && got == (ref > 0 ? INFINITY : -INFINITY))
        return 1;
    if (ref != 0 && fabs(ref) < FLT_MIN)
        return got != 0.0f && fabs((double)got - ref) <= (nranks + 2) * 0x1p-149;
    return fabs((double)got - ref) <= TOL * (1.0 + absum) / nranks;
}

/* Case c's average in double over every rank's input, and the sum of
 * |x_r| per element (scratch: n floats). */
static void special_reference(value_case c, double *avg, double *absum, float *scratch, size_t n)
{
    memset(avg, 0, n * sizeof *avg);
    memset(absum, 0, n * sizeof *absum);
    for (int q = 0; q < nranks; q++) {
        fill_special(c, q, nranks, scratch, n);
        for (size_t i = 0; i < n; i++) {
            avg[i] += scratch[i];
            absum[i] += fabs((double)scratch[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        avg[i] /= nranks;
}

/* The non-zero counts of this rank's input own: rb_count_nonzeros and an
 * exact reducer's nnz_local count x != 0.0f (a NaN, an inf, a denormal:
 * non-zeros; -0.0: zero). */
static void check_special_counts(rb_reducer *r, const variant *v, unsigned traits, value_case c,
                                 const float *own, size_t n, const rb_stats *st)
{
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++)
        nnz += own[i] != 0.0f;
    uint64_t counted = 0;
    if (rb_count_nonzeros(r, own, &counted) != RB_OK || counted != nnz)
        FAIL("%s, %s: rb_count_nonzeros %llu, %zu elements != 0.0f", v->label, value_names[c],
             (unsigned long long)counted, nnz);
    /* (lossy reducers count what they send: the top-k, g + residual) */
    if ((traits & RB_TRAIT_EXACT) && (st->counted & RB_COUNTED_NNZ_LOCAL) && st->nnz_local != nnz)
        FAIL("%s, %s: nnz_local %llu, %zu elements != 0.0f", v->label, value_names[c],
             (unsigned long long)st->nnz_local, nnz);
}

/* One reduction of case c on r: the counts, then the result (a
 * no-communication reducer leaves the input as it is, an exact one gives
 * exact_value_ok, a lossy one the NaN or inf element as it is averaged). */
static void check_special_case(rb_reducer *r, const variant *v, unsigned traits, value_case c,
                               float *x, float *own, double *avg, double *absum, size_t n)
{
    special_reference(c, avg, absum, x, n);
    fill_special(c, rank, nranks, own, n);
    memcpy(x, own, n * sizeof *x);
    rb_stats st;
    int rc = rb_reduce(r, x, &st);
    if (rc != RB_OK) {
        FAIL("%s, %s: rb_reduce -> %s (%s)", v->label, value_names[c], rb_strerror(rc),
             rb_last_error());
        return;
    }
    check_special_counts(r, v, traits, c, own, n, &st);
    if (traits & RB_TRAIT_NOCOMM) {
        if (memcmp(x, own, n * sizeof *x))
            FAIL("%s, %s: the input changed", v->label, value_names[c]);
        return;
    }
    if (traits & RB_TRAIT_EXACT) {
        for (size_t i = 0; i < n; i++)
            if (!exact_value_ok(x[i], avg[i], absum[i])) {
                FAIL("%s, %s: [%zu] = %a, the average is %a", v->label, value_names[c], i,
                     (double)x[i], avg[i]);
                return;
            }
        return;
    }
    /* lossy: the NaN or inf element itself comes out as it is averaged */
    if ((traits & RB_TRAIT_LOSSY) && (c == VAL_NAN || c == VAL_INF || c == VAL_INF_BOTH) &&
        !(isnan(avg[SPECIAL_AT]) ? isnan(x[SPECIAL_AT]) : x[SPECIAL_AT] == (float)avg[SPECIAL_AT]))
        FAIL("%s, %s: [%d] = %g, the average is %g", v->label, value_names[c], SPECIAL_AT,
             (double)x[SPECIAL_AT], avg[SPECIAL_AT]);
}

/* Three plain calls on r after the NaN and inf cases: every element of
 * their results finite (no residual or threshold carried a NaN or inf). */
static void check_finite_after_special(rb_reducer *r, const variant *v, float *x, size_t n)
{
    for (int call = 0; call < 3; call++) {
        fill_special(VAL_PLAIN, rank, nranks, x, n);
        int rc = rb_reduce(r, x, NULL);
        if (rc != RB_OK) {
            FAIL("%s, finite call %d after the special values: %s", v->label, call,
                 rb_strerror(rc));
            return;
        }
        for (size_t e = 0; e < n; e++)
            if (!isfinite(x[e])) {
                FAIL("%s, finite call %d after the special values: [%zu] = %g", v->label,
                     call, e, (double)x[e]);
                break;
            }
    }
}

/* Every case on one reducer object per variant; after the NaN and inf
 * cases finite calls: no state (a residual, a threshold) may carry a NaN
 * or inf into them. */
static void check_special_values(void)
{
    const size_t n = 40;
    variant v[MAX_VARIANTS];
    int nv = make_all_variants(v);
    float x[40], own[40];
    double avg[40], absum[40];
    for (int i = 0; i < nv; i++) {
        rb_reducer *r = NULL;
        unsigned traits = 0;
        rb_options o;
        rb_options_default(&o);
        set_variant_options(&v[i], &o);   /* a bad one: create() below fails, named */
        rb_reducer_traits_with(v[i].name, &o, &traits);
        int rc = create(&v[i], n, 1, &r);
        if (rc != RB_OK) {
            FAIL("%s: rb_create -> %s (%s)", v[i].label, rb_strerror(rc), rb_last_error());
            continue;
        }
        for (value_case c = VAL_PLAIN; c < VAL_OVERFLOW; c++)
            check_special_case(r, &v[i], traits, c, x, own, avg, absum, n);
        check_finite_after_special(r, &v[i], x, n);
        check_special_case(r, &v[i], traits, VAL_OVERFLOW, x, own, avg, absum, n);
        rb_destroy(r);
    }
}

/* oktopk_select=topk at any rank count where its result is known: every
 * rank holds fewer than k non-zeros, so on the first (re-estimating) call
 * each sends them all and the result is the top-min(k, union) of the sums
 * by magnitude, divided by p (docs/oktopk-zen.md).  Checked against sums in
 * double: the count, the kept values, and no dropped sum above a kept one
 * (beyond the float order's tolerance). */
static void check_topk_bounds(void)
{
    const size_t n = 3000, k = 150;   /* oktopk_density 0.05 */
    bench_gradgen g = {.rows = n, .cols = 1, .density = 0.02, .layout = BENCH_LAYOUT_ELEMENT,
                       .overlap = BENCH_OVERLAP_RANDOM, .nranks = nranks, .seed = 31};
    bufs b;
    variant v = {.name = "oktopk", .opts = {"oktopk_select=topk", "oktopk_density=0.05"}};
    rb_reducer *r = NULL;
    if (alloc_bufs(&b, n) || create(&v, n, 1, &r) != RB_OK) {
        FAIL("topk bounds: setup: %s", rb_last_error());
        free_bufs(&b);
        return;
    }
    reference(&g, SKEW_NONE, b.avg, b.absum, b.scratch, NULL);
    bench_gradgen_fill(&g, rank, b.work);
    rb_stats st;
    if (rb_reduce(r, b.work, &st) != RB_OK) {
        FAIL("topk bounds: rb_reduce: %s", rb_last_error());
    } else {
        size_t uni = 0, kept = 0, bad = 0;
        double min_kept = INFINITY, max_dropped = 0, tol = TOL * 2.0;
        for (size_t i = 0; i < n; i++) {
            uni += b.absum[i] != 0;
            if (b.work[i] != 0.0f) {
                kept++;
                min_kept = fmin(min_kept, fabs(b.avg[i]));
                bad += !(fabs((double)b.work[i] - b.avg[i]) <= TOL * (1.0 + b.absum[i]) / nranks);
            } else {
                max_dropped = fmax(max_dropped, fabs(b.avg[i]));
            }
        }
        size_t want = uni < k ? uni : k;
        if (kept != want || st.nnz_result != want || bad || (kept && max_dropped > min_kept + tol))
            FAIL("topk bounds: kept %zu (nnz_result %llu) of a union of %zu, want %zu; %zu wrong "
                 "values; largest dropped |avg| %g, smallest kept %g", kept,
                 (unsigned long long)st.nnz_result, uni, want, bad, max_dropped, min_kept);
    }
    rb_destroy(r);
    free_bufs(&b);
}

/* oktopk_select=topk after a first call without non-zeros (a layer with
 * no gradient on step 0): its thresholds come out 0, which no factor
 * moves; they must be re-estimated, not left to send and gather every
 * non-zero until the next re-estimating call (docs/oktopk-zen.md). */
static void check_topk_after_zero(void)
{
    const size_t n = 3000, k = 150;   /* oktopk_density 0.05 */
    bench_gradgen g = {.rows = n, .cols = 1, .density = 0.5, .layout = BENCH_LAYOUT_ELEMENT,
                       .overlap = BENCH_OVERLAP_RANDOM, .nranks = nranks};
    float *x = malloc(n * sizeof *x);
    variant v = {.name = "oktopk", .opts = {"oktopk_select=topk", "oktopk_density=0.05"}};
    rb_reducer *r = NULL;
    if (!x || create(&v, n, 1, &r) != RB_OK) {
        FAIL("topk after zero: setup: %s", rb_last_error());
        free(x);
        return;
    }
    for (int call = 0; call < 4; call++) {
        g.seed = 40 + (uint64_t)call;
        if (call == 0)
            memset(x, 0, n * sizeof *x);
        else
            bench_gradgen_fill(&g, rank, x);
        rb_stats st;
        if (rb_reduce(r, x, &st) != RB_OK) {
            FAIL("topk after zero, call %d: %s", call, rb_last_error());
            break;
        }
        if (3 * st.nnz_local > 4 * k || 3 * st.nnz_result > 4 * k)
            FAIL("topk after zero, call %d: sent %llu, kept %llu, k = %zu: want at most 4k/3",
                 call, (unsigned long long)st.nnz_local, (unsigned long long)st.nnz_result, k);
    }
    rb_destroy(r);
    free(x);
}

/* Every reducer refuses ranks that disagree on the shape, on every rank. */
static void check_shape_mismatch_everywhere(void)
{
    if (nranks < 2)
        return;
    for (size_t i = 0; i < rb_reducer_count(); i++) {
        const char *name = rb_reducer_name_at(i);
        expect_mismatch("rows", name, rank == nranks - 1 ? 12 : 13, 1, NULL);
        expect_mismatch("cols", name, 6, rank == 0 ? 2 : 3, NULL);
        /* 4 x 3 and 6 x 2: the same 12 elements */
        expect_mismatch("4x3 against 6x2", name, rank == 0 ? 4 : 6, rank == 0 ? 3 : 2, NULL);
    }
}

/* Under LeakSanitizer, check for leaks before MPI_Finalize: Open MPI
 * unloads its components at finalize, and leaks reported from unloaded
 * modules can be neither symbolised nor suppressed (tests/lsan.supp). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/* rb_node_rank on one node (every rank here is): the launcher's local rank
 * when its values are a permutation over the node, else the rank in the
 * shared-memory split.  Environment values are set per rank in-process. */
static void check_node_rank(void)
{
    const char *was = getenv("SLURM_LOCALID");
    char saved[32] = "";
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    int lr = -1, ls = -1;
    const char *src = NULL;
    char value[16];

    /* mpirun inside a batch script: every rank inherits SLURM_LOCALID=0 */
    setenv("SLURM_LOCALID", "0", 1);
    if (rb_node_rank(MPI_COMM_WORLD, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank: %s", rb_last_error());
    else if (ls != nranks || lr != rank || (nranks > 1 && !strcmp(src, "SLURM_LOCALID")))
        FAIL("inherited SLURM_LOCALID=0: local rank %d of %d from %s, want %d of %d, not from it",
             lr, ls, src, rank, nranks);

    /* a valid permutation is the launcher's choice and is kept */
    snprintf(value, sizeof value, "%d", nranks - 1 - rank);
    setenv("SLURM_LOCALID", value, 1);
    if (rb_node_rank(MPI_COMM_WORLD, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank: %s", rb_last_error());
    else if (lr != nranks - 1 - rank || strcmp(src, "SLURM_LOCALID"))
        FAIL("SLURM_LOCALID=%s (a permutation): local rank %d from %s", value, lr, src);

    /* halves of the world: world values are no local ranks there */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    if (rb_node_rank(half, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank on a sub-communicator: %s", rb_last_error());
    else if (lr != hr || ls != hs)
        FAIL("sub-communicator: local rank %d of %d from %s, want %d of %d", lr, ls, src, hr, hs);
    MPI_Comm_free(&half);

    if (was)
        setenv("SLURM_LOCALID", saved, 1);
    else
        unsetenv("SLURM_LOCALID");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int big = argc > 1 && !strcmp(argv[1], "--big");
    int small = argc > 1 && !strcmp(argv[1], "--small");
    variant v[MAX_VARIANTS];
    int nv = make_variants(v);
    double t0 = MPI_Wtime();

    check_mismatch();
    check_shape_mismatch_everywhere();
    sweep_shape(v, nv, 0, 13, SKEW_NONE);
    sweep_shape(v, nv, 1, 1, SKEW_NONE);
    sweep_shape(v, nv, nranks > 1 ? (size_t)nranks - 1 : 1, 1, SKEW_NONE);   /* n < p */
    sweep_shape(v, nv, 1, 13, SKEW_NONE);                                   /* one row */
    check_special_values();
    check_topk_bounds();
    check_topk_after_zero();
    if (!small) {
        check_node_rank();
        check_bytes();
        check_peer_bytes();
        sweep_shape(v, nv, 77, 13, SKEW_NONE);
        for (skew kind = SKEW_ONE_RANK; kind <= SKEW_WINDOW; kind++) {
            sweep_shape(v, nv, 77, 13, kind);
            sweep_shape(v, nv, 3001, 1, kind);
        }
        sweep_shape(v, nv, 77, 13, SKEW_ODD_EMPTY);
        check_balance();
    }
    if (big)
        big_case(v, nv);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_reducers: %d ranks, %d variants%s: %d failure(s), %.1f s\n", nranks, nv,
               big ? " (+2^22 elements)" : small ? " (--small)" : "", total, MPI_Wtime() - t0);
    if (__lsan_do_leak_check)
        __lsan_do_leak_check();
    MPI_Finalize();
    return total ? 1 : 0;
}
