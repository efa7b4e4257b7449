/* Multi-rank tests of the s2 reducer, run by tests/lib/s2.sh on 1..8 ranks:
 *  - the OR-reduced bitmap gives exactly the true union of non-zero rows;
 *  - with a sketch wide enough that no two union elements collide (checked
 *    here with the sketch's own hashes), s2 equals the exact average and the
 *    dense reducer, in every width mode and for r = 1, 3, 5;
 *  - stats: sketch width and wire bytes as the ring model says;
 *  - empty and one-element gradients, densities 0 and 1;
 *  - error feedback (per rank, on MPI_COMM_SELF): the accumulated output
 *    tracks the accumulated gradient, without feedback the error grows;
 *  - a seed mismatch is reported on every rank; bad sketch_rows rejected;
 *  - a sketch growth that fails on one rank (its address space capped)
 *    fails on every rank, again on a retry, and a smaller call then works. */
#include "reducer_sketch.h"
#include "harness/gradgen.h"
#include "reducer.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "[rank %d/%d] FAIL %s:%d: ", rank, nranks, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

typedef struct setup {
    bench_gradgen g;
    float *mine, *avg, *scratch;
    unsigned char *union_rows;  /* row non-zero on some rank */
    size_t n, union_count, max_nnz;
} setup;

static void setup_make(setup *s, size_t rows, size_t cols, double density, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->g = (bench_gradgen){.rows = rows, .cols = cols, .density = density,
                        .layout = BENCH_LAYOUT_ROW, .overlap = BENCH_OVERLAP_RANDOM,
                        .nranks = nranks, .seed = seed};
    s->n = rows * cols;
    size_t alloc = s->n ? s->n : 1;
    s->mine = calloc(alloc, sizeof(float));
    s->avg = calloc(alloc, sizeof(float));
    s->scratch = calloc(alloc, sizeof(float));
    s->union_rows = calloc(rows ? rows : 1, 1);
    for (int r = 0; r < nranks; r++) {
        size_t nnz = bench_gradgen_fill(&s->g, r, s->scratch);
        if (nnz > s->max_nnz)
            s->max_nnz = nnz;
        for (size_t i = 0; i < s->n; i++)
            if (s->scratch[i] != 0.0f)
                s->union_rows[i / cols] = 1;
    }
    for (size_t i = 0; i < rows; i++)
        s->union_count += s->union_rows[i];
    bench_gradgen_average(&s->g, s->avg, s->scratch);
    bench_gradgen_fill(&s->g, rank, s->mine);
}

static void setup_free(setup *s)
{
    free(s->mine);
    free(s->avg);
    free(s->scratch);
    free(s->union_rows);
}

/* Do all union elements land in distinct buckets in every sketch row? */
static int collision_free(const setup *s, int rows, size_t cols, uint64_t seed)
{
    rb_countsketch cs;
    if (rb_cs_init(&cs, rows, cols, seed) != RB_OK)
        return 0;
    unsigned char *used = calloc(cols, 1);
    int ok = 1;
    for (int j = 0; j < rows && ok; j++) {
        memset(used, 0, cols);
        for (size_t i = 0; i < s->n && ok; i++) {
            if (!s->union_rows[i / s->g.cols])
                continue;
            uint32_t b = rb_cs_bucket(&cs, j, i);
            ok = !used[b];
            used[b] = 1;
        }
    }
    free(used);
    rb_cs_free(&cs);
    return ok;
}

static int make_reducer(const char *name, const setup *s, MPI_Comm comm, const char **opts,
                        rb_reducer **out)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = name;
    cfg.comm = comm;
    cfg.rows = s->g.rows;
    cfg.cols = s->g.cols;
    for (; opts && *opts; opts++)
        if (rb_options_set(&cfg.opts, *opts) != RB_OK)
            return RB_ERR_ARG;
    return rb_create(&cfg, out);
}

/* Wire bytes of one rb_allreduce of b bytes (ring model, core.c). */
static uint64_t ring_bytes(uint64_t b)
{
    return 2 * (uint64_t)(nranks - 1) * b / (uint64_t)nranks;
}

