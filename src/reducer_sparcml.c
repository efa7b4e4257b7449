/* sparcml: SparCML sparse allreduce (Renggli et al., SC'19), two variants.
 *
 * recdbl  Recursive doubling over index-sorted sparse streams: at stage s
 *         rank r swaps its stream with r ^ 2^s and merge-sums.  A stream
 *         whose sparse bytes (8 per pair) exceed sparcml_switch x the dense
 *         bytes (4n) is turned dense and stays dense; a dense stream meeting
 *         a sparse one adds the pairs into itself.  Non-power-of-two p: the
 *         p - p2 ranks above the largest power of two p2 first send their
 *         stream to rank - p2 and get the result back at the end.
 * rsag    Reduce-scatter + allgather: the index space is split into p
 *         contiguous ranges; each rank sends each range's pairs straight to
 *         its owner (one alltoallv), owners merge-sum the p streams, then the
 *         reduced ranges are allgathered, sparse when 8 x their total pairs
 *         is at most sparcml_switch x 4n bytes, else dense.
 * auto    One allreduce(MAX) of the local nnz k gives density d = k/n.
 *         If the stream after the first stage, estimated for independent
 *         supports as n(1 - (1-d)^2), would already go dense, all stages are
 *         dense: one dense allreduce of the buffer (SparCML's dense switch
 *         at stage 0; recursive doubling dense would send log2(p) x 4n bytes
 *         against the ring's 2(p-1)/p x 4n).  Otherwise rsag for p >= 16 and
 *         recdbl below (recdbl's log p latency wins at small p; its bytes
 *         sum_s k_s only approach rsag's ~2k(p-1)/p for disjoint supports),
 *         and recdbl whenever n > INT_MAX (rsag uses int counts).
 *
 * Every stage combines the same two partial sums on both partners (float
 * addition commutes), so all ranks end with bit-identical results.
 * Wire bytes: docs/wire-bytes.md.  Device buffers under transport=nccl
 * stay on the GPU (sparcml_reduce_device: the same algorithms, messages
 * and bytes). */
#include "reducer_sparcml.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_HEAD = 7301, TAG_DATA = 7302 };
/* Elements per point-to-point message; larger streams go in chunks. */
#define CHUNK_ELEMS ((size_t)1 << 28)

static void sparcml_fini(rb_reducer *r)
{
    sparcml_state *s = r->impl;
    free(s->a);
    free(s->b);
    free(s->c);
    free(s->dense_in);
    rb_exchange_free(&s->x);
    free(s->nnz_of);
}

static int sparcml_init(rb_reducer *r)
{
    sparcml_state *s = r->impl;
    s->p2 = 1;
    while (s->p2 * 2 <= r->size)
        s->p2 *= 2;
    size_t p = (size_t)r->size;
    RB_TRY(rb_exchange_init(&s->x, p, "sparcml"));
    s->nnz_of = rb_calloc(p, sizeof(uint64_t));
    if (!s->nnz_of)
        return rb_fail(RB_ERR_NOMEM, "sparcml: no memory for %zu ranks", p);
    return RB_OK;
}

void sparcml_swap_pairs(rb_pair **x, size_t *xc, rb_pair **y, size_t *yc)
{
    rb_pair *t = *x;
    size_t tc = *xc;
    *x = *y, *xc = *yc;
    *y = t, *yc = tc;
}

/* Sendrecv of element counts that may exceed INT_MAX, in chunks; either
 * side may be MPI_PROC_NULL.  Both partners know both counts. */
static int xchg(rb_reducer *r, rb_stats *st, const void *sbuf, size_t scount, int dest,
                void *rbuf, size_t rcount, int src, MPI_Datatype type, size_t esize)
{
    size_t most = scount > rcount ? scount : rcount;
    size_t off = 0;
    do {
        size_t sl = scount > off ? scount - off : 0, rl = rcount > off ? rcount - off : 0;
        sl = sl < CHUNK_ELEMS ? sl : CHUNK_ELEMS;
        rl = rl < CHUNK_ELEMS ? rl : CHUNK_ELEMS;
        RB_TRY(rb_sendrecv(r, st, (const char *)sbuf + off * esize, (int)sl, type, dest,
                           (char *)rbuf + off * esize, (int)rl, type, src, TAG_DATA, NULL));
        off += CHUNK_ELEMS;
    } while (off < most);
    return RB_OK;
}

