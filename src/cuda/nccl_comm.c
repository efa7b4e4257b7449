/* The device layer's NCCL collectives and exchanges (interface:
 * rb_device.h), counted in rb_stats like the MPI wrappers of comm.c; each
 * waits for its stream (rb_cuda_stream_wait) before it returns.  Without
 * NCCL the three a reducer may reach refuse with RB_ERR_UNSUPPORTED. */
#include "device_cuda.h"
#include "reducer_cuda.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NCCL
static void count_allreduce(rb_reducer *r, rb_stats *st, uint64_t bytes)
{
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += 2 * (p - 1) * bytes / p;
    st->bytes_recv += 2 * (p - 1) * bytes / p;
    st->msgs_sent += 2 * (uint64_t)rb_model_log2(r->size);   /* core.c's model */
}

/* RB_OK when `what` may run: the NCCL transport, its communicator alive. */
static int need_direct(rb_reducer *r, const char *what)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!c || !c->direct)
        return rb_fail(RB_ERR_STATE, "%s without the NCCL transport", what);
    return rb_nccl_health(c);
}

int rb_device_allreduce_sum(rb_reducer *r, rb_stats *st, float *dbuf, size_t n)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_allreduce_sum"));
    if (n == 0)
        return RB_OK;
    RB_NCCL(ncclAllReduce(dbuf, dbuf, n, ncclFloat, ncclSum, c->nccl, c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    count_allreduce(r, st, (uint64_t)n * sizeof(float));
    return RB_OK;
}

/* Bitwise OR of a device bitmap over ranks.  NCCL has no bitwise OR, so:
 * RB_BITMAP_MAX_BYTES: expand to one byte per bit, ncclMax, pack again
 *   (a ring allreduce of nbits bytes: 2(p-1)/p x 8x the packed bitmap);
 * RB_BITMAP_ALLGATHER: allgather the packed words, OR them on the device
 *   ((p-1) x the packed bitmap received).  Fewer bytes while
 *   (p-1)/8 < 2(p-1)/p, i.e. p < 16: RB_BITMAP_AUTO picks by that.
 * scratch must hold max(nbits, p*8*words) bytes. */
int rb_device_bitmap_or(rb_reducer *r, rb_stats *st, uint64_t *dbm, size_t nbits, int method,
                        void *scratch)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_bitmap_or"));
    size_t words = (nbits + 63) / 64;
    if (words == 0)
        return RB_OK;
    if (method == RB_BITMAP_AUTO)
        method = r->size < 16 ? RB_BITMAP_ALLGATHER : RB_BITMAP_MAX_BYTES;
    if (method == RB_BITMAP_MAX_BYTES) {
        uint8_t *bytes = scratch;
        RB_CUDA((cudaError_t)rbk_bitmap_to_bytes(dbm, nbits, bytes, c->stream));
        RB_NCCL(ncclAllReduce(bytes, bytes, nbits, ncclUint8, ncclMax, c->nccl, c->stream));
        RB_CUDA((cudaError_t)rbk_bytes_to_bitmap(bytes, nbits, dbm, c->stream));
        count_allreduce(r, st, nbits);
    } else {
        uint64_t *all = scratch;
        RB_TRY(rb_device_allgather(r, st, dbm, all, words * sizeof *dbm));
        RB_CUDA((cudaError_t)rbk_bitmap_or_rows(dbm, all, words, r->size, c->stream));
    }
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    return RB_OK;
}

/* Grouped send of sbytes to dest and receive of rbytes from src (either
 * may be MPI_PROC_NULL) on stream s; counted as rb_sendrecv counts. */
