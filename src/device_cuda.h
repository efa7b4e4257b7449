/* What the device layer of a CUDA build shares between its files:
 * device_cuda.c (devices, streams, buffers, transport) and
 * cuda/nccl_comm.c (the NCCL collectives and exchanges).  Private to the
 * library. */
#ifndef RB_DEVICE_CUDA_H
#define RB_DEVICE_CUDA_H

#include "rb_device.h"

#include <cuda_runtime_api.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

typedef struct rb_cuda_ctx {
    int device;
    cudaUUID_t uuid;                   /* of the GPU: ranks sharing one? */
    int direct;                        /* 1: NCCL transport */
    cudaStream_t stream;
    unsigned long long *d_count;       /* scratch for counts */
    void *d_counts, *h_counts;         /* 2 x p words: exchanges of counts */
    void *pack_scratch;                /* rbk_pack_nonzero of n elements */
#ifdef HAVE_NCCL
    ncclComm_t nccl;
    int nccl_aborted;                  /* after an asynchronous NCCL error */
#endif
} rb_cuda_ctx;

/* RB_OK, or RB_ERR_DEVICE naming the call and the CUDA error. */
int rb_cuda_check(cudaError_t e, const char *what);
#define RB_CUDA(call) RB_TRY(rb_cuda_check((call), #call))
/* Wait for a stream: polled with the NCCL transport (device_cuda.c). */
int rb_cuda_stream_wait(rb_cuda_ctx *c, cudaStream_t s);

#ifdef HAVE_NCCL
/* RB_OK, or RB_ERR_DEVICE naming the call and the NCCL error. */
int rb_nccl_check(ncclResult_t e, const char *what);
#define RB_NCCL(call) RB_TRY(rb_nccl_check((call), #call))
/* Calls between ncclGroupStart and ncclGroupEnd: the first failure is kept
 * and the calls after it skipped, and the group is always closed (a group
 * left open queues every later NCCL call of the process, unlaunched). */
#define GROUP_ADD(res, call) do { if ((res) == ncclSuccess) (res) = (call); } while (0)
/* Close a group: the first failure of its calls, else ncclGroupEnd's. */
int rb_nccl_group_end(ncclResult_t res, const char *what);
/* The communicator's asynchronous error: on one it is aborted. */
int rb_nccl_health(rb_cuda_ctx *c);
#endif

#endif
