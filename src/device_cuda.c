/* Device layer of a CUDA build (interface: rb_device.h).
 *
 * - GPU selection by node-local rank: SLURM_LOCALID, then
 *   OMPI_COMM_WORLD_LOCAL_RANK / MPI_LOCALRANKID, then the rank in an
 *   MPI shared-memory split; never SLURM_PROCID (a global rank).
 * - Transport for device buffers (option transport=auto|nccl|staged):
 *   nccl: collectives on device memory through NCCL, MPI only to broadcast
 *         the NCCL unique id; needs one GPU per rank (NCCL refuses two ranks
 *         on one device);
 *   staged: device -> host copy, the host reducer over MPI (Open MPI here is
 *         not CUDA-aware), host -> device copy; any number of ranks per GPU.
 *   auto picks nccl when built with NCCL and every node has at least as many
 *   GPUs as ranks, else staged; all ranks agree.
 * - Every NCCL collective synchronises its stream before returning, so the
 *   host timers of the phases (MPI_Wtime) measure completed work.
 * - The library's stream is a blocking one: it waits for the caller's work
 *   on the legacy default stream; other caller streams must be synchronised
 *   before rb_reduce.
 */
#include "rb_device.h"
#include "cuda/rb_kernels.h"

#include <cuda_runtime_api.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rb_cuda_ctx {
    int device;
    int local_rank, local_size;
    int direct;                        /* 1: NCCL transport */
    cudaStream_t stream;
    unsigned long long *d_count;       /* scratch for counts */
#ifdef HAVE_NCCL
    ncclComm_t nccl;
#endif
} rb_cuda_ctx;

static int cuda_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return RB_OK;
    return rb_fail(RB_ERR_DEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
#define RB_CUDA(call) RB_TRY(cuda_check((call), #call))

#ifdef HAVE_NCCL
static int nccl_check(ncclResult_t e, const char *what)
{
    if (e == ncclSuccess)
        return RB_OK;
    return rb_fail(RB_ERR_DEVICE, "%s: %s", what, ncclGetErrorString(e));
}
#define RB_NCCL(call) RB_TRY(nccl_check((call), #call))
#endif

/* Node-local rank from the launcher's environment, -1 if none is set. */
static int env_local_rank(void)
{
    static const char *const vars[] = {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID", "PMI_LOCAL_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (v && *v) {
            long r = strtol(v, &end, 10);
            if (*end == '\0' && r >= 0 && r < 1 << 20)
                return (int)r;
        }
    }
    return -1;
}

/* Rank and size among the ranks of comm on this node. */
static int node_local(MPI_Comm comm, int *local_rank, int *local_size)
{
    MPI_Comm node;
    RB_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    int env = env_local_rank();
    if (env >= 0)
        *local_rank = env;
    return RB_OK;
}

static int select_device(int local_rank, int *device)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return rb_fail(RB_ERR_DEVICE, "no usable GPU: cudaGetDeviceCount: %s", cudaGetErrorString(e));
    if (count == 0)
        return rb_fail(RB_ERR_DEVICE, "no GPU on this node");
    *device = local_rank % count;
    RB_CUDA(cudaSetDevice(*device));
    return RB_OK;
}

int rb_device_select(MPI_Comm comm, int *device)
{
    int lr, ls, dev = -1;
    RB_TRY(node_local(comm, &lr, &ls));
    RB_TRY(select_device(lr, &dev));
    if (device)
        *device = dev;
    return RB_OK;
}

int rb_device_describe(char *buf, size_t len)
{
    if (!buf || len == 0)
        return rb_fail(RB_ERR_ARG, "rb_device_describe: no buffer");
    buf[0] = '\0';
    int dev = 0, count = 0, rt = 0, drv = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return rb_fail(RB_ERR_DEVICE, "no usable GPU: %s",
                       e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    RB_CUDA(cudaGetDevice(&dev));
    struct cudaDeviceProp prop;
    RB_CUDA(cudaGetDeviceProperties(&prop, dev));
    char pci[32] = "";
    RB_CUDA(cudaDeviceGetPCIBusId(pci, (int)sizeof pci, dev));
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    int nccl = 0;
#ifdef HAVE_NCCL
    ncclGetVersion(&nccl);
#endif
    snprintf(buf, len, "device %d of %d: %s; pci %s; sm_%d%d; %.1f GiB; runtime %d.%d; driver %d.%d; nccl %d.%d.%d",
             dev, count, prop.name, pci, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), rt / 1000, rt % 1000 / 10,
             drv / 1000, drv % 1000 / 10, nccl / 10000, nccl / 100 % 100, nccl % 100);
    return RB_OK;
}

