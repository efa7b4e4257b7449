/* oktopk: the sparse allreduce of Ok-Topk (Li & Hoefler, PPoPP'22), exact:
 * its split-and-reduce and allgatherv of given sparse inputs, without the
 * top-k threshold selection (which makes Ok-Topk lossy by design).
 *
 *   encode  pack the local non-zeros (index order); every
 *           oktopk_repartition calls, re-estimate the region boundaries
 *           (below); split the pairs by region
 *   comm    alltoall of the per-region counts (int), then p - 1 steps of
 *           point-to-point exchange with rotating partners (step s: send
 *           to rank + s, receive from rank - s), posted oktopk_throttle
 *           steps at a time (Ok-Topk: 4): each batch is summed into this
 *           rank's region while the next one is in flight (as Ok-Topk
 *           overlaps them);
 *           empty messages are skipped (both sides know the counts).  Then
 *           an allgather of the reduced counts (int) and an allgatherv of
 *           the reduced regions (pairs, index order)
 *   decode  set the union's pairs, scaled by 1/p, into the gradient
 *
 * Regions.  Rank i owns [bound[i], bound[i+1]).  oktopk_balance=off: even
 * ranges of the index space.  on: regions holding similar non-zero counts,
 * estimated as Ok-Topk does, from each rank's local quantiles: rank r
 * proposes boundary j at the index of its non-zero number j k_r / p, and the
 * boundaries are the mean of the proposals (one allreduce of p - 1 values).
 * Unlike Ok-Topk's plain mean, the mean is weighted by k_r, so ranks without
 * non-zeros do not pull the boundaries to 0 and a rank holding most of the
 * non-zeros decides most.  The sums are integers (exact in an allreduce, so
 * every rank computes the same boundaries); the weighted products are split
 * into 16-bit halves so they fit 64 bits for up to 2^16 ranks (beyond that:
 * even ranges).  Ok-Topk re-estimates every 64 iterations; a reducer object
 * persists across calls, so the boundaries of one estimate are reused for
 * the next oktopk_repartition - 1 calls (they only move load, never change
 * the result).
 *
 * The reduction is into a dense accumulator over the owned region, with a
 * bitmap of the touched entries: its pairs come out in index order, and
 * sums that cancel to zero stay in the support (as in rb_merge_sum), so the
 * union contains every rank's local support and the decode may just set.
 *
 * Ok-Topk's code has a data-balancing step before the allgatherv, disabled
 * in its released version; balanced regions already balance the gathered
 * blocks, and the ring model of docs/wire-bytes.md counts an allgatherv by
 * its total, so it is not done here.  MPI counts are ints: gradients over
 * INT_MAX elements are refused (RB_ERR_UNSUPPORTED on every rank).  Device
 * buffers go through host memory (the core's staging). */
#include "exchange.h"
#include "rb_internal.h"
#include "sparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Boundary proposals are weighted by k_r < 2^31 in two 16-bit halves: the
 * sums fit 64 bits for up to 2^16 ranks. */
#define OKTOPK_MAX_BALANCED_RANKS 65536
enum { TAG_PAIRS = 7401 };

typedef struct oktopk_state {
    rb_pair *send, *recv, *reduced, *result;
    size_t send_cap, recv_cap, reduced_cap, result_cap;
    uint32_t *bound;        /* p + 1 region starts; bound[p] = n */
    float *acc;             /* the owned region's sums, all zero between calls */
    uint64_t *touched;      /* bitmap over the owned region, zero between calls */
    size_t acc_cap, touched_cap;
    rb_exchange x;          /* pairs to and from each rank's region; the
                               reduced counts of the gather after */
    uint64_t *votes;        /* boundary estimate: 1 + 2 (p - 1) sums */
    MPI_Request *reqs;      /* 2 per step in flight */
    int throttle;           /* steps in flight: oktopk_throttle, at most p */
    uint64_t calls;
} oktopk_state;

