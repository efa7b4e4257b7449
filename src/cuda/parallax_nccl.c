/* parallax's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_parallax.c). */
#include "reducer_parallax.h"
#include "rb_device.h"
#include "reducer_cuda.h"

#include <limits.h>
#include <stdlib.h>

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path, the host path's messages and bytes: pack on the GPU,
 * shard starts by binary search on the GPU (to the host, to size the
 * push), the int counts and the pairs pushed by grouped ncclSend/ncclRecv,
 * the pull by ncclBroadcast (one server) or ncclAllGather + grouped
 * ncclBroadcast (a server per rank).  A server sums what it got with
 * rb_device_merge_sum (a dense accumulator over its shard): sums that
 * cancel stay in the support, as in rb_merge_sum_many, but the additions
 * go in rank order, not in its pairwise rounds, so from p = 4 on the last
 * bit may differ from the host path's. */
typedef struct parallax_device {
    rb_pair *send, *recv, *red, *result;
    size_t send_cap, recv_cap, red_cap, result_cap;
    rb_device_push push;        /* the push to the servers */
    rb_device_merger sum;       /* server: sums over its shard */
    size_t shard_lo, shard_len;  /* this rank's shard (len 0: not a server) */
} parallax_device;

void parallax_fini_device(rb_reducer *r)
{
    parallax_state *s = r->impl;
    parallax_device *d = s->dev;
    if (!d)
        return;
    rb_device_release((void **)&d->send, &d->send_cap);
    rb_device_release((void **)&d->recv, &d->recv_cap);
    rb_device_release((void **)&d->red, &d->red_cap);
    rb_device_release((void **)&d->result, &d->result_cap);
    rb_device_push_free(&d->push);
    rb_device_merger_free(&d->sum);
    free(d);
    s->dev = NULL;
}

int parallax_init_device(rb_reducer *r)
{
    parallax_state *s = r->impl;
    parallax_device *d = s->dev = calloc(1, sizeof *s->dev);
    if (!d)
        return rb_fail(RB_ERR_NOMEM, "parallax: no memory");
    if (r->rank < s->servers) {
        d->shard_lo = parallax_shard_lo(r->n, s->servers, r->rank);
        d->shard_len = parallax_shard_lo(r->n, s->servers, r->rank + 1) - d->shard_lo;
    }
    if (d->shard_len)
        RB_TRY(rb_device_merger_init(&d->sum, d->shard_len));
    return rb_device_push_init(r, &d->push);
}

/* A server's sums of the received streams into d->red; *kr pairs. */
static int device_server_sum(rb_reducer *r, parallax_device *d, size_t *kr)
{
    *kr = 0;
    if (d->shard_len == 0)
        return RB_OK;   /* not a server */
    return rb_device_merge_sum(r, &d->sum, (uint32_t)d->shard_lo, d->push.streams, d->push.rc,
                               r->size, &d->red, &d->red_cap, kr);
}

/* Every rank gets all servers' sums into d->result; *kall pairs. */
static int device_pull(rb_reducer *r, rb_stats *st, parallax_device *d, size_t kr, size_t *kall)
{
    parallax_state *s = r->impl;
    if (s->servers == 1) {
        uint64_t count = kr;
        RB_TRY(rb_device_bcast_count(r, st, &count, 0));
        RB_TRY(rb_device_reserve((void **)&d->result, &d->result_cap, count * sizeof(rb_pair)));
        if (r->rank == 0 && count)
            RB_DEV(cudaMemcpyAsync(d->result, d->red, count * sizeof(rb_pair),
                                   cudaMemcpyDeviceToDevice, (cudaStream_t)rb_device_stream(r)));
        *kall = (size_t)count;
        return rb_device_bcast(r, st, d->result, count * sizeof(rb_pair), 0);
    }
    /* the push's count arrays are free again: the sums are done */
    uint64_t *counts = d->push.rc, *displs = d->push.rd;
    RB_TRY(rb_device_allgather_count(r, st, kr, counts, sizeof(int)));
    size_t total = (size_t)rb_prefix_sums(counts, displs, r->size);
    RB_TRY(rb_device_reserve((void **)&d->result, &d->result_cap, total * sizeof(rb_pair)));
    *kall = total;
    return rb_device_allgatherv(r, st, d->red, d->result, counts, displs, sizeof(rb_pair));
}

int parallax_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    parallax_state *s = r->impl;
    parallax_device *d = s->dev;
    uint64_t k = 0;
    size_t kr = 0, kall = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_device_count_nonzero(r, dgrad, r->n, &k));
    st->nnz_local = k;
    RB_TRY(rb_device_pack_nonzero(r, dgrad, k, &d->send, &d->send_cap));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_push_shards(r, st, &d->push, d->send, (size_t)k, s->servers, &d->recv,
                                 &d->recv_cap));
    RB_TRY(device_server_sum(r, d, &kr));
    RB_TRY(device_pull(r, st, d, kr, &kall));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_DEV(rbk_scatter_set_scaled(dgrad, 0, d->result, kall, 1.0f / (float)r->size,
                                  (cudaStream_t)rb_device_stream(r)));
    st->nnz_result = kall;
    return rb_device_sync(r);
}
#endif