int sparcml_too_big(const rb_reducer *r, size_t k)
{
    return 8.0 * (double)k > r->cfg.opts.sparcml_switch * 4.0 * (double)r->n;
}

/* rb_reduce_rows: grad, a scratch buffer, gets this rank's rows the first
 * time the stream goes dense, so what follows is the dense path's. */
static int host_materialize(rb_reducer *r, float *grad)
{
    sparcml_state *s = r->impl;
    if (s->rows_pending) {
        rb_rows_to_dense(s->rows_call->in, grad, r->cfg.rows);
        s->rows_pending = 0;
    }
    return RB_OK;
}

/* grad holds this rank's input, whose support lies within the stream's,
 * so setting the stream's pairs makes grad the dense partial sum. */
static void go_dense(rb_reducer *r, float *grad, sparcml_stream *m)
{
    sparcml_state *s = r->impl;
    if (!m->dense) {
        host_materialize(r, grad);
        rb_scatter_set(grad, 0, s->a, m->k);
    }
    m->dense = 1;
}

/* Add a partner's stream (dense in s->dense_in or sparse in s->b) to m. */
int sparcml_combine(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t their_head)
{
    sparcml_state *s = r->impl;
    if (their_head == DENSE_MARK) {
        go_dense(r, grad, m);
        for (size_t i = 0; i < r->n; i++)
            grad[i] += s->dense_in[i];
    } else if (m->dense) {
        rb_scatter_add(grad, 0, s->b, (size_t)their_head);
    } else {
        RB_TRY(rb_grow_pairs(&s->c, &s->cap_c, m->k + (size_t)their_head));
        m->k = rb_merge_sum(s->a, m->k, s->b, (size_t)their_head, s->c);
        sparcml_swap_pairs(&s->a, &s->cap_a, &s->c, &s->cap_c);
        if (sparcml_too_big(r, m->k))
            go_dense(r, grad, m);
    }
    return RB_OK;
}

/* Send m to dest and/or receive a stream from src (MPI_PROC_NULL to skip
 * either); returns the received header in *their_head. */
int sparcml_swap_streams(rb_reducer *r, rb_stats *st, float *grad, const sparcml_stream *m,
                        int dest, int src, uint64_t *their_head)
{
    sparcml_state *s = r->impl;
    uint64_t head = m->dense ? DENSE_MARK : m->k;
    *their_head = 0;
    RB_TRY(rb_sendrecv(r, st, &head, 1, MPI_UINT64_T, dest, their_head, 1, MPI_UINT64_T,
                       src, TAG_HEAD, NULL));
    if (src == MPI_PROC_NULL)
        *their_head = 0;
    if (dest != MPI_PROC_NULL && m->dense)
        st->dense_stages++;
    if (*their_head == DENSE_MARK) {
        void *b = s->dense_in;
        RB_TRY(rb_reserve(&b, &s->cap_dense, r->n, sizeof(float)));
        s->dense_in = b;
    } else {
        RB_TRY(rb_grow_pairs(&s->b, &s->cap_b, (size_t)*their_head));
    }
    const void *sbuf = m->dense ? (const void *)grad : (const void *)s->a;
    size_t scount = dest == MPI_PROC_NULL ? 0 : m->dense ? r->n : m->k;
    MPI_Datatype stype = m->dense ? MPI_FLOAT : MPI_UINT64_T;
    void *rbuf = *their_head == DENSE_MARK ? (void *)s->dense_in : (void *)s->b;
    size_t rcount = *their_head == DENSE_MARK ? r->n : (size_t)*their_head;
    MPI_Datatype rtype = *their_head == DENSE_MARK ? MPI_FLOAT : MPI_UINT64_T;
    if (stype == rtype || dest == MPI_PROC_NULL || src == MPI_PROC_NULL) {
        MPI_Datatype t = dest == MPI_PROC_NULL ? rtype : stype;
        return xchg(r, st, sbuf, scount, dest, rbuf, src == MPI_PROC_NULL ? 0 : rcount, src,
                    t, t == MPI_FLOAT ? sizeof(float) : sizeof(rb_pair));
    }
    /* One side dense, the other sparse: two one-way transfers, ordered by
     * rank so the pair cannot deadlock. */
    size_t ssz = stype == MPI_FLOAT ? sizeof(float) : sizeof(rb_pair);
    size_t rsz = rtype == MPI_FLOAT ? sizeof(float) : sizeof(rb_pair);
    if (r->rank < dest) {
        RB_TRY(xchg(r, st, sbuf, scount, dest, NULL, 0, MPI_PROC_NULL, stype, ssz));
        return xchg(r, st, NULL, 0, MPI_PROC_NULL, rbuf, rcount, src, rtype, rsz);
    }
    RB_TRY(xchg(r, st, NULL, 0, MPI_PROC_NULL, rbuf, rcount, src, rtype, rsz));
    return xchg(r, st, sbuf, scount, dest, NULL, 0, MPI_PROC_NULL, stype, ssz);
}