/* Transport all ranks use: NCCL needs a GPU of its own per rank. */
static int choose_transport(rb_reducer *r, rb_cuda_ctx *c, int *direct)
{
    int want = r->cfg.opts.transport;
    int count = 0;
    cudaGetDeviceCount(&count);
    int can_nccl = 0;
#ifdef HAVE_NCCL
    can_nccl = c->local_size <= count;
#else
    (void)c;
#endif
    int all_can = 0;
    RB_MPI(MPI_Allreduce(&can_nccl, &all_can, 1, MPI_INT, MPI_MIN, r->comm));
    if (want == RB_TRANSPORT_STAGED || (want == RB_TRANSPORT_AUTO && !all_can)) {
        *direct = 0;
        return RB_OK;
    }
#ifndef HAVE_NCCL
    return rb_fail(RB_ERR_UNSUPPORTED, "transport=nccl: this build has no NCCL (configure --with-nccl)");
#else
    if (!all_can)
        return rb_fail(RB_ERR_DEVICE, "transport=nccl needs one GPU per rank: %d ranks share %d GPU(s) "
                       "on a node; use transport=staged", c->local_size, count);
    *direct = 1;
    return RB_OK;
#endif
}

#ifdef HAVE_NCCL
static int nccl_init(rb_reducer *r, rb_cuda_ctx *c)
{
    ncclUniqueId id;
    int local = RB_OK;
    if (r->rank == 0)
        local = nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    int ok = local == RB_OK, all = 0;
    RB_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, r->comm));
    if (!ok)
        return local != RB_OK ? local : rb_fail(RB_ERR_DEVICE, "rank 0 could not create an NCCL id");
    RB_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, r->comm));
    local = nccl_check(ncclCommInitRank(&c->nccl, r->size, id, r->rank), "ncclCommInitRank");
    ok = local == RB_OK;
    RB_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, r->comm));
    if (!all)
        return local != RB_OK ? local : rb_fail(RB_ERR_DEVICE, "NCCL init failed on another rank");
    return RB_OK;
}
#endif

/* Local part of init: device, stream, scratch. */
static int init_local(rb_reducer *r, rb_cuda_ctx *c)
{
    RB_TRY(node_local(r->comm, &c->local_rank, &c->local_size));
    RB_TRY(select_device(c->local_rank, &c->device));
    /* A blocking stream: its work is ordered after the caller's work on the
     * legacy default stream (e.g. a cudaMemcpy from pageable memory, which
     * may return before its DMA has landed).  Callers that fill gradients
     * on other streams must synchronise them before rb_reduce. */
    RB_CUDA(cudaStreamCreate(&c->stream));
    RB_CUDA(cudaMalloc((void **)&c->d_count, sizeof *c->d_count));
    return RB_OK;
}

int rb_device_init(rb_reducer *r)
{
    rb_cuda_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return rb_fail(RB_ERR_NOMEM, "no memory for the device context");
    r->device_ctx = c;
    int local = init_local(r, c), all = 0;
    /* No rank goes on to a collective the others skip. */
    int ok = local == RB_OK;
    RB_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, r->comm));
    if (!all)
        return local != RB_OK ? local : rb_fail(RB_ERR_DEVICE, "device setup failed on another rank");
    RB_TRY(choose_transport(r, c, &c->direct));
#ifdef HAVE_NCCL
    if (c->direct)
        RB_TRY(nccl_init(r, c));
#endif
    return RB_OK;
}

void rb_device_fini(rb_reducer *r)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!c)
        return;
#ifdef HAVE_NCCL
    if (c->nccl)
        ncclCommDestroy(c->nccl);
#endif
    if (c->d_count)
        cudaFree(c->d_count);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
    r->device_ctx = NULL;
}

int rb_device_direct(const rb_reducer *r)
{
    const rb_cuda_ctx *c = r->device_ctx;
    return c && c->direct;
}

