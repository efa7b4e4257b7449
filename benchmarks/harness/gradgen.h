/* Deterministic synthetic sparse gradients.  Any rank can compute any
 * rank's gradient from (seed, rank), so the exact aggregate is known
 * everywhere without communication. */
#ifndef RB_GRADGEN_H
#define RB_GRADGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { RB_LAYOUT_ELEMENT = 0, RB_LAYOUT_ROW = 1, RB_LAYOUT_BLOCK = 2 } rb_layout;
typedef enum { RB_OVERLAP_RANDOM = 0, RB_OVERLAP_ALL = 1, RB_OVERLAP_NONE = 2 } rb_overlap;

typedef struct rb_gradgen {
    size_t rows, cols;     /* n = rows * cols elements */
    double density;        /* fraction of units non-zero on each rank */
    rb_layout layout;      /* unit = element, row (cols elements) or block */
    size_t block;          /* elements per block for RB_LAYOUT_BLOCK */
    rb_overlap overlap;    /* random: independent; all: same support on every
                              rank; none: disjoint supports (density <= 1/p) */
    int nranks;
    uint64_t seed;
} rb_gradgen;

const char *rb_layout_name(rb_layout l);
const char *rb_overlap_name(rb_overlap o);
int rb_layout_parse(const char *s, rb_layout *l);     /* 0 ok, -1 unknown */
int rb_overlap_parse(const char *s, rb_overlap *o);

/* Fill x[0..rows*cols) with rank's gradient; returns its non-zero count.
 * Values are in [-1, 1] and never 0 on the support. */
size_t rb_gradgen_fill(const rb_gradgen *g, int rank, float *x);
/* Exact average over all ranks (sum in double, rank order), into avg. */
/* Returns 0, or -1 when out of memory. */
int rb_gradgen_average(const rb_gradgen *g, float *avg, float *scratch);

#endif