static int post_bytes(rb_reducer *r, rb_stats *st, const void *sbuf, size_t sbytes, int dest,
                      void *rbuf, size_t rbytes, int src, cudaStream_t s)
{
    rb_cuda_ctx *c = r->device_ctx;
    ncclResult_t res = ncclSuccess;
    RB_NCCL(ncclGroupStart());
    if (dest != MPI_PROC_NULL)
        GROUP_ADD(res, ncclSend(sbuf, sbytes, ncclUint8, dest, c->nccl, s));
    if (src != MPI_PROC_NULL)
        GROUP_ADD(res, ncclRecv(rbuf, rbytes, ncclUint8, src, c->nccl, s));
    RB_TRY(rb_nccl_group_end(res, "ncclSend/ncclRecv"));
    if (dest != MPI_PROC_NULL) {
        st->bytes_sent += sbytes;
        st->msgs_sent++;
    }
    if (src != MPI_PROC_NULL)
        st->bytes_recv += rbytes;
    return RB_OK;
}

/* Post the exchange on `stream` (NULL: the library's) without waiting. */
int rb_device_post_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest,
                            float *rbuf, int src, size_t n, void *stream)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_sendrecv"));
    return post_bytes(r, st, sbuf, n * sizeof(float), dest, rbuf, n * sizeof(float), src,
                      stream ? (cudaStream_t)stream : c->stream);
}

/* Exchange n floats with partner ranks (gossip): send to dest, receive
 * from src, either may be MPI_PROC_NULL. */
int rb_device_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest, float *rbuf,
                       int src, size_t n)
{
    RB_TRY(rb_device_post_sendrecv(r, st, sbuf, dest, rbuf, src, n, NULL));
    return rb_device_sync(r);
}

int rb_device_sendrecv_bytes(rb_reducer *r, rb_stats *st, const void *sbuf, size_t sbytes,
                             int dest, void *rbuf, size_t rbytes, int src)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_sendrecv_bytes"));
    RB_TRY(post_bytes(r, st, sbuf, sbytes, dest, rbuf, rbytes, src, c->stream));
    return rb_device_sync(r);
}

/* The collectives below move bytes (ncclUint8) and are counted as their
 * MPI wrappers in core.c count them. */

int rb_device_allgather(rb_reducer *r, rb_stats *st, const void *dsend, void *drecv,
                        size_t bytes)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_allgather"));
    if (bytes == 0)
        return RB_OK;
    RB_NCCL(ncclAllGather(dsend, drecv, bytes, ncclUint8, c->nccl, c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += (p - 1) * bytes;
    st->bytes_recv += (p - 1) * bytes;
    st->msgs_sent += (uint64_t)rb_model_log2(r->size);
    return RB_OK;
}

/* NCCL has no allgatherv: one broadcast per rank with data, in one group
 * (NCCL's own idiom; non-roots pass their receive slot as the unused send
 * buffer). */
int rb_device_allgatherv(rb_reducer *r, rb_stats *st, const void *dsend, void *drecv,
                         const uint64_t *counts, const uint64_t *displs, size_t esize)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_allgatherv"));
    uint64_t total = 0;
    ncclResult_t res = ncclSuccess;
    RB_NCCL(ncclGroupStart());
    for (int q = 0; q < r->size; q++) {
        total += counts[q] * esize;
        char *slot = (char *)drecv + displs[q] * esize;
        if (counts[q])
            GROUP_ADD(res, ncclBroadcast(q == r->rank ? dsend : (const void *)slot, slot,
                                         (size_t)counts[q] * esize, ncclUint8, q, c->nccl,
                                         c->stream));
    }
    RB_TRY(rb_nccl_group_end(res, "ncclBroadcast"));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += (p - 1) * total / p;
    st->bytes_recv += total - counts[r->rank] * esize;
    st->msgs_sent += (uint64_t)rb_model_log2(r->size);
    return RB_OK;
}

/* Grouped ncclSend/ncclRecv with every rank that has data for us or that
 * we have data for (this rank's own block too: NCCL copies it). */