int rb_device_download(rb_reducer *r, void *host, const void *dev, size_t bytes)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (bytes == 0)
        return RB_OK;
    RB_CUDA(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, c->stream));
    RB_CUDA(cudaStreamSynchronize(c->stream));
    return RB_OK;
}

int rb_device_to_host(rb_reducer *r, float *host, const float *dev, size_t n)
{
    return rb_device_download(r, host, dev, n * sizeof(float));
}

int rb_device_from_host(rb_reducer *r, float *dev, const float *host, size_t n)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (n == 0)
        return RB_OK;
    RB_CUDA(cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, c->stream));
    RB_CUDA(cudaStreamSynchronize(c->stream));
    return RB_OK;
}

int rb_device_status(int cuda_rc, const char *what)
{
    return cuda_check((cudaError_t)cuda_rc, what);
}

int rb_device_reserve(void **dbuf, size_t *cap, size_t bytes)
{
    if (*dbuf && *cap >= bytes)
        return RB_OK;
    rb_device_release(dbuf, cap);
    cudaError_t e = cudaMalloc(dbuf, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *dbuf = NULL;
        return rb_fail(RB_ERR_NOMEM, "cudaMalloc of %zu bytes: %s", bytes, cudaGetErrorString(e));
    }
    *cap = bytes;
    return RB_OK;
}

void rb_device_release(void **dbuf, size_t *cap)
{
    if (*dbuf)
        cudaFree(*dbuf);
    *dbuf = NULL;
    *cap = 0;
}

int rb_device_zero(rb_reducer *r, void *dev, size_t bytes)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (bytes)
        RB_CUDA(cudaMemsetAsync(dev, 0, bytes, c->stream));
    return RB_OK;
}

unsigned long long *rb_device_counter(rb_reducer *r)
{
    rb_cuda_ctx *c = r->device_ctx;
    return c->d_count;
}

static int read_counter(rb_reducer *r, uint64_t *value)
{
    rb_cuda_ctx *c = r->device_ctx;
    unsigned long long h = 0;
    RB_TRY(rb_device_download(r, &h, c->d_count, sizeof h));
    *value = h;
    return RB_OK;
}

int rb_device_sync(rb_reducer *r)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_CUDA(cudaStreamSynchronize(c->stream));
    return RB_OK;
}

void *rb_device_stream(rb_reducer *r)
{
    rb_cuda_ctx *c = r->device_ctx;
    return c ? (void *)c->stream : NULL;
}

int rb_device_check_buffer(rb_reducer *r, const void *dbuf)
{
    rb_cuda_ctx *c = r->device_ctx;
    struct cudaPointerAttributes a;
    RB_CUDA(cudaPointerGetAttributes(&a, dbuf));
    if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
        return rb_fail(RB_ERR_ARG, "device reducer given a pointer that is not device memory");
    if (a.device != c->device)
        return rb_fail(RB_ERR_ARG, "buffer is on GPU %d but this rank uses GPU %d "
                       "(call rb_device_select before allocating)", a.device, c->device);
    return RB_OK;
}

int rb_device_count_nonzero(rb_reducer *r, const float *dbuf, size_t n, uint64_t *nnz)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_CUDA((cudaError_t)rbk_count_nonzero(dbuf, n, c->d_count, c->stream));
    return read_counter(r, nnz);
}

int rb_device_scale(rb_reducer *r, float *dbuf, size_t n, float s)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_CUDA((cudaError_t)rbk_scale(dbuf, n, s, c->stream));
    RB_CUDA(cudaStreamSynchronize(c->stream));
    return RB_OK;
}

#ifdef HAVE_NCCL
static void count_allreduce(rb_reducer *r, rb_stats *st, uint64_t bytes)
{
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += 2 * (p - 1) * bytes / p;
    st->bytes_recv += 2 * (p - 1) * bytes / p;
}

static ncclComm_t direct_comm(rb_reducer *r)
{
    rb_cuda_ctx *c = r->device_ctx;
    return c && c->direct ? c->nccl : NULL;
}

