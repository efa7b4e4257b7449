/* The row form (rowset.h). */
#include "rowset.h"

#include "rb_internal.h"

#include <stdlib.h>
#include <string.h>

void rb_rowset_free(rb_rowset *s)
{
    free(s->ids);
    free(s->values);
    memset(s, 0, sizeof *s);
}

int rb_rowset_reserve(rb_rowset *s, size_t nrows, size_t cols)
{
    void *ids = s->ids, *values = s->values;
    int rc = rb_reserve(&ids, &s->ids_cap, nrows, sizeof *s->ids);
    s->ids = ids;
    if (rc == RB_OK && cols && nrows > SIZE_MAX / cols)
        rc = rb_fail(RB_ERR_NOMEM, "%zu rows of %zu floats overflow", nrows, cols);
    if (rc == RB_OK)
        rc = rb_reserve(&values, &s->values_cap, nrows * cols, sizeof *s->values);
    s->values = values;
    s->nrows = rc == RB_OK ? nrows : 0;
    s->cols = cols;
    return rc;
}

void rb_rowset_view(const rb_rowset *s, rb_rows *view)
{
    view->nrows = s->nrows;
    view->cols = s->cols;
    view->ids = s->ids;
    view->values = s->values;
}

/* Walks the rows of an index-sorted stream without a divide instruction:
 * the row changes only when an index leaves it, and the new row is a
 * multiply by a reciprocal (exact for 32-bit indices: Lemire, Kaser and
 * Kurz 2019), or the index itself for rows of one float. */
typedef struct row_walk {
    size_t cols, row, lo, hi;   /* current row covers elements [lo, hi) */
    uint64_t magic;             /* 2^64 / cols rounded up; 0 when cols == 1 */
} row_walk;

static inline void row_walk_init(row_walk *w, size_t cols)
{
    *w = (row_walk){cols, 0, 0, 0, cols > 1 ? UINT64_MAX / cols + 1 : 0};
}

/* Moves to the row of element idx (< 2^32); returns 1 when it is a new row. */
static inline int row_walk_to(row_walk *w, size_t idx)
{
    if (idx < w->hi)
        return 0;
    if (w->magic)
        w->row = (size_t)(((unsigned __int128)w->magic * idx) >> 64);
    else
        w->row = idx;
    w->lo = w->row * w->cols;
    w->hi = w->lo + w->cols;
    return 1;
}

static size_t distinct_rows(const rb_pair *p, size_t k, size_t cols)
{
    row_walk w;
    row_walk_init(&w, cols);
    size_t rows = 0;
    for (size_t i = 0; i < k; i++)
        rows += (size_t)row_walk_to(&w, p[i].idx);
    return rows;
}

int rb_rowset_from_pairs(rb_rowset *s, size_t cols, const rb_pair *p, size_t k, float scale)
{
    RB_TRY(rb_rowset_reserve(s, distinct_rows(p, k, cols), cols));
    row_walk w;
    row_walk_init(&w, cols);
    float *row = s->values - cols;
    for (size_t i = 0, r = 0; i < k; i++) {
        if (row_walk_to(&w, p[i].idx)) {
            s->ids[r++] = (int64_t)w.row;
            row += cols;
            if (cols == 1)   /* rows of one float: no call per pair */
                row[0] = 0.0f;
            else
                memset(row, 0, cols * sizeof *row);
        }
        row[p[i].idx - w.lo] = p[i].val * scale;
    }
    return RB_OK;
}