int rb_device_alltoallv(rb_reducer *r, rb_stats *st, const void *dsend, const uint64_t *scounts,
                        const uint64_t *sdispls, void *drecv, const uint64_t *rcounts,
                        const uint64_t *rdispls, size_t esize)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_alltoallv"));
    ncclResult_t res = ncclSuccess;
    RB_NCCL(ncclGroupStart());
    for (int q = 0; q < r->size; q++) {
        if (scounts[q])
            GROUP_ADD(res, ncclSend((const char *)dsend + sdispls[q] * esize, scounts[q] * esize,
                                    ncclUint8, q, c->nccl, c->stream));
        if (rcounts[q])
            GROUP_ADD(res, ncclRecv((char *)drecv + rdispls[q] * esize, rcounts[q] * esize,
                                    ncclUint8, q, c->nccl, c->stream));
    }
    RB_TRY(rb_nccl_group_end(res, "ncclSend/ncclRecv"));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    for (int q = 0; q < r->size; q++)
        if (q != r->rank) {
            st->bytes_sent += scounts[q] * esize;
            st->bytes_recv += rcounts[q] * esize;
        }
    st->msgs_sent += (uint64_t)(r->size - 1);
    return RB_OK;
}

/* In place from root (a pipelined chain in the count, as rb_bcast). */
int rb_device_bcast(rb_reducer *r, rb_stats *st, void *dbuf, size_t bytes, int root)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_bcast"));
    if (bytes == 0)
        return RB_OK;
    RB_NCCL(ncclBroadcast(dbuf, dbuf, bytes, ncclUint8, root, c->nccl, c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    int pos = (r->rank - root + r->size) % r->size;
    if (pos != r->size - 1) {
        st->bytes_sent += bytes;
        st->msgs_sent++;
    }
    if (pos != 0)
        st->bytes_recv += bytes;
    return RB_OK;
}

/* ---- host counts exchanged through NCCL, as esize-byte integers (4:
 * MPI_INT, 8: MPI_UINT64_T), counted as the MPI calls they stand for. */
static void pack_counts(void *dst, const uint64_t *src, size_t k, size_t esize)
{
    for (size_t i = 0; i < k; i++) {
        if (esize == 4)
            ((int32_t *)dst)[i] = (int32_t)src[i];
        else
            ((uint64_t *)dst)[i] = src[i];
    }
}

static void unpack_counts(uint64_t *dst, const void *src, size_t k, size_t esize)
{
    for (size_t i = 0; i < k; i++)
        dst[i] = esize == 4 ? (uint64_t)((const int32_t *)src)[i] : ((const uint64_t *)src)[i];
}

int rb_device_alltoall_counts(rb_reducer *r, rb_stats *st, const uint64_t *send, uint64_t *recv,
                              size_t esize)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(need_direct(r, "rb_device_alltoall_counts"));
    size_t p = (size_t)r->size;
    char *dsend = c->d_counts, *drecv = dsend + p * esize;
    pack_counts(c->h_counts, send, p, esize);
    RB_TRY(rb_device_upload(r, dsend, c->h_counts, p * esize));
    ncclResult_t res = ncclSuccess;
    RB_NCCL(ncclGroupStart());
    for (size_t q = 0; q < p; q++) {
        GROUP_ADD(res, ncclSend(dsend + q * esize, esize, ncclUint8, (int)q, c->nccl, c->stream));
        GROUP_ADD(res, ncclRecv(drecv + q * esize, esize, ncclUint8, (int)q, c->nccl, c->stream));
    }
    RB_TRY(rb_nccl_group_end(res, "ncclSend/ncclRecv"));
    RB_TRY(rb_device_download(r, c->h_counts, drecv, p * esize));
    unpack_counts(recv, c->h_counts, p, esize);
    st->bytes_sent += (p - 1) * esize;
    st->bytes_recv += (p - 1) * esize;
    st->msgs_sent += p - 1;
    return RB_OK;
}

