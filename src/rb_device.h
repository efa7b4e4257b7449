/* Device memory layer.  Without CUDA every function returns
 * RB_ERR_UNSUPPORTED (device_none.c); with CUDA see device_cuda.c. */
#ifndef RB_DEVICE_H
#define RB_DEVICE_H

#include "rb_internal.h"

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
/* RB_ERR_ARG unless dbuf is device memory on this rank's GPU. */
int rb_device_check_buffer(rb_reducer *r, const void *dbuf);
int rb_device_count_nonzero(rb_reducer *r, const float *dbuf, size_t n, uint64_t *nnz);
int rb_device_scale(rb_reducer *r, float *dbuf, size_t n, float s);
/* NCCL transport: counted like rb_allreduce (ring model). */
int rb_device_allreduce_sum(rb_reducer *r, rb_stats *st, float *dbuf, size_t n);
/* Bitwise OR of a device bitmap over ranks (NCCL has no bitwise OR):
 * MAX_BYTES expands to a byte per bit and ncclMax-allreduces (ring wire:
 * 2(p-1)/p x nbits bytes); ALLGATHER gathers the packed bitmaps and ORs
 * them ((p-1) x nbits/8 bytes); AUTO picks the fewer wire bytes (allgather
 * below 16 ranks).  scratch: max(nbits, p * 8 * words) bytes. */
enum { RB_BITMAP_MAX_BYTES = 0, RB_BITMAP_ALLGATHER = 1, RB_BITMAP_AUTO = 2 };
int rb_device_bitmap_or(rb_reducer *r, rb_stats *st, uint64_t *dbm, size_t nbits, int method,
                        void *scratch);
int rb_device_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest, float *rbuf,
                       int src, size_t n);
/* The same, posted on `stream` (a cudaStream_t; NULL: the library's) and
 * not waited for: the caller synchronises that stream before it uses rbuf
 * or changes sbuf (gossip's asynchronous mode).  Counted when posted. */
int rb_device_post_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest,
                            float *rbuf, int src, size_t n, void *stream);
/* Allgather of count words per rank, and allgatherv of counts[q] words from
 * rank q to drecv + displs[q] (grouped ncclBroadcast); counted as
 * rb_allgather / rb_allgatherv.  NCCL builds only. */
int rb_device_allgather_u64(rb_reducer *r, rb_stats *st, const uint64_t *dsend,
                            uint64_t *drecv, size_t count);
int rb_device_allgatherv_u64(rb_reducer *r, rb_stats *st, const uint64_t *dsend,
                             uint64_t *drecv, const uint64_t *counts, const uint64_t *displs);

/* Building blocks of the reducers' device paths (CUDA builds). */
/* RB_ERR_DEVICE naming `what` unless cuda_rc (a cudaError_t) is 0. */
int rb_device_status(int cuda_rc, const char *what);
#define RB_DEV(call) RB_TRY(rb_device_status((call), #call))
/* Grow a device buffer to at least `bytes` (like rb_reserve: the contents
 * are lost when it grows); rb_device_release frees it. */
int rb_device_reserve(void **dbuf, size_t *cap, size_t bytes);
void rb_device_release(void **dbuf, size_t *cap);
/* bytes from device to host memory; complete when it returns. */
int rb_device_download(rb_reducer *r, void *host, const void *dev, size_t bytes);
/* Zero device memory (ordered on the library's stream). */
int rb_device_zero(rb_reducer *r, void *dev, size_t bytes);
/* The device counter rbk_* counts and compactions write (d_count). */
unsigned long long *rb_device_counter(rb_reducer *r);

#endif
