/* gossip: GossipGraD.  Each training iteration every rank exchanges its
 * buffer with ONE partner and keeps x = (x + x_partner) / 2, so a step costs
 * O(1) messages whatever the number of ranks.  docs/gossip.md describes the
 * schedules, rotation, the rules for any p and the asynchronous semantics.
 *
 * Schedules run on virtual ranks v = virt[rank]; step k = step % levels,
 * levels = ceil(log2 p):
 *   hypercube      partner v ^ 2^k (symmetric swap; none if >= p: skip)
 *   dissemination  send to v - 2^k, receive from v + 2^k (mod p)
 * Both mixes are doubly stochastic, so the global mean is preserved.
 * Rotation relabels ranks (virtual -> real) at every wrap of k with a
 * permutation drawn from the shared seed; epoch 0 is the identity.
 * Device buffers under transport=nccl stay on the GPU (ncclSend/ncclRecv,
 * the mixes as kernels; see "The NCCL path" below). */
#include "rb_device.h"
#include "rb_internal.h"
#include "reducer_sparse.h"

#include <stdlib.h>
#include <string.h>

/* Floats per message: keeps MPI counts in int range for huge buffers. */
#define GOSSIP_CHUNK ((size_t)1 << 30)

enum { CH_GRAD = 0, CH_PARAMS = 1, CH_N };
static const int channel_mix_bit[CH_N] = {RB_GOSSIP_MIX_GRAD, RB_GOSSIP_MIX_PARAMS};
static const int channel_tag[CH_N] = {0x6701, 0x6702};

/* Real ranks this rank sends to and receives from in one step (-1: none). */
typedef struct gossip_route {
    int send_to, recv_from;
} gossip_route;

/* One asynchronous exchange channel (gradients or parameters). */
typedef struct gossip_channel {
    float *sent;            /* copy of the values posted (the caller may change x) */
    float *recv;            /* the partner's values */
    MPI_Request *reqs;      /* 2 per chunk */
    MPI_Status *statuses;
    int nreq;               /* requests of the pending exchange */
    int pending;            /* posted, not yet applied */
    int complete;           /* pending requests have completed (progress/wait) */
} gossip_channel;

typedef struct gossip {
    int levels;             /* ceil(log2 p); 0 for p = 1 */
    uint64_t step;          /* training iterations so far */
    uint64_t perm_epoch;    /* epoch perm/virt were drawn for */
    int *perm;              /* virtual -> real rank */
    int *virt;              /* real -> virtual rank */
    size_t nchunks;
    float *recv;            /* synchronous receive buffer */
    float *stage;           /* host copy of a device buffer (RB_DEVICE_CUDA, staged) */
    gossip_channel ch[CH_N];
    struct gossip_device *dev;   /* device buffers of the NCCL path, else NULL */
} gossip;

/* The NCCL path (device buffers, transport=nccl), defined below; its
 * buffers are set up by gossip_init_device after gossip_init. */
static int device_exchange_sync(rb_reducer *r, gossip *g, float *x, gossip_route rt,
                                rb_stats *st);
static int device_post(rb_reducer *r, gossip *g, int channel, const float *x, gossip_route rt,
                       rb_stats *st);
static int device_test(rb_reducer *r, gossip *g, int channel, int *done);
static int device_wait(rb_reducer *r, gossip *g, int channel);
static int device_apply(rb_reducer *r, gossip *g, int channel, float *x);

