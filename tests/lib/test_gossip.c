/* Tests of the gossip reducer.  Usage: test_gossip MODE, run under
 * mpirun on p ranks.  Modes:
 *   exact     p a power of two: log2(p) synchronous steps give every rank
 *             the exact global mean (dyadic inputs: bit-exact; arbitrary
 *             floats: within 1e-6 * max|x|); partners follow the schedule.
 *   spread    any p: global mean preserved every step; the spread
 *             D = sqrt(sum_r ||x_r - mean||^2) never grows and shrinks per
 *             cycle of ceil(log2 p) steps by at least sigma_2 of the cycle
 *             matrix, measured from the reducer (unit vectors in), which
 *             must be doubly stochastic with sigma_2 < 1 and match the
 *             table below (docs/gossip.md) for p <= 8.
 *   rotation  p*ceil(log2 p) steps: with rotation every rank meets strictly
 *             more distinct partners than without; every step is a valid
 *             matching (hypercube) or permutation (dissemination).
 *   async     asynchronous results equal synchronous ones shifted by one
 *             step (feedback loop, bit-exact on dyadic inputs), for grad,
 *             params and both; mean preserved under arbitrary updates.
 *   options   mismatched seed / gossip options -> RB_ERR_MISMATCH on every
 *             rank; gossip_mix routes rb_reduce / rb_mix_params.
 *   wire      bytes per rank per step: 4n for an exchange, 0 for a skip,
 *             whatever p; p = 1 is a no-op.
 * Exit 0 pass, 1 fail, 99 hard error. */
#include "gossip_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Global mean per element, in double. */
static void global_mean(const float *x, double *mean, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mean[i] = x[i];
    MPI_Allreduce(MPI_IN_PLACE, mean, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++)
        mean[i] /= nranks;
}

/* D = sqrt(sum over ranks of ||x_r - mean||^2) and max_r ||x_r - mean||. */
static double spread(const float *x, const double *mean, size_t n, double *max_rank)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (x[i] - mean[i]) * (x[i] - mean[i]);
    double total = 0, mx = 0, mine = sqrt(s);
    MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (max_rank)
        *max_rank = mx;
    return sqrt(total);
}

/* Partner this rank must see at step k without rotation. */
static int expected_partner(int schedule, int k)
{
    if (schedule == RB_GOSSIP_HYPERCUBE) {
        int q = rank ^ (1 << k);
        return q < nranks ? q : -1;
    }
    return (rank + (1 << k)) % nranks;
}

/* ---------------------------------------------------------------- exact */

static void exact_case(int schedule, int rotate, int dyadic)
{
    const size_t n = 257;
    setup s = {schedule, rotate, 0, RB_GOSSIP_MIX_GRAD, 42, n};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return;
    float *x = malloc(n * sizeof *x), *mx = malloc(n * sizeof *mx);
    double *mean = malloc(n * sizeof *mean);
    double maxabs = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = dyadic ? dyadic_input(rank, i) : random_input(rank, i, 7);
        maxabs = fmax(maxabs, fabs(x[i]));
    }
    MPI_Allreduce(MPI_IN_PLACE, &maxabs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    global_mean(x, mean, n);
    int levels = ceil_log2(nranks);
    /* Two cycles: the first reaches the mean, the second (rotated when
     * rotation is on) must keep it. */
    for (int t = 0; t < 2 * levels; t++) {
        rb_stats st;
        int rc = rb_reduce(r, x, &st);
        CHECK(rc == RB_OK, "rb_reduce: %s", rb_strerror(rc));
        if (t < levels) /* epoch 0 is never relabelled */
            CHECK(st.partner == expected_partner(schedule, t),
                  "%s step %d: partner %d, expected %d", sched_name[schedule], t,
                  st.partner, expected_partner(schedule, t));
        CHECK(st.skipped == 0, "power of two: no step may be skipped");
        if (t == levels - 1 || t == 2 * levels - 1) {
            double tol = dyadic ? 0.0 : 1e-6 * maxabs;
            double worst = 0;
            for (size_t i = 0; i < n; i++)
                worst = fmax(worst, fabs(x[i] - mean[i]));
            CHECK(worst <= tol, "%s rotate=%d %s: after %d steps |x - mean| = %g > %g",
                  sched_name[schedule], rotate, dyadic ? "dyadic" : "random", t + 1, worst, tol);
        }
    }
    if (rank == 0)
        printf("exact p=%d %s rotate=%d %s: mean after %d steps\n", nranks,
               sched_name[schedule], rotate, dyadic ? "dyadic(bit-exact)" : "random(1e-6)", levels);
    free(x), free(mx), free(mean);
    rb_destroy(r);
}

