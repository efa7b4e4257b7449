#include "gradgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const layout_names[] = {"element", "row", "block"};
static const char *const overlap_names[] = {"random", "all", "none", "zipf", "trace"};

const char *bench_layout_name(bench_layout l) { return (unsigned)l < 3 ? layout_names[l] : "?"; }
const char *bench_overlap_name(bench_overlap o) { return (unsigned)o < 5 ? overlap_names[o] : "?"; }

int bench_layout_parse(const char *s, bench_layout *l)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, layout_names[i])) { *l = (bench_layout)i; return 0; }
    return -1;
}

int bench_overlap_parse(const char *s, bench_overlap *o)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, overlap_names[i])) { *o = (bench_overlap)i; return 0; }
    return -1;
}

int bench_overlap_parse_zipf(const char *s, bench_overlap *o, double *zipf_s)
{
    if (!bench_overlap_parse(s, o))
        return 0;
    if (strncmp(s, "zipf:", 5))
        return -1;
    char *end = NULL;
    double v = strtod(s + 5, &end);
    if (end == s + 5 || *end || !isfinite(v) || v <= 0.0 || v > 100.0)
        return -1;
    *o = BENCH_OVERLAP_ZIPF;
    *zipf_s = v;
    return 0;
}

void bench_gradgen_support_name(bench_overlap o, double zipf_s, char *buf, size_t len)
{
    if (o == BENCH_OVERLAP_ZIPF)
        snprintf(buf, len, "zipf:%g", zipf_s);
    else
        snprintf(buf, len, "%s", bench_overlap_name(o));
}

/* splitmix64 finaliser: a counter-based generator, so unit u of rank r
 * needs no state. */
static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double unit_uniform(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53; }

/* Is unit u on rank's support? */
static inline int unit_selected(const bench_gradgen *g, int rank, uint64_t u)
{
    switch (g->overlap) {
    case BENCH_OVERLAP_ALL:
        return unit_uniform(mix64(g->seed ^ mix64(u))) < g->density;
    case BENCH_OVERLAP_NONE: {
        /* A unit belongs to one owner; owners keep it with probability
         * density * p, so each rank's expected density is `density`. */
        uint64_t h = mix64(g->seed ^ mix64(u));
        if ((int)(h % (uint64_t)g->nranks) != rank)
            return 0;
        return unit_uniform(mix64(h)) < g->density * g->nranks;
    }
    case BENCH_OVERLAP_RANDOM:
    default:
        return unit_uniform(mix64(g->seed ^ mix64(u ^ ((uint64_t)(rank + 1) << 40)))) < g->density;
    }
}

static inline float value_of(const bench_gradgen *g, int rank, uint64_t i)
{
    uint64_t h = mix64(g->seed * 31 + mix64(i + ((uint64_t)rank << 42) + 0x5151));
    float v = (float)(unit_uniform(h) * 2.0 - 1.0);
    return v != 0.0f ? v : 0.5f;
}

/* ---------------------------------------------------------- Zipf draws */

/* Rejection-inversion sampling of a Zipf law over 1..n (Hoermann and
 * Derflinger 1996, as Apache Commons' RejectionInversionZipfSampler): O(1)
 * per draw, no table of n probabilities, exact for any exponent s > 0. */
typedef struct zipf_law {
    double s, n, h_x1, h_n, threshold;
} zipf_law;

static double log1p_over_x(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x / 2 + x * x / 3; }
static double expm1_over_x(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x / 2 + x * x / 6; }
static double zipf_h(const zipf_law *z, double x) { return exp(-z->s * log(x)); }
/* The integral of h: (x^(1-s) - 1) / (1 - s), log x at s = 1. */
static double zipf_hint(const zipf_law *z, double x)
{
    double lx = log(x);
    return expm1_over_x((1.0 - z->s) * lx) * lx;
}
static double zipf_hint_inv(const zipf_law *z, double x)
{
    double t = x * (1.0 - z->s);
    if (t < -1.0)
        t = -1.0;
    return exp(log1p_over_x(t) * x);
}