static int ceil_log2(int p)
{
    int l = 0;
    while (l < 31 && (1 << l) < p)
        l++;
    return l;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* perm = identity for epoch 0, else Fisher-Yates driven by splitmix64 of
 * (seed, epoch): every rank draws the same permutation from the same seed. */
static void draw_permutation(int *perm, int p, uint64_t seed, uint64_t epoch)
{
    for (int i = 0; i < p; i++)
        perm[i] = i;
    if (epoch == 0)
        return;
    uint64_t state = seed;
    state = splitmix64(&state) ^ (epoch * 0xd1b54a32d192ed03ULL);
    for (int i = p - 1; i > 0; i--) {
        int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

static void relabel_for_step(rb_reducer *r, gossip *g)
{
    uint64_t epoch = r->cfg.opts.gossip_rotate ? g->step / (uint64_t)g->levels : 0;
    if (epoch == g->perm_epoch)
        return;
    draw_permutation(g->perm, r->size, r->cfg.opts.seed, epoch);
    for (int v = 0; v < r->size; v++)
        g->virt[g->perm[v]] = v;
    g->perm_epoch = epoch;
}

static gossip_route route_of_step(rb_reducer *r, gossip *g)
{
    gossip_route rt = {-1, -1};
    int p = r->size;
    if (g->levels == 0)
        return rt;
    relabel_for_step(r, g);
    int k = (int)(g->step % (uint64_t)g->levels);
    int v = g->virt[r->rank];
    if (r->cfg.opts.gossip_schedule == RB_GOSSIP_HYPERCUBE) {
        int q = v ^ (1 << k);
        if (q < p)
            rt.send_to = rt.recv_from = g->perm[q];
    } else {
        int s = (1 << k) % p;   /* never 0: 2^k < p for k < levels */
        rt.send_to = g->perm[(v - s + p) % p];
        rt.recv_from = g->perm[(v + s) % p];
    }
    return rt;
}

static size_t chunk_len(const rb_reducer *r, size_t c)
{
    size_t off = c * GOSSIP_CHUNK;
    return r->n - off < GOSSIP_CHUNK ? r->n - off : GOSSIP_CHUNK;
}

static int check_count(const MPI_Status *status, size_t want, int from)
{
    int got = 0;
    RB_MPI(MPI_Get_count(status, MPI_FLOAT, &got));
    if ((size_t)got != want)
        return rb_fail(RB_ERR_MPI, "gossip: %d floats from rank %d, expected %zu", got, from, want);
    return RB_OK;
}

/* ---- synchronous: the exchange completes inside the call ---- */

static int exchange_sync(rb_reducer *r, gossip *g, int channel, float *x,
                         gossip_route rt, rb_stats *st)
{
    if (g->dev)
        return device_exchange_sync(r, g, x, rt, st);
    rb_phase_start(r, st, RB_PHASE_COMM);
    double t0 = MPI_Wtime();
    for (size_t c = 0; c < g->nchunks; c++) {
        size_t off = c * GOSSIP_CHUNK, len = chunk_len(r, c);
        MPI_Status status;
        RB_TRY(rb_sendrecv(r, st, x + off, (int)len, MPI_FLOAT, rt.send_to,
                           g->recv + off, (int)len, MPI_FLOAT, rt.recv_from,
                           channel_tag[channel], &status));
        RB_TRY(check_count(&status, len, rt.recv_from));
    }
    st->t_wait += MPI_Wtime() - t0;
    rb_phase_start(r, st, RB_PHASE_DECODE);
    /* (x + y) / 2 is symmetric: both sides of a swap hold the same bits. */
    for (size_t i = 0; i < r->n; i++)
        x[i] = 0.5f * (x[i] + g->recv[i]);
    return RB_OK;
}

/* ---- asynchronous: post now, apply at the next call ---- */

static int channel_check_counts(rb_reducer *r, gossip_channel *ch)
{
    /* Requests are posted as (recv, send) pairs per chunk. */
    for (int i = 0; i < ch->nreq; i += 2) {
        int from = ch->statuses[i].MPI_SOURCE;
        RB_TRY(check_count(&ch->statuses[i], chunk_len(r, (size_t)i / 2), from));
    }
    return RB_OK;
}

static int channel_test(rb_reducer *r, gossip *g, int channel)
{
    gossip_channel *ch = &g->ch[channel];
    if (!ch->pending || ch->complete)
        return RB_OK;
    int done = 0;
    if (g->dev)
        RB_TRY(device_test(r, g, channel, &done));
    else
        RB_MPI(MPI_Testall(ch->nreq, ch->reqs, &done, ch->statuses));
    if (!done)
        return RB_OK;
    ch->complete = 1;
    return g->dev ? RB_OK : channel_check_counts(r, ch);
}

static int channel_wait(rb_reducer *r, gossip *g, int channel, rb_stats *st)
{
    gossip_channel *ch = &g->ch[channel];
    if (!ch->pending || ch->complete)
        return RB_OK;
    double t0 = MPI_Wtime();
    if (g->dev)
        RB_TRY(device_wait(r, g, channel));
    else
        RB_MPI(MPI_Waitall(ch->nreq, ch->reqs, ch->statuses));
    st->t_wait += MPI_Wtime() - t0;
    ch->complete = 1;
    return g->dev ? RB_OK : channel_check_counts(r, ch);
}

/* x += (y_prev - sent_prev) / 2: the correction the previous step's mix
 * makes, applied on top of whatever the caller did to x since.  Summed over
 * ranks the corrections cancel, so the global mean of x is preserved. */
static void channel_apply(rb_reducer *r, gossip_channel *ch, float *x)
{
    for (size_t i = 0; i < r->n; i++)
        x[i] += 0.5f * (ch->recv[i] - ch->sent[i]);
}

/* Complete the pending exchange (if any) and apply it to x (NULL: drop). */
static int channel_finish(rb_reducer *r, gossip *g, int channel, float *x, rb_stats *st)
{
    gossip_channel *ch = &g->ch[channel];
    if (!ch->pending)
        return RB_OK;
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(channel_wait(r, g, channel, st));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    if (x && g->dev)
        RB_TRY(device_apply(r, g, channel, x));
    else if (x)
        channel_apply(r, ch, x);
    ch->pending = 0;
    ch->complete = 0;
    ch->nreq = 0;
    return RB_OK;
}

static int channel_post(rb_reducer *r, gossip *g, int channel, const float *x,
                        gossip_route rt, rb_stats *st)
{
    gossip_channel *ch = &g->ch[channel];
    if (rt.recv_from < 0 || g->nchunks == 0)
        return RB_OK;   /* skipped step: nothing to apply next time */
    if (g->dev) {
        RB_TRY(device_post(r, g, channel, x, rt, st));
        ch->pending = 1;
        ch->complete = 0;
        return RB_OK;
    }
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    memcpy(ch->sent, x, r->n * sizeof *x);
    rb_phase_start(r, st, RB_PHASE_COMM);
    ch->pending = 1;
    ch->complete = 0;
    ch->nreq = 0;
    for (size_t c = 0; c < g->nchunks; c++) {
        size_t off = c * GOSSIP_CHUNK;
        int len = (int)chunk_len(r, c);
        RB_TRY(rb_irecv(r, st, ch->recv + off, len, MPI_FLOAT, rt.recv_from,
                        channel_tag[channel], &ch->reqs[ch->nreq++]));
        RB_TRY(rb_isend(r, st, ch->sent + off, len, MPI_FLOAT, rt.send_to,
                        channel_tag[channel], &ch->reqs[ch->nreq++]));
    }
    return RB_OK;
}

static int exchange_async(rb_reducer *r, gossip *g, int channel, float *x,
                          gossip_route rt, rb_stats *st)
{
    RB_TRY(channel_finish(r, g, channel, x, st));
    return channel_post(r, g, channel, x, rt, st);
}

/* One call of rb_reduce (CH_GRAD) or rb_mix_params (CH_PARAMS).  The step
 * counter advances once per training iteration: in rb_mix_params when
 * parameters are mixed (the last call of an iteration), else in rb_reduce. */
static int gossip_call(rb_reducer *r, int channel, float *x, rb_stats *st)
{
    gossip *g = r->impl;
    int mix = r->cfg.opts.gossip_mix;
    if (!(mix & channel_mix_bit[channel])) {
        st->skipped = 1;    /* this buffer is not mixed: untouched */
        return RB_OK;
    }
    if (!x && r->n > 0)
        return rb_fail(RB_ERR_ARG, "gossip: NULL buffer");
    gossip_route rt = route_of_step(r, g);
    st->partner = rt.recv_from;
    st->skipped = rt.recv_from < 0;
    if (r->cfg.opts.gossip_async)
        RB_TRY(exchange_async(r, g, channel, x, rt, st));
    else if (rt.recv_from >= 0)
        RB_TRY(exchange_sync(r, g, channel, x, rt, st));
    st->nnz_result = r->n;
    int advance = channel == CH_PARAMS || !(mix & RB_GOSSIP_MIX_PARAMS);
    if (advance)
        g->step++;
    return RB_OK;
}

static int gossip_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    return gossip_call(r, CH_GRAD, grad, st);
}

typedef int (*host_step)(rb_reducer *r, int channel, float *x, rb_stats *st);

/* rb_reduce stages device gradients itself; rb_mix_params and rb_flush get
 * device buffers under RB_DEVICE_CUDA and work on a host copy, unless the
 * NCCL path works on them where they are. */
static int on_host(rb_reducer *r, int channel, float *x, rb_stats *st, host_step step)
{
    gossip *g = r->impl;
    if (r->cfg.device != RB_DEVICE_CUDA || !x || r->n == 0)
        return step(r, channel, x, st);
    /* rb_reduce checks device gradients; parameters are checked here */
    RB_TRY(rb_device_check_buffer(r, x));
    if (g->dev)
        return step(r, channel, x, st);
    RB_TRY(rb_device_to_host(r, g->stage, x, r->n));
    RB_TRY(step(r, channel, g->stage, st));
    return rb_device_from_host(r, x, g->stage, r->n);
}

static int gossip_mix_params(rb_reducer *r, float *params, rb_stats *st)
{
    if (!(r->cfg.opts.gossip_mix & RB_GOSSIP_MIX_PARAMS))
        return gossip_call(r, CH_PARAMS, params, st);   /* untouched */
    return on_host(r, CH_PARAMS, params, st, gossip_call);
}

static int gossip_progress(rb_reducer *r)
{
    gossip *g = r->impl;
    for (int c = 0; c < CH_N; c++)
        RB_TRY(channel_test(r, g, c));
    return RB_OK;
}

static int finish_channel(rb_reducer *r, int channel, float *x, rb_stats *st)
{
    return channel_finish(r, r->impl, channel, x, st);
}

static int gossip_flush(rb_reducer *r, float *grad, float *params, rb_stats *st)
{
    gossip *g = r->impl;
    float *buf[CH_N] = {grad, params};
    for (int c = 0; c < CH_N; c++)
        if (g->ch[c].pending)
            RB_TRY(on_host(r, c, buf[c], st, finish_channel));
    return RB_OK;
}

static int channel_alloc(rb_reducer *r, gossip *g, gossip_channel *ch)
{
    ch->sent = rb_calloc(r->n, sizeof(float));
    ch->recv = rb_calloc(r->n, sizeof(float));
    ch->reqs = rb_calloc(2 * g->nchunks, sizeof(MPI_Request));
    ch->statuses = rb_calloc(2 * g->nchunks, sizeof(MPI_Status));
    if (!ch->sent || !ch->recv || !ch->reqs || !ch->statuses)
        return rb_fail(RB_ERR_NOMEM, "gossip: no memory for %zu-float exchange buffers", r->n);
    for (size_t i = 0; i < 2 * g->nchunks; i++)
        ch->reqs[i] = MPI_REQUEST_NULL;
    return RB_OK;
}

static void gossip_fini(rb_reducer *r)
{
    gossip *g = r->impl;   /* gossip_fini_device waited for pending device exchanges */
    for (int c = 0; c < CH_N; c++) {
        gossip_channel *ch = &g->ch[c];
        if (ch->pending && !ch->complete && ch->nreq)   /* the partner posted its half too */
            MPI_Waitall(ch->nreq, ch->reqs, MPI_STATUSES_IGNORE);
        free(ch->sent);
        free(ch->recv);
        free(ch->reqs);
        free(ch->statuses);
    }
    free(g->recv);
    free(g->stage);
    free(g->perm);
    free(g->virt);
}

/* Everything a step needs is allocated here, once. */
static int gossip_init(rb_reducer *r)
{
    gossip *g = r->impl;
    g->levels = ceil_log2(r->size);
    g->nchunks = (r->n + GOSSIP_CHUNK - 1) / GOSSIP_CHUNK;
    g->perm = calloc((size_t)r->size, sizeof *g->perm);
    g->virt = calloc((size_t)r->size, sizeof *g->virt);
    if (!g->perm || !g->virt)
        return rb_fail(RB_ERR_NOMEM, "gossip: no memory");
    draw_permutation(g->perm, r->size, r->cfg.opts.seed, 0);
    for (int v = 0; v < r->size; v++)
        g->virt[g->perm[v]] = v;
    g->perm_epoch = 0;
    if (rb_device_direct(r))
        return RB_OK;   /* the buffers are on the device: gossip_init_device */
    if (r->cfg.device == RB_DEVICE_CUDA && !(g->stage = rb_calloc(r->n, sizeof(float))))
        return rb_fail(RB_ERR_NOMEM, "gossip: no memory for a %zu-float host copy", r->n);
    if (!r->cfg.opts.gossip_async) {
        g->recv = rb_calloc(r->n, sizeof(float));
        return g->recv ? RB_OK : rb_fail(RB_ERR_NOMEM, "gossip: no memory for %zu floats", r->n);
    }
    for (int c = 0; c < CH_N; c++)
        if (r->cfg.opts.gossip_mix & channel_mix_bit[c])
            RB_TRY(channel_alloc(r, g, &g->ch[c]));
    return RB_OK;
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
#include "reducer_cuda.h"

#include <cuda_runtime_api.h>

/* The NCCL path: ncclSend/ncclRecv between partners, the mixes as kernels
 * rounded like the host loops.  Synchronous steps run on the library's
 * stream.  Asynchronous steps copy x to the channel's `sent` buffer (done
 * before the call returns, so the caller may change x), post the exchange
 * on a stream of their own and record an event after it; rb_progress
 * queries the event, the next call waits for it and applies the mix.  Both
 * channels post on that one stream, in the same order on every rank, so
 * NCCL sees the same sequence of operations everywhere. */
typedef struct gossip_device {
    float *recv;                    /* synchronous: the partner's values */
    float *sent[CH_N], *chrecv[CH_N];
    size_t recv_cap, sent_cap[CH_N], chrecv_cap[CH_N];
    cudaStream_t comm;              /* asynchronous exchanges */
    cudaEvent_t done[CH_N];
    int have_comm, have_event[CH_N];
} gossip_device;

static int gossip_init_device(rb_reducer *r)
{
    gossip *g = r->impl;
    gossip_device *d = g->dev = calloc(1, sizeof *g->dev);
    if (!d)
        return rb_fail(RB_ERR_NOMEM, "gossip: no memory");
    size_t bytes = r->n * sizeof(float);
    if (!r->cfg.opts.gossip_async)
        return rb_device_reserve((void **)&d->recv, &d->recv_cap, bytes);
    RB_DEV(cudaStreamCreateWithFlags(&d->comm, cudaStreamNonBlocking));
    d->have_comm = 1;
    for (int c = 0; c < CH_N; c++) {
        if (!(r->cfg.opts.gossip_mix & channel_mix_bit[c]))
            continue;
        RB_TRY(rb_device_reserve((void **)&d->sent[c], &d->sent_cap[c], bytes));
        RB_TRY(rb_device_reserve((void **)&d->chrecv[c], &d->chrecv_cap[c], bytes));
        RB_DEV(cudaEventCreateWithFlags(&d->done[c], cudaEventDisableTiming));
        d->have_event[c] = 1;
    }
    return RB_OK;
}

static void gossip_fini_device(rb_reducer *r)
{
    gossip *g = r->impl;
    gossip_device *d = g->dev;
    if (!d)
        return;
    if (d->have_comm)   /* a pending exchange: the partner posted its half too */
        cudaStreamSynchronize(d->comm);
    for (int c = 0; c < CH_N; c++) {
        if (d->have_event[c])
            cudaEventDestroy(d->done[c]);
        rb_device_release((void **)&d->sent[c], &d->sent_cap[c]);
        rb_device_release((void **)&d->chrecv[c], &d->chrecv_cap[c]);
    }
    if (d->have_comm)
        cudaStreamDestroy(d->comm);
    rb_device_release((void **)&d->recv, &d->recv_cap);
    free(d);
    g->dev = NULL;
}

static int device_exchange_sync(rb_reducer *r, gossip *g, float *x, gossip_route rt,
                                rb_stats *st)
{
    gossip_device *d = g->dev;
    if (r->n == 0)
        return RB_OK;
    rb_phase_start(r, st, RB_PHASE_COMM);
    double t0 = MPI_Wtime();
    RB_TRY(rb_device_sendrecv(r, st, x, rt.send_to, d->recv, rt.recv_from, r->n));
    st->t_wait += MPI_Wtime() - t0;
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_DEV(rbk_average(x, d->recv, r->n, (cudaStream_t)rb_device_stream(r)));
    return rb_device_sync(r);
}

static int device_post(rb_reducer *r, gossip *g, int channel, const float *x, gossip_route rt,
                       rb_stats *st)
{
    gossip_device *d = g->dev;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    cudaStream_t lib = (cudaStream_t)rb_device_stream(r);
    RB_DEV(cudaMemcpyAsync(d->sent[channel], x, r->n * sizeof(float), cudaMemcpyDeviceToDevice,
                           lib));
    RB_TRY(rb_device_sync(r));
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_post_sendrecv(r, st, d->sent[channel], rt.send_to, d->chrecv[channel],
                                   rt.recv_from, r->n, d->comm));
    RB_DEV(cudaEventRecord(d->done[channel], d->comm));
    return RB_OK;
}

static int device_test(rb_reducer *r, gossip *g, int channel, int *done)
{
    return rb_device_event_done(r, g->dev->done[channel], done);
}

static int device_wait(rb_reducer *r, gossip *g, int channel)
{
    return rb_device_event_wait(r, g->dev->done[channel]);
}

static int device_apply(rb_reducer *r, gossip *g, int channel, float *x)
{
    gossip_device *d = g->dev;
    RB_DEV(rbk_add_half_difference(x, d->chrecv[channel], d->sent[channel], r->n,
                                   (cudaStream_t)rb_device_stream(r)));
    return rb_device_sync(r);
}
#else
/* No NCCL: g->dev stays NULL, so none of these is reached. */
static int device_exchange_sync(rb_reducer *r, gossip *g, float *x, gossip_route rt,
                                rb_stats *st)
{
    (void)r, (void)g, (void)x, (void)rt, (void)st;
    return RB_ERR_UNSUPPORTED;
}
static int device_post(rb_reducer *r, gossip *g, int channel, const float *x, gossip_route rt,
                       rb_stats *st)
{
    (void)r, (void)g, (void)channel, (void)x, (void)rt, (void)st;
    return RB_ERR_UNSUPPORTED;
}
static int device_test(rb_reducer *r, gossip *g, int channel, int *done)
{
    (void)r, (void)g, (void)channel, (void)done;
    return RB_ERR_UNSUPPORTED;
}
static int device_wait(rb_reducer *r, gossip *g, int channel)
{
    (void)r, (void)g, (void)channel;
    return RB_ERR_UNSUPPORTED;
}
static int device_apply(rb_reducer *r, gossip *g, int channel, float *x)
{
    (void)r, (void)g, (void)channel, (void)x;
    return RB_ERR_UNSUPPORTED;
}
#endif

/* Cost model (docs/cost-model.md): one exchange of the 4n-byte buffer
 * with the partner and the mix; under the hypercube schedule on p not a
 * power of two, some ranks have no partner at some steps: bytes_sent is
 * the mean over ranks and over the ceil(log2 p) steps of a cycle. */
static double model_partnered(const rb_model_input *in)
{
    int p = in->ranks, levels = rb_model_log2(p);
    if (levels == 0)
        return 0;
    if (in->opts.gossip_schedule == RB_GOSSIP_DISSEMINATION)
        return 1;
    double with = 0;
    for (int k = 0; k < levels; k++)
        for (int v = 0; v < p; v++)
            with += (v ^ (1 << k)) < p;
    return with / ((double)levels * p);
}

static void gossip_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), f = model_partnered(in);
    if (!(in->opts.gossip_mix & RB_GOSSIP_MIX_GRAD) || f == 0)
        return;
    rb_model_p2p(in, out, 1, f * 4 * n, 4 * n);
    rb_model_local(in, out, (in->opts.gossip_async ? 20 : 12) * n);
}