static void oktopk_fini(rb_reducer *r)
{
    oktopk_state *s = r->impl;
    free(s->send);
    free(s->recv);
    free(s->reduced);
    free(s->result);
    free(s->bound);
    free(s->acc);
    free(s->touched);
    rb_exchange_free(&s->x);
    free(s->votes);
    free(s->reqs);
}

static void even_bounds(uint32_t *bound, size_t n, int p)
{
    for (int i = 0; i <= p; i++)
        bound[i] = (uint32_t)((uint64_t)n * (uint64_t)i / (uint64_t)p);
}

static int oktopk_init(rb_reducer *r)
{
    oktopk_state *s = r->impl;
    size_t p = (size_t)r->size;
    s->bound = rb_calloc(p + 1, sizeof *s->bound);
    RB_TRY(rb_exchange_init(&s->x, p, "oktopk"));
    s->votes = rb_calloc(2 * p, sizeof *s->votes);
    s->throttle = r->cfg.opts.oktopk_throttle < r->size ? r->cfg.opts.oktopk_throttle : r->size;
    s->reqs = rb_calloc(2 * (size_t)s->throttle, sizeof *s->reqs);
    if (!s->bound || !s->votes || !s->reqs)
        return rb_fail(RB_ERR_NOMEM, "oktopk: no memory for %zu ranks", p);
    if (r->n > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED, "oktopk: %zu elements exceed INT_MAX", r->n);
    even_bounds(s->bound, r->n, r->size);
    return RB_OK;
}


/* Balanced regions from the k-weighted mean of every rank's local
 * quantiles (header comment).  One allreduce of 2p - 1 uint64. */
static int estimate_bounds(rb_reducer *r, rb_stats *st, const rb_pair *pairs, size_t k)
{
    oktopk_state *s = r->impl;
    int p = r->size;
    uint64_t *v = s->votes;   /* v[0] = sum k_r; v[2j-1], v[2j]: high, low halves */
    v[0] = k;
    for (int j = 1; j < p; j++) {
        uint32_t q = k ? pairs[(uint64_t)j * k / (uint64_t)p].idx : 0;
        v[2 * j - 1] = (uint64_t)k * (q >> 16);
        v[2 * j] = (uint64_t)k * (q & 0xffffu);
    }
    RB_TRY(rb_allreduce(r, st, NULL, v, 2 * p - 1, MPI_UINT64_T, MPI_SUM));
    if (v[0] == 0)
        return RB_OK;   /* nothing to balance: keep the boundaries */
    s->bound[0] = 0;
    for (int j = 1; j < p; j++) {
        /* identical integer inputs on every rank: identical results */
        double mean = ((double)v[2 * j - 1] * 65536.0 + (double)v[2 * j]) / (double)v[0];
        uint64_t b = mean < (double)r->n ? (uint64_t)mean : r->n;
        s->bound[j] = b < s->bound[j - 1] ? s->bound[j - 1] : (uint32_t)b;
    }
    s->bound[p] = (uint32_t)r->n;
    return RB_OK;
}

static int balancing(const rb_reducer *r)
{
    const oktopk_state *s = r->impl;
    return r->cfg.opts.oktopk_balance && r->size > 1 && r->size <= OKTOPK_MAX_BALANCED_RANKS &&
           s->calls % (uint64_t)r->cfg.opts.oktopk_repartition == 0;
}

static uint64_t region_first_index(const void *ctx, int i)
{
    const oktopk_state *s = ctx;
    return s->bound[i];
}

/* Pairs of this rank per region (the send buffer is index-sorted). */
static void split_by_region(rb_reducer *r, size_t k)
{
    oktopk_state *s = r->impl;
    rb_exchange_split(&s->x, r->size, s->send, k, region_first_index, s);
}

/* The accumulator and its bitmap cover the owned region (zero-filled when
 * they grow; kept zero between calls by take_reduced). */
