/* s2: the S2 Reducer.  The gradient is rows x cols (an embedding matrix).
 * Each rank marks its non-zero rows in a bitmap (1 bit per row) and inserts
 * the values of those rows into a count sketch (r x c floats, hashes shared
 * through the seed).  The bitmaps are OR-reduced on 64-bit words and the
 * sketches sum-allreduced and divided by p; every element of every union row
 * is then decoded (median over the sketch rows) into the caller's buffer and
 * everything else is zero.  Unlike the authors' code the result is written
 * back, the table is zeroed every step and the bitmap costs 1 bit a row.
 * Rows given as rows (rb_reduce_rows) are marked and inserted from where
 * they lie, in the runs the dense path inserts, so the sketch, and the
 * result, are the dense path's bit for bit.
 *
 * Error feedback (error_feedback=on): after inserting, each rank decodes its
 * OWN sketch on its own support and keeps residual = g' - estimate there
 * (g' = gradient + previous residual, zero elsewhere); the residual is added
 * to the next call's gradient.  With feedback on, the hashes change every
 * call (seed of call t = seed ^ (t * 0x9e3779b97f4a7c15), the same on all
 * ranks): with one fixed hash, whatever lies in the kernel of the sketch
 * would stay in the residual for ever.  docs/s2.md discusses stability.
 * The residual keeps finite values only (docs/values.md): a NaN or inf in
 * g', or in an estimate it shares a bucket with, is 0 in the residual, or
 * it would spread through the buckets of every later call. */
#include "reducer_s2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct s2_device;

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
        for (;;) {                        /* to the next clear bit, a word at a time */
            uint64_t clear = ~bm[i >> 6] >> (i & 63);
            if (clear) {
                i += (size_t)__builtin_ctzll(clear);
                break;
            }
            i = ((i >> 6) + 1) << 6;
            if (i >= nbits)
                break;
        }
        if (i > nbits)
            i = nbits;
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
    RB_TRY(rb_cs_check_size(o->sketch_rows, c));   /* memory first: it is what runs out */
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
}

static int s2_init(rb_reducer *r)
{
    s2_state *s = r->impl;
    const rb_options *o = &r->cfg.opts;
    /* sketch_rows is 1, 3 or 5: rb_options_check (rb_create) says so. */
    size_t cols = 1;
    if (o->sketch_width_mode != RB_S2_WIDTH_NNZ)
        RB_TRY(width_for(r, 0, &cols));   /* fixed width: allocate it now */
    /* Device buffers reduced through NCCL keep the sketch on the GPU. */
    int on_device = rb_device_direct(r);
    s->words = rb_bitmap_words(r->cfg.rows);
    s->bitmap = rb_calloc(s->words, sizeof *s->bitmap);
    if (!s->bitmap)
        return rb_fail(RB_ERR_NOMEM, "s2: no memory for a %zu-row bitmap", r->cfg.rows);
    if (o->error_feedback && !on_device) {
        s->residual = rb_calloc(r->n, sizeof(float));
        s->residual_rows = rb_calloc(s->words, sizeof(uint64_t));
        if (!s->residual || !s->residual_rows)
            return rb_fail(RB_ERR_NOMEM, "s2: no memory for the error-feedback residual");
    }
    RB_TRY(rb_cs_init(&s->cs, o->sketch_rows, on_device ? 1 : cols, o->seed));
    return RB_OK;
}

/* ---------------------------------------------------------------- encode */

/* Elements of short runs (single elements of a flat vector, mostly) are
 * collected and hashed together: one vectorised pass instead of a direct
 * evaluation per run, 10x less per element. */
enum { BATCH = 512 };

typedef struct run_ctx {
    s2_state *s;
    float *grad;
    size_t cols;
    size_t batched;             /* elements in idx / val (/ out) */
    uint32_t idx[BATCH];
    float val[BATCH];
    float *out[BATCH];          /* decode: where each estimate goes */
    /* rb_reduce_rows */
    rb_rowset *rows;
    size_t slot;                /* decode: next row of the row form */
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

static void flush_inserts(run_ctx *c)
{
    rb_cs_insert_at(&c->s->cs, c->idx, c->val, c->batched);
    c->batched = 0;
}

/* Elements lo .. lo+len-1 with values v.  Index order is kept: the batch
 * is flushed before a long run. */
static void insert_elements(run_ctx *c, size_t lo, const float *v, size_t len)
{
    if (len >= RB_CS_SHORT_RUN) {
        flush_inserts(c);
        rb_cs_insert_run(&c->s->cs, lo, v, len);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (c->batched == BATCH)
            flush_inserts(c);
        c->idx[c->batched] = (uint32_t)(lo + i);   /* n <= RB_MAX_ELEMENTS */
        c->val[c->batched++] = v[i];
    }
}

static void insert_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    insert_elements(c, first * c->cols, c->grad + first * c->cols, count * c->cols);
}

