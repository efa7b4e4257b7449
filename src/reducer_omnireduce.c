/* omnireduce: block-sparse allreduce.  This is an MPI rendering of
 * OmniReduce's streaming aggregation (Fei et al., SIGCOMM'21): OmniReduce
 * streams only the non-zero blocks of each worker through aggregators; here
 * the set of blocks any rank has non-zero is agreed first and only those
 * blocks are summed, with one collective instead of a block stream.
 *
 *   encode  bitmap of non-zero blocks (block_size elements, the last one
 *           possibly short)
 *   comm    allreduce(MPI_BOR) of the bitmap as uint64 words -- never a sum
 *           over bytes, which Open MPI 4.1.4's AVX byte reduction gets
 *           wrong -- then the union blocks, packed contiguously, are
 *           sum-allreduced
 *   decode  unpack the sums, scaled by 1/p; blocks outside the union are
 *           zero on every rank already.  When every block is in the union
 *           the buffer is reduced in place (packing would copy it whole).
 *
 * Wire bytes (ring model): 2(p-1)/p x (8 ceil(nb/64) + 4 U) each way, with
 * nb = ceil(n / block_size) and U the elements in union blocks. */
#include "reducer_omnireduce.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct omni_device;

static void omni_fini(rb_reducer *r)
{
    omni_state *s = r->impl;
    free(s->bitmap);
    free(s->slot_base);
    free(s->packed);
}

static int omni_init(rb_reducer *r)
{
    omni_state *s = r->impl;
    size_t b = (size_t)r->cfg.opts.block_size;
    if (b == 0)
        return rb_fail(RB_ERR_ARG, "omnireduce: block_size must be >= 1");
    s->nblocks = (r->n + b - 1) / b;
    s->words = rb_bitmap_words(s->nblocks);
    if (s->words > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED, "omnireduce: bitmap of %zu blocks too large", s->nblocks);
    /* Device buffers reduced through NCCL are packed on the GPU. */
    int on_device = rb_device_direct(r);
    s->bitmap = rb_calloc(s->words, sizeof *s->bitmap);
    s->slot_base = rb_calloc(s->words, sizeof *s->slot_base);
    s->packed = on_device ? NULL : rb_calloc(r->n, sizeof *s->packed);
    if (!s->bitmap || !s->slot_base || (!on_device && !s->packed))
        return rb_fail(RB_ERR_NOMEM, "omnireduce: no memory for %zu elements", r->n);
    return RB_OK;
}

/* Gradients from this size on are copied with streaming stores: larger
 * than a core's caches, and neither copy is read again soon (the packed
 * buffer goes to MPI, the gradient back to the caller). */
#define STREAMING_BYTES ((size_t)4 << 20)

/* Copy (pack) or copy back scaled (unpack) the elements [lo, lo + len)
 * of grad at off in the packed buffer. */
static void copy_run(const omni_state *s, float *grad, size_t lo, size_t len, size_t off,
                     int unpack, float scale, int streaming)
{
    float *dst = unpack ? grad + lo : s->packed + off;
    const float *src = unpack ? s->packed + off : grad + lo;
    if (streaming) {
        rb_copy_streaming(dst, src, len, scale, unpack);
    } else if (unpack) {
        for (size_t i = 0; i < len; i++)
            dst[i] = src[i] * scale;
    } else {
        memcpy(dst, src, len * sizeof(float));
    }
}

/* Copy (pack) or copy back scaled (unpack) every union block, a run of
 * consecutive blocks at a time (at density 0.01 nearly every block is in
 * the union: long copies instead of one per block); returns the number of
 * elements in union blocks. */
static size_t for_union_blocks(const omni_state *s, float *grad, size_t n, size_t b,
                               int unpack, float scale)
{
    size_t off = 0, run_lo = 0, run_len = 0;
    int streaming = n * sizeof(float) >= STREAMING_BYTES;
    for (size_t w = 0; w < s->words; w++) {
        for (uint64_t bits = s->bitmap[w]; bits; bits &= bits - 1) {
            size_t blk = w * 64 + (size_t)__builtin_ctzll(bits);
            size_t lo = blk * b, len = lo + b <= n ? b : n - lo;
            if (run_len && run_lo + run_len == lo) {
                run_len += len;
                continue;
            }
            copy_run(s, grad, run_lo, run_len, off, unpack, scale, streaming);
            off += run_len;
            run_lo = lo;
            run_len = len;
        }
    }
    copy_run(s, grad, run_lo, run_len, off, unpack, scale, streaming);
    return off + run_len;
}

