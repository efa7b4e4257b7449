/* Device layer of a CUDA build (interface: rb_device.h).
 *
 * - GPU selection by node-local rank (rb_node_rank, node.c) modulo the
 *   GPUs this process sees.
 * - Transport for device buffers (option transport=auto|nccl|staged):
 *   nccl: collectives on device memory through NCCL, MPI only to broadcast
 *         the NCCL unique id; needs one GPU per rank (NCCL refuses two ranks
 *         on one device);
 *   staged: device -> host copy, the host reducer over MPI (Open MPI here is
 *         not CUDA-aware), host -> device copy; any number of ranks per GPU.
 *   auto picks nccl when built with NCCL and no two ranks hold the same
 *   GPU (by UUID), else staged; all ranks agree.
 * - Every NCCL collective waits for its stream before returning, so the
 *   host timers of the phases (MPI_Wtime) measure completed work.  With
 *   the NCCL transport the wait polls the stream and the communicator's
 *   asynchronous error, as nccl-tests does: a peer that died or a broken
 *   connection shows only there, and the stream would wait for ever.  On
 *   such an error the communicator is aborted and every later NCCL call
 *   of the reducer fails (RB_ERR_DEVICE).
 * - The library's stream is a blocking one: it waits for the caller's work
 *   on the legacy default stream; other caller streams must be synchronised
 *   before rb_reduce.
 */
#include "device_cuda.h"
#include "reducer_cuda.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rb_cuda_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return RB_OK;
    return rb_fail(RB_ERR_DEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#ifdef HAVE_NCCL
int rb_nccl_check(ncclResult_t e, const char *what)
{
    if (e == ncclSuccess)
        return RB_OK;
    return rb_fail(RB_ERR_DEVICE, "%s: %s", what, ncclGetErrorString(e));
}

int rb_nccl_group_end(ncclResult_t res, const char *what)
{
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? rb_nccl_check(res, what) : rb_nccl_check(end, "ncclGroupEnd");
}
#endif

#ifdef HAVE_NCCL
/* The communicator's asynchronous error (a dead peer, a network failure):
 * on one, the communicator is aborted, which ends its kernels. */
int rb_nccl_health(rb_cuda_ctx *c)
{
    if (c->nccl_aborted)
        return rb_fail(RB_ERR_DEVICE, "the NCCL communicator was aborted after an earlier error");
    if (!c->nccl)
        return RB_OK;
    ncclResult_t async = ncclSuccess;
    RB_NCCL(ncclCommGetAsyncError(c->nccl, &async));
    if (async == ncclSuccess || async == ncclInProgress)
        return RB_OK;
    ncclCommAbort(c->nccl);
    c->nccl = NULL;
    c->nccl_aborted = 1;
    return rb_fail(RB_ERR_DEVICE, "NCCL asynchronous error: %s (communicator aborted)",
                   ncclGetErrorString(async));
}
#endif

/* 1 once the work on a stream (or up to an event) is done; "not yet" is
 * not an error, but the runtime keeps it as the last error, which the next
 * kernel launch's check would report, so it is cleared. */
static int query_done(cudaError_t e, const char *what, int *done)
{
    *done = e == cudaSuccess;
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return RB_OK;
    }
    return rb_cuda_check(e, what);
}

/* Wait for a stream: polled with the NCCL transport (see the top). */
int rb_cuda_stream_wait(rb_cuda_ctx *c, cudaStream_t s)
{
#ifdef HAVE_NCCL
    if (c->direct) {
        for (int done = 0;;) {
            RB_TRY(query_done(cudaStreamQuery(s), "cudaStreamQuery", &done));
            if (done)
                return RB_OK;
            RB_TRY(rb_nccl_health(c));
            sched_yield();
        }
    }
#else
    (void)c;
#endif
    RB_CUDA(cudaStreamSynchronize(s));
    return RB_OK;
}

int rb_device_event_done(rb_reducer *r, void *event, int *done)
{
    RB_TRY(query_done(cudaEventQuery((cudaEvent_t)event), "cudaEventQuery", done));
#ifdef HAVE_NCCL
    if (!*done)
        return rb_nccl_health(r->device_ctx);
#else
    (void)r;
#endif
    return RB_OK;
}