static void mode_exact(void)
{
    if (nranks & (nranks - 1)) {
        fail("exact needs a power of two ranks");
        return;
    }
    for (int schedule = 0; schedule < 2; schedule++)
        for (int rotate = 0; rotate < 2; rotate++)
            for (int dyadic = 0; dyadic < 2; dyadic++)
                exact_case(schedule, rotate, dyadic);
}

/* ---------------------------------------------------------------- spread */

/* sigma_2 of the product of one cycle's mixing matrices (largest singular
 * value of W - J/p), computed by docs/gossip.md's script.  Relabelling is
 * an orthogonal similarity, so it holds with rotation too. */
static double cycle_sigma2(int schedule, int p)
{
    static const double hyper[9] = {0, 0, 0, 0.5, 0, 0.612372, 0.5, 0.353553, 0};
    static const double dissem[9] = {0, 0, 0, 0.25, 0, 0.202254, 0.216506, 0.125, 0};
    if (p < 0 || p > 8)
        return 1.0;
    return schedule == RB_GOSSIP_HYPERCUBE ? hyper[p] : dissem[p];
}

/* The matrix of one cycle as the reducer applies it: rank r starts from
 * the unit vector e_r (n = p), so after the cycle it holds row r of W.
 * Gathered on every rank into w (p x p, row-major).  0 on success. */
static int measured_cycle(int schedule, int rotate, double *w)
{
    setup s = {schedule, rotate, 0, RB_GOSSIP_MIX_GRAD, 1234, (size_t)nranks};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return -1;
    float *x = calloc((size_t)nranks, sizeof *x);
    double *row = malloc((size_t)nranks * sizeof *row);
    x[rank] = 1.0f;
    int rc = RB_OK;
    for (int t = 0; t < ceil_log2(nranks) && rc == RB_OK; t++)
        rc = rb_reduce(r, x, NULL);
    for (int j = 0; j < nranks; j++)
        row[j] = x[j];
    MPI_Allgather(row, nranks, MPI_DOUBLE, w, nranks, MPI_DOUBLE, MPI_COMM_WORLD);
    free(x), free(row);
    rb_destroy(r);
    return rc == RB_OK ? 0 : -1;
}

/* Largest singular value of W - J/p (J all ones): power iteration on
 * M^T M, p <= a few dozen. */
static double sigma2_of(const double *w, int p)
{
    double *m = malloc((size_t)p * p * sizeof *m), *v = malloc((size_t)p * sizeof *v);
    double *u = malloc((size_t)p * sizeof *u), sigma = 0;
    for (int i = 0; i < p * p; i++)
        m[i] = w[i] - 1.0 / p;
    for (int i = 0; i < p; i++)
        v[i] = 1.0 + 0.37 * i - 0.011 * i * i;
    for (int it = 0; it < 2000; it++) {
        double norm = 0;
        for (int i = 0; i < p; i++) {
            u[i] = 0;
            for (int j = 0; j < p; j++)
                u[i] += m[i * p + j] * v[j];
        }
        for (int j = 0; j < p; j++) {
            v[j] = 0;
            for (int i = 0; i < p; i++)
                v[j] += m[i * p + j] * u[i];
            norm += v[j] * v[j];
        }
        norm = sqrt(norm);
        if (norm == 0)
            break;
        sigma = sqrt(norm);   /* |M^T M v| -> sigma^2 for a unit v */
        for (int j = 0; j < p; j++)
            v[j] /= norm;
    }
    free(m), free(v), free(u);
    return sigma;
}