/* Result rows outside the union are zero; union rows are not all zero. */
static void check_support(const setup *s, const float *res, const char *what)
{
    size_t wrong = 0;
    for (size_t row = 0; row < s->g.rows; row++) {
        int any = 0;
        for (size_t c = 0; c < s->g.cols; c++)
            any |= res[row * s->g.cols + c] != 0.0f;
        wrong += any != s->union_rows[row];
    }
    CHECK(wrong == 0, "%s: %zu rows where result support != true union", what, wrong);
}

/* No collisions: s2 == exact average == dense, for r and width mode. */
static void test_exact_without_collisions(int rows, const char *mode, double width)
{
    setup s;
    setup_make(&s, 40, 3, 0.1, 11 + (uint64_t)rows);
    size_t cols = !strcmp(mode, "abs") ? (size_t)width
                : !strcmp(mode, "fraction") ? (size_t)ceil(s.n * width)
                : (size_t)ceil(s.max_nnz * width);
    if (cols < 1) cols = 1;
    uint64_t seed = 1;
    while (!collision_free(&s, rows, cols, seed) && seed < 10000)
        seed++;
    CHECK(seed < 10000, "no collision-free seed found (premise)");
    char o_rows[32], o_mode[48], o_width[48], o_seed[48];
    snprintf(o_rows, sizeof o_rows, "sketch_rows=%d", rows);
    snprintf(o_mode, sizeof o_mode, "sketch_width_mode=%s", mode);
    snprintf(o_width, sizeof o_width, "sketch_width=%.17g", width);
    snprintf(o_seed, sizeof o_seed, "seed=%llu", (unsigned long long)seed);
    const char *opts[] = {o_rows, o_mode, o_width, o_seed, NULL};
    rb_reducer *s2 = NULL, *dense = NULL;
    CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, opts, &s2) == RB_OK, "create s2: %s", rb_last_error());
    CHECK(make_reducer("dense", &s, MPI_COMM_WORLD, NULL, &dense) == RB_OK, "create dense");
    if (!s2 || !dense)
        goto out;
    float *res = malloc(s.n * sizeof *res), *ref = malloc(s.n * sizeof *ref);
    for (int step = 0; step < 2; step++) {   /* twice: the table must be zeroed */
        memcpy(res, s.mine, s.n * sizeof *res);
        memcpy(ref, s.mine, s.n * sizeof *ref);
        rb_stats st, dst;
        CHECK(rb_reduce(s2, res, &st) == RB_OK, "s2 reduce: %s", rb_last_error());
        CHECK(rb_reduce(dense, ref, &dst) == RB_OK, "dense reduce");
        size_t bad_avg = 0, bad_dense = 0;
        for (size_t i = 0; i < s.n; i++) {
            bad_avg += fabsf(res[i] - s.avg[i]) > 1e-6f * (1.0f + fabsf(s.avg[i]));
            bad_dense += fabsf(res[i] - ref[i]) > 1e-6f * (1.0f + fabsf(ref[i]));
        }
        CHECK(bad_avg == 0, "r=%d %s step %d: %zu elements differ from the exact average", rows, mode, step, bad_avg);
        CHECK(bad_dense == 0, "r=%d %s step %d: %zu elements differ from dense", rows, mode, step, bad_dense);
        check_support(&s, res, mode);
        CHECK(st.nnz_result == s.union_count * s.g.cols, "nnz_result %llu, true union %zu rows",
              (unsigned long long)st.nnz_result, s.union_count);
        CHECK(st.sketch_cols == cols, "sketch_cols %llu, expected %zu", (unsigned long long)st.sketch_cols, cols);
        uint64_t expect = ring_bytes(8 * ((s.g.rows + 63) / 64))
                        + (s.union_count ? ring_bytes(4 * (uint64_t)rows * cols) : 0)
                        + (!strcmp(mode, "nnz") ? ring_bytes(8) : 0);
        CHECK(st.bytes_sent == expect && st.bytes_recv == expect, "bytes %llu/%llu, expected %llu",
              (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_recv, (unsigned long long)expect);
    }
    free(res);
    free(ref);
out:
    rb_destroy(s2);
    rb_destroy(dense);
    setup_free(&s);
}

/* Narrow sketch: values are approximate but the support is still exactly
 * the union of every rank's non-zero rows. */
