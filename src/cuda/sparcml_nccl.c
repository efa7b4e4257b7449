/* sparcml's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_sparcml.c). */
#include "reducer_sparcml.h"
#include "rb_device.h"
#include "reducer_cuda.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path: the host path's algorithms, decisions, messages and
 * bytes, with the streams in device memory.  Headers (a stream's pair
 * count or DENSE_MARK) and streams go by grouped ncclSend/ncclRecv (one
 * group per exchange, so a dense/sparse pair needs no ordering); the rsag
 * alltoallv by grouped ncclSend/ncclRecv, its allgathers by ncclAllGather
 * and grouped ncclBroadcast.  A merge of two sorted streams is
 * rb_device_merge_sum over [0, n) (same sums as rb_merge_sum: a + b, the
 * union support); rsag's p-way merge adds in rank order, not in pairwise
 * rounds, so from p = 4 its last bit may differ from the host path's.  The
 * choice of algorithm and dense_all is choose_algo's, over MPI (one count). */
typedef struct sparcml_device {
    rb_pair *a, *b, *c;         /* stream, received stream, merge output */
    size_t cap_a, cap_b, cap_c;
    float *dense_in;            /* a partner's dense stream */
    size_t cap_dense;
    uint64_t *head;             /* device: [0] sent header, [1] received */
    size_t head_cap;
    rb_device_merger whole;     /* recdbl merges over [0, n) */
    rb_device_merger range;     /* rsag: this rank's range */
    rb_device_push push;        /* rsag: pairs to the range owners */
} sparcml_device;

void sparcml_fini_device(rb_reducer *r)
{
    sparcml_state *s = r->impl;
    sparcml_device *d = s->dev;
    if (!d)
        return;
    rb_device_release((void **)&d->a, &d->cap_a);
    rb_device_release((void **)&d->b, &d->cap_b);
    rb_device_release((void **)&d->c, &d->cap_c);
    rb_device_release((void **)&d->dense_in, &d->cap_dense);
    rb_device_release((void **)&d->head, &d->head_cap);
    rb_device_merger_free(&d->whole);
    rb_device_merger_free(&d->range);
    rb_device_push_free(&d->push);
    free(d);
    s->dev = NULL;
}

/* Which algorithms a reducer may run (choose_algo's rule): the mergers
 * cost about 12 bytes per element of their range, so only those a run can
 * use are allocated (none at p = 1). */
static int may_run(const rb_reducer *r, int algo)
{
    int want = r->cfg.opts.sparcml_algo;
    if (r->size == 1)
        return 0;
    if (want != RB_SPARCML_AUTO)
        return want == algo;
    int rsag_possible = r->size >= 16 && r->n <= (size_t)INT_MAX;
    return algo == RB_SPARCML_RSAG ? rsag_possible : 1;
}

int sparcml_init_device(rb_reducer *r)
{
    sparcml_state *s = r->impl;
    sparcml_device *d = s->dev = calloc(1, sizeof *s->dev);
    if (!d)
        return rb_fail(RB_ERR_NOMEM, "sparcml: no memory");
    RB_TRY(rb_device_reserve((void **)&d->head, &d->head_cap, 2 * sizeof(uint64_t)));
    if (may_run(r, RB_SPARCML_RECDBL))
        RB_TRY(rb_device_merger_init(&d->whole, r->n));
    if (!may_run(r, RB_SPARCML_RSAG))
        return RB_OK;
    size_t lo = sparcml_range_lo(r->n, r->size, r->rank), hi = sparcml_range_lo(r->n, r->size, r->rank + 1);
    RB_TRY(rb_device_push_init(r, &d->push));
    return rb_device_merger_init(&d->range, hi - lo);
}

static int dev_go_dense(rb_reducer *r, float *dgrad, sparcml_stream *m)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    if (!m->dense)
        RB_DEV(rbk_scatter_set(dgrad, 0, d->a, m->k, (cudaStream_t)rb_device_stream(r)));
    m->dense = 1;
    return rb_device_sync(r);
}

/* combine() on the device. */
static int dev_combine(rb_reducer *r, float *dgrad, sparcml_stream *m, uint64_t their_head)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    cudaStream_t cs = (cudaStream_t)rb_device_stream(r);
    if (their_head == DENSE_MARK) {
        RB_TRY(dev_go_dense(r, dgrad, m));
        RB_DEV(rbk_add(dgrad, d->dense_in, r->n, cs));
        return rb_device_sync(r);
    }
    if (m->dense) {
        RB_DEV(rbk_scatter_add_scaled(dgrad, 0, d->b, (size_t)their_head, 1.0f, cs));
        return rb_device_sync(r);
    }
    const rb_pair *streams[2] = {d->a, d->b};
    uint64_t counts[2] = {m->k, their_head};
    RB_TRY(rb_device_merge_sum(r, &d->whole, 0, streams, counts, 2, &d->c, &d->cap_c, &m->k));
    sparcml_swap_pairs(&d->a, &d->cap_a, &d->c, &d->cap_c);
    return sparcml_too_big(r, m->k) ? dev_go_dense(r, dgrad, m) : RB_OK;
}

/* swap_streams() on the device: header, then the streams, each one
 * grouped send/recv. */
