/* rb_reduce_rows (row-sparse input) against rb_reduce (dense input), run by
 * tests/lib/rows.sh on 1, 2, 3, 5, 6, 8 and 11 ranks:
 *
 *   - every reducer of the registry (its default options) and the
 *     algorithm variants of sparcml / parallax / omnireduce / s2 / oktopk: the rows result (dense output and row form, each
 *     expanded) is bit for bit the dense-input result of a twin reducer fed
 *     the same gradients in the same order (s2: same sketch, same seed;
 *     gossip: same partners), and the stats agree (nnz, wire bytes, sketch
 *     width, dense stages);
 *   - element, row and block layouts at densities 0 .. 1, overlaps random,
 *     all and none; ranks with no rows (odd ranks, or all ranks); all-zero
 *     rows listed in the input change nothing; shapes from no element, one,
 *     fewer than ranks and one row of 13 to rows over several blocks; a
 *     step with a NaN, an inf, -0.0 and a denormal (zeros compared by
 *     value there: a row of -0.0 is not listed);
 *   - the row form lists increasing ids in range and every row where the
 *     result is non-zero;
 *   - bad input on one rank (unsorted ids, an id out of range, a negative
 *     id, NULL values with rows listed, the wrong row width, NULL input) is
 *     refused with RB_ERR_ARG on every rank, the detail naming the problem
 *     on the rank that has it, and the next call works.
 *
 * Usage: test_rows.  Exit 0 when every rank passed, 1 otherwise. */
#include "harness/gradgen.h"
#include "reducer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failures, reported;

#define FAIL(...) do { failures++; if (reported++ < 30) { \
        fprintf(stderr, "rank %d/%d: ", rank, nranks); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)

typedef struct variant {
    const char *name;
    const char *opts[4];
} variant;

/* Every reducer, with the options that change its path. */
static const variant variants[] = {
    {"none", {NULL}},
    {"dense", {NULL}},
    {"agsparse", {NULL}},
    {"sparcml", {NULL}},
    {"sparcml", {"sparcml_algo=recdbl", NULL}},
    {"sparcml", {"sparcml_algo=rsag", NULL}},
    /* dense part-way: mixed dense and sparse stages, the rows path's scratch */
    {"sparcml", {"sparcml_algo=recdbl", "sparcml_switch=0.02", NULL}},
    {"sparcml", {"sparcml_algo=rsag", "sparcml_switch=0.02", NULL}},
    {"parallax", {"parallax_servers=1", NULL}},
    {"parallax", {"parallax_servers=0", NULL}},
    {"omnireduce", {NULL}},
    {"omnireduce", {"block_size=7", NULL}},
    {"omnireduce", {"block_size=1", NULL}},
    {"s2", {"sketch_width_mode=fraction", "sketch_width=0.3", NULL}},
    {"s2", {"sketch_rows=3", "sketch_width_mode=nnz", "sketch_width=2", NULL}},
    {"s2", {"sketch_width=5", "error_feedback=on", NULL}},
    {"oktopk", {"oktopk_select=topk", "oktopk_density=0.05", "error_feedback=on", NULL}},
    {"gossip", {NULL}},
    {"gossip", {"gossip_schedule=dissemination", "gossip_rotate=on", NULL}},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* The list above, plus every reducer of the registry it lacks with its
 * default options (zen, oktopk's exact union, one added later): none
 * escapes the test. */
static variant tested[NVARIANTS + 64];
static size_t ntested;

static void add_registry(void)
{
    memcpy(tested, variants, sizeof variants);
    ntested = NVARIANTS;
    for (size_t i = 0; i < rb_reducer_count() && ntested < sizeof tested / sizeof *tested; i++) {
        const char *name = rb_reducer_name_at(i);
        int listed = 0;
        for (size_t v = 0; v < NVARIANTS; v++)
            listed |= !strcmp(variants[v].name, name) && !variants[v].opts[0];
        if (!listed)
            tested[ntested++] = (variant){name, {NULL}};
    }
}

static void label(char *buf, size_t len, const variant *v)
{
    int at = snprintf(buf, len, "%s", v->name);
    for (int i = 0; v->opts[i] && at > 0 && (size_t)at < len; i++)
        at += snprintf(buf + at, len - (size_t)at, " %s", v->opts[i]);
}

static int create(const variant *v, size_t rows, size_t cols, rb_reducer **r)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = v->name;
    cfg.rows = rows;
    cfg.cols = cols;
    for (int i = 0; v->opts[i]; i++)
        if (rb_options_set(&cfg.opts, v->opts[i]) != RB_OK)
            return RB_ERR_ARG;
    return rb_create(&cfg, r);
}

/* The rows of x (rows x cols) with a non-zero, plus (extra) one all-zero
 * row that is not among them, as a framework might list it. */
typedef struct rows_input {
    rb_rows in;
    int64_t *ids;
    float *values;
} rows_input;

static void rows_of(rows_input *ri, const float *x, size_t rows, size_t cols, int extra)
{
    size_t nr = 0;
    int extra_done = !extra;
    for (size_t i = 0; i < rows; i++) {
        int any = 0;
        for (size_t j = 0; j < cols; j++)
            any |= x[i * cols + j] != 0.0f;
        if (!any && !extra_done) {
            extra_done = 1;
            any = 1;
        }
        if (!any)
            continue;
        ri->ids[nr] = (int64_t)i;
        memcpy(ri->values + nr * cols, x + i * cols, cols * sizeof *x);
        nr++;
    }
    ri->in = (rb_rows){nr, cols, ri->ids, ri->values};
}

/* a == b bit for bit; the first difference in *first. */
/* Set for the step of special values: -0.0 is a zero, so a row of them is
 * not listed and comes back +0.0 (docs/values.md); zeros then compare by
 * value, everything else still by its bits. */
static int zeros_by_value;

static size_t differ(const float *a, const float *b, size_t n, size_t *first)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        if (zeros_by_value && a[i] == 0.0f && b[i] == 0.0f)
            continue;
        if (memcmp(a + i, b + i, sizeof *a)) {
            if (!d)
                *first = i;
            d++;
        }
    }
    return d;
}