/* The cycle's bound at any p: sigma_2 of the matrix the reducer applies,
 * which must be doubly stochastic (the mean kept, consensus a fixed point)
 * and a contraction (sigma_2 < 1: the ranks reach consensus).  Where the
 * table has p, the two agree. */
static double cycle_bound(int schedule, int rotate)
{
    double *w = malloc((size_t)nranks * nranks * sizeof *w);
    if (measured_cycle(schedule, rotate, w)) {   /* the bound 1 below: "never grows" only */
        fail("%s p=%d rotate=%d: the cycle's matrix not measured: %s", sched_name[schedule],
             nranks, rotate, rb_last_error());
        free(w);
        return 1.0;
    }
    double worst = 0;
    for (int i = 0; i < nranks; i++) {
        double row = 0, col = 0;
        for (int j = 0; j < nranks; j++)
            row += w[i * nranks + j], col += w[j * nranks + i];
        worst = fmax(worst, fmax(fabs(row - 1), fabs(col - 1)));
    }
    double rho = sigma2_of(w, nranks), table = cycle_sigma2(schedule, nranks);
    CHECK(worst <= 1e-6, "%s p=%d: the cycle's matrix is not doubly stochastic (off by %g)",
          sched_name[schedule], nranks, worst);
    CHECK(rho < 0.999, "%s p=%d: sigma_2 of a cycle is %g: no contraction", sched_name[schedule],
          nranks, rho);
    CHECK(nranks > 8 || table == 0 || fabs(rho - table) <= 1e-4,
          "%s p=%d: sigma_2 %g measured, %g in the table", sched_name[schedule], nranks, rho, table);
    free(w);
    return rho;
}

static void spread_case(int schedule, int rotate)
{
    const size_t n = 1000;
    const int cycles = 3;
    setup s = {schedule, rotate, 0, RB_GOSSIP_MIX_GRAD, 1234, n};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return;
    float *x = malloc(n * sizeof *x);
    double *mean0 = malloc(n * sizeof *mean0), *mean = malloc(n * sizeof *mean);
    for (size_t i = 0; i < n; i++)
        x[i] = random_input(rank, i, 99);
    global_mean(x, mean0, n);
    int levels = ceil_log2(nranks);
    double rho = cycle_bound(schedule, rotate);
    double d0 = spread(x, mean0, n, NULL), prev = d0, cycle_start = d0, max0;
    spread(x, mean0, n, &max0);
    double worst_ratio = 0;
    for (int t = 0; t < cycles * levels; t++) {
        rb_stats st;
        int rc = rb_reduce(r, x, &st);
        CHECK(rc == RB_OK, "rb_reduce: %s", rb_strerror(rc));
        global_mean(x, mean, n);
        double drift = 0;
        for (size_t i = 0; i < n; i++)
            drift = fmax(drift, fabs(mean[i] - mean0[i]));
        CHECK(drift <= 1e-6, "%s step %d: global mean moved by %g", sched_name[schedule], t, drift);
        double d = spread(x, mean, n, NULL);
        CHECK(d <= prev * (1 + 1e-6) + 1e-9, "%s step %d: spread grew %g -> %g",
              sched_name[schedule], t, prev, d);
        prev = d;
        if ((t + 1) % levels == 0) {
            double ratio = d / cycle_start;
            worst_ratio = fmax(worst_ratio, ratio);
            CHECK(d <= rho * 1.001 * cycle_start + 1e-6 * d0,
                  "%s rotate=%d cycle %d: spread %g -> %g, ratio %.4f > bound %.4f",
                  sched_name[schedule], rotate, (t + 1) / levels, cycle_start, d, ratio, rho);
            cycle_start = d;
        }
    }
    double maxr;
    spread(x, mean, n, &maxr);
    if (rank == 0)
        printf("spread p=%d %s rotate=%d: D %.4g -> %.4g, max_r %.4g -> %.4g after %d cycles; "
               "worst cycle ratio %.4f <= bound %.6f\n", nranks, sched_name[schedule], rotate,
               d0, prev, max0, maxr, cycles, worst_ratio, rho);
    free(x), free(mean0), free(mean);
    rb_destroy(r);
}