/* residual = g' - (estimate from this rank's own sketch), on its rows. */
static void residual_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    size_t lo = first * c->cols, len = count * c->cols;
    float *e = c->s->residual + lo;
    rb_cs_query_run(&c->s->cs, lo, e, len);
    for (size_t i = 0; i < len; i++) {
        float d = c->grad[lo + i] - e[i];
        e[i] = isfinite(d) ? d : 0.0f;
    }
}

static void flush_decodes(run_ctx *c)
{
    rb_cs_query_at(&c->s->cs, c->idx, c->val, c->batched);
    for (size_t i = 0; i < c->batched; i++)
        *c->out[i] = c->val[i];
    c->batched = 0;
}

/* Estimates of elements lo .. lo+len-1 into dst. */
static void decode_elements(run_ctx *c, size_t lo, float *dst, size_t len)
{
    if (len >= RB_CS_SHORT_RUN) {
        rb_cs_query_run(&c->s->cs, lo, dst, len);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (c->batched == BATCH)
            flush_decodes(c);
        c->idx[c->batched] = (uint32_t)(lo + i);
        c->out[c->batched++] = dst + i;
    }
}

static void decode_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    decode_elements(c, first * c->cols, c->grad + first * c->cols, count * c->cols);
}

/* Row form: the run's rows are the next rows of c->rows. */
static void decode_rows_run(void *vctx, size_t first, size_t count)
{
    run_ctx *c = vctx;
    for (size_t i = 0; i < count; i++)
        c->rows->ids[c->slot + i] = (int64_t)(first + i);
    decode_elements(c, first * c->cols, c->rows->values + c->slot * c->cols, count * c->cols);
    c->slot += count;
}

/* Only sketch_width_mode=nnz needs the local non-zero count (a pass over
 * the local rows): the other modes do not take it. */
int s2_width_needs_count(const rb_reducer *r)
{
    return r->cfg.opts.sketch_width_mode == RB_S2_WIDTH_NNZ;
}

/* Sketch width of this step; nnz mode agrees on the max local nnz first. */
int s2_step_width(rb_reducer *r, rb_stats *st, uint64_t nnz_local, size_t *cols)
{
    uint64_t max_nnz = nnz_local;
    if (r->cfg.opts.sketch_width_mode == RB_S2_WIDTH_NNZ) {
        rb_phase_start(r, st, RB_PHASE_COMM);
        RB_TRY(rb_allreduce(r, st, NULL, &max_nnz, 1, MPI_UINT64_T, MPI_MAX));
        rb_phase_start(r, st, RB_PHASE_ENCODE);
    }
    RB_TRY(width_for(r, max_nnz, cols));
    st->sketch_cols = *cols;
    return RB_OK;
}

/* Hash seed of this call: with error feedback a new one every call. */
uint64_t s2_call_seed(const rb_reducer *r, const s2_state *s)
{
    uint64_t seed = r->cfg.opts.seed;
    return r->cfg.opts.error_feedback ? seed ^ (s->calls * 0x9e3779b97f4a7c15ULL) : seed;
}

/* The host sketch for this step: width, zeroed table, hashes. */
static int choose_width(rb_reducer *r, rb_stats *st, uint64_t nnz_local)
{
    s2_state *s = r->impl;
    size_t cols = 1;
    RB_TRY(s2_step_width(r, st, nnz_local, &cols));
    if (cols != s->cs.cols) {   /* every rank takes this branch together */
        int rc = rb_agree(r->comm, rb_cs_set_cols(&s->cs, cols));   /* grows; zeroes */
        if (rc != RB_OK) {
            /* The ranks that grew must not keep a width the failed rank
             * lacks, or only it would take this branch on the next call. */
            s->cs.cols = 0;
            return rc;
        }
    } else {
        rb_cs_zero(&s->cs);
    }
    if (s->residual)
        rb_cs_set_seed(&s->cs, s2_call_seed(r, s));
    return RB_OK;
}

/* OR of the row bitmaps (on 64-bit words: never a sum of bytes or floats),
 * then, unless the union is empty (the same on every rank), the sum of the
 * sketches.  *union_rows: rows in the union. */