static void test_union_with_collisions(int rows)
{
    setup s;
    setup_make(&s, 300, 7, 0.05, 5);
    const char *r_opt = rows == 1 ? "sketch_rows=1" : rows == 3 ? "sketch_rows=3" : "sketch_rows=5";
    const char *opts[] = {r_opt, "sketch_width_mode=nnz", "sketch_width=0.25", NULL};
    rb_reducer *s2 = NULL;
    CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, opts, &s2) == RB_OK, "create: %s", rb_last_error());
    if (s2) {
        rb_stats st;
        CHECK(rb_reduce(s2, s.mine, &st) == RB_OK, "reduce: %s", rb_last_error());
        check_support(&s, s.mine, "narrow sketch");
        CHECK(st.nnz_result == s.union_count * s.g.cols, "union %llu vs %zu rows x 7",
              (unsigned long long)st.nnz_result, s.union_count);
        CHECK(st.sketch_cols == (uint64_t)ceil(0.25 * s.max_nnz), "nnz mode width %llu, max nnz %zu",
              (unsigned long long)st.sketch_cols, s.max_nnz);
    }
    rb_destroy(s2);
    setup_free(&s);
}

/* With collisions, s2's output is still a known function: the query of
 * the summed sketches / p on the union, 0 elsewhere.  The reference sketch
 * is built here element by element (direct hashes); the sums differ from
 * s2's only in order, so a 1e-4 bound separates rounding from a missed or
 * misplaced element.  Rows of 8 give runs of 8, 16, 24 elements (hashed in
 * batches) and of 32 and more (hash walks), several batches' worth. */
static void test_matches_reference_sketch(int rows)
{
    enum { WIDTH = 5000 };
    setup s;
    setup_make(&s, 2000, 8, 0.3, 21 + (uint64_t)rows);
    const char *r_opt = rows == 1 ? "sketch_rows=1" : rows == 3 ? "sketch_rows=3" : "sketch_rows=5";
    const char *opts[] = {r_opt, "sketch_width_mode=abs", "sketch_width=5000", "seed=42", NULL};
    rb_countsketch ref;
    CHECK(rb_cs_init(&ref, rows, WIDTH, 42) == RB_OK, "init");
    for (int k = 0; k < nranks; k++) {
        bench_gradgen_fill(&s.g, k, s.scratch);
        for (size_t i = 0; i < s.n; i++)
            if (s.scratch[i] != 0.0f)
                rb_cs_insert(&ref, i, s.scratch[i]);
    }
    rb_cs_scale(&ref, 1.0f / (float)nranks);
    rb_reducer *s2 = NULL;
    CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, opts, &s2) == RB_OK, "create: %s", rb_last_error());
    if (s2) {
        rb_stats st;
        CHECK(rb_reduce(s2, s.mine, &st) == RB_OK, "reduce: %s", rb_last_error());
        size_t bad = 0;
        for (size_t i = 0; i < s.n; i++) {
            float want = s.union_rows[i / s.g.cols] ? rb_cs_query(&ref, i) : 0.0f;
            bad += !(fabsf(s.mine[i] - want) <= 1e-4f * (1.0f + fabsf(want)));
        }
        CHECK(bad == 0, "r=%d: %zu of %zu elements differ from the reference sketch's estimate",
              rows, bad, s.n);
    }
    rb_destroy(s2);
    rb_cs_free(&ref);
    setup_free(&s);
}

/* 0 elements, 1 element, nothing non-zero, everything non-zero. */
static void test_edges(void)
{
    const struct { size_t rows, cols; double density; } cases[] = {
        {0, 1, 0.5}, {1, 1, 1.0}, {1, 1, 0.0}, {64, 64, 0.0}, {17, 5, 1.0}, {65, 1, 0.5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setup s;
        setup_make(&s, cases[k].rows, cases[k].cols, cases[k].density, 3);
        const char *opts[] = {"sketch_width_mode=abs", "sketch_width=262144", "sketch_rows=3", NULL};
        rb_reducer *s2 = NULL;
        CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, opts, &s2) == RB_OK, "create %zux%zu: %s",
              cases[k].rows, cases[k].cols, rb_last_error());
        if (s2) {
            rb_stats st;
            CHECK(rb_reduce(s2, s.n ? s.mine : NULL, &st) == RB_OK, "reduce %zux%zu: %s",
                  cases[k].rows, cases[k].cols, rb_last_error());
            check_support(&s, s.mine, "edge case");
            double worst = 0;
            for (size_t i = 0; i < s.n; i++)
                worst = fmax(worst, fabs(s.mine[i] - s.avg[i]));
            /* 2^18 columns: collisions among <= 85 elements are unlikely but
             * possible, so only a loose bound here; exactness is tested above. */
            CHECK(worst < 1.0 + 1e-6, "%zux%zu: max error %g", cases[k].rows, cases[k].cols, worst);
        }
        rb_destroy(s2);
        setup_free(&s);
    }
}