static void mode_spread(void)
{
    if (nranks < 2) {
        fail("spread needs 2 ranks or more");
        return;
    }
    for (int schedule = 0; schedule < 2; schedule++)
        for (int rotate = 0; rotate < 2; rotate++)
            spread_case(schedule, rotate);
}

/* ---------------------------------------------------------------- rotation */

static int rank_distinct_partners(int schedule, int rotate, int steps, int *all_valid)
{
    setup s = {schedule, rotate, 0, RB_GOSSIP_MIX_GRAD, 42, 4};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return -1;
    float x[4] = {0};
    int *seen = calloc((size_t)nranks, sizeof *seen);
    int *partners = malloc((size_t)nranks * sizeof *partners);
    int *count = malloc((size_t)nranks * sizeof *count);
    for (int t = 0; t < steps; t++) {
        rb_stats st;
        if (rb_reduce(r, x, &st) != RB_OK) {
            fail("rb_reduce failed");
            break;
        }
        if (st.partner >= 0)
            seen[st.partner] = 1;
        MPI_Allgather(&st.partner, 1, MPI_INT, partners, 1, MPI_INT, MPI_COMM_WORLD);
        /* Hypercube: a matching (q's partner is r).  Dissemination: every
         * rank is received from exactly once, never by itself. */
        memset(count, 0, (size_t)nranks * sizeof *count);
        for (int q = 0; q < nranks; q++) {
            int pq = partners[q];
            if (pq == q || pq >= nranks)
                *all_valid = 0;
            else if (pq >= 0) {
                count[pq]++;
                if (schedule == RB_GOSSIP_HYPERCUBE && partners[pq] != q)
                    *all_valid = 0;
            }
        }
        for (int q = 0; q < nranks; q++)
            if (schedule == RB_GOSSIP_DISSEMINATION && count[q] != 1)
                *all_valid = 0;
    }
    int distinct = 0;
    for (int q = 0; q < nranks; q++)
        distinct += seen[q];
    free(seen), free(partners), free(count);
    rb_destroy(r);
    return distinct;
}