static int exchange(rb_reducer *r, rb_stats *st, size_t *union_rows)
{
    s2_state *s = r->impl;
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce(r, st, NULL, s->bitmap, (int)s->words, MPI_UINT64_T, MPI_BOR));
    *union_rows = rb_bitmap_popcount(s->bitmap, r->cfg.rows);
    st->nnz_result = (uint64_t)*union_rows * r->cfg.cols;
    if (*union_rows == 0)
        return RB_OK;
    return rb_allreduce_floats(r, st, s->cs.table, rb_cs_size(&s->cs));
}

static int s2_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    s2_state *s = r->impl;
    const size_t nrows = r->cfg.rows;
    run_ctx ctx = {.s = s, .grad = grad, .cols = r->cfg.cols};

    rb_phase_start(r, st, RB_PHASE_ENCODE);
    if (s->residual)
        for_each_run(s->residual_rows, nrows, add_residual_run, &ctx);
    /* The bitmap's pass counts the local non-zeros on its way; only
     * sketch_width_mode=nnz uses (and so reports) the count. */
    uint64_t nnz = rb_bitmap_of_groups_count(grad, r->n, r->cfg.cols, s->bitmap);
    if (s2_width_needs_count(r))
        st->nnz_local = nnz;
    RB_TRY(choose_width(r, st, nnz));
    s->calls++;
    for_each_run(s->bitmap, nrows, insert_run, &ctx);
    flush_inserts(&ctx);
    if (s->residual) {
        for_each_run(s->bitmap, nrows, residual_run, &ctx);
        memcpy(s->residual_rows, s->bitmap, s->words * sizeof *s->bitmap);
    }

    size_t union_rows = 0;
    RB_TRY(exchange(r, st, &union_rows));
    if (union_rows == 0)
        return RB_OK;   /* same on every rank: nothing to send, grad is all zero */

    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_cs_scale(&s->cs, 1.0f / (float)r->size);
    /* Rows outside the union are zero locally already (local rows are a
     * subset of the union), so only union rows are written. */
    for_each_run(s->bitmap, nrows, decode_run, &ctx);
    flush_decodes(&ctx);
    return RB_OK;
}

/* The rows of in with a non-zero into the bitmap; returns the non-zeros. */
static uint64_t mark_rows(s2_state *s, const rb_rows *in)
{
    uint64_t nnz = 0;
    memset(s->bitmap, 0, s->words * sizeof *s->bitmap);
    for (size_t i = 0; i < in->nrows; i++) {
        size_t k = rb_count_nonzero(in->values + i * in->cols, in->cols);
        if (k)
            rb_bitmap_set(s->bitmap, (size_t)in->ids[i]);
        nnz += k;
    }
    return nnz;
}

/* The marked rows inserted in the runs the dense path inserts them in:
 * consecutive marked rows, which lie back to back in in->values. */
static void insert_rows(run_ctx *c, const rb_rows *in)
{
    const size_t cols = in->cols;
    size_t i = 0;
    while (i < in->nrows) {
        if (!rb_bitmap_test(c->s->bitmap, (size_t)in->ids[i])) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < in->nrows && in->ids[j] == in->ids[j - 1] + 1 &&
               rb_bitmap_test(c->s->bitmap, (size_t)in->ids[j]))
            j++;
        insert_elements(c, (size_t)in->ids[i] * cols, in->values + i * cols, (j - i) * cols);
        i = j;
    }
    flush_inserts(c);
}

/* Rows: the bitmap and the sketch from the listed rows, the same exchange,
 * the union rows decoded into the row form.  With error feedback the
 * residual is a dense buffer: the generic path. */
static int s2_reduce_rows(rb_reducer *r, rb_rows_call *call, rb_stats *st)
{
    s2_state *s = r->impl;
    if (s->residual)
        return rb_reduce_rows_generic(r, call, st);
    run_ctx ctx = {.s = s, .cols = r->cfg.cols, .rows = call->rows};
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    st->nnz_local = mark_rows(s, call->in);
    RB_TRY(choose_width(r, st, st->nnz_local));
    s->calls++;
    insert_rows(&ctx, call->in);

    size_t union_rows = 0;
    RB_TRY(exchange(r, st, &union_rows));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    if (union_rows)
        rb_cs_scale(&s->cs, 1.0f / (float)r->size);
    RB_TRY(rb_rowset_reserve(call->rows, union_rows, r->cfg.cols));
    for_each_run(s->bitmap, r->cfg.rows, decode_rows_run, &ctx);
    flush_decodes(&ctx);
    return RB_OK;
}