int rb_device_allgather_count(rb_reducer *r, rb_stats *st, uint64_t mine, uint64_t *all,
                              size_t esize)
{
    rb_cuda_ctx *c = r->device_ctx;
    char *dsend = c->d_counts, *drecv = dsend + esize;
    pack_counts(c->h_counts, &mine, 1, esize);
    RB_TRY(rb_device_upload(r, dsend, c->h_counts, esize));
    RB_TRY(rb_device_allgather(r, st, dsend, drecv, esize));
    RB_TRY(rb_device_download(r, c->h_counts, drecv, (size_t)r->size * esize));
    unpack_counts(all, c->h_counts, (size_t)r->size, esize);
    return RB_OK;
}

int rb_device_bcast_count(rb_reducer *r, rb_stats *st, uint64_t *count, int root)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(rb_device_upload(r, c->d_counts, count, sizeof *count));
    RB_TRY(rb_device_bcast(r, st, c->d_counts, sizeof *count, root));
    return rb_device_download(r, count, c->d_counts, sizeof *count);
}

/* ---- sharded push of sorted pairs (parallax, sparcml rsag) */
int rb_device_push_init(rb_reducer *r, rb_device_push *x)
{
    memset(x, 0, sizeof *x);
    size_t p = (size_t)r->size;
    uint64_t **host[] = {&x->sc, &x->sd, &x->rc, &x->rd};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (!(*host[i] = rb_calloc(p, sizeof(uint64_t))))
            return rb_fail(RB_ERR_NOMEM, "no memory for %zu ranks", p);
    if (!(x->streams = rb_calloc(p, sizeof *x->streams)))
        return rb_fail(RB_ERR_NOMEM, "no memory for %zu ranks", p);
    return rb_device_reserve((void **)&x->bounds, &x->bounds_cap, p * sizeof(uint64_t));
}

void rb_device_push_free(rb_device_push *x)
{
    free(x->sc), free(x->sd), free(x->rc), free(x->rd), free(x->streams);
    rb_device_release((void **)&x->bounds, &x->bounds_cap);
}

/* Shard starts found on the GPU, the int counts by an alltoall (the host
 * path's MPI_INT alltoall), then the pairs by rb_device_alltoallv. */
int rb_device_push_shards(rb_reducer *r, rb_stats *st, rb_device_push *x, const rb_pair *pairs,
                          size_t k, int parts, rb_pair **recv, size_t *recv_cap)
{
    rb_cuda_ctx *c = r->device_ctx;
    int p = r->size;
    RB_CUDA((cudaError_t)rbk_shard_bounds(pairs, k, r->n, parts, x->bounds, c->stream));
    RB_TRY(rb_device_download(r, x->sd, x->bounds, (size_t)parts * sizeof(uint64_t)));
    for (int q = parts; q < p; q++)
        x->sd[q] = k;
    for (int q = 0; q < p; q++)
        x->sc[q] = (q + 1 < p ? x->sd[q + 1] : k) - x->sd[q];
    RB_TRY(rb_device_alltoall_counts(r, st, x->sc, x->rc, sizeof(int)));
    uint64_t total = rb_prefix_sums(x->rc, x->rd, p);
    RB_TRY(rb_device_reserve((void **)recv, recv_cap, (size_t)total * sizeof(rb_pair)));
    RB_TRY(rb_device_alltoallv(r, st, pairs, x->sc, x->sd, *recv, x->rc, x->rd,
                               sizeof(rb_pair)));
    for (int q = 0; q < p; q++)
        x->streams[q] = *recv + x->rd[q];
    return RB_OK;
}
#else
int rb_device_allreduce_sum(rb_reducer *r, rb_stats *st, float *dbuf, size_t n)
{
    (void)r, (void)st, (void)dbuf, (void)n;
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no NCCL");
}

int rb_device_bitmap_or(rb_reducer *r, rb_stats *st, uint64_t *dbm, size_t nbits, int method,
                        void *scratch)
{
    (void)r, (void)st, (void)dbm, (void)nbits, (void)method, (void)scratch;
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no NCCL");
}

int rb_device_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest, float *rbuf,
                       int src, size_t n)
{
    (void)r, (void)st, (void)sbuf, (void)dest, (void)rbuf, (void)src, (void)n;
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no NCCL");
}
#endif
