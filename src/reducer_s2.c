/* s2: the S2 Reducer.  The gradient is rows x cols (an embedding matrix).
 * Each rank marks its non-zero rows in a bitmap (1 bit per row) and inserts
 * the values of those rows into a count sketch (r x c floats, hashes shared
 * through the seed).  The bitmaps are OR-reduced on 64-bit words and the
 * sketches sum-allreduced and divided by p; every element of every union row
 * is then decoded (median over the sketch rows) into the caller's buffer and
 * everything else is zero.  Unlike the authors' code the result is written
 * back, the table is zeroed every step and the bitmap costs 1 bit a row.
 *
 * Error feedback (error_feedback=on): after inserting, each rank decodes its
 * OWN sketch on its own support and keeps residual = g' - estimate there
 * (g' = gradient + previous residual, zero elsewhere); the residual is added
 * to the next call's gradient.  With feedback on, the hashes change every
 * call (seed of call t = seed ^ (t * 0x9e3779b97f4a7c15), the same on all
 * ranks): with one fixed hash, whatever lies in the kernel of the sketch
 * would stay in the residual for ever.  docs/s2.md discusses stability. */
#include "countsketch.h"
#include "rb_internal.h"
#include "sparse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct s2_state {
    rb_countsketch cs;
    uint64_t *bitmap;        /* local rows, then the union after the OR */
    size_t words;            /* 64-bit words of one bitmap */
    float *residual;         /* error feedback: rows*cols, NULL when off */
    uint64_t *residual_rows; /* rows where residual may be non-zero */
    uint64_t calls;          /* rb_reduce calls so far (hash of the call) */
} s2_state;

/* Visit the maximal runs of consecutive set bits: fn(ctx, first, count). */
typedef void (*run_fn)(void *ctx, size_t first, size_t count);
static void for_each_run(const uint64_t *bm, size_t nbits, run_fn fn, void *ctx)
{
    size_t i = 0;
    while (i < nbits) {
        size_t w = i >> 6;
        uint64_t bits = bm[w] >> (i & 63);
        if (!bits) {                      /* skip to the next word */
            i = (w + 1) << 6;
            continue;
        }
        i += (size_t)__builtin_ctzll(bits);
        if (i >= nbits)
            break;
        size_t first = i;
        while (i < nbits && rb_bitmap_test(bm, i))
            i++;
        fn(ctx, first, i - first);
    }
}

/* Sketch width for this step from the options (max_nnz only for nnz mode). */
static int width_for(const rb_reducer *r, uint64_t max_nnz, size_t *cols)
{
    const rb_options *o = &r->cfg.opts;
    double c;
    switch (o->sketch_width_mode) {
    case RB_S2_WIDTH_ABS: c = round(o->sketch_width); break;
    case RB_S2_WIDTH_FRACTION: c = ceil((double)r->n * o->sketch_width); break;
    case RB_S2_WIDTH_NNZ: c = ceil((double)max_nnz * o->sketch_width); break;
    default:
        return rb_fail(RB_ERR_ARG, "sketch_width_mode %d unknown", o->sketch_width_mode);
    }
    if (c < 1.0)
        c = 1.0;
    if (c > (double)RB_CS_MAX_COLS)
        return rb_fail(RB_ERR_ARG, "sketch_width gives %.0f columns, more than %zu",
                       c, (size_t)RB_CS_MAX_COLS);
    *cols = (size_t)c;
    return RB_OK;
}

static void s2_fini(rb_reducer *r)
{
    s2_state *s = r->impl;
    rb_cs_free(&s->cs);
    free(s->bitmap);
    free(s->residual);
    free(s->residual_rows);
    free(s);
    r->impl = NULL;
}

static int s2_init(rb_reducer *r)
{
    const rb_options *o = &r->cfg.opts;
    if (o->sketch_rows != 1 && o->sketch_rows != 3 && o->sketch_rows != 5)
        return rb_fail(RB_ERR_ARG, "sketch_rows=%d: s2 supports 1, 3 or 5", o->sketch_rows);
    size_t cols = 1;
    if (o->sketch_width_mode != RB_S2_WIDTH_NNZ)
        RB_TRY(width_for(r, 0, &cols));   /* fixed width: allocate it now */
    s2_state *s = calloc(1, sizeof *s);
    if (!s)
        return rb_fail(RB_ERR_NOMEM, "s2: no memory");
    r->impl = s;
    s->words = rb_bitmap_words(r->cfg.rows);
    s->bitmap = rb_calloc(s->words, sizeof *s->bitmap);
    if (!s->bitmap)
        return rb_fail(RB_ERR_NOMEM, "s2: no memory for a %zu-row bitmap", r->cfg.rows);
    if (o->error_feedback) {
        s->residual = rb_calloc(r->n, sizeof(float));
        s->residual_rows = rb_calloc(s->words, sizeof(uint64_t));
        if (!s->residual || !s->residual_rows)
            return rb_fail(RB_ERR_NOMEM, "s2: no memory for the error-feedback residual");
    }
    return rb_cs_init(&s->cs, o->sketch_rows, cols, o->seed);
}