/* A folded rank adopts the result it received (header head): the dense
 * sum, or the pairs (whose support contains this rank's support). */
int sparcml_adopt_result(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t head)
{
    sparcml_state *s = r->impl;
    if (head == DENSE_MARK) {
        memcpy(grad, s->dense_in, r->n * sizeof(float));
        m->dense = 1;
        return RB_OK;
    }
    sparcml_swap_pairs(&s->a, &s->cap_a, &s->b, &s->cap_b);
    m->k = (size_t)head;
    m->dense = 0;
    return RB_OK;
}

int sparcml_recdbl(rb_reducer *r, rb_stats *st, float *grad, sparcml_stream *m,
                  const sparcml_backend *ops)
{
    sparcml_state *s = r->impl;
    int rank = r->rank, extra = r->size - s->p2;
    uint64_t head;
    if (rank >= s->p2) {           /* folded rank: hand over, wait for the result */
        RB_TRY(ops->swap(r, st, grad, m, rank - s->p2, MPI_PROC_NULL, &head));
        sparcml_stream none = {0, 0};
        RB_TRY(ops->swap(r, st, grad, &none, MPI_PROC_NULL, rank - s->p2, &head));
        return ops->adopt(r, grad, m, head);
    }
    if (rank < extra) {
        RB_TRY(ops->swap(r, st, grad, m, MPI_PROC_NULL, rank + s->p2, &head));
        RB_TRY(ops->combine(r, grad, m, head));
    }
    for (int mask = 1; mask < s->p2; mask <<= 1) {
        int partner = rank ^ mask;
        RB_TRY(ops->swap(r, st, grad, m, partner, partner, &head));
        RB_TRY(ops->combine(r, grad, m, head));
    }
    if (rank < extra)
        RB_TRY(ops->swap(r, st, grad, m, rank + s->p2, MPI_PROC_NULL, &head));
    return RB_OK;
}

size_t sparcml_range_lo(size_t n, int p, int i)
{
    return (size_t)((uint64_t)n * (uint64_t)i / (uint64_t)p);
}

/* Where rank i's range starts. */
static uint64_t range_first_index(const void *ctx, int i)
{
    const rb_reducer *r = ctx;
    return sparcml_range_lo(r->n, r->size, i);
}

/* Reduce-scatter (direct alltoallv to range owners) + allgather. */
int sparcml_rsag(rb_reducer *r, rb_stats *st, float *grad, sparcml_stream *m)
{
    sparcml_state *s = r->impl;
    int p = r->size;
    if (r->n > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED,
                       "sparcml rsag: %zu elements exceed INT_MAX; use sparcml_algo=recdbl", r->n);
    size_t total = 0;
    rb_exchange_split(&s->x, p, s->a, m->k, range_first_index, r);
    RB_TRY(rb_exchange_counts(r, st, &s->x, &total));
    RB_TRY(rb_grow_pairs(&s->b, &s->cap_b, total));
    RB_TRY(rb_grow_pairs(&s->c, &s->cap_c, total));
    RB_TRY(rb_alltoallv(r, st, s->a, s->x.scounts, s->x.sdispls, MPI_UINT64_T,
                        s->b, s->x.rcounts, s->x.rdispls));
    rb_pair *red = NULL;
    uint64_t kr = rb_merge_sum_many(s->b, s->x.offs, (size_t)p, s->c, &red);
    RB_TRY(rb_allgather(r, st, &kr, 1, MPI_UINT64_T, s->nnz_of));
    uint64_t all = 0;
    for (int i = 0; i < p; i++)
        all += s->nnz_of[i];
    size_t lo = sparcml_range_lo(r->n, p, r->rank), hi = sparcml_range_lo(r->n, p, r->rank + 1);
    if (sparcml_too_big(r, (size_t)all)) {    /* dense allgather of the ranges */
        memset(grad + lo, 0, (hi - lo) * sizeof(float));
        rb_scatter_set(grad, 0, red, (size_t)kr);
        for (int i = 0; i < p; i++) {
            s->x.rcounts[i] = (int)(sparcml_range_lo(r->n, p, i + 1) - sparcml_range_lo(r->n, p, i));
            s->x.rdispls[i] = (int)sparcml_range_lo(r->n, p, i);
        }
        st->dense_stages = 1;
        m->dense = 1;
        return rb_allgatherv(r, st, MPI_IN_PLACE, (int)(hi - lo), MPI_FLOAT, grad,
                             s->x.rcounts, s->x.rdispls);
    }
    RB_TRY(rb_grow_pairs(&s->a, &s->cap_a, (size_t)all));
    /* red lies in b or c, never in a: safe to gather into a. */
    for (int i = 0, off = 0; i < p; i++) {
        s->x.rcounts[i] = (int)s->nnz_of[i];
        s->x.rdispls[i] = off;
        off += s->x.rcounts[i];
    }
    m->k = (size_t)all;
    return rb_allgatherv(r, st, red, (int)kr, MPI_UINT64_T, s->a, s->x.rcounts, s->x.rdispls);
}

