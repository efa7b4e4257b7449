#include "gradgen.h"

#include <stdlib.h>
#include <string.h>

static const char *const layout_names[] = {"element", "row", "block"};
static const char *const overlap_names[] = {"random", "all", "none"};

const char *rb_layout_name(rb_layout l) { return (unsigned)l < 3 ? layout_names[l] : "?"; }
const char *rb_overlap_name(rb_overlap o) { return (unsigned)o < 3 ? overlap_names[o] : "?"; }

int rb_layout_parse(const char *s, rb_layout *l)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, layout_names[i])) { *l = (rb_layout)i; return 0; }
    return -1;
}

int rb_overlap_parse(const char *s, rb_overlap *o)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, overlap_names[i])) { *o = (rb_overlap)i; return 0; }
    return -1;
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
static inline int unit_selected(const rb_gradgen *g, int rank, uint64_t u)
{
    switch (g->overlap) {
    case RB_OVERLAP_ALL:
        return unit_uniform(mix64(g->seed ^ mix64(u))) < g->density;
    case RB_OVERLAP_NONE: {
        /* A unit belongs to one owner; owners keep it with probability
         * density * p, so each rank's expected density is `density`. */
        uint64_t h = mix64(g->seed ^ mix64(u));
        if ((int)(h % (uint64_t)g->nranks) != rank)
            return 0;
        return unit_uniform(mix64(h)) < g->density * g->nranks;
    }
    case RB_OVERLAP_RANDOM:
    default:
        return unit_uniform(mix64(g->seed ^ mix64(u ^ ((uint64_t)(rank + 1) << 40)))) < g->density;
    }
}

static inline float value_of(const rb_gradgen *g, int rank, uint64_t i)
{
    uint64_t h = mix64(g->seed * 31 + mix64(i + ((uint64_t)rank << 42) + 0x5151));
    float v = (float)(unit_uniform(h) * 2.0 - 1.0);
    return v != 0.0f ? v : 0.5f;
}

size_t rb_gradgen_fill(const rb_gradgen *g, int rank, float *x)
{
    size_t n = g->rows * g->cols;
    size_t unit = g->layout == RB_LAYOUT_ROW ? g->cols
                : g->layout == RB_LAYOUT_BLOCK ? (g->block ? g->block : 1) : 1;
    size_t nnz = 0;
    memset(x, 0, n * sizeof *x);
    if (g->density <= 0.0)
        return 0;
    for (size_t lo = 0, u = 0; lo < n; lo += unit, u++) {
        size_t hi = lo + unit < n ? lo + unit : n;
        if (g->density < 1.0 || g->overlap == RB_OVERLAP_NONE) {
            if (!unit_selected(g, rank, u))
                continue;
        }
        for (size_t i = lo; i < hi; i++)
            x[i] = value_of(g, rank, i);
        nnz += hi - lo;
    }
    return nnz;
}

int rb_gradgen_average(const rb_gradgen *g, float *avg, float *scratch)
{
    size_t n = g->rows * g->cols;
    double *acc = calloc(n ? n : 1, sizeof *acc);
    if (!acc)
        return -1;
    for (int r = 0; r < g->nranks; r++) {
        rb_gradgen_fill(g, r, scratch);
        for (size_t i = 0; i < n; i++)
            acc[i] += scratch[i];
    }
    for (size_t i = 0; i < n; i++)
        avg[i] = (float)(acc[i] / g->nranks);
    free(acc);
    return 0;
}