int rb_device_event_wait(rb_reducer *r, void *event)
{
    for (int done = 0;; sched_yield()) {
        RB_TRY(rb_device_event_done(r, event, &done));
        if (done)
            return RB_OK;
    }
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
    RB_TRY(rb_node_rank(comm, &lr, &ls, NULL));
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

#ifdef HAVE_NCCL
static int by_uuid(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(cudaUUID_t));
}

/* Most ranks of comm on one GPU (1: a GPU each), from the GPUs' UUIDs.
 * How many GPUs a rank sees says neither: with one GPU bound per task each
 * sees one, and ranks may pick the same GPU of several. */
static int most_ranks_per_gpu(rb_reducer *r, const rb_cuda_ctx *c, int *most)
{
    size_t p = (size_t)r->size;
    cudaUUID_t *all = rb_calloc(p, sizeof *all);
    int rc = rb_agree(r->comm, all ? RB_OK : rb_fail(RB_ERR_NOMEM, "no memory for %zu GPU ids", p));
    if (rc == RB_OK)
        rc = rb_mpi_check(MPI_Allgather(&c->uuid, (int)sizeof c->uuid, MPI_BYTE, all,
                                        (int)sizeof c->uuid, MPI_BYTE, r->comm), "MPI_Allgather");
    if (rc == RB_OK) {   /* the longest run of one UUID, the same on every rank */
        qsort(all, p, sizeof *all, by_uuid);
        *most = 1;
        for (size_t i = 1, run = 1; i < p; i++) {
            run = by_uuid(&all[i], &all[i - 1]) ? 1 : run + 1;
            if ((int)run > *most)
                *most = (int)run;
        }
    }
    free(all);
    return rc;
}
#endif

/* Transport all ranks use: NCCL needs a GPU of its own per rank. */
static int choose_transport(rb_reducer *r, rb_cuda_ctx *c, int *direct)
{
    int want = r->cfg.opts.transport;
    *direct = 0;
    if (want == RB_TRANSPORT_STAGED)
        return RB_OK;
#ifndef HAVE_NCCL
    (void)c;
    /* The one refusal of the NCCL transport without NCCL: no reducer's
     * device path (RB_NCCL_OP) exists in this build. */
    if (want == RB_TRANSPORT_AUTO)
        return RB_OK;
    return rb_fail(RB_ERR_UNSUPPORTED, "%s: transport=nccl: this build has no NCCL "
                   "(configure --with-nccl)", r->ops->name);
#else
    int most = 1;
    RB_TRY(most_ranks_per_gpu(r, c, &most));
    if (want == RB_TRANSPORT_NCCL && most > 1)
        return rb_fail(RB_ERR_DEVICE, "transport=nccl needs one GPU per rank: %d ranks share a GPU; "
                       "use transport=staged", most);
    *direct = most == 1;
    return RB_OK;
#endif
}

#ifdef HAVE_NCCL
static int nccl_init(rb_reducer *r, rb_cuda_ctx *c)
{
    ncclUniqueId id;
    int local = RB_OK;
    if (r->rank == 0)
        local = rb_nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    int ok = local == RB_OK, all = 0;
    RB_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, r->comm));
    if (!ok)
        return local != RB_OK ? local : rb_fail(RB_ERR_DEVICE, "rank 0 could not create an NCCL id");
    RB_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, r->comm));
    local = rb_nccl_check(ncclCommInitRank(&c->nccl, r->size, id, r->rank), "ncclCommInitRank");
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
    RB_TRY(rb_device_select(r->comm, &c->device));
    struct cudaDeviceProp prop;
    RB_CUDA(cudaGetDeviceProperties(&prop, c->device));
    c->uuid = prop.uuid;
    /* A blocking stream: its work is ordered after the caller's work on the
     * legacy default stream (e.g. a cudaMemcpy from pageable memory, which
     * may return before its DMA has landed).  Callers that fill gradients
     * on other streams must synchronise them before rb_reduce. */
    RB_CUDA(cudaStreamCreate(&c->stream));
    RB_CUDA(cudaMalloc((void **)&c->d_count, sizeof *c->d_count));
    size_t words = 2 * (size_t)r->size;
    RB_CUDA(cudaMalloc(&c->d_counts, words * sizeof(uint64_t)));
    if (!(c->h_counts = calloc(words, sizeof(uint64_t))))
        return rb_fail(RB_ERR_NOMEM, "no memory for %d ranks", r->size);
    RB_CUDA(cudaMalloc(&c->pack_scratch, rbk_pack_scratch_bytes(r->n)));
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
    if (c->d_counts)
        cudaFree(c->d_counts);
    free(c->h_counts);
    if (c->pack_scratch)
        cudaFree(c->pack_scratch);
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
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    return RB_OK;
}