static zipf_law zipf_law_of(double s, size_t n)
{
    zipf_law z = {.s = s, .n = (double)n};
    z.h_x1 = zipf_hint(&z, 1.5) - 1.0;
    z.h_n = zipf_hint(&z, z.n + 0.5);
    z.threshold = 2.0 - zipf_hint_inv(&z, zipf_hint(&z, 2.5) - zipf_h(&z, 2.0));
    return z;
}

/* Draw j of rank (0-based unit), from a counter-based stream: attempt a of
 * the rejection loop is its own hash, so any rank can redo any draw. */
static size_t zipf_draw(const zipf_law *z, uint64_t seed, int rank, uint64_t j)
{
    uint64_t base = mix64(seed ^ 0x7a697066ULL) ^ mix64(j ^ ((uint64_t)(rank + 1) << 44));
    for (uint64_t a = 0;; a++) {
        double u = z->h_n + unit_uniform(mix64(base + a * 0x9e3779b97f4a7c15ULL)) * (z->h_x1 - z->h_n);
        double x = zipf_hint_inv(z, u);
        double k = floor(x + 0.5);
        if (k < 1.0)
            k = 1.0;
        else if (k > z->n)
            k = z->n;
        if (k - x <= z->threshold || u >= zipf_hint(z, k + 0.5) - zipf_h(z, k))
            return (size_t)k - 1;
    }
}

/* Rank's batch of round(density x units) Zipf draws; each distinct unit
 * drawn gets its values once (values are never 0, so a set first element
 * marks a unit already drawn). */
static size_t fill_zipf(const bench_gradgen *g, int rank, float *x, size_t n, size_t unit)
{
    size_t units = (n + unit - 1) / unit, nnz = 0;
    if (!units)
        return 0;
    zipf_law z = zipf_law_of(g->zipf_s, units);
    uint64_t draws = (uint64_t)llround(g->density * (double)units);
    for (uint64_t j = 0; j < draws; j++) {
        size_t u = zipf_draw(&z, g->seed, rank, j), lo = u * unit;
        size_t hi = lo + unit < n ? lo + unit : n;
        if (x[lo] != 0.0f)
            continue;
        for (size_t i = lo; i < hi; i++)
            x[i] = value_of(g, rank, i);
        nnz += hi - lo;
    }
    return nnz;
}

/* ---------------------------------------------------------- fill */

size_t bench_gradgen_fill(const bench_gradgen *g, int rank, float *x)
{
    if (g->overlap != BENCH_OVERLAP_SOURCE)
        memset(x, 0, g->rows * g->cols * sizeof *x);
    return bench_gradgen_fill_zeroed(g, rank, x);
}

size_t bench_gradgen_fill_zeroed(const bench_gradgen *g, int rank, float *x)
{
    size_t n = g->rows * g->cols;
    size_t unit = g->layout == BENCH_LAYOUT_ROW ? g->cols
                : g->layout == BENCH_LAYOUT_BLOCK ? (g->block ? g->block : 1) : 1;
    size_t nnz = 0;
    if (g->overlap == BENCH_OVERLAP_SOURCE)
        return g->source_fill(g->source, rank, g->nranks, x);
    if (g->density <= 0.0)
        return 0;
    if (g->overlap == BENCH_OVERLAP_ZIPF)
        return fill_zipf(g, rank, x, n, unit);
    for (size_t lo = 0, u = 0; lo < n; lo += unit, u++) {
        size_t hi = lo + unit < n ? lo + unit : n;
        if (g->density < 1.0 || g->overlap == BENCH_OVERLAP_NONE) {
            if (!unit_selected(g, rank, u))
                continue;
        }
        for (size_t i = lo; i < hi; i++)
            x[i] = value_of(g, rank, i);
        nnz += hi - lo;
    }
    return nnz;
}

int bench_gradgen_average(const bench_gradgen *g, float *avg, float *scratch)
{
    size_t n = g->rows * g->cols;
    double *acc = calloc(n ? n : 1, sizeof *acc);
    if (!acc)
        return -1;
    for (int r = 0; r < g->nranks; r++) {
        bench_gradgen_fill(g, r, scratch);
        for (size_t i = 0; i < n; i++)
            acc[i] += scratch[i];
    }
    for (size_t i = 0; i < n; i++)
        avg[i] = (float)(acc[i] / g->nranks);
    free(acc);
    return 0;
}
