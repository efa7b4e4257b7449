/* Deterministic synthetic sparse gradients.  Any rank can compute any
 * rank's gradient from (seed, rank), so the exact aggregate is known
 * everywhere without communication. */
#ifndef RB_GRADGEN_H
#define RB_GRADGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { RB_LAYOUT_ELEMENT = 0, RB_LAYOUT_ROW = 1, RB_LAYOUT_BLOCK = 2 } rb_layout;
/* How the ranks' supports are drawn: random (independent uniform), all
 * (one support shared), none (disjoint), zipf (each rank draws its own
 * batch of units from a Zipf law over the units, unit 0 the most frequent,
 * as data-parallel ranks draw their own batches of words), or a source
 * (rows recorded from a model, harness/trace.h) that fills the gradient. */
typedef enum {
    RB_OVERLAP_RANDOM = 0, RB_OVERLAP_ALL = 1, RB_OVERLAP_NONE = 2, RB_OVERLAP_ZIPF = 3,
    RB_OVERLAP_SOURCE = 4
} rb_overlap;

/* A gradient that is not drawn here: rank of nranks's gradient into x
 * (rows * cols, zeroed by the callee); its non-zero count. */
typedef size_t (*rb_gradgen_source_fill)(const void *source, int rank, int nranks, float *x);

typedef struct rb_gradgen {
    size_t rows, cols;     /* n = rows * cols elements */
    double density;        /* fraction of units non-zero on each rank */
    rb_layout layout;      /* unit = element, row (cols elements) or block */
    size_t block;          /* elements per block for RB_LAYOUT_BLOCK */
    rb_overlap overlap;    /* random: independent; all: same support on every
                              rank; none: disjoint supports (density <= 1/p) */
    int nranks;
    uint64_t seed;
    double zipf_s;         /* zipf: the exponent (> 0); each rank draws
                              round(density x units) units with replacement,
                              its support the distinct ones */
    rb_gradgen_source_fill source_fill;   /* RB_OVERLAP_SOURCE */
    const void *source;
} rb_gradgen;

const char *rb_layout_name(rb_layout l);
const char *rb_overlap_name(rb_overlap o);
int rb_layout_parse(const char *s, rb_layout *l);     /* 0 ok, -1 unknown */
int rb_overlap_parse(const char *s, rb_overlap *o);
/* As rb_overlap_parse, and zipf:S (S > 0, finite) into *zipf_s. */
int rb_overlap_parse_zipf(const char *s, rb_overlap *o, double *zipf_s);
/* The support's name as the archive records it: random, all, none,
 * zipf:S (S with %g), trace. */
void rb_gradgen_support_name(rb_overlap o, double zipf_s, char *buf, size_t len);

/* Fill x[0..rows*cols) with rank's gradient; returns its non-zero count.
 * Values are in [-1, 1] and never 0 on the support. */
size_t rb_gradgen_fill(const rb_gradgen *g, int rank, float *x);
/* Exact average over all ranks (sum in double, rank order), into avg. */
/* Returns 0, or -1 when out of memory. */
int rb_gradgen_average(const rb_gradgen *g, float *avg, float *scratch);

#endif