static int reserve_region(oktopk_state *s, size_t len)
{
    void *a = s->acc, *t = s->touched;
    int rc = rb_reserve(&a, &s->acc_cap, len, sizeof(float));
    s->acc = a;
    if (rc == RB_OK)
        rc = rb_reserve(&t, &s->touched_cap, rb_bitmap_words(len), sizeof(uint64_t));
    s->touched = t;
    return rc;
}

static void accumulate(oktopk_state *s, uint32_t lo, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        size_t j = p[i].idx - lo;
        s->acc[j] += p[i].val;
        rb_bitmap_set(s->touched, j);
    }
}

/* The touched entries as pairs in index order into s->reduced, leaving the
 * accumulator and the bitmap zero; returns how many. */
static size_t take_reduced(oktopk_state *s, uint32_t lo, size_t len)
{
    size_t u = 0;
    for (size_t w = 0; w < rb_bitmap_words(len); w++) {
        uint64_t bits = s->touched[w];
        s->touched[w] = 0;
        while (bits) {
            size_t j = w * 64 + (size_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            s->reduced[u++] = (rb_pair){lo + (uint32_t)j, s->acc[j]};
            s->acc[j] = 0.0f;
        }
    }
    return u;
}

/* Where the stream of step t (from rank - t) lands in s->recv. */
static int step_src(const rb_reducer *r, int t) { return (r->rank - t + r->size) % r->size; }
static int step_dst(const rb_reducer *r, int t) { return (r->rank + t) % r->size; }

/* Post steps [first, last): a receive from rank - t and a send to
 * rank + t each, skipping empty ones; *nreq requests. */
static int post_steps(rb_reducer *r, rb_stats *st, int first, int last, int *nreq)
{
    oktopk_state *s = r->impl;
    *nreq = 0;
    for (int t = first; t < last; t++) {
        int src = step_src(r, t), dst = step_dst(r, t);
        if (s->x.rcounts[src] > 0)
            RB_TRY(rb_irecv(r, st, s->recv + s->x.rdispls[src], s->x.rcounts[src], MPI_UINT64_T,
                            src, TAG_PAIRS, &s->reqs[(*nreq)++]));
        if (s->x.scounts[dst] > 0)
            RB_TRY(rb_isend(r, st, s->send + s->x.sdispls[dst], s->x.scounts[dst], MPI_UINT64_T,
                            dst, TAG_PAIRS, &s->reqs[(*nreq)++]));
    }
    return RB_OK;
}

/* Split and reduce: every rank's pairs of this rank's region summed here;
 * *u reduced pairs in s->reduced. */
static int split_and_reduce(rb_reducer *r, rb_stats *st, size_t *u)
{
    oktopk_state *s = r->impl;
    int p = r->size;
    RB_TRY(rb_alltoall(r, st, s->x.scounts, 1, MPI_INT, s->x.rcounts));
    size_t total = 0;
    for (int t = 1; t < p; t++) {   /* receive buffer in step order */
        int src = step_src(r, t);
        s->x.rdispls[src] = (int)total;
        total += (size_t)s->x.rcounts[src];
    }
    uint32_t lo = s->bound[r->rank];
    size_t len = s->bound[r->rank + 1] - lo;
    RB_TRY(rb_grow_pairs(&s->recv, &s->recv_cap, total));
    RB_TRY(rb_grow_pairs(&s->reduced, &s->reduced_cap, total + (size_t)s->x.scounts[r->rank]));
    RB_TRY(reserve_region(s, len));

    int nreq = 0;
    int batch = s->throttle;
    RB_TRY(post_steps(r, st, 1, p - 1 < batch ? p : 1 + batch, &nreq));
    accumulate(s, lo, s->send + s->x.sdispls[r->rank], (size_t)s->x.scounts[r->rank]);
    for (int first = 1; first < p; first += batch) {
        int last = p - first < batch ? p : first + batch;
        RB_MPI(MPI_Waitall(nreq, s->reqs, MPI_STATUSES_IGNORE));
        int next_last = p - last < batch ? p : last + batch;
        RB_TRY(post_steps(r, st, last, next_last, &nreq));   /* in flight while we sum */
        for (int t = first; t < last; t++) {
            int src = step_src(r, t);
            accumulate(s, lo, s->recv + s->x.rdispls[src], (size_t)s->x.rcounts[src]);
        }
    }
    *u = take_reduced(s, lo, len);
    return RB_OK;
}

/* Every rank gets every region's reduced pairs into s->result (index
 * order: regions ascend with the rank); *all pairs. */
static int gather_regions(rb_reducer *r, rb_stats *st, size_t u, size_t *all)
{
    oktopk_state *s = r->impl;
    int mine = (int)u;
    size_t total = 0;
    RB_TRY(rb_exchange_gather_counts(r, st, mine, &s->x, &total));
    RB_TRY(rb_grow_pairs(&s->result, &s->result_cap, total));
    *all = total;
    return rb_allgatherv(r, st, s->reduced, mine, MPI_UINT64_T, s->result, s->x.rcounts,
                         s->x.rdispls);
}

static int oktopk_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    oktopk_state *s = r->impl;
    size_t k = 0, u = 0, all = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    if (balancing(r)) {
        rb_phase_start(r, st, RB_PHASE_COMM);
        RB_TRY(estimate_bounds(r, st, s->send, k));
        rb_phase_start(r, st, RB_PHASE_ENCODE);
    }
    s->calls++;
    split_by_region(r, k);

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(split_and_reduce(r, st, &u));
    RB_TRY(gather_regions(r, st, u, &all));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    /* The union contains the local support (cancelled sums are kept):
     * every local non-zero is overwritten, the rest is zero already. */
    rb_scatter_set_scaled(grad, 0, s->result, all, 1.0f / (float)r->size);
    st->nnz_result = all;
    return RB_OK;
}

