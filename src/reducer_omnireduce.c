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
#include "rb_device.h"
#include "sparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct omni_device;

typedef struct omni_state {
    uint64_t *bitmap;
    size_t nblocks, words;
    float *packed;          /* union blocks, worst case all n elements (host path) */
    struct omni_device *dev;  /* device buffers of the NCCL path, else NULL */
} omni_state;

static void omni_device_free(omni_state *s);
static int omni_device_init(rb_reducer *r, omni_state *s);

static void omni_fini(rb_reducer *r)
{
    omni_state *s = r->impl;
    omni_device_free(s);
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
    /* Device buffers reduced through NCCL are packed on the GPU. */
    int on_device = rb_device_direct(r);
    s->bitmap = rb_calloc(s->words, sizeof *s->bitmap);
    s->packed = on_device ? NULL : rb_calloc(r->n, sizeof *s->packed);
    if (!s->bitmap || (!on_device && !s->packed))
        return rb_fail(RB_ERR_NOMEM, "omnireduce: no memory for %zu elements", r->n);
    return on_device ? omni_device_init(r, s) : RB_OK;
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

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
#include "cuda/rb_kernels.h"

/* The NCCL path: block bitmap, OR over ranks (rb_device_bitmap_or:
 * allgather + OR below 16 ranks, a byte per block and ncclMax from 16),
 * list of union blocks, pack, ncclAllReduce, unpack scaled by 1/p, all on
 * the GPU; only the bitmap comes to the host, to count the union.  The
 * packed allreduce sends the same bytes as the host path's. */
typedef struct omni_device {
    uint64_t *bitmap;
    void *or_scratch;        /* rb_device_bitmap_or */
    uint32_t *list;          /* union block indices */
    void *list_scratch;      /* rbk_bitmap_list */
    float *packed;           /* union blocks, padded to whole blocks */
    size_t bitmap_cap, or_cap, list_cap, list_scratch_cap, packed_cap;
} omni_device;

static void omni_device_free(omni_state *s)
{
    omni_device *d = s->dev;
    if (!d)
        return;
    rb_device_release((void **)&d->bitmap, &d->bitmap_cap);
    rb_device_release(&d->or_scratch, &d->or_cap);
    rb_device_release((void **)&d->list, &d->list_cap);
    rb_device_release(&d->list_scratch, &d->list_scratch_cap);
    rb_device_release((void **)&d->packed, &d->packed_cap);
    free(d);
    s->dev = NULL;
}

static int omni_device_init(rb_reducer *r, omni_state *s)
{
    s->dev = calloc(1, sizeof *s->dev);
    if (!s->dev)
        return rb_fail(RB_ERR_NOMEM, "omnireduce: no memory");
    omni_device *d = s->dev;
    size_t nb = s->nblocks, or_bytes = rb_device_bitmap_or_scratch(r, nb);
    RB_TRY(rb_device_reserve((void **)&d->bitmap, &d->bitmap_cap, s->words * 8));
    RB_TRY(rb_device_reserve(&d->or_scratch, &d->or_cap, or_bytes));
    RB_TRY(rb_device_reserve((void **)&d->list, &d->list_cap, nb * sizeof *d->list));
    RB_TRY(rb_device_reserve(&d->list_scratch, &d->list_scratch_cap, rbk_pack_scratch_bytes(nb)));
    size_t packed = nb * (size_t)r->cfg.opts.block_size * sizeof(float);
    return rb_device_reserve((void **)&d->packed, &d->packed_cap, packed);
}

/* Elements in the nb union blocks: the last block may be short. */
static size_t union_elements(const omni_state *s, size_t n, size_t b, size_t nb)
{
    size_t u = nb * b;
    if (nb && n % b && rb_bitmap_test(s->bitmap, s->nblocks - 1))
        u -= b - n % b;
    return u;
}

static int omni_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    omni_state *s = r->impl;
    omni_device *d = s->dev;
    cudaStream_t stream = (cudaStream_t)rb_device_stream(r);
    size_t b = (size_t)r->cfg.opts.block_size, n = r->n;
    float inv_p = 1.0f / (float)r->size;

    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_DEV(rbk_bitmap_of_groups(dgrad, n, b, d->bitmap, stream));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_bitmap_or(r, st, d->bitmap, s->nblocks, RB_BITMAP_AUTO, d->or_scratch));
    RB_TRY(rb_device_download(r, s->bitmap, d->bitmap, s->words * sizeof *s->bitmap));
    size_t nb = rb_bitmap_popcount(s->bitmap, s->nblocks);
    if (nb == s->nblocks) {   /* every block: reduce in place, as the host path */
        RB_TRY(rb_device_allreduce_sum(r, st, dgrad, n));
        rb_phase_start(r, st, RB_PHASE_DECODE);
        RB_TRY(rb_device_scale(r, dgrad, n, inv_p));
        st->nnz_result = n;
        return RB_OK;
    }
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_DEV(rbk_bitmap_list(d->bitmap, s->nblocks, d->list, rb_device_counter(r), d->list_scratch,
                           stream));
    RB_DEV(rbk_pack_blocks(dgrad, n, b, d->list, nb, d->packed, stream));
    RB_TRY(rb_device_sync(r));
    size_t u = union_elements(s, n, b, nb);

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_allreduce_sum(r, st, d->packed, u));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_DEV(rbk_unpack_blocks(dgrad, n, b, d->list, nb, d->packed, inv_p, stream));
    st->nnz_result = u;
    return rb_device_sync(r);
}
#define OMNI_REDUCE_DEVICE omni_reduce_device
#else
static void omni_device_free(omni_state *s) { (void)s; }
static int omni_device_init(rb_reducer *r, omni_state *s)
{
    (void)r, (void)s;   /* unreachable: no NCCL transport without NCCL */
    return rb_fail(RB_ERR_UNSUPPORTED, "omnireduce: this build has no NCCL device path");
}
#define OMNI_REDUCE_DEVICE NULL
#endif

const rb_reducer_ops rb_omnireduce_ops = {
    .name = "omnireduce",
    .description = "block bitmap OR-reduced, union blocks packed and sum-allreduced",
    .traits = RB_TRAIT_EXACT,
    .init = omni_init,
    .reduce = omni_reduce,
    .reduce_device = OMNI_REDUCE_DEVICE,
    .fini = omni_fini,
};
