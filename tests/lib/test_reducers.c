/* Multi-rank test of every exact reducer (registry trait RB_TRAIT_EXACT)
 * and of the algorithm variants of sparcml / parallax / omnireduce / oktopk
 * / zen, on the deterministic gradients of benchmarks/harness/gradgen.h:
 * result == exact average for densities {0, 1e-4, 1e-2, 0.3, 1}, layouts
 * {element, row, block}, overlaps {random, all, none}, sizes {0, 1, p - 1
 * (fewer elements than ranks), 13 (one row of 13), 1001} (and with --big,
 * 2^22 elements for every variant); every non-zero on one rank, in one
 * window, or on the even ranks only.  Reducers persist over a sweep: state
 * between calls meets changing supports.  Tolerance per element:
 * |x - ref| <= 1e-5 * (1 + sum_r |x_r|) / p, ref = the average computed in
 * double; dense and agsparse bit for bit where their order is fixed.
 * Stats: nnz_local, where the reducer counts it, is the rank's non-zero
 * count.  The wire bytes, the agreement of ranks and the value edges are
 * test_wire.c's, test_agreement.c's and test_values.c's.
 *
 * Usage: test_reducers [--big | --small]; --small: the shapes of fewer than
 * 14 elements only (for many oversubscribed ranks).  Exit 0 when every
 * rank passed, 1 otherwise. */
#include "reducer_checks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    checks_start(&argc, &argv);
    int big = argc > 1 && !strcmp(argv[1], "--big");
    int small = argc > 1 && !strcmp(argv[1], "--small");
    variant v[MAX_VARIANTS];
    int nv = make_variants(v);
    double t0 = MPI_Wtime();

    sweep_shape(v, nv, 0, 13, SKEW_NONE);
    sweep_shape(v, nv, 1, 1, SKEW_NONE);
    sweep_shape(v, nv, nranks > 1 ? (size_t)nranks - 1 : 1, 1, SKEW_NONE);   /* n < p */
    sweep_shape(v, nv, 1, 13, SKEW_NONE);                                   /* one row */
    if (!small) {
        sweep_shape(v, nv, 77, 13, SKEW_NONE);
        for (skew kind = SKEW_ONE_RANK; kind <= SKEW_WINDOW; kind++) {
            sweep_shape(v, nv, 77, 13, kind);
            sweep_shape(v, nv, 3001, 1, kind);
        }
        sweep_shape(v, nv, 77, 13, SKEW_ODD_EMPTY);
    }
    if (big)
        big_case(v, nv);
    char what[64];
    snprintf(what, sizeof what, "%d variants%s", nv,
             big ? " (+2^22 elements)" : small ? " (--small)" : "");
    return checks_end("test_reducers", what, t0);
}