/* Between steps: the step (the partner schedule follows it) and the
 * relabelling drawn for its rotation epoch.  An asynchronous exchange in
 * flight is not state that bytes can hold (the partner's half is on the
 * wire): refused until rb_flush. */
static int gossip_state(rb_reducer *r, struct rb_state_io *io)
{
    gossip *g = r->impl;
    for (int c = 0; c < CH_N; c++)
        if (g->ch[c].pending)
            return rb_fail(RB_ERR_STATE, "gossip: an asynchronous exchange is in flight "
                           "(gossip_async=1); its state can be taken only after rb_flush");
    size_t ints = g->perm ? (size_t)r->size * sizeof(int) : 0;
    RB_TRY(rb_state_field(io, "step", &g->step, sizeof g->step));
    RB_TRY(rb_state_field(io, "perm_epoch", &g->perm_epoch, sizeof g->perm_epoch));
    RB_TRY(rb_state_field(io, "perm", g->perm, ints));
    return rb_state_field(io, "virt", g->virt, ints);
}

/* Memory bound: the partner's values, and the values posted when async. */
static double gossip_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)k, (void)p;
    return 4.0 * n * (o->gossip_async ? 2 : 1);
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_schedule = {
    "gossip_schedule", RB_OPT_ENUM, "hypercube|dissemination", "partner schedule",
    RB_OPTION_FIELD(gossip_schedule), 0, 1, RB_GOSSIP_HYPERCUBE, 0};