/* The algorithm in *algo; the return value is a status (RB_OK or the
 * failure of the collective that agrees on the largest count). */
int sparcml_choose_algo(rb_reducer *r, rb_stats *st, size_t k, int *algo, int *dense_all)
{
    *dense_all = 0;
    *algo = r->cfg.opts.sparcml_algo;
    if (*algo != RB_SPARCML_AUTO)
        return RB_OK;
    uint64_t kmax = k;
    RB_TRY(rb_allreduce(r, st, NULL, &kmax, 1, MPI_UINT64_T, MPI_MAX));
    double d = r->n ? (double)kmax / (double)r->n : 0.0;
    double after_first = (double)r->n * (1.0 - (1.0 - d) * (1.0 - d));
    *dense_all = sparcml_too_big(r, (size_t)after_first);
    *algo = !*dense_all && r->size >= 16 && r->n <= (size_t)INT_MAX ? RB_SPARCML_RSAG
                                                                   : RB_SPARCML_RECDBL;
    return RB_OK;
}

/* Everything after the count of the local non-zeros (k): the stream is
 * packed (b->pack) only where it is sent sparse. */
int sparcml_run(rb_reducer *r, float *grad, rb_stats *st, size_t k,
                       const sparcml_backend *b)
{
    sparcml_stream m = {k, 0};
    st->nnz_local = k;
    rb_phase_start(r, st, RB_PHASE_COMM);
    int algo = RB_SPARCML_RECDBL, dense_all = 0;
    RB_TRY(sparcml_choose_algo(r, st, m.k, &algo, &dense_all));
    if (dense_all) {
        if (b->materialize)
            RB_TRY(b->materialize(r, grad));
        RB_TRY(b->dense_allreduce(r, st, grad));
        int stages = 0;
        while ((1 << stages) < r->size)
            stages++;
        st->dense_stages = stages;
        m.dense = 1;
    } else {
        if (algo == RB_SPARCML_RECDBL && sparcml_too_big(r, m.k)) {
            m.dense = 1;    /* grad is (made) this stream's dense form */
            if (b->materialize)
                RB_TRY(b->materialize(r, grad));
        } else {
            rb_phase_start(r, st, RB_PHASE_ENCODE);
            RB_TRY(b->pack(r, grad, m.k));
            rb_phase_start(r, st, RB_PHASE_COMM);
        }
        if (algo == RB_SPARCML_RSAG)
            RB_TRY(b->rsag(r, st, grad, &m));
        else
            RB_TRY(sparcml_recdbl(r, st, grad, &m, b));
    }
    rb_phase_start(r, st, RB_PHASE_DECODE);
    st->nnz_result = m.dense ? r->n : m.k;
    return b->decode(r, grad, &m);
}

static int host_dense_allreduce(rb_reducer *r, rb_stats *st, float *grad)
{
    return rb_allreduce_floats(r, st, grad, r->n);
}

/* The pairs are packed by the entry points below, in the pass that counts
 * them; only if pairs_limit guessed wrong are they packed here. */