static int dev_swap_streams(rb_reducer *r, rb_stats *st, float *dgrad, const sparcml_stream *m,
                            int dest, int src, uint64_t *their_head)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    uint64_t head = m->dense ? DENSE_MARK : m->k;
    RB_TRY(rb_device_upload(r, d->head, &head, sizeof head));
    RB_TRY(rb_device_sendrecv_bytes(r, st, d->head, sizeof head, dest, d->head + 1, sizeof head,
                                    src));
    *their_head = 0;
    if (src != MPI_PROC_NULL)
        RB_TRY(rb_device_download(r, their_head, d->head + 1, sizeof *their_head));
    if (dest != MPI_PROC_NULL && m->dense)
        st->dense_stages++;
    int their_dense = *their_head == DENSE_MARK;
    size_t rbytes = their_dense ? r->n * sizeof(float) : (size_t)*their_head * sizeof(rb_pair);
    if (their_dense)
        RB_TRY(rb_device_reserve((void **)&d->dense_in, &d->cap_dense, rbytes));
    else
        RB_TRY(rb_device_reserve((void **)&d->b, &d->cap_b, rbytes));
    const void *sbuf = m->dense ? (const void *)dgrad : (const void *)d->a;
    size_t sbytes = m->dense ? r->n * sizeof(float) : m->k * sizeof(rb_pair);
    void *rbuf = their_dense ? (void *)d->dense_in : (void *)d->b;
    return rb_device_sendrecv_bytes(r, st, sbuf, dest == MPI_PROC_NULL ? 0 : sbytes, dest, rbuf,
                                    src == MPI_PROC_NULL ? 0 : rbytes, src);
}

/* adopt_result() on the device. */
static int dev_adopt(rb_reducer *r, float *dgrad, sparcml_stream *m, uint64_t head)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    if (head == DENSE_MARK) {
        RB_DEV(cudaMemcpyAsync(dgrad, d->dense_in, r->n * sizeof(float),
                               cudaMemcpyDeviceToDevice, (cudaStream_t)rb_device_stream(r)));
        m->dense = 1;
        return rb_device_sync(r);
    }
    sparcml_swap_pairs(&d->a, &d->cap_a, &d->b, &d->cap_b);
    m->k = (size_t)head;
    m->dense = 0;
    return RB_OK;
}

/* rsag() on the device. */
static int dev_rsag(rb_reducer *r, rb_stats *st, float *dgrad, sparcml_stream *m)
{
    sparcml_state *s = r->impl;
    sparcml_device *d = s->dev;
    int p = r->size;
    if (r->n > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED,
                       "sparcml rsag: %zu elements exceed INT_MAX; use sparcml_algo=recdbl", r->n);
    RB_TRY(rb_device_push_shards(r, st, &d->push, d->a, m->k, p, &d->b, &d->cap_b));
    size_t lo = sparcml_range_lo(r->n, p, r->rank), hi = sparcml_range_lo(r->n, p, r->rank + 1), kr = 0;
    RB_TRY(rb_device_merge_sum(r, &d->range, (uint32_t)lo, d->push.streams, d->push.rc, p, &d->c,
                               &d->cap_c, &kr));
    /* the push's count arrays are free again: the sums are done */
    uint64_t *counts = d->push.rc, *displs = d->push.rd;
    RB_TRY(rb_device_allgather_count(r, st, kr, s->nnz_of, sizeof(uint64_t)));
    uint64_t all = rb_prefix_sums(s->nnz_of, displs, p);
    if (sparcml_too_big(r, (size_t)all)) {    /* dense allgather of the ranges */
        RB_TRY(rb_device_zero(r, dgrad + lo, (hi - lo) * sizeof(float)));
        RB_DEV(rbk_scatter_set(dgrad, 0, d->c, kr, (cudaStream_t)rb_device_stream(r)));
        for (int i = 0; i < p; i++) {
            counts[i] = sparcml_range_lo(r->n, p, i + 1) - sparcml_range_lo(r->n, p, i);
            displs[i] = sparcml_range_lo(r->n, p, i);
        }
        st->dense_stages = 1;
        m->dense = 1;
        return rb_device_allgatherv(r, st, dgrad + lo, dgrad, counts, displs, sizeof(float));
    }
    RB_TRY(rb_device_reserve((void **)&d->a, &d->cap_a, (size_t)all * sizeof(rb_pair)));
    m->k = (size_t)all;
    return rb_device_allgatherv(r, st, d->c, d->a, s->nnz_of, displs, sizeof(rb_pair));
}

static int dev_dense_allreduce(rb_reducer *r, rb_stats *st, float *dgrad)
{
    return rb_device_allreduce_sum(r, st, dgrad, r->n);
}

static int dev_pack(rb_reducer *r, const float *dgrad, size_t k)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    return rb_device_pack_nonzero(r, dgrad, k, &d->a, &d->cap_a);
}

static int dev_decode(rb_reducer *r, float *dgrad, const sparcml_stream *m)
{
    sparcml_device *d = ((sparcml_state *)r->impl)->dev;
    float inv_p = 1.0f / (float)r->size;
    if (m->dense)
        return rb_device_scale(r, dgrad, r->n, inv_p);
    RB_DEV(rbk_scatter_set_scaled(dgrad, 0, d->a, m->k, inv_p, (cudaStream_t)rb_device_stream(r)));
    return rb_device_sync(r);
}

static const sparcml_backend device_backend = {
    dev_swap_streams, dev_combine, dev_adopt, dev_rsag, dev_dense_allreduce, dev_pack, dev_decode,
    NULL,
};

int sparcml_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    uint64_t k = 0;
    if (r->size == 1)
        return RB_OK;   /* the average of one: no count needed */
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_device_count_nonzero(r, dgrad, r->n, &k));
    return sparcml_run(r, dgrad, st, (size_t)k, &device_backend);
}
#endif
