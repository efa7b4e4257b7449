/* Device memory layer.  Without CUDA every function returns
 * RB_ERR_UNSUPPORTED (device_none.c); with CUDA see device_cuda.c. */
#ifndef RB_DEVICE_H
#define RB_DEVICE_H

#include "rb_internal.h"
#include "reducer_sparse.h"   /* rb_pair */

/* Set up r->device_ctx for a RB_DEVICE_CUDA reducer (called by rb_create). */
int rb_device_init(rb_reducer *r);
void rb_device_fini(rb_reducer *r);
int rb_device_to_host(rb_reducer *r, float *host, const float *dev, size_t n);
int rb_device_from_host(rb_reducer *r, float *dev, const float *host, size_t n);
/* 1 when r reduces device buffers on the device (NCCL transport), 0 when
 * they are staged through host memory (transport=staged, or no device). */
int rb_device_direct(const rb_reducer *r);

/* CUDA builds only (device_cuda.c); every call completes (stream
 * synchronised) before it returns, so host phase timers are right. */
int rb_device_sync(rb_reducer *r);
void *rb_device_stream(rb_reducer *r);          /* the cudaStream_t */
/* Whether the work before a cudaEvent_t is done; waiting until it is.
 * With the NCCL transport both also check the communicator's asynchronous
 * error (a dead peer), aborting it and failing on one. */
int rb_device_event_done(rb_reducer *r, void *event, int *done);
int rb_device_event_wait(rb_reducer *r, void *event);
/* RB_ERR_ARG unless dbuf is device memory on this rank's GPU (rb_reduce
 * checks every device buffer before a reducer sees it). */
int rb_device_check_buffer(rb_reducer *r, const void *dbuf);
int rb_device_count_nonzero(rb_reducer *r, const float *dbuf, size_t n, uint64_t *nnz);
int rb_device_scale(rb_reducer *r, float *dbuf, size_t n, float s);
/* NCCL transport: counted like rb_allreduce (ring model). */
int rb_device_allreduce_sum(rb_reducer *r, rb_stats *st, float *dbuf, size_t n);
/* rb_device_bitmap_or (the bitwise OR of a device bitmap over ranks):
 * reducer_cuda.h, public. */
int rb_device_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest, float *rbuf,
                       int src, size_t n);
/* The same, posted on `stream` (a cudaStream_t; NULL: the library's) and
 * not waited for: the caller synchronises that stream before it uses rbuf
 * or changes sbuf (gossip's asynchronous mode).  Counted when posted. */
int rb_device_post_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest,
                            float *rbuf, int src, size_t n, void *stream);
/* Collectives on device bytes (NCCL builds), counted in rb_stats as the
 * MPI wrappers of core.c count them (rb_allgather, rb_allgatherv,
 * rb_alltoallv, rb_bcast).  Counts and displacements are in elements of
 * esize bytes.  allgatherv: grouped ncclBroadcast; alltoallv: grouped
 * ncclSend/ncclRecv; bcast is in place. */
int rb_device_allgather(rb_reducer *r, rb_stats *st, const void *dsend, void *drecv,
                        size_t bytes);
int rb_device_allgatherv(rb_reducer *r, rb_stats *st, const void *dsend, void *drecv,
                         const uint64_t *counts, const uint64_t *displs, size_t esize);
int rb_device_alltoallv(rb_reducer *r, rb_stats *st, const void *dsend, const uint64_t *scounts,
                        const uint64_t *sdispls, void *drecv, const uint64_t *rcounts,
                        const uint64_t *rdispls, size_t esize);
int rb_device_bcast(rb_reducer *r, rb_stats *st, void *dbuf, size_t bytes, int root);
/* Send sbytes to dest, receive rbytes from src (either MPI_PROC_NULL);
 * complete on return, counted as rb_sendrecv. */
int rb_device_sendrecv_bytes(rb_reducer *r, rb_stats *st, const void *sbuf, size_t sbytes,
                             int dest, void *rbuf, size_t rbytes, int src);