/* The row form: ids increasing and in range, every non-zero row of the
 * result listed, and expanded it is the result bit for bit. */
static void check_row_form(const char *what, const rb_rows *out, const float *want, size_t rows,
                           size_t cols, float *scratch)
{
    if (out->cols != cols || out->nrows > rows || (out->nrows && (!out->ids || !out->values))) {
        FAIL("%s: row form of %zu rows x %zu cols (ids %p values %p)", what, out->nrows,
             out->cols, (const void *)out->ids, (const void *)out->values);
        return;
    }
    memset(scratch, 0, rows * cols * sizeof *scratch);
    for (size_t i = 0; i < out->nrows; i++) {
        int64_t id = out->ids[i];
        if (id < 0 || (size_t)id >= rows || (i && id <= out->ids[i - 1])) {
            FAIL("%s: row form ids[%zu] = %lld out of order or range", what, i, (long long)id);
            return;
        }
        memcpy(scratch + (size_t)id * cols, out->values + i * cols, cols * sizeof *scratch);
    }
    size_t first = 0, d = differ(scratch, want, rows * cols, &first);
    if (d)
        FAIL("%s: row form differs from the dense-input result in %zu values, first [%zu] = "
             "%a, want %a", what, d, first, (double)scratch[first], (double)want[first]);
}