/* ---------------------------------------------------------------- encode */

typedef struct run_ctx {
    s2_state *s;
    float *grad;
    size_t cols;
    uint64_t count;
} run_ctx;

/* g' = g + residual on the rows that carry one; the residual is consumed. */
static void add_residual_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    size_t lo = first * c->cols, len = count * c->cols;
    for (size_t i = 0; i < len; i++)
        c->grad[lo + i] += c->s->residual[lo + i];
    memset(c->s->residual + lo, 0, len * sizeof(float));
}

static void count_nonzero_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    c->count += rb_count_nonzero(c->grad + first * c->cols, count * c->cols);
}

static void insert_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    size_t lo = first * c->cols;
    rb_cs_insert_run(&c->s->cs, lo, c->grad + lo, count * c->cols);
}

/* residual = g' - (estimate from this rank's own sketch), on its rows. */
static void residual_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    size_t lo = first * c->cols, len = count * c->cols;
    float *e = c->s->residual + lo;
    rb_cs_query_run(&c->s->cs, lo, e, len);
    for (size_t i = 0; i < len; i++)
        e[i] = c->grad[lo + i] - e[i];
}

static void decode_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    size_t lo = first * c->cols;
    rb_cs_query_run(&c->s->cs, lo, c->grad + lo, count * c->cols);
}

/* Sketch width of this step; nnz mode agrees on the max local nnz first. */
static int choose_width(rb_reducer *r, rb_stats *st, uint64_t nnz_local)
{
    s2_state *s = r->impl;
    uint64_t max_nnz = nnz_local;
    if (r->cfg.opts.sketch_width_mode == RB_S2_WIDTH_NNZ) {
        rb_phase_start(r, st, RB_PHASE_COMM);
        RB_TRY(rb_allreduce(r, st, NULL, &max_nnz, 1, MPI_UINT64_T, MPI_MAX));
        rb_phase_start(r, st, RB_PHASE_ENCODE);
    }
    size_t cols;
    RB_TRY(width_for(r, max_nnz, &cols));
    if (cols != s->cs.cols)   /* every rank takes this branch together */
        RB_TRY(rb_agree(r->comm, rb_cs_set_cols(&s->cs, cols)));   /* grows; zeroes */
    else
        rb_cs_zero(&s->cs);
    if (s->residual)
        rb_cs_set_seed(&s->cs, r->cfg.opts.seed ^ (s->calls * 0x9e3779b97f4a7c15ULL));
    st->sketch_cols = cols;
    return RB_OK;
}

static int s2_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    s2_state *s = r->impl;
    const size_t nrows = r->cfg.rows;
    run_ctx ctx = {.s = s, .grad = grad, .cols = r->cfg.cols};

    rb_phase_start(r, st, RB_PHASE_ENCODE);
    if (s->residual)
        for_each_run(s->residual_rows, nrows, add_residual_run, &ctx);
    rb_bitmap_of_groups(grad, r->n, r->cfg.cols, s->bitmap);
    for_each_run(s->bitmap, nrows, count_nonzero_run, &ctx);
    st->nnz_local = ctx.count;
    RB_TRY(choose_width(r, st, st->nnz_local));
    s->calls++;
    for_each_run(s->bitmap, nrows, insert_run, &ctx);
    if (s->residual) {
        for_each_run(s->bitmap, nrows, residual_run, &ctx);
        memcpy(s->residual_rows, s->bitmap, s->words * sizeof *s->bitmap);
    }

    /* Bitwise OR on 64-bit words: never a sum of bytes or floats. */
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce(r, st, NULL, s->bitmap, (int)s->words, MPI_UINT64_T, MPI_BOR));
    size_t union_rows = rb_bitmap_popcount(s->bitmap, nrows);
    st->nnz_result = (uint64_t)union_rows * r->cfg.cols;
    if (union_rows == 0)
        return RB_OK;   /* same on every rank: nothing to send, grad is all zero */
    RB_TRY(rb_allreduce_floats(r, st, s->cs.table, rb_cs_size(&s->cs)));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_cs_scale(&s->cs, 1.0f / (float)r->size);
    /* Rows outside the union are zero locally already (local rows are a
     * subset of the union), so only union rows are written. */
    for_each_run(s->bitmap, nrows, decode_run, &ctx);
    return RB_OK;
}

const rb_reducer_ops rb_s2_ops = {
    .name = "s2",
    .description = "S2 Reducer: OR-reduced row bitmap + sum-allreduced count sketch",
    .traits = RB_TRAIT_LOSSY,
    .init = s2_init,
    .reduce = s2_reduce,
    .fini = s2_fini,
};