/* Error feedback on one rank (MPI_COMM_SELF, so the output is this rank's
 * own decoded estimate): feeding the same g for T steps, the
 * sum of outputs is T g - e_T with feedback (telescoping), T (g + noise)
 * without.  With c = 2 nnz the residual contracts (E|e_t|^2 ~ nnz/c |g +
 * e_{t-1}|^2 with a fresh hash each call), so at T = 10 the error of the sum
 * must be < 30% of the no-feedback error (ideal ~ 1/T). */
static void test_error_feedback(void)
{
    setup s;
    setup_make(&s, 200, 4, 0.2, 21 + (uint64_t)rank);
    size_t nnz = 0;
    for (size_t i = 0; i < s.n; i++)
        nnz += s.mine[i] != 0.0f;
    char o_width[48];
    snprintf(o_width, sizeof o_width, "sketch_width=%zu", 2 * nnz + 1);
    double err[2] = {0, 0};
    const int T = 10;
    float *x = malloc(s.n * sizeof *x), *first = malloc(s.n * sizeof *first);
    double *sum = calloc(s.n, sizeof *sum);
    for (int ef = 0; ef < 2; ef++) {
        const char *opts[] = {"sketch_width_mode=abs", o_width, "seed=7",
                              ef ? "error_feedback=on" : "error_feedback=off", NULL};
        rb_reducer *s2 = NULL;
        CHECK(make_reducer("s2", &s, MPI_COMM_SELF, opts, &s2) == RB_OK, "create: %s", rb_last_error());
        if (!s2) break;
        memset(sum, 0, s.n * sizeof *sum);
        for (int t = 0; t < T; t++) {
            memcpy(x, s.mine, s.n * sizeof *x);
            CHECK(rb_reduce(s2, x, NULL) == RB_OK, "reduce: %s", rb_last_error());
            if (t == 0) memcpy(first, x, s.n * sizeof *x);
            if (t == 1 && !ef)
                CHECK(memcmp(first, x, s.n * sizeof *x) == 0, "no feedback: step 2 differs from step 1 (state kept)");
            for (size_t i = 0; i < s.n; i++)
                sum[i] += x[i];
        }
        for (size_t i = 0; i < s.n; i++) {
            double d = sum[i] - (double)T * s.mine[i];
            err[ef] += d * d;
        }
        err[ef] = sqrt(err[ef]);
        rb_destroy(s2);
    }
    CHECK(err[0] > 0, "premise: no sketch error without feedback");
    CHECK(err[1] < 0.3 * err[0], "error feedback: |sum out - T g| = %g, without feedback %g", err[1], err[0]);
    if (rank == 0)
        printf("error feedback, c = 2 nnz, T = %d: |sum out - T g| = %.4g with, %.4g without\n", T, err[1], err[0]);
    free(x);
    free(first);
    free(sum);
    setup_free(&s);
}

/* Seeds differ between ranks: rb_create fails with RB_ERR_MISMATCH on every
 * rank.  sketch_rows outside {1, 3, 5}: RB_ERR_ARG naming it. */