static void check_stats(const char *what, const rb_stats *a, const rb_stats *b)
{
    /* A count is compared where both paths produced it (a reducer counts
     * only what its algorithm needs: the rows path knows its non-zeros). */
    unsigned both = a->counted & b->counted;
    if (((both & RB_COUNTED_NNZ_LOCAL) && a->nnz_local != b->nnz_local) ||
        ((both & RB_COUNTED_NNZ_RESULT) && a->nnz_result != b->nnz_result))
        FAIL("%s: nnz local/result %llu/%llu with rows, %llu/%llu dense", what,
             (unsigned long long)a->nnz_local, (unsigned long long)a->nnz_result,
             (unsigned long long)b->nnz_local, (unsigned long long)b->nnz_result);
    if (a->bytes_sent != b->bytes_sent || a->bytes_recv != b->bytes_recv)
        FAIL("%s: bytes sent/recv %llu/%llu with rows, %llu/%llu dense", what,
             (unsigned long long)a->bytes_sent, (unsigned long long)a->bytes_recv,
             (unsigned long long)b->bytes_sent, (unsigned long long)b->bytes_recv);
    if (a->sketch_cols != b->sketch_cols || a->dense_stages != b->dense_stages ||
        a->partner != b->partner || a->skipped != b->skipped)
        FAIL("%s: sketch_cols %llu/%llu, dense_stages %d/%d, partner %d/%d, skipped %d/%d "
             "(rows/dense)", what, (unsigned long long)a->sketch_cols,
             (unsigned long long)b->sketch_cols, a->dense_stages, b->dense_stages, a->partner,
             b->partner, a->skipped, b->skipped);
}

typedef struct bufs {
    float *own, *work, *dense_out, *scratch;
    rows_input ri;
} bufs;

static int alloc_bufs(bufs *b, size_t rows, size_t cols)
{
    size_t n = rows * cols > 0 ? rows * cols : 1;
    b->own = malloc(n * sizeof(float));
    b->work = malloc(n * sizeof(float));
    b->dense_out = malloc(n * sizeof(float));
    b->scratch = malloc(n * sizeof(float));
    b->ri.ids = malloc((rows ? rows : 1) * sizeof(int64_t));
    b->ri.values = malloc(n * sizeof(float));
    return b->own && b->work && b->dense_out && b->scratch && b->ri.ids && b->ri.values ? 0 : -1;
}

static void free_bufs(bufs *b)
{
    free(b->own);
    free(b->work);
    free(b->dense_out);
    free(b->scratch);
    free(b->ri.ids);
    free(b->ri.values);
}

/* One step on the twins: dense input to d, the same gradient as rows to r.
 * outputs: 1 dense only, 2 row form only, 3 both. */
static void step(rb_reducer *d, rb_reducer *r, const char *what, bufs *b, size_t rows,
                 size_t cols, int outputs)
{
    size_t n = rows * cols;
    memcpy(b->work, b->own, n * sizeof(float));
    rb_stats sd, sr;
    int rc = rb_reduce(d, b->work, &sd);
    if (rc != RB_OK) {
        FAIL("%s: rb_reduce -> %s (%s)", what, rb_strerror(rc), rb_last_error());
        return;
    }
    rb_rows out;
    memset(b->dense_out, 0xa5, n * sizeof(float));   /* every element must be written */
    rc = rb_reduce_rows(r, &b->ri.in, outputs & 1 ? b->dense_out : NULL,
                        outputs & 2 ? &out : NULL, &sr);
    if (rc != RB_OK) {
        FAIL("%s: rb_reduce_rows -> %s (%s)", what, rb_strerror(rc), rb_last_error());
        return;
    }
    size_t first = 0, diff;
    if ((outputs & 1) && (diff = differ(b->dense_out, b->work, n, &first)))
        FAIL("%s: dense output differs from the dense-input result in %zu values, first [%zu] = "
             "%a, want %a", what, diff, first, (double)b->dense_out[first],
             (double)b->work[first]);
    if (outputs & 2)
        check_row_form(what, &out, b->work, rows, cols, b->scratch);
    check_stats(what, &sr, &sd);
}

static const double densities[] = {0.0, 1e-2, 0.15, 0.6, 1.0};

/* A step with the values of docs/values.md: a NaN on rank 0, +inf on the
 * last rank, -0.0 on every rank where it had a zero (a row of them is an
 * all-zero row), a denormal: the rows path gives what the dense one
 * does, bit for bit, and the reducers' state goes on to the next sweep. */
