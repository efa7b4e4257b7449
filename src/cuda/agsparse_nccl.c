/* agsparse's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_agsparse.c). */
#include "reducer_agsparse.h"
#include "rb_device.h"
#include "reducer_cuda.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path: pack on the GPU, ncclAllGather of the counts (they come
 * to the host to size the exchange), grouped ncclBroadcast of every rank's
 * pairs (NCCL has no allgatherv), then the host path's sums, made in
 * place: zero the local support, add each rank's pairs scaled by 1/p, one
 * launch per rank in rank order (indices are distinct within a rank, so no
 * atomics and the host path's summation order). */
typedef struct agsparse_device {
    rb_pair *send, *recv;
    uint64_t *displs;       /* host: where rank q's pairs start in recv */
    size_t send_cap, recv_cap;
} agsparse_device;

void agsparse_fini_device(rb_reducer *r)
{
    agsparse_state *s = r->impl;
    agsparse_device *d = s->dev;
    if (!d)
        return;
    rb_device_release((void **)&d->send, &d->send_cap);
    rb_device_release((void **)&d->recv, &d->recv_cap);
    free(d->displs);
    free(d);
    s->dev = NULL;
}

int agsparse_init_device(rb_reducer *r)
{
    agsparse_state *s = r->impl;
    agsparse_device *d = s->dev = calloc(1, sizeof *s->dev);
    if (!d || !(d->displs = rb_calloc((size_t)r->size, sizeof *d->displs)))
        return rb_fail(RB_ERR_NOMEM, "agsparse: no memory");
    return RB_OK;
}

int agsparse_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    agsparse_state *s = r->impl;
    agsparse_device *d = s->dev;
    cudaStream_t stream = (cudaStream_t)rb_device_stream(r);
    uint64_t k = 0, total = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_device_count_nonzero(r, dgrad, r->n, &k));
    st->nnz_local = k;
    RB_TRY(rb_device_pack_nonzero(r, dgrad, k, &d->send, &d->send_cap));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_allgather_count(r, st, k, s->nnz_of, sizeof(uint64_t)));
    total = rb_prefix_sums(s->nnz_of, d->displs, r->size);
    RB_TRY(rb_device_reserve((void **)&d->recv, &d->recv_cap, (size_t)total * sizeof(rb_pair)));
    RB_TRY(rb_device_allgatherv(r, st, d->send, d->recv, s->nnz_of, d->displs,
                                sizeof(rb_pair)));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    float inv_p = 1.0f / (float)r->size;
    RB_DEV(rbk_scatter_zero(dgrad, 0, d->send, (size_t)k, stream));
    for (int q = 0; q < r->size; q++)
        RB_DEV(rbk_scatter_add_scaled(dgrad, 0, d->recv + d->displs[q], (size_t)s->nnz_of[q],
                                      inv_p, stream));
    return rb_device_sync(r);
}
#endif