static void test_rejections(void)
{
    setup s;
    setup_make(&s, 10, 2, 0.5, 1);
    rb_reducer *red = NULL;
    if (nranks > 1) {
        char o_seed[48];
        snprintf(o_seed, sizeof o_seed, "seed=%d", rank == nranks - 1 ? 43 : 42);
        const char *opts[] = {o_seed, NULL};
        int rc = make_reducer("s2", &s, MPI_COMM_WORLD, opts, &red);
        int mismatch = rc == RB_ERR_MISMATCH, all = 0;
        MPI_Allreduce(&mismatch, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK(mismatch, "seed mismatch: rc %d (%s)", rc, rb_last_error());
        CHECK(all, "seed mismatch not reported on every rank");
        CHECK(strstr(rb_last_error(), "options") || strstr(rb_last_error(), "seed"),
              "mismatch message '%s' names neither options nor seed", rb_last_error());
        rb_destroy(red);
        red = NULL;
    }
    const char *bad_rows[] = {"sketch_rows=2", NULL};
    CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, bad_rows, &red) == RB_ERR_ARG, "sketch_rows=2 accepted");
    CHECK(strstr(rb_last_error(), "sketch_rows") != NULL, "error '%s' does not name sketch_rows", rb_last_error());
    rb_destroy(red);
    setup_free(&s);
}

/* This process's virtual size in bytes (0 if unknown). */
static uint64_t virtual_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* One s2 call on a flat 64-element gradient with `nnz` ones on every rank
 * (at 0..nnz-1); returns rb_reduce's status on this rank, and whether every
 * rank got the same. */
static int grow_call(rb_reducer *s2, int nnz, float *x, int *same)
{
    for (int i = 0; i < 64; i++)
        x[i] = i < nnz ? 1.0f : 0.0f;
    int rc = rb_reduce(s2, x, NULL), lo = 0, hi = 0;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    *same = lo == hi;
    return rc;
}

/* The width in nnz mode is 2^20 x max nnz floats: 4 MiB for one non-zero,
 * 128 MiB for 32.  The last rank may map only 64 MiB more than it has, so
 * the 32-non-zero call must fail with RB_ERR_NOMEM on every rank, twice
 * (a rank that grew must not keep a width the others lack: they would take
 * different collectives next), and a 1-non-zero call must then work. */
static void test_growth_failure(void)
{
    if (nranks < 2 || nranks > 4)   /* 128 MiB on every other rank */
        return;
    setup s;
    setup_make(&s, 64, 1, 0.0, 1);
    const char *opts[] = {"sketch_width_mode=nnz", "sketch_width=1048576", NULL};
    rb_reducer *s2 = NULL;
    CHECK(make_reducer("s2", &s, MPI_COMM_WORLD, opts, &s2) == RB_OK, "create: %s", rb_last_error());
    struct rlimit was;
    getrlimit(RLIMIT_AS, &was);
    uint64_t vsize = virtual_size();
    CHECK(vsize > 0, "no VmSize in /proc/self/status");
    if (s2 && vsize > 0) {
        float x[64];
        int same = 0;
        CHECK(grow_call(s2, 1, x, &same) == RB_OK && same, "first call: %s", rb_last_error());
        if (rank == nranks - 1) {
            struct rlimit cap = {vsize + (64u << 20), was.rlim_max};
            CHECK(setrlimit(RLIMIT_AS, &cap) == 0, "setrlimit");
        }
        for (int attempt = 1; attempt <= 2; attempt++) {
            int rc = grow_call(s2, 32, x, &same);
            CHECK(rc == RB_ERR_NOMEM && same, "growth past the cap, attempt %d: rc %d (%s), %s",
                  attempt, rc, rb_last_error(), same ? "same on all ranks" : "ranks differ");
        }
        int rc = grow_call(s2, 1, x, &same);
        CHECK(rc == RB_OK && same, "call after the failures: rc %d (%s)", rc, rb_last_error());
        CHECK(rc != RB_OK || x[0] == 1.0f, "call after the failures: x[0] = %g, want 1", x[0]);
        if (rank == nranks - 1)
            setrlimit(RLIMIT_AS, &was);
    }
    rb_destroy(s2);
    setup_free(&s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int rows = 1; rows <= 5; rows += 2) {
        test_exact_without_collisions(rows, "abs", 16384);
        test_exact_without_collisions(rows, "fraction", 128);
        test_exact_without_collisions(rows, "nnz", 1000);
        test_union_with_collisions(rows);
        test_matches_reference_sketch(rows);
    }
    test_edges();
    test_error_feedback();
    test_rejections();
    test_growth_failure();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_s2 on %d ranks: %s (%d failed checks)\n", nranks, total ? "FAIL" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