static void special_step(rb_reducer *d, rb_reducer *r, const char *name, bufs *b, size_t rows,
                         size_t cols)
{
    size_t n = rows * cols;
    if (n < 4)
        return;
    bench_gradgen g = {.rows = rows, .cols = cols, .density = 0.15, .layout = BENCH_LAYOUT_ROW,
                       .overlap = BENCH_OVERLAP_RANDOM, .nranks = nranks, .seed = 77};
    bench_gradgen_fill(&g, rank, b->own);
    for (size_t i = 0; i < n; i++)
        if (b->own[i] == 0.0f)
            b->own[i] = -0.0f;
    if (rank == 0)
        b->own[1] = NAN;
    if (rank == nranks - 1)
        b->own[n - 1] = INFINITY;
    b->own[n / 2] = 1e-40f;
    rows_of(&b->ri, b->own, rows, cols, 0);
    char what[192];
    snprintf(what, sizeof what, "%s, %zux%zu NaN, inf, -0.0, a denormal", name, rows, cols);
    zeros_by_value = 1;
    step(d, r, what, b, rows, cols, 3);
    zeros_by_value = 0;
}

/* One shape: every variant over densities x layouts x overlaps, ranks
 * with no rows on some steps. */
static void sweep_shape(size_t rows, size_t cols)
{
    bufs b;
    if (alloc_bufs(&b, rows, cols)) {
        FAIL("no memory for %zu x %zu", rows, cols);
        free_bufs(&b);
        return;
    }
    for (size_t v = 0; v < ntested; v++) {
        char name[128];
        label(name, sizeof name, &tested[v]);
        rb_reducer *d = NULL, *r = NULL;
        int rc = create(&tested[v], rows, cols, &d);
        if (rc == RB_OK)
            rc = create(&tested[v], rows, cols, &r);
        if (rc != RB_OK) {
            FAIL("%s: rb_create %zux%zu -> %s (%s)", name, rows, cols, rb_strerror(rc),
                 rb_last_error());
            rb_destroy(d);
            continue;
        }
        int stepno = 0;
        for (size_t di = 0; di < sizeof densities / sizeof *densities; di++)
            for (int layout = 0; layout < 3; layout++)
                for (int overlap = 0; overlap < 3; overlap++, stepno++) {
                    double dens = densities[di];
                    if (overlap == BENCH_OVERLAP_NONE && dens * nranks > 1.0)
                        continue;
                    bench_gradgen g = {.rows = rows, .cols = cols, .density = dens,
                                    .layout = (bench_layout)layout, .block = 16,
                                    .overlap = (bench_overlap)overlap, .nranks = nranks,
                                    .seed = 500 + (uint64_t)stepno};
                    bench_gradgen_fill(&g, rank, b.own);
                    /* every third step the odd ranks have no rows at all */
                    if (stepno % 3 == 2 && rank % 2)
                        memset(b.own, 0, rows * cols * sizeof(float));
                    rows_of(&b.ri, b.own, rows, cols, stepno % 2);
                    char what[256];
                    snprintf(what, sizeof what, "%s, %zux%zu density %g %s %s%s", name, rows,
                             cols, dens, bench_layout_name(g.layout), bench_overlap_name(g.overlap),
                             stepno % 3 == 2 ? ", odd ranks empty" : "");
                    step(d, r, what, &b, rows, cols, 1 + stepno % 3);
                }
        special_step(d, r, name, &b, rows, cols);
        rb_destroy(d);
        rb_destroy(r);
    }
    free_bufs(&b);
}

/* One call with input in on this rank: want RB_ERR_ARG everywhere, the
 * detail containing needle where the input is bad. */
static void expect_refused(rb_reducer *r, const char *what, const rb_rows *in, int bad_here,
                           const char *needle)
{
    float out[64];
    rb_rows rows_out;
    int rc = rb_reduce_rows(r, in, out, &rows_out, NULL);
    if (rc != RB_ERR_ARG)
        FAIL("bad input (%s) on the last rank: rb_reduce_rows -> %s (%s), want RB_ERR_ARG", what,
             rb_strerror(rc), rb_last_error());
    else if (bad_here && !strstr(rb_last_error(), needle))
        FAIL("bad input (%s): detail '%s' does not say '%s'", what, rb_last_error(), needle);
    else if (!bad_here && !strstr(rb_last_error(), "another rank"))
        FAIL("bad input (%s) elsewhere: detail '%s'", what, rb_last_error());
}

/* Bad input on the last rank only: every rank refuses, none hangs, and the
 * reducer still works afterwards. */
