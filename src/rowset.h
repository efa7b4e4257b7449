/* The row form of a gradient (rb_reduce_rows): a set of rows of a
 * rows x cols matrix, built from pairs, streams or a dense buffer, and
 * the caller's rows packed into pairs or spread into a dense buffer. */
#ifndef RB_ROWSET_H
#define RB_ROWSET_H

#include <stddef.h>
#include <stdint.h>

#include "reducer_sparse.h"

/* Row form (rb_reduce_rows): the rows of a rows x cols matrix that may be
 * non-zero, every other row zero.  struct rb_rows (reducer.h) is the view
 * callers see; rb_rowset owns the memory behind one. */
struct rb_rows;
typedef struct rb_rowset {
    size_t nrows, cols;
    int64_t *ids;          /* nrows, increasing */
    float *values;         /* nrows x cols, row-major */
    size_t ids_cap, values_cap;   /* bytes */
} rb_rowset;

void rb_rowset_free(rb_rowset *s);
/* Room for nrows rows (contents undefined); sets s->nrows and s->cols. */
int rb_rowset_reserve(rb_rowset *s, size_t nrows, size_t cols);
/* The rows holding a pair of the index-sorted stream p[0..k), each value
 * set to p.val * scale (as rb_scatter_set_scaled), other elements 0. */
int rb_rowset_from_pairs(rb_rowset *s, size_t cols, const rb_pair *p, size_t k, float scale);
/* The rows holding a pair of any of m index-sorted streams, stream j =
 * p[offs[j] .. offs[j+1]) (offs: m + 1 entries), each element
 * 0 + v_0 * scale + v_1 * scale + ... in stream order (what zeroing and
 * rb_scatter_add_scaled stream by stream give, bit for bit).  rowbm: a
 * bitmap of the matrix's rows (words words), all zero, left all zero;
 * base: words entries of scratch.  No pass over the matrix: the rows are
 * found through the bitmap (O(words + pairs)). */
int rb_rowset_sum_streams(rb_rowset *s, size_t cols, const rb_pair *p, const size_t *offs,
                          size_t m, float scale, uint64_t *rowbm, size_t *base, size_t words);
/* The rows of x (rows x cols) with any bit set (so -0.0 is kept). */
int rb_rowset_from_dense(rb_rowset *s, const float *x, size_t rows, size_t cols);
/* The caller's view of s. */
void rb_rowset_view(const rb_rowset *s, struct rb_rows *view);

/* Row-sparse input (struct rb_rows, already validated). */
size_t rb_rows_count_nonzero(const struct rb_rows *in);
/* The non-zeros of in as pairs in index order; *buf grows to hold
 * nrows x cols pairs (the most there can be), so one pass. */
int rb_rows_pack_grow(const struct rb_rows *in, rb_pair **buf, size_t *cap, size_t *k);
/* x (rows x cols) = in with every row not listed zero: each element
 * written once. */
void rb_rows_to_dense(const struct rb_rows *in, float *x, size_t rows);

#endif