/* Cost model (docs/cost-model.md): row bitmap and count, the width's
 * allreduce (nnz mode), r inserts per non-zero, OR-allreduce of the row
 * bitmap, sum-allreduce of the r x c table, r reads per union element.
 * Error feedback's own decode and residual passes are not modelled. */
static void s2_model(const rb_model_input *in, rb_model_result *out)
{
    const rb_options *o = &in->opts;
    double n = rb_model_elements(in), r = o->sketch_rows, u = in->nnz_union;
    double c = o->sketch_width_mode == RB_S2_WIDTH_ABS ? round(o->sketch_width)
             : o->sketch_width_mode == RB_S2_WIDTH_FRACTION ? ceil(n * o->sketch_width)
             : ceil(in->nnz_max * o->sketch_width);
    c = fmax(c, 1);
    rb_model_local(in, out, 4 * n + 4 * r * c);   /* bitmap, zero the table */
    if (o->sketch_width_mode == RB_S2_WIDTH_NNZ)
        rb_model_allreduce(in, out, 8);
    rb_model_local(in, out, 12 * r * in->nnz_max);
    rb_model_allreduce(in, out, 8 * ceil((double)in->rows / 64));
    if (u <= 0)
        return;
    rb_model_allreduce(in, out, 4 * r * c);
    rb_model_local(in, out, 8 * r * c + (4 * r + 4) * u);
}

/* Between calls: the call count (the hashes of a call with error feedback
 * follow it) and the residual with the rows it covers. */
static int s2_state_io(rb_reducer *r, struct rb_state_io *io)
{
    s2_state *s = r->impl;
    if (r->cfg.opts.error_feedback && s->dev)
        return rb_fail(RB_ERR_UNSUPPORTED, "s2: the error-feedback residual is in device memory "
                       "(no checkpoint of it yet)");
    int ef = s->residual != NULL;
    RB_TRY(rb_state_field(io, "calls", &s->calls, sizeof s->calls));
    RB_TRY(rb_state_field(io, "residual", s->residual, ef ? r->n * sizeof *s->residual : 0));
    return rb_state_field(io, "residual_rows", s->residual_rows, ef ? s->words * sizeof *s->residual_rows : 0);
}

/* Memory bound: the sketch at its width, the row bitmap, the residual. */
static double s2_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)p;
    double w = o->sketch_width_mode == RB_S2_WIDTH_ABS ? o->sketch_width
             : o->sketch_width_mode == RB_S2_WIDTH_FRACTION ? n * o->sketch_width
             : k * o->sketch_width;
    return 4.0 * o->sketch_rows * fmax(w, 1.0) + n / 8.0 + (o->error_feedback ? 4.0 * n : 0.0);
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_rows = {
    "sketch_rows", RB_OPT_INT, NULL, "count sketch rows r (1, 3 or 5)",
    RB_OPTION_FIELD(sketch_rows), 1, 5, 1, RB_OPTDEF_ODD};
static const rb_option_def opt_width_mode = {
    "sketch_width_mode", RB_OPT_ENUM, "abs|fraction|nnz",
    "how sketch_width is read: abs (columns), fraction (of rows*cols), nnz (multiple of the max local nnz)",
    RB_OPTION_FIELD(sketch_width_mode), 0, 2, RB_S2_WIDTH_NNZ, 0};
static const rb_option_def opt_width = {
    "sketch_width", RB_OPT_DOUBLE, NULL, "sketch width c, read per sketch_width_mode",
    RB_OPTION_FIELD(sketch_width), 1e-12, 1e15, 0.25, 0};
static const rb_option_def *const s2_options[] = {
    &opt_rows, &opt_width_mode, &opt_width, &rb_opt_error_feedback, &rb_opt_seed, NULL};

const rb_reducer_ops rb_s2_ops = {
    .name = "s2",
    .options = s2_options,
    .description = "S2 Reducer: OR-reduced row bitmap + sum-allreduced count sketch",
    .traits = RB_TRAIT_LOSSY,
    .state_size = sizeof(s2_state),
    .state_bytes = s2_state_bytes,
    .init = s2_init,
    .init_device = RB_NCCL_OP(s2_init_device),
    .reduce = s2_reduce,
    .reduce_device = RB_NCCL_OP(s2_reduce_device),
    .reduce_rows = s2_reduce_rows,
    .fini_device = RB_NCCL_OP(s2_fini_device),
    .fini = s2_fini,
    .state = s2_state_io,
    .model = s2_model,
};