static int host_pack(rb_reducer *r, const float *grad, size_t k)
{
    sparcml_state *s = r->impl;
    if (s->packed)
        return RB_OK;
    RB_TRY(rb_grow_pairs(&s->a, &s->cap_a, k));
    rb_pack_nonzero(grad, r->n, 0, s->a, s->cap_a / sizeof *s->a);
    return RB_OK;
}

/* grad = the sum / p, or for rb_reduce_rows the sum / p in row form (a
 * dense sum is scaled in grad and handed over as it is). */
static int host_decode(rb_reducer *r, float *grad, const sparcml_stream *m)
{
    sparcml_state *s = r->impl;
    float inv_p = 1.0f / (float)r->size;
    if (m->dense) {
        rb_scale(grad, r->n, inv_p);
        if (s->rows_call)
            s->rows_call->dense_result = grad;
    } else if (s->rows_call) {
        return rb_rowset_from_pairs(s->rows_call->rows, r->cfg.cols, s->a, m->k, inv_p);
    } else {
        rb_scatter_set_scaled(grad, 0, s->a, m->k, inv_p);
    }
    return RB_OK;
}

static const sparcml_backend host_backend = {
    sparcml_swap_streams, sparcml_combine, sparcml_adopt_result, sparcml_rsag, host_dense_allreduce, host_pack, host_decode,
    host_materialize,
};

/* The most local pairs a call can send sparse (choose_algo's rules): with
 * more the stream is dense from the start, so the scan only counts them. */
static size_t pairs_limit(const rb_reducer *r)
{
    double sw = r->cfg.opts.sparcml_switch, n = (double)r->n, most;
    if (r->size == 1)
        return 0;
    if (r->cfg.opts.sparcml_algo == RB_SPARCML_RSAG)
        return SIZE_MAX;
    if (r->cfg.opts.sparcml_algo == RB_SPARCML_RECDBL)
        most = sw * n / 2;   /* too_big beyond */
    else   /* auto: all dense once n(1 - (1 - k/n)^2) > sw n / 2 */
        most = sw >= 2 ? n : n * (1 - sqrt(1 - sw / 2));
    return most >= n ? SIZE_MAX : (size_t)most + 1;
}

static int sparcml_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    sparcml_state *s = r->impl;
    size_t k = 0;
    if (r->size == 1)
        return RB_OK;   /* the average of one: no count needed */
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_upto(grad, r->n, pairs_limit(r), &s->a, &s->cap_a, &k));
    s->packed = k <= pairs_limit(r);
    int rc = sparcml_run(r, grad, st, k, &host_backend);
    s->packed = 0;
    return rc;
}

/* Rows: the pairs packed from the rows; grad is a scratch buffer that
 * receives the rows only where the stream goes dense (host_materialize). */
static int sparcml_reduce_rows(rb_reducer *r, rb_rows_call *c, rb_stats *st)
{
    sparcml_state *s = r->impl;
    if (r->size == 1)   /* the average of one: the rows as they are */
        return rb_reduce_rows_generic(r, c, st);
    float *grad = NULL;
    size_t k = 0;
    RB_TRY(rb_rows_scratch(r, &grad));
    if (c->dense)
        grad = c->dense;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_rows_pack_grow(c->in, &s->a, &s->cap_a, &k));
    s->packed = 1;
    s->rows_call = c;
    s->rows_pending = 1;
    int rc = sparcml_run(r, grad, st, k, &host_backend);
    if (rc == RB_OK && r->size == 1)   /* sparcml_run has nothing to do */
        rc = rb_rowset_from_pairs(c->rows, r->cfg.cols, s->a, k, 1.0f);
    s->packed = 0;
    s->rows_call = NULL;
    s->rows_pending = 0;
    return rc;
}

/* Cost model (docs/cost-model.md).  Streams grow as the union of the
 * ranks merged so far (rb_model_union); a stream goes dense as in
 * too_big(). */
static int model_too_big(const rb_model_input *in, double pairs)
{
    return 8 * pairs > in->opts.sparcml_switch * 4 * rb_model_elements(in);
}

/* One exchange of an 8-byte header and a stream of bytes; the ranks
 * exchanging are `share` of all ranks. */
static void model_swap(const rb_model_input *in, rb_model_result *out, double bytes,
                       double share)
{
    rb_model_p2p(in, out, 2, share * (8 + bytes), 8 + bytes);
}

