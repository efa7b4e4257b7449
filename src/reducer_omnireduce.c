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
#include "rb_internal.h"
#include "sparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct omni_state {
    uint64_t *bitmap;
    size_t nblocks, words;
    float *packed;          /* union blocks, worst case all n elements */
} omni_state;

static void omni_fini(rb_reducer *r)
{
    omni_state *s = r->impl;
    free(s->bitmap);
    free(s->packed);
    free(s);
    r->impl = NULL;
}

static int omni_init(rb_reducer *r)
{
    omni_state *s = calloc(1, sizeof *s);
    if (!s)
        return rb_fail(RB_ERR_NOMEM, "omnireduce: no memory");
    r->impl = s;
    size_t b = (size_t)r->cfg.opts.block_size;
    if (b == 0)
        return rb_fail(RB_ERR_ARG, "omnireduce: block_size must be >= 1");
    s->nblocks = (r->n + b - 1) / b;
    s->words = rb_bitmap_words(s->nblocks);
    if (s->words > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED, "omnireduce: bitmap of %zu blocks too large", s->nblocks);
    s->bitmap = rb_calloc(s->words, sizeof *s->bitmap);
    s->packed = rb_calloc(r->n, sizeof *s->packed);
    if (!s->bitmap || !s->packed)
        return rb_fail(RB_ERR_NOMEM, "omnireduce: no memory for %zu elements", r->n);
    return RB_OK;
}

/* Copy (pack) or copy back scaled (unpack) every union block; returns the
 * number of elements in union blocks. */
static size_t for_union_blocks(const omni_state *s, float *grad, size_t n, size_t b,
                               int unpack, float scale)
{
    size_t off = 0;
    for (size_t w = 0; w < s->words; w++) {
        for (uint64_t bits = s->bitmap[w]; bits; bits &= bits - 1) {
            size_t blk = w * 64 + (size_t)__builtin_ctzll(bits);
            size_t lo = blk * b, len = lo + b <= n ? b : n - lo;
            if (unpack) {
                for (size_t i = 0; i < len; i++)
                    grad[lo + i] = s->packed[off + i] * scale;
            } else {
                memcpy(s->packed + off, grad + lo, len * sizeof(float));
            }
            off += len;
        }
    }
    return off;
}

static int omni_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    omni_state *s = r->impl;
    size_t b = (size_t)r->cfg.opts.block_size;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    st->nnz_local = rb_count_nonzero(grad, r->n);
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

const rb_reducer_ops rb_omnireduce_ops = {
    .name = "omnireduce",
    .description = "block bitmap OR-reduced, union blocks packed and sum-allreduced",
    .traits = RB_TRAIT_EXACT,
    .init = omni_init,
    .reduce = omni_reduce,
    .fini = omni_fini,
};