int rb_device_allreduce_sum(rb_reducer *r, rb_stats *st, float *dbuf, size_t n)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!direct_comm(r))
        return rb_fail(RB_ERR_STATE, "rb_device_allreduce_sum without the NCCL transport");
    if (n == 0)
        return RB_OK;
    RB_NCCL(ncclAllReduce(dbuf, dbuf, n, ncclFloat, ncclSum, c->nccl, c->stream));
    RB_CUDA(cudaStreamSynchronize(c->stream));
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
    if (!direct_comm(r))
        return rb_fail(RB_ERR_STATE, "rb_device_bitmap_or without the NCCL transport");
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
        RB_NCCL(ncclAllGather(dbm, all, words, ncclUint64, c->nccl, c->stream));
        RB_CUDA((cudaError_t)rbk_bitmap_or_rows(dbm, all, words, r->size, c->stream));
        uint64_t p = (uint64_t)r->size, b = words * 8;
        st->bytes_sent += (p - 1) * b;
        st->bytes_recv += (p - 1) * b;
    }
    RB_CUDA(cudaStreamSynchronize(c->stream));
    return RB_OK;
}

/* Post the exchange on `stream` (NULL: the library's) without waiting. */
int rb_device_post_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest,
                            float *rbuf, int src, size_t n, void *stream)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!direct_comm(r))
        return rb_fail(RB_ERR_STATE, "rb_device_sendrecv without the NCCL transport");
    cudaStream_t s = stream ? (cudaStream_t)stream : c->stream;
    RB_NCCL(ncclGroupStart());
    if (dest != MPI_PROC_NULL)
        RB_NCCL(ncclSend(sbuf, n, ncclFloat, dest, c->nccl, s));
    if (src != MPI_PROC_NULL)
        RB_NCCL(ncclRecv(rbuf, n, ncclFloat, src, c->nccl, s));
    RB_NCCL(ncclGroupEnd());
    if (dest != MPI_PROC_NULL)
        st->bytes_sent += (uint64_t)n * sizeof(float);
    if (src != MPI_PROC_NULL)
        st->bytes_recv += (uint64_t)n * sizeof(float);
    return RB_OK;
}

/* Exchange n floats with partner ranks (gossip): send to dest, receive
 * from src, either may be MPI_PROC_NULL. */
int rb_device_sendrecv(rb_reducer *r, rb_stats *st, const float *sbuf, int dest, float *rbuf,
                       int src, size_t n)
{
    RB_TRY(rb_device_post_sendrecv(r, st, sbuf, dest, rbuf, src, n, NULL));
    return rb_device_sync(r);
}

/* Counted as rb_allgather: (p-1) x count words each way. */
int rb_device_allgather_u64(rb_reducer *r, rb_stats *st, const uint64_t *dsend,
                            uint64_t *drecv, size_t count)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!direct_comm(r))
        return rb_fail(RB_ERR_STATE, "rb_device_allgather_u64 without the NCCL transport");
    if (count == 0)
        return RB_OK;
    RB_NCCL(ncclAllGather(dsend, drecv, count, ncclUint64, c->nccl, c->stream));
    RB_CUDA(cudaStreamSynchronize(c->stream));
    uint64_t p = (uint64_t)r->size, b = (uint64_t)count * 8;
    st->bytes_sent += (p - 1) * b;
    st->bytes_recv += (p - 1) * b;
    return RB_OK;
}

/* NCCL has no allgatherv: one broadcast per rank with data, in one group
 * (NCCL's own idiom; non-roots pass their receive slot as the unused send
 * buffer).  Counted as rb_allgatherv (ring model). */
int rb_device_allgatherv_u64(rb_reducer *r, rb_stats *st, const uint64_t *dsend,
                             uint64_t *drecv, const uint64_t *counts, const uint64_t *displs)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (!direct_comm(r))
        return rb_fail(RB_ERR_STATE, "rb_device_allgatherv_u64 without the NCCL transport");
    uint64_t total = 0;
    RB_NCCL(ncclGroupStart());
    for (int q = 0; q < r->size; q++) {
        total += counts[q];
        uint64_t *slot = drecv + displs[q];
        if (counts[q])
            RB_NCCL(ncclBroadcast(q == r->rank ? (const void *)dsend : slot, slot,
                                  (size_t)counts[q], ncclUint64, q, c->nccl, c->stream));
    }
    RB_NCCL(ncclGroupEnd());
    RB_CUDA(cudaStreamSynchronize(c->stream));
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += (p - 1) * total * 8 / p;
    st->bytes_recv += (total - counts[r->rank]) * 8;
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