/* displs[q] = counts[0] + ... + counts[q-1]; returns the total. */
static inline uint64_t rb_prefix_sums(const uint64_t *counts, uint64_t *displs, int p)
{
    uint64_t total = 0;
    for (int q = 0; q < p; q++) {
        displs[q] = total;
        total += counts[q];
    }
    return total;
}
/* Counts held on the host, exchanged through NCCL as esize-byte integers
 * (4 stands for MPI_INT, 8 for MPI_UINT64_T) and counted as rb_alltoall,
 * rb_allgather and rb_bcast of those types: send/recv/all hold p entries. */
int rb_device_alltoall_counts(rb_reducer *r, rb_stats *st, const uint64_t *send, uint64_t *recv,
                              size_t esize);
int rb_device_allgather_count(rb_reducer *r, rb_stats *st, uint64_t mine, uint64_t *all,
                              size_t esize);
int rb_device_bcast_count(rb_reducer *r, rb_stats *st, uint64_t *count, int root);

/* Building blocks of the reducers' device paths (CUDA builds). */
/* RB_ERR_DEVICE naming `what` unless cuda_rc (a cudaError_t) is 0. */
int rb_device_status(int cuda_rc, const char *what);
#define RB_DEV(call) RB_TRY(rb_device_status((call), #call))
/* Grow a device buffer to at least `bytes` (like rb_reserve: the contents
 * are lost when it grows); rb_device_release frees it. */
int rb_device_reserve(void **dbuf, size_t *cap, size_t bytes);
void rb_device_release(void **dbuf, size_t *cap);
/* bytes from device to host memory and back; complete when they return. */
int rb_device_download(rb_reducer *r, void *host, const void *dev, size_t bytes);
int rb_device_upload(rb_reducer *r, void *dev, const void *host, size_t bytes);
/* Zero device memory (ordered on the library's stream). */
int rb_device_zero(rb_reducer *r, void *dev, size_t bytes);
/* The device counter rbk_* counts and compactions write (d_count). */
unsigned long long *rb_device_counter(rb_reducer *r);

/* Grow *dbuf to k pairs and pack the k non-zeros of dgrad (r->n floats)
 * into it in index order (like rb_pack_nonzero_grow, k counted first). */
int rb_device_pack_nonzero(rb_reducer *r, const float *dgrad, uint64_t k, rb_pair **dbuf,
                           size_t *cap);

/* A sharded push of index-sorted pairs (parallax, sparcml rsag; NCCL
 * builds): shard j of the `parts` equal shards of [0, n) goes to rank j,
 * ranks from `parts` on get none; *recv grows to hold what this rank
 * receives, rank q's x->rc[q] pairs at x->streams[q] (ready for
 * rb_device_merge_sum).  Host arrays of p entries; sc/sd/rc/rd are in
 * pairs and counted as rb_alltoall (MPI_INT) + rb_alltoallv. */
typedef struct rb_device_push {
    uint64_t *sc, *sd, *rc, *rd;
    const rb_pair **streams;
    uint64_t *bounds;           /* device: shard starts */
    size_t bounds_cap;
} rb_device_push;
int rb_device_push_init(rb_reducer *r, rb_device_push *x);
void rb_device_push_free(rb_device_push *x);
int rb_device_push_shards(rb_reducer *r, rb_stats *st, rb_device_push *x, const rb_pair *pairs,
                          size_t k, int parts, rb_pair **recv, size_t *recv_cap);

/* Sum of index-sorted pair streams whose indices lie in [lo, lo + len),
 * on the GPU: out (grown as needed) gets the index-sorted sum, *kout pairs,
 * sums that cancel kept (the support is the union, as rb_merge_sum_many
 * keeps it).  Streams are added one after another in the order given,
 * through a dense accumulator of len floats and a support bitmap. */
typedef struct rb_device_merger {
    float *acc;
    uint64_t *support;
    uint32_t *list;
    void *scratch;
    size_t len, acc_cap, support_cap, list_cap, scratch_cap;
} rb_device_merger;
int rb_device_merger_init(rb_device_merger *m, size_t len);
void rb_device_merger_free(rb_device_merger *m);
int rb_device_merge_sum(rb_reducer *r, rb_device_merger *m, uint32_t lo,
                        const rb_pair *const *streams, const uint64_t *counts, int nstreams,
                        rb_pair **out, size_t *out_cap, size_t *kout);

#endif