static void mode_rotation(void)
{
    int steps = nranks * ceil_log2(nranks);
    for (int schedule = 0; schedule < 2; schedule++) {
        int valid = 1;
        int without = rank_distinct_partners(schedule, 0, steps, &valid);
        int with = rank_distinct_partners(schedule, 1, steps, &valid);
        CHECK(valid, "%s: a step was not a valid matching/permutation", sched_name[schedule]);
        CHECK(with > without, "%s: %d distinct partners with rotation, %d without",
              sched_name[schedule], with, without);
        int tot[2] = {without, with}, sum[2], lo[2];
        MPI_Allreduce(tot, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(tot, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rank == 0)
            printf("rotation p=%d %s, %d steps: distinct partners per rank without %.2f (min %d), "
                   "with %.2f (min %d) of %d\n", nranks, sched_name[schedule], steps,
                   (double)sum[0] / nranks, lo[0], (double)sum[1] / nranks, lo[1], nranks - 1);
    }
}

/* ---------------------------------------------------------------- async */

/* One rb_reduce or rb_mix_params call, on the channel the mix selects. */
static int call(rb_reducer *r, int params, float *x, rb_stats *st)
{
    return params ? rb_mix_params(r, x, st) : rb_reduce(r, x, st);
}

static int bits_equal(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* Feedback loop x <- call(x): the asynchronous output of call t+1 equals
 * the synchronous output of call t, and the flush supplies the last one.
 * mix = both drives the gradient and the parameter channels together. */
static void async_shift_case(int schedule, int rotate, int mix)
{
    const size_t n = 33;
    const int steps = 2 * ceil_log2(nranks) + 3;
    setup ss = {schedule, rotate, 0, mix, 7, n}, sa = ss;
    sa.async = 1;
    rb_reducer *rs, *ra;
    if (make(&ss, &rs) != RB_OK)
        return;
    if (make(&sa, &ra) != RB_OK) {
        rb_destroy(rs);
        return;
    }
    int use_grad = mix & RB_GOSSIP_MIX_GRAD, use_params = mix & RB_GOSSIP_MIX_PARAMS;
    float *sync[2], *async_[2], *prev[2];
    for (int c = 0; c < 2; c++) {
        sync[c] = malloc(n * sizeof(float));
        async_[c] = malloc(n * sizeof(float));
        prev[c] = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            sync[c][i] = async_[c][i] = prev[c][i] = dyadic_input(rank + 17 * c, i);
    }
    for (int t = 0; t < steps; t++) {
        for (int c = 0; c < 2; c++) {
            if (!(c ? use_params : use_grad))
                continue;
            rb_stats st_s, st_a;
            memcpy(prev[c], sync[c], n * sizeof(float));
            int rc1 = call(rs, c, sync[c], &st_s);
            if (t % 2)
                rb_progress(ra);
            int rc2 = call(ra, c, async_[c], &st_a);
            CHECK(rc1 == RB_OK && rc2 == RB_OK, "call failed: %s", rb_last_error());
            CHECK(st_s.partner == st_a.partner, "step %d: partners differ (%d sync, %d async)",
                  t, st_s.partner, st_a.partner);
            /* async after call t == sync after call t-1 (== x0 for t = 0) */
            CHECK(bits_equal(async_[c], prev[c], n),
                  "%s rotate=%d mix=%d %s step %d: async != sync shifted by one",
                  sched_name[schedule], rotate, mix, c ? "params" : "grad", t);
        }
        rb_progress(ra);
    }
    int rc = rb_flush(ra, use_grad ? async_[0] : NULL, use_params ? async_[1] : NULL, NULL);
    CHECK(rc == RB_OK, "rb_flush: %s", rb_strerror(rc));
    for (int c = 0; c < 2; c++)
        if (c ? use_params : use_grad)
            CHECK(bits_equal(async_[c], sync[c], n), "flush: async != last sync result");
    /* A second flush has nothing left to apply. */
    float *keep = malloc(n * sizeof *keep);
    memcpy(keep, async_[0], n * sizeof *keep);
    rb_flush(ra, async_[0], async_[1], NULL);
    CHECK(bits_equal(keep, async_[0], n), "second flush changed the buffer");
    free(keep);
    for (int c = 0; c < 2; c++)
        free(sync[c]), free(async_[c]), free(prev[c]);
    rb_destroy(rs);
    rb_destroy(ra);
}

/* The caller changes x between calls (an SGD update): every call still
 * preserves the global sum, sum_r out_r == sum_r in_r. */
static void async_mean_case(int schedule)
{
    const size_t n = 100;
    setup s = {schedule, 1, 1, RB_GOSSIP_MIX_PARAMS, 5, n};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return;
    float *x = malloc(n * sizeof *x);
    double *before = malloc(n * sizeof *before), *after = malloc(n * sizeof *after);
    for (size_t i = 0; i < n; i++)
        x[i] = random_input(rank, i, 3);
    double worst = 0;
    for (int t = 0; t < 3 * ceil_log2(nranks) + 1; t++) {
        for (size_t i = 0; i < n; i++)
            x[i] += 0.1f * random_input(rank, i, 1000 + (uint64_t)t);
        global_mean(x, before, n);
        CHECK(rb_mix_params(r, x, NULL) == RB_OK, "rb_mix_params failed");
        global_mean(x, after, n);
        for (size_t i = 0; i < n; i++)
            worst = fmax(worst, fabs(after[i] - before[i]));
    }
    global_mean(x, before, n);
    CHECK(rb_flush(r, NULL, x, NULL) == RB_OK, "rb_flush failed");
    global_mean(x, after, n);
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(after[i] - before[i]));
    CHECK(worst <= 1e-6, "%s async with updates: global mean moved by %g", sched_name[schedule], worst);
    if (rank == 0)
        printf("async p=%d %s: mean kept under updates (max drift %.2g)\n", nranks,
               sched_name[schedule], worst);
    free(x), free(before), free(after);
    rb_destroy(r);
}

static void mode_async(void)
{
    static const int mixes[3] = {RB_GOSSIP_MIX_GRAD, RB_GOSSIP_MIX_PARAMS, RB_GOSSIP_MIX_BOTH};
    for (int schedule = 0; schedule < 2; schedule++) {
        for (int rotate = 0; rotate < 2; rotate++)
            for (int m = 0; m < 3; m++)
                async_shift_case(schedule, rotate, mixes[m]);
        if (nranks > 1)
            async_mean_case(schedule);
    }
    if (rank == 0)
        printf("async p=%d: async == sync shifted by one step (bit-exact), grad/params/both\n", nranks);
}

/* ---------------------------------------------------------------- options */

/* Every rank must get `want`. */
static void expect_everywhere(int rc, int want, const char *what)
{
    int ok = rc == want, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    CHECK(all, "%s: rank got %s, expected %s on every rank", what, rb_strerror(rc),
          rb_strerror(want));
}

static void mismatch_case(const char *what, void (*tweak)(setup *))
{
    setup s = {RB_GOSSIP_HYPERCUBE, 1, 0, RB_GOSSIP_MIX_GRAD, 42, 8};
    if (rank == nranks - 1 && tweak)
        tweak(&s);
    rb_config c;
    rb_config_default(&c);
    c.name = "gossip";
    c.rows = s.n;
    c.opts.gossip_schedule = s.schedule;
    c.opts.gossip_rotate = s.rotate;
    c.opts.gossip_async = s.async;
    c.opts.gossip_mix = s.mix;
    c.opts.seed = s.seed;
    rb_reducer *r = NULL;
    int rc = rb_create(&c, &r);
    expect_everywhere(rc, tweak ? RB_ERR_MISMATCH : RB_OK, what);
    CHECK((rc == RB_OK) == (r != NULL), "%s: reducer returned on failure", what);
    rb_destroy(r);
}

static void tweak_seed(setup *s) { s->seed = 43; }
static void tweak_schedule(setup *s) { s->schedule = RB_GOSSIP_DISSEMINATION; }
static void tweak_rotate(setup *s) { s->rotate = 0; }
static void tweak_async(setup *s) { s->async = 1; }
static void tweak_mix(setup *s) { s->mix = RB_GOSSIP_MIX_BOTH; }

/* gossip_mix decides which entry point mixes; the other leaves its buffer. */
static void mix_routing_case(int mix)
{
    const size_t n = 16;
    setup s = {RB_GOSSIP_DISSEMINATION, 0, 0, mix, 42, n};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return;
    float g[16], p[16], g0[16], p0[16];
    for (size_t i = 0; i < n; i++)
        g[i] = g0[i] = dyadic_input(rank, i), p[i] = p0[i] = dyadic_input(rank + 50, i);
    rb_stats sg, sp;
    CHECK(rb_reduce(r, g, &sg) == RB_OK && rb_mix_params(r, p, &sp) == RB_OK, "calls failed");
    int g_changed = !bits_equal(g, g0, n), p_changed = !bits_equal(p, p0, n);
    CHECK(g_changed == !!(mix & RB_GOSSIP_MIX_GRAD), "mix=%d: gradient %s", mix,
          g_changed ? "changed" : "untouched");
    CHECK(p_changed == !!(mix & RB_GOSSIP_MIX_PARAMS), "mix=%d: params %s", mix,
          p_changed ? "changed" : "untouched");
    CHECK(sg.skipped == !(mix & RB_GOSSIP_MIX_GRAD) && sp.skipped == !(mix & RB_GOSSIP_MIX_PARAMS),
          "mix=%d: skipped flags %d %d", mix, sg.skipped, sp.skipped);
    /* One step per iteration: with both, the params call uses the same
     * partner as the gradient call. */
    if (mix == RB_GOSSIP_MIX_BOTH)
        CHECK(sg.partner == sp.partner && sg.partner == (rank + 1) % nranks,
              "both: partners %d and %d, expected %d", sg.partner, sp.partner, (rank + 1) % nranks);
    rb_destroy(r);
}

static void mode_options(void)
{
    mismatch_case("identical options", NULL);
    mismatch_case("seed", tweak_seed);
    mismatch_case("gossip_schedule", tweak_schedule);
    mismatch_case("gossip_rotate", tweak_rotate);
    mismatch_case("gossip_async", tweak_async);
    mismatch_case("gossip_mix", tweak_mix);
    if (nranks > 1) {
        mix_routing_case(RB_GOSSIP_MIX_GRAD);
        mix_routing_case(RB_GOSSIP_MIX_PARAMS);
        mix_routing_case(RB_GOSSIP_MIX_BOTH);
    }
    /* Other reducers do not offer the gossip entry points. */
    rb_config c;
    rb_config_default(&c);
    c.rows = 4;
    rb_reducer *r;
    if (rb_create(&c, &r) == RB_OK) {
        float x[4] = {0};
        CHECK(rb_mix_params(r, x, NULL) == RB_ERR_UNSUPPORTED, "dense mixes params?");
        rb_destroy(r);
    }
    if (rank == 0)
        printf("options p=%d: mismatches detected on every rank; gossip_mix routing\n", nranks);
}

/* ---------------------------------------------------------------- wire */

static void wire_case(int schedule, int async, size_t n)
{
    setup s = {schedule, 1, async, RB_GOSSIP_MIX_GRAD, 42, n};
    rb_reducer *r;
    if (make(&s, &r) != RB_OK)
        return;
    float *x = malloc((n ? n : 1) * sizeof *x), *x0 = malloc((n ? n : 1) * sizeof *x0);
    for (size_t i = 0; i < n; i++)
        x[i] = x0[i] = random_input(rank, i, 11);
    int levels = ceil_log2(nranks), steps = 2 * levels + 1;
    uint64_t per_step = 4 * (uint64_t)n;
    int exchanges = 0;
    for (int t = 0; t < steps; t++) {
        rb_stats st;
        CHECK(rb_reduce(r, x, &st) == RB_OK, "rb_reduce failed: %s", rb_last_error());
        CHECK(st.skipped == (st.partner < 0), "skipped %d but partner %d", st.skipped, st.partner);
        if (schedule == RB_GOSSIP_DISSEMINATION || nranks == 1)
            CHECK(st.skipped == (nranks == 1), "%s p=%d step %d: skipped=%d",
                  sched_name[schedule], nranks, t, st.skipped);
        uint64_t want = st.skipped ? 0 : per_step;
        CHECK(st.bytes_sent == want && st.bytes_recv == want,
              "%s async=%d n=%zu step %d: sent %llu recv %llu, expected %llu",
              sched_name[schedule], async, n, t, (unsigned long long)st.bytes_sent,
              (unsigned long long)st.bytes_recv, (unsigned long long)want);
        CHECK(st.t_wait >= 0, "negative wait");
        exchanges += !st.skipped;
    }
    CHECK(rb_flush(r, x, NULL, NULL) == RB_OK, "rb_flush failed");
    if (nranks == 1)
        CHECK(bits_equal(x, x0, n), "p=1 must leave the buffer unchanged");
    int total = 0;
    MPI_Allreduce(&exchanges, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && n == 1000)
        printf("wire p=%d %-13s async=%d: %llu B sent and received per exchange step "
               "(%.2f exchanges per rank-step)\n", nranks, sched_name[schedule], async,
               (unsigned long long)per_step, (double)total / (nranks * steps));
    free(x), free(x0);
    rb_destroy(r);
}

static void mode_wire(void)
{
    static const size_t sizes[3] = {1000, 1, 0};
    for (int schedule = 0; schedule < 2; schedule++)
        for (int async = 0; async < 2; async++)
            for (int k = 0; k < 3; k++)
                wire_case(schedule, async, sizes[k]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    static const struct { const char *name; void (*run)(void); } modes[] = {
        {"exact", mode_exact}, {"spread", mode_spread}, {"rotation", mode_rotation},
        {"async", mode_async}, {"options", mode_options}, {"wire", mode_wire},
    };
    int found = 0;
    for (size_t i = 0; argc == 2 && i < sizeof modes / sizeof modes[0]; i++) {
        if (!strcmp(argv[1], modes[i].name)) {
            modes[i].run();
            found = 1;
        }
    }
    if (!found) {
        if (rank == 0)
            fprintf(stderr, "usage: test_gossip exact|spread|rotation|async|options|wire\n");
        MPI_Finalize();
        return 99;
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}