/* Cost model (docs/cost-model.md): pack; the regions' estimate (an
 * allreduce of 2p - 1 uint64) amortised over oktopk_repartition calls;
 * alltoall of the counts; p - 1 exchange steps, each non-empty with
 * probability 1 - (1 - 1/p)^k for k pairs spread over p regions; the
 * owner's accumulate and extract; allgather of the counts, allgatherv of
 * the union; decode. */
static void oktopk_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean, u = in->nnz_union;
    double leave = (p - 1) / p;
    rb_model_local(in, out, 4 * n + 8 * in->nnz_max);
    if (in->opts.oktopk_balance && in->ranks > 1 && in->ranks <= OKTOPK_MAX_BALANCED_RANKS) {
        rb_model_result est = {0};
        double share = 1.0 / in->opts.oktopk_repartition;
        rb_model_allreduce(in, &est, 8 * (2 * p - 1));
        out->messages += share * est.messages;
        out->bytes_critical += share * est.bytes_critical;
        out->bytes_sent += share * est.bytes_sent;
        out->bytes_coll += share * est.bytes_coll;
    }
    rb_model_alltoall(in, out, 4);
    double nonempty = p > 1 ? -expm1(k * log1p(-1 / p)) : 0;
    rb_model_p2p(in, out, (p - 1) * nonempty, 8 * k * leave, 8 * in->nnz_max * leave);
    rb_model_local(in, out, 16 * k + n / (8 * p) + 8 * u / p);
    rb_model_allgather(in, out, 4);
    rb_model_allgatherv(in, out, 8 * u);
    rb_model_local(in, out, 12 * u);
}

const rb_reducer_ops rb_oktopk_ops = {
    .name = "oktopk",
    .description = "Ok-Topk's exact part: balanced split-and-reduce with rotating partners, "
                   "allgatherv of the reduced regions",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(oktopk_state),
    .init = oktopk_init,
    .reduce = oktopk_reduce,
    .fini = oktopk_fini,
    .model = oktopk_model,
};