static const rb_option_def opt_rotate = {
    "gossip_rotate", RB_OPT_BOOL, NULL,
    "relabel ranks by a seeded permutation every ceil(log2 p) steps",
    RB_OPTION_FIELD(gossip_rotate), 0, 1, 1, 0};
static const rb_option_def opt_mix = {
    "gossip_mix", RB_OPT_ENUM, "|grad|params|both",
    "what is mixed with the partner: grad (in rb_reduce), params (in rb_mix_params: rb_train only), both",
    RB_OPTION_FIELD(gossip_mix), 1, 3, RB_GOSSIP_MIX_GRAD, 0};
static const rb_option_def opt_async = {
    "gossip_async", RB_OPT_BOOL, NULL,
    "post the exchange and apply it at the next call (one step stale)",
    RB_OPTION_FIELD(gossip_async), 0, 1, 0, 0};
static const rb_option_def *const gossip_options[] = {
    &opt_schedule, &opt_rotate, &opt_mix, &opt_async, &rb_opt_seed, NULL};

const rb_reducer_ops rb_gossip_ops = {
    .name = "gossip",
    .options = gossip_options,
    .description = "GossipGraD: one partner per step (hypercube / dissemination), rotation",
    .traits = RB_TRAIT_GOSSIP,
    .state_size = sizeof(gossip),
    .state_bytes = gossip_state_bytes,
    .init = gossip_init,
    .init_device = RB_NCCL_OP(gossip_init_device),
    .reduce = gossip_reduce,
    .reduce_device = RB_NCCL_OP(gossip_reduce),
    .mix_params = gossip_mix_params,
    .progress = gossip_progress,
    .flush = gossip_flush,
    .fini_device = RB_NCCL_OP(gossip_fini_device),
    .fini = gossip_fini,
    .state = gossip_state,
    .model = gossip_model,
};
