/* Deterministic synthetic sparse gradients.  Any rank can compute any
 * rank's gradient from (seed, rank), so the exact aggregate is known
 * everywhere without communication. */
#ifndef BENCH_GRADGEN_H
#define BENCH_GRADGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { BENCH_LAYOUT_ELEMENT = 0, BENCH_LAYOUT_ROW = 1, BENCH_LAYOUT_BLOCK = 2 } bench_layout;
/* How the ranks' supports are drawn: random (independent uniform), all
 * (one support shared), none (disjoint), zipf (each rank draws its own
 * batch of units from a Zipf law over the units, unit 0 the most frequent,
 * as data-parallel ranks draw their own batches of words), or a source
 * (rows recorded from a model, harness/trace.h) that fills the gradient. */
typedef enum {
    BENCH_OVERLAP_RANDOM = 0, BENCH_OVERLAP_ALL = 1, BENCH_OVERLAP_NONE = 2, BENCH_OVERLAP_ZIPF = 3,
    BENCH_OVERLAP_SOURCE = 4
} bench_overlap;

/* A gradient that is not drawn here: rank of nranks's gradient into x
 * (rows * cols, zeroed by the callee); its non-zero count. */
typedef size_t (*bench_gradgen_source_fill)(const void *source, int rank, int nranks, float *x);

typedef struct bench_gradgen {
    size_t rows, cols;     /* n = rows * cols elements */
    double density;        /* fraction of units non-zero on each rank */
    bench_layout layout;      /* unit = element, row (cols elements) or block */
    size_t block;          /* elements per block for BENCH_LAYOUT_BLOCK */
    bench_overlap overlap;    /* random: independent; all: same support on every
                              rank; none: disjoint supports (density <= 1/p) */
    int nranks;
    uint64_t seed;
    double zipf_s;         /* zipf: the exponent (> 0); each rank draws
                              round(density x units) units with replacement,
                              its support the distinct ones */
    bench_gradgen_source_fill source_fill;   /* BENCH_OVERLAP_SOURCE */
    const void *source;
} bench_gradgen;

const char *bench_layout_name(bench_layout l);
const char *bench_overlap_name(bench_overlap o);
int bench_layout_parse(const char *s, bench_layout *l);     /* 0 ok, -1 unknown */
int bench_overlap_parse(const char *s, bench_overlap *o);
/* As bench_overlap_parse, and zipf:S (S > 0, finite) into *zipf_s. */
int bench_overlap_parse_zipf(const char *s, bench_overlap *o, double *zipf_s);
/* The support's name as the archive records it: random, all, none,
 * zipf:S (S with %g), trace. */
void bench_gradgen_support_name(bench_overlap o, double zipf_s, char *buf, size_t len);

/* Fill x[0..rows*cols) with rank's gradient; returns its non-zero count.
 * Values are in [-1, 1] and never 0 on the support. */
size_t bench_gradgen_fill(const bench_gradgen *g, int rank, float *x);
/* The same onto x already all zero: only the support is written, so the
 * pages of an on-demand buffer (bench_ondemand_alloc) that hold no
 * non-zero are never touched (a source still zeroes x itself). */
size_t bench_gradgen_fill_zeroed(const bench_gradgen *g, int rank, float *x);
/* Exact average over all ranks (sum in double, rank order), into avg. */
/* Returns 0, or -1 when out of memory. */
int bench_gradgen_average(const bench_gradgen *g, float *avg, float *scratch);

#endif
