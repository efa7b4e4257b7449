/* Every reducer (s2, oktopk topk, gossip and none too) on NaN, +-inf,
 * sums that overflow, denormals and -0.0 (check_special_values says what
 * each must give; docs/values.md), and finite calls after them; and
 * oktopk_select=topk keeping the top-min(k, union) sums on any rank count
 * where every rank sends all its non-zeros, and sending and keeping at most
 * 4k/3 after a first call without non-zeros.
 *
 * Usage: test_values.  Exit 0 when every rank passed, 1 otherwise. */
#include "reducer_checks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    checks_start(&argc, &argv);
    double t0 = MPI_Wtime();
    check_special_values();
    check_topk_bounds();
    check_topk_after_zero();
    return checks_end("test_values", "", t0);
}
