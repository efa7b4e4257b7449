/* omnireduce's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_omnireduce.c). */
#include "reducer_omnireduce.h"
#include "rb_device.h"
#include "reducer_cuda.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
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

void omni_fini_device(rb_reducer *r)
{
    omni_state *s = r->impl;
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

int omni_init_device(rb_reducer *r)
{
    omni_state *s = r->impl;
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

int omni_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
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
    size_t u = omni_union_elements(s, n, b, nb);

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_allreduce_sum(r, st, d->packed, u));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_DEV(rbk_unpack_blocks(dgrad, n, b, d->list, nb, d->packed, inv_p, stream));
    st->nnz_result = u;
    return rb_device_sync(r);
}
#endif