static void sparcml_model_recdbl(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean;
    int p2 = 1;
    while (p2 * 2 <= in->ranks)
        p2 *= 2;
    double extra = p - p2, merged = p / p2;   /* ranks in a stream after the fold */
    int dense = model_too_big(in, k);
    if (!dense)
        rb_model_local(in, out, 8 * in->nnz_max);
    if (extra > 0)
        model_swap(in, out, dense ? 4 * n : 8 * k, extra / p);
    for (int s = 1; s < p2; s *= 2, merged *= 2) {
        double u = rb_model_union(in, merged), next = rb_model_union(in, 2 * merged);
        model_swap(in, out, dense ? 4 * n : 8 * u, p2 / p);
        rb_model_local(in, out, dense ? 12 * n : 8 * (2 * u + next));
        dense = dense || model_too_big(in, next);
    }
    double final = dense ? 4 * n : 8 * in->nnz_union;
    if (extra > 0)
        model_swap(in, out, final, extra / p);
    rb_model_local(in, out, dense ? 8 * n : 12 * in->nnz_union);
}

static void sparcml_model_rsag(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean, u = in->nnz_union;
    double leave = (p - 1) / p;
    rb_model_local(in, out, 8 * in->nnz_max);
    rb_model_alltoall(in, out, 4);
    rb_model_alltoallv(in, out, 8 * k * leave, 8 * in->nnz_max * leave);
    rb_model_local(in, out, 16 * k * rb_model_log2(in->ranks));
    rb_model_allgather(in, out, 8);
    if (model_too_big(in, u)) {
        rb_model_allgatherv(in, out, 4 * n);
        rb_model_local(in, out, 8 * n);
    } else {
        rb_model_allgatherv(in, out, 8 * u);
        rb_model_local(in, out, 12 * u);
    }
}

static void sparcml_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), d = n > 0 ? in->nnz_max / n : 0;
    if (in->ranks == 1)
        return;   /* the average of one: nothing to do */
    rb_model_local(in, out, 4 * n);   /* the scan that packs the non-zeros */
    int algo = in->opts.sparcml_algo;
    if (algo == RB_SPARCML_AUTO) {    /* choose_algo() */
        rb_model_allreduce(in, out, 8);
        if (model_too_big(in, n * (1 - (1 - d) * (1 - d)))) {
            rb_model_allreduce(in, out, 4 * n);
            rb_model_local(in, out, 8 * n);
            return;
        }
        algo = in->ranks >= 16 && n <= INT_MAX ? RB_SPARCML_RSAG : RB_SPARCML_RECDBL;
    }
    if (algo == RB_SPARCML_RSAG)
        sparcml_model_rsag(in, out);
    else
        sparcml_model_recdbl(in, out);
}

static double pairs_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)o;
    return rb_state_bytes_pairs(n, k, p);
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_algo = {
    "sparcml_algo", RB_OPT_ENUM, "auto|recdbl|rsag",
    "recursive doubling (recdbl), reduce-scatter + allgather (rsag), or auto by size and ranks",
    RB_OPTION_FIELD(sparcml_algo), 0, 2, RB_SPARCML_AUTO, 0};
static const rb_option_def opt_switch = {
    "sparcml_switch", RB_OPT_DOUBLE, NULL,
    "send a stream dense once its sparse bytes exceed this fraction of the dense bytes",
    RB_OPTION_FIELD(sparcml_switch), 0.0, 1e9, 1.0, 0};
static const rb_option_def *const sparcml_options[] = {&opt_algo, &opt_switch, NULL};

const rb_reducer_ops rb_sparcml_ops = {
    .name = "sparcml",
    .options = sparcml_options,
    .description = "SparCML sparse allreduce (recursive doubling or reduce-scatter/allgather, dense switch)",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(sparcml_state),
    .state_bytes = pairs_state_bytes,
    .init = sparcml_init,
    .init_device = RB_NCCL_OP(sparcml_init_device),
    .reduce = sparcml_reduce,
    .reduce_device = RB_NCCL_OP(sparcml_reduce_device),
    .reduce_rows = sparcml_reduce_rows,
    .fini_device = RB_NCCL_OP(sparcml_fini_device),
    .fini = sparcml_fini,
    .model = sparcml_model,
};