int rb_rowset_sum_streams(rb_rowset *s, size_t cols, const rb_pair *p, const size_t *offs,
                          size_t m, float scale, uint64_t *rowbm, size_t *base, size_t words)
{
    /* The rows of every pair, marked; then the listed rows in order, and
     * for each bitmap word the slot of its first row. */
    for (size_t j = 0; j < m; j++) {
        row_walk w;
        row_walk_init(&w, cols);
        for (size_t i = offs[j]; i < offs[j + 1]; i++)
            if (row_walk_to(&w, p[i].idx))
                rb_bitmap_set(rowbm, w.row);
    }
    size_t u = 0;
    for (size_t wd = 0; wd < words; wd++) {
        base[wd] = u;
        u += rb_popcount64(rowbm[wd]);
    }
    int rc = rb_rowset_reserve(s, u, cols);
    if (rc == RB_OK) {
        memset(s->values, 0, u * cols * sizeof *s->values);
        for (size_t wd = 0, r = 0; wd < words; wd++)
            for (uint64_t bits = rowbm[wd]; bits; bits &= bits - 1)
                s->ids[r++] = (int64_t)(wd * 64 + (size_t)__builtin_ctzll(bits));
        /* Each stream added into its rows' slots, stream by stream. */
        for (size_t j = 0; j < m; j++) {
            row_walk w;
            row_walk_init(&w, cols);
            float *row = s->values;
            for (size_t i = offs[j]; i < offs[j + 1]; i++) {
                if (row_walk_to(&w, p[i].idx)) {
                    uint64_t below = rowbm[w.row >> 6] & (((uint64_t)1 << (w.row & 63)) - 1);
                    row = s->values +
                          (base[w.row >> 6] + rb_popcount64(below)) * cols;
                }
                row[p[i].idx - w.lo] += p[i].val * scale;
            }
        }
    }
    /* Left all zero for the next call: only the words that were set. */
    if (rc == RB_OK) {
        for (size_t r = 0; r < u; r++)
            rowbm[(size_t)s->ids[r] >> 6] = 0;
    } else {
        for (size_t wd = 0; wd < words; wd++)
            rowbm[wd] = 0;
    }
    return rc;
}

/* Whether any bit of x[0..n) is set (a loop without an exit vectorises). */
static int any_bit(const float *x, size_t n)
{
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        acc |= u;
    }
    return acc != 0;
}

int rb_rowset_from_dense(rb_rowset *s, const float *x, size_t rows, size_t cols)
{
    size_t nr = 0;
    for (size_t i = 0; i < rows; i++)
        nr += (size_t)any_bit(x + i * cols, cols);
    RB_TRY(rb_rowset_reserve(s, nr, cols));
    for (size_t i = 0, r = 0; r < nr; i++) {
        if (!any_bit(x + i * cols, cols))
            continue;
        s->ids[r] = (int64_t)i;
        memcpy(s->values + r * cols, x + i * cols, cols * sizeof *x);
        r++;
    }
    return RB_OK;
}

size_t rb_rows_count_nonzero(const rb_rows *in)
{
    return rb_count_nonzero(in->values, in->nrows * in->cols);
}

int rb_rows_pack_grow(const rb_rows *in, rb_pair **buf, size_t *cap, size_t *k)
{
    size_t cols = in->cols, total = in->nrows * cols;
    void *b = *buf;
    RB_TRY(rb_reserve(&b, cap, total, sizeof(rb_pair)));
    *buf = b;
    /* Pack by position in values (one vectorised pass), then turn each
     * position into its element index: row ids[i] for position i*cols. */
    rb_pair *out = *buf;
    *k = rb_pack_nonzero(in->values, total, 0, out, total);
    if (cols == 1) {
        for (size_t q = 0; q < *k; q++)
            out[q].idx = (uint32_t)in->ids[out[q].idx];
        return RB_OK;
    }
    row_walk w;
    row_walk_init(&w, cols);
    uint32_t shift = 0;   /* element index - position, in the current row */
    for (size_t q = 0; q < *k; q++) {
        if (row_walk_to(&w, out[q].idx))
            shift = (uint32_t)((size_t)in->ids[w.row] * cols - w.lo);
        out[q].idx += shift;   /* modulo 2^32: the index fits */
    }
    return RB_OK;
}

void rb_rows_to_dense(const rb_rows *in, float *x, size_t rows)
{
    size_t cols = in->cols, done = 0;   /* elements of x written */
    for (size_t i = 0; i < in->nrows; i++) {
        size_t lo = (size_t)in->ids[i] * cols;
        memset(x + done, 0, (lo - done) * sizeof *x);
        memcpy(x + lo, in->values + i * cols, cols * sizeof *x);
        done = lo + cols;
    }
    memset(x + done, 0, (rows * cols - done) * sizeof *x);
}