static void check_refusals(void)
{
    const size_t rows = 8, cols = 4;
    static const variant checked[] = {{"agsparse", {NULL}}, {"s2", {NULL}}, {"dense", {NULL}}};
    int64_t good_ids[] = {1, 5}, unsorted[] = {5, 1}, repeated[] = {5, 5}, far[] = {1, 8},
            negative[] = {-1, 5};
    float vals[2 * 4] = {1, 2, 3, 4, 5, 6, 7, 8};
    const rb_rows good = {2, cols, good_ids, vals};
    struct {
        const char *what, *needle;
        rb_rows in;
        int null_input;
    } bad[] = {
        {"unsorted ids", "strictly increasing", {2, cols, unsorted, vals}, 0},
        {"repeated id", "strictly increasing", {2, cols, repeated, vals}, 0},
        {"id out of range", "outside", {2, cols, far, vals}, 0},
        {"negative id", "outside", {2, cols, negative, vals}, 0},
        {"NULL values", "NULL values", {2, cols, good_ids, NULL}, 0},
        {"NULL ids", "NULL ids", {2, cols, NULL, vals}, 0},
        {"wrong row width", "floats", {2, cols + 1, good_ids, vals}, 0},
        {"too many rows", "rows listed", {rows + 1, cols, good_ids, vals}, 0},
        {"NULL input", "NULL input", {0, cols, NULL, NULL}, 1},
    };
    for (size_t v = 0; v < sizeof checked / sizeof *checked; v++) {
        rb_reducer *r = NULL;
        if (create(&checked[v], rows, cols, &r) != RB_OK) {
            FAIL("refusals: rb_create %s: %s", checked[v].name, rb_last_error());
            continue;
        }
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            int here = rank == nranks - 1;
            const rb_rows *in = here ? (bad[i].null_input ? NULL : &bad[i].in) : &good;
            char what[96];
            snprintf(what, sizeof what, "%s, %s", checked[v].name, bad[i].what);
            expect_refused(r, what, in, here, bad[i].needle);
        }
        /* NULL values with no rows is fine: nothing to read */
        const rb_rows empty = {0, cols, NULL, NULL};
        float out[rows * cols];
        int rc = rb_reduce_rows(r, &empty, out, NULL, NULL);
        if (rc != RB_OK)
            FAIL("%s: no rows, NULL ids and values: %s (%s)", checked[v].name, rb_strerror(rc),
                 rb_last_error());
        rc = rb_reduce_rows(r, &good, out, NULL, NULL);
        int exact = strcmp(checked[v].name, "s2") != 0;   /* s2 may collide */
        /* every rank's 1: the sum times 1/p, or each 1 times 1/p summed,
         * which at p = 11 is 1 - 2^-24, not 1 */
        if (rc != RB_OK || (exact && (fabsf(out[1 * cols] - 1.0f) > 1e-6f || out[0] != 0.0f)))
            FAIL("%s: a good call after the refusals: %s (%s), out[4] = %g", checked[v].name,
                 rb_strerror(rc), rb_last_error(), (double)out[1 * cols]);
        rb_destroy(r);
    }
}

/* Under LeakSanitizer, check for leaks before MPI_Finalize (as
 * tests/lib/test_reducers.c does). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    add_registry();
    check_refusals();
    sweep_shape(0, 5);
    sweep_shape(1, 1);
    sweep_shape(nranks > 1 ? (size_t)nranks - 1 : 1, 1);   /* fewer elements than ranks */
    sweep_shape(1, 13);      /* one row */
    sweep_shape(300, 1);     /* element layout as rows of one float */
    sweep_shape(77, 13);     /* rows shorter than a 64-float mask */
    sweep_shape(40, 100);    /* rows longer than one, not a multiple */
    sweep_shape(4099, 1);    /* many 64-float masks, a short last one */
    sweep_shape(33, 257);    /* rows over several omnireduce blocks */
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_rows: %d ranks, %zu variants: %d failure(s), %.1f s\n", nranks, ntested,
               total, MPI_Wtime() - t0);
    if (__lsan_do_leak_check)
        __lsan_do_leak_check();
    MPI_Finalize();
    return total ? 1 : 0;
}