static int omni_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    omni_state *s = r->impl;
    size_t b = (size_t)r->cfg.opts.block_size;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    rb_bitmap_of_groups(grad, r->n, b, s->bitmap);

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce(r, st, NULL, s->bitmap, (int)s->words, MPI_UINT64_T, MPI_BOR));
    float inv_p = 1.0f / (float)r->size;
    if (rb_bitmap_popcount(s->bitmap, s->nblocks) == s->nblocks) {
        /* Every block is in the union: the packed buffer would be grad
         * itself, so reduce it in place and save two copies. */
        RB_TRY(rb_allreduce_floats(r, st, grad, r->n));
        rb_phase_start(r, st, RB_PHASE_DECODE);
        rb_scale(grad, r->n, inv_p);
        st->nnz_result = r->n;
        return RB_OK;
    }
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    size_t u = for_union_blocks(s, grad, r->n, b, 0, 1.0f);
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce_floats(r, st, s->packed, u));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    for_union_blocks(s, grad, r->n, b, 1, inv_p);
    st->nnz_result = u;
    return RB_OK;
}

/* Elements in the nb union blocks: the last block may be short. */
size_t omni_union_elements(const omni_state *s, size_t n, size_t b, size_t nb)
{
    size_t u = nb * b;
    if (nb && n % b && rb_bitmap_test(s->bitmap, s->nblocks - 1))
        u -= b - n % b;
    return u;
}

/* ---- rb_reduce_rows: the blocks the rows touch, never a dense buffer */

/* Calls fn(ctx, i, lo, len, blk) for each piece of the listed rows that
 * lies in one block: elements [lo, lo + len) of block blk, at
 * values[i*cols + (lo - ids[i]*cols) ...]. */
typedef void (*piece_fn)(void *ctx, size_t i, size_t lo, size_t len, size_t blk);
static void for_row_pieces(const rb_rows *in, size_t b, piece_fn fn, void *ctx)
{
    size_t blk = 0, blk_lo = 0;   /* the block of the last piece, its first element */
    for (size_t i = 0; i < in->nrows; i++) {
        size_t lo = (size_t)in->ids[i] * in->cols, end = lo + in->cols;
        while (lo < end) {
            if (lo >= blk_lo + b) {   /* rows increase: divide only on a jump */
                blk = lo < blk_lo + 2 * b ? blk + 1 : lo / b;
                blk_lo = blk * b;
            }
            size_t hi = blk_lo + b < end ? blk_lo + b : end;
            fn(ctx, i, lo, hi - lo, blk);
            lo = hi;
        }
    }
}

typedef struct rows_ctx {
    omni_state *s;
    const rb_rows *in;
    size_t b, nnz;
    const size_t *slot_base;   /* union blocks before word w */
} rows_ctx;

static inline const float *piece_values(const rows_ctx *c, size_t i, size_t lo)
{
    return c->in->values + i * c->in->cols + (lo - (size_t)c->in->ids[i] * c->in->cols);
}

/* The block of a piece with a non-zero is set; non-zeros counted. */
static void mark_piece(void *vctx, size_t i, size_t lo, size_t len, size_t blk)
{
    rows_ctx *c = vctx;
    const float *v = piece_values(c, i, lo);
    size_t k = 0;
    if (len >= 64) {
        k = rb_count_nonzero(v, len);
    } else {
        for (size_t j = 0; j < len; j++)
            k += v[j] != 0.0f;
    }
    if (k)
        rb_bitmap_set(c->s->bitmap, blk);
    c->nnz += k;
}

/* Where block blk (in the union) starts in the packed buffer. */
static size_t packed_offset(const rows_ctx *c, size_t blk)
{
    uint64_t below = c->s->bitmap[blk >> 6] & (((uint64_t)1 << (blk & 63)) - 1);
    return (c->slot_base[blk >> 6] + rb_popcount64(below)) * c->b;
}

static void pack_piece(void *vctx, size_t i, size_t lo, size_t len, size_t blk)
{
    rows_ctx *c = vctx;
    if (rb_bitmap_test(c->s->bitmap, blk))
        memcpy(c->s->packed + packed_offset(c, blk) + (lo - blk * c->b), piece_values(c, i, lo),
               len * sizeof(float));
}

/* The rows touched by the union blocks (in order), each value of those
 * blocks packed * scale, the rest of the rows 0: what the dense unpack
 * leaves there.  A block's rows are consecutive slots of out, so a block
 * is written as one range whatever the row width. */
static int unpack_rows(omni_state *s, rb_rowset *out, size_t n, size_t b, size_t cols,
                       float scale)
{
    size_t listed = 0;
    for (int fill = 0; fill < 2; fill++) {
        if (fill)
            RB_TRY(rb_rowset_reserve(out, listed, cols));
        size_t off = 0, k = 0, last = SIZE_MAX;   /* packed offset, rows listed, last row */
        for (size_t w = 0; w < s->words; w++) {
            for (uint64_t bits = s->bitmap[w]; bits; bits &= bits - 1) {
                size_t blk = w * 64 + (size_t)__builtin_ctzll(bits);
                size_t lo = blk * b, hi = lo + b <= n ? lo + b : n;
                size_t rlo = lo / cols, rhi = (hi - 1) / cols;
                size_t first_new = rlo == last ? rlo + 1 : rlo;
                if (fill) {
                    /* element e of these rows is at row0[e] */
                    float *row0 = out->values + (rlo == last ? k - 1 : k) * cols - rlo * cols;
                    for (size_t row = first_new; row <= rhi; row++)
                        out->ids[k + (row - first_new)] = (int64_t)row;
                    if (first_new <= rhi) {   /* new rows: 0 around the block */
                        if (first_new * cols < lo)
                            memset(row0 + first_new * cols, 0,
                                   (lo - first_new * cols) * sizeof(float));
                        memset(row0 + hi, 0, ((rhi + 1) * cols - hi) * sizeof(float));
                    }
                    for (size_t e = 0; e < hi - lo; e++)
                        row0[lo + e] = s->packed[off + e] * scale;
                }
                k += rhi + 1 - first_new;
                last = rhi;
                off += hi - lo;
            }
        }
        listed = k;
    }
    return RB_OK;
}