int rb_device_to_host(rb_reducer *r, float *host, const float *dev, size_t n)
{
    return rb_device_download(r, host, dev, n * sizeof(float));
}

int rb_device_upload(rb_reducer *r, void *dev, const void *host, size_t bytes)
{
    rb_cuda_ctx *c = r->device_ctx;
    if (bytes == 0)
        return RB_OK;
    RB_CUDA(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    return RB_OK;
}

int rb_device_from_host(rb_reducer *r, float *dev, const float *host, size_t n)
{
    return rb_device_upload(r, dev, host, n * sizeof(float));
}

int rb_device_status(int cuda_rc, const char *what)
{
    return rb_cuda_check((cudaError_t)cuda_rc, what);
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
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
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
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    return RB_OK;
}

int rb_device_pack_nonzero(rb_reducer *r, const float *dgrad, uint64_t k, rb_pair **dbuf,
                           size_t *cap)
{
    rb_cuda_ctx *c = r->device_ctx;
    RB_TRY(rb_device_reserve((void **)dbuf, cap, (size_t)k * sizeof(rb_pair)));
    RB_CUDA((cudaError_t)rbk_pack_nonzero(dgrad, r->n, 0, *dbuf, c->d_count, c->pack_scratch,
                                          c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    return RB_OK;
}

size_t rb_device_bitmap_or_scratch(const rb_reducer *r, size_t nbits)
{
    size_t gathered = (size_t)r->size * 8 * ((nbits + 63) / 64);
    return nbits > gathered ? nbits : gathered;
}

/* ---- sum of sparse streams on the GPU (parallax servers, sparcml) */
int rb_device_merger_init(rb_device_merger *m, size_t len)
{
    memset(m, 0, sizeof *m);
    m->len = len;
    RB_TRY(rb_device_reserve((void **)&m->acc, &m->acc_cap, len * sizeof(float)));
    RB_TRY(rb_device_reserve((void **)&m->support, &m->support_cap,
                             (len + 63) / 64 * sizeof(uint64_t)));
    RB_TRY(rb_device_reserve((void **)&m->list, &m->list_cap, len * sizeof(uint32_t)));
    return rb_device_reserve(&m->scratch, &m->scratch_cap, rbk_pack_scratch_bytes(len));
}

void rb_device_merger_free(rb_device_merger *m)
{
    rb_device_release((void **)&m->acc, &m->acc_cap);
    rb_device_release((void **)&m->support, &m->support_cap);
    rb_device_release((void **)&m->list, &m->list_cap);
    rb_device_release(&m->scratch, &m->scratch_cap);
}

/* Dense accumulator over [lo, lo + len): cleared, each stream added in
 * order (indices are distinct within a stream, so no atomics), support
 * marked in a bitmap and compacted back to index-sorted pairs. */
int rb_device_merge_sum(rb_reducer *r, rb_device_merger *m, uint32_t lo,
                        const rb_pair *const *streams, const uint64_t *counts, int nstreams,
                        rb_pair **out, size_t *out_cap, size_t *kout)
{
    rb_cuda_ctx *c = r->device_ctx;
    uint64_t k = 0;
    RB_TRY(rb_device_zero(r, m->acc, m->len * sizeof(float)));
    RB_TRY(rb_device_zero(r, m->support, (m->len + 63) / 64 * sizeof(uint64_t)));
    for (int q = 0; q < nstreams; q++) {
        RB_CUDA((cudaError_t)rbk_scatter_add_scaled(m->acc, lo, streams[q], counts[q], 1.0f,
                                                    c->stream));
        RB_CUDA((cudaError_t)rbk_mark_pairs(m->support, lo, streams[q], counts[q], c->stream));
    }
    RB_CUDA((cudaError_t)rbk_bitmap_list(m->support, m->len, m->list, c->d_count, m->scratch,
                                         c->stream));
    RB_TRY(read_counter(r, &k));
    RB_TRY(rb_device_reserve((void **)out, out_cap, (size_t)k * sizeof(rb_pair)));
    RB_CUDA((cudaError_t)rbk_gather_pairs(m->acc, m->list, (size_t)k, lo, *out, c->stream));
    RB_TRY(rb_cuda_stream_wait(c, c->stream));
    *kout = (size_t)k;
    return RB_OK;
}
