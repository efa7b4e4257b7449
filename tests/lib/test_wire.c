/* Wire bytes of the reducers against the formulas of docs/wire-bytes.md:
 * agsparse and sparcml (recdbl and rsag) within 10% on a case whose union
 * is known (overlap all: every rank has the same support), what a rank
 * sends to each peer, and the balance of oktopk's regions.
 *
 * Usage: test_wire.  Exit 0 when every rank passed, 1 otherwise. */
#include "reducer_checks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    checks_start(&argc, &argv);
    double t0 = MPI_Wtime();
    check_bytes();
    check_peer_bytes();
    check_balance();
    return checks_end("test_wire", "", t0);
}