static int omni_reduce_rows(rb_reducer *r, rb_rows_call *call, rb_stats *st)
{
    omni_state *s = r->impl;
    size_t b = (size_t)r->cfg.opts.block_size;
    rows_ctx c = {.s = s, .in = call->in, .b = b, .slot_base = s->slot_base};
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    memset(s->bitmap, 0, s->words * sizeof *s->bitmap);
    for_row_pieces(call->in, b, mark_piece, &c);
    st->nnz_local = c.nnz;

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce(r, st, NULL, s->bitmap, (int)s->words, MPI_UINT64_T, MPI_BOR));
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    size_t nb = 0;
    for (size_t w = 0; w < s->words; w++) {
        s->slot_base[w] = nb;
        nb += rb_popcount64(s->bitmap[w]);
    }
    size_t u = omni_union_elements(s, r->n, b, nb);
    memset(s->packed, 0, u * sizeof *s->packed);
    for_row_pieces(call->in, b, pack_piece, &c);
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce_floats(r, st, s->packed, u));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    st->nnz_result = u;
    float inv_p = 1.0f / (float)r->size;
    if (call->dense) {   /* straight into the caller's buffer */
        for (size_t blk = 0, lo = 0; blk < s->nblocks; blk++, lo += b)
            if (!rb_bitmap_test(s->bitmap, blk))
                memset(call->dense + lo, 0, (lo + b <= r->n ? b : r->n - lo) * sizeof(float));
        for_union_blocks(s, call->dense, r->n, b, 1, inv_p);
        call->dense_result = call->dense;
        return RB_OK;
    }
    return unpack_rows(s, call->rows, r->n, b, r->cfg.cols, inv_p);
}

/* Cost model (docs/cost-model.md): count and block bitmap (two passes),
 * OR-allreduce of the bitmap, then the E elements of union blocks packed,
 * sum-allreduced and unpacked (in place when every block is in).  E from
 * the union density u = U/n: non-zeros come in runs of r elements aligned
 * to multiples of r, so a block of b elements meets (b + r - gcd(b, r)) / r
 * runs on average and is outside the union with probability (1-u)^that. */
static double model_runs_per_block(double b, double r)
{
    uint64_t x = (uint64_t)b, y = r > 1 ? (uint64_t)r : 1;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    double run = r > 1 ? floor(r) : 1;
    return (b + run - (double)x) / run;
}

static void omnireduce_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), b = (double)in->opts.block_size;
    double blocks = ceil(n / b), u = n > 0 ? in->nnz_union / n : 0;
    double empty = blocks * pow(1 - u, model_runs_per_block(b, in->run));
    rb_model_local(in, out, 4 * n);   /* the block bitmap */
    rb_model_allreduce(in, out, 8 * ceil(blocks / 64));
    if (empty < 0.5) {
        rb_model_allreduce(in, out, 4 * n);
        rb_model_local(in, out, 8 * n);
        return;
    }
    double e = fmin(n, (blocks - empty) * b);
    rb_model_local(in, out, 8 * e);
    rb_model_allreduce(in, out, 4 * e);
    rb_model_local(in, out, 8 * e);
}

/* Memory bound: the packed union blocks (all n at worst) and the bitmap. */
static double omni_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)o, (void)k, (void)p;
    return 4.0 * n + n / 8.0;
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_block_size = {
    "block_size", RB_OPT_INT, NULL, "elements per block",
    RB_OPTION_FIELD(block_size), 1, 1 << 24, 256, RB_OPTDEF_INT64};
static const rb_option_def *const omnireduce_options[] = {&opt_block_size, NULL};

const rb_reducer_ops rb_omnireduce_ops = {
    .name = "omnireduce",
    .options = omnireduce_options,
    .description = "block bitmap OR-reduced, union blocks packed and sum-allreduced",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(omni_state),
    .state_bytes = omni_state_bytes,
    .init = omni_init,
    .init_device = RB_NCCL_OP(omni_init_device),
    .reduce = omni_reduce,
    .reduce_device = RB_NCCL_OP(omni_reduce_device),
    .reduce_rows = omni_reduce_rows,
    .fini_device = RB_NCCL_OP(omni_fini_device),
    .fini = omni_fini,
    .model = omnireduce_model,
};
