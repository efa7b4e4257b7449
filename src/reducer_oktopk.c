/* oktopk: the sparse allreduce of Ok-Topk (Li & Hoefler, PPoPP'22).  By
 * default (oktopk_select=union) exact: its split-and-reduce and allgatherv
 * of given sparse inputs, without the top-k threshold selection (which
 * makes Ok-Topk lossy by design).  oktopk_select=topk adds that selection
 * as the authors' code does it (VGG/allreducer.py, the oktopk branch of
 * AllReducer.run; "Global top-k" below).
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
 * buffers go through host memory (the core's staging).
 *
 * Global top-k (oktopk_select=topk), k = max(1, floor(oktopk_density n)),
 * the authors' rules with their constants; thresholds are doubles compared
 * with float magnitudes, strictly (|x| > t), as their torch code compares:
 *   local   on a re-estimating call (the first and every
 *           oktopk_reestimate-th after it; theirs: every 32nd) t_l = the
 *           k-th largest |g| over all n elements (0 when fewer than k are
 *           non-zero: every non-zero is sent); otherwise the previous t_l,
 *           times 1.03 while more than floor(4k/3) pass it (5 times at
 *           most).  Only |g| > t_l is sent (so k - 1 of k distinct values);
 *           after the selection t_l is divided by 1.012 when fewer than 2k/3
 *           were sent, multiplied by 1.012 when more than 5k/4.
 *   global  the split-and-reduce as above, then on a re-estimating call the
 *           allgatherv of every non-zero reduced sum and, on every rank, the
 *           exact top-min(k, sums) by |sum| (ties: lower index first), t_g =
 *           the last one's |sum|; otherwise each region keeps |sum| > t_g and
 *           only those are gathered (about k pairs), and t_g is divided by
 *           1.008 when fewer than 2k/3 came back, multiplied when more than
 *           4k/3.
 *   decode  the result is zero but for the kept sums divided by p.
 *   error_feedback=on: the residual r (n floats, zero at creation) is added
 *           to the gradient first, r = that sum, then zeroed where the rank
 *           sent an element that was kept (theirs: update_residuals).
 * A threshold of 0 (a re-estimating call with fewer than k non-zeros, or
 * none at all: a layer without gradient on the first step) is a fixed
 * point of the factors above, and theirs would then send and gather every
 * non-zero until the next re-estimate.  Here (not in theirs) t_l = 0 is
 * re-estimated as on a re-estimating call when more than floor(4k/3) pass
 * it, and t_g = 0 when more than 4k/3 sums come back (the exact top-k of
 * those, the same on every rank).
 * Non-finite values (docs/values.md): a NaN ranks as the largest magnitude
 * (an infinity) and the thresholds stay finite (at most FLT_MAX), so NaN and
 * inf are selected first and reach the result; compared as they are, a NaN
 * threshold kept nothing on any rank.  The residual keeps finite values
 * only: a NaN or inf is not carried into the next calls.
 * The thresholds persist in the reducer object between calls, as the
 * authors' dictionaries do. */
#include "exchange.h"
#include "rb_internal.h"
#include "reducer_sparse.h"

#include <float.h>
#include <limits.h>
#include <math.h>
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
    /* oktopk_select=topk */
    size_t k;               /* the global k */
    float *mag;             /* |g| scratch for the k-th largest (n floats) */
    float *residual;        /* error_feedback: n floats */
    double t_local, t_global;
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
    free(s->mag);
    free(s->residual);
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
    if (r->cfg.opts.oktopk_select == RB_OKTOPK_TOPK) {
        double k = floor(r->cfg.opts.oktopk_density * (double)r->n);
        s->k = k < 1 ? 1 : (size_t)k;
        s->mag = rb_calloc(r->n ? r->n : 1, sizeof *s->mag);
        if (r->cfg.opts.error_feedback)
            s->residual = rb_calloc(r->n ? r->n : 1, sizeof *s->residual);
        if (!s->mag || (r->cfg.opts.error_feedback && !s->residual))
            return rb_fail(RB_ERR_NOMEM, "oktopk: no memory for the top-k selection of %zu elements",
                           r->n);
    }
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

/* Every oktopk_repartition calls, new region bounds from the k local
 * pairs (a COMM phase); then this call's pairs split by region. */
static int rebalance_and_split(rb_reducer *r, rb_stats *st, size_t k)
{
    oktopk_state *s = r->impl;
    if (balancing(r)) {
        rb_phase_start(r, st, RB_PHASE_COMM);
        RB_TRY(estimate_bounds(r, st, s->send, k));
        rb_phase_start(r, st, RB_PHASE_ENCODE);
    }
    s->calls++;
    split_by_region(r, k);
    return RB_OK;
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

static int union_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    oktopk_state *s = r->impl;
    size_t k = 0, u = 0, all = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(rebalance_and_split(r, st, k));

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

/* ---- oktopk_select=topk: the authors' global top-k (header comment) ---- */

/* |v| for the selection, a NaN counted as an infinity (header comment). */
static inline float magnitude(float v)
{
    return v != v ? INFINITY : fabsf(v);
}

/* A threshold of inf (k non-finite magnitudes, or a nudge past FLT_MAX)
 * would pass none of them under the strict test: FLT_MAX passes them all. */
static double finite_threshold(double t)
{
    return t < FLT_MAX ? t : FLT_MAX;
}

/* The pairs |g| > t in index order into s->send, as many as fit in it
 * (s->send_cap bytes); returns how many pass (more than fit: s->send incomplete).
 * Counting and selecting in one pass: the gradient is read once. */
static size_t select_fitting(oktopk_state *s, const float *g, size_t n, float t)
{
    size_t c = 0, cap = s->send_cap / sizeof(rb_pair);
    for (size_t i = 0; i < n; i++)
        if (magnitude(g[i]) > t) {
            if (c < cap)
                s->send[c] = (rb_pair){(uint32_t)i, g[i]};
            c++;
        }
    return c;
}

/* select_fitting, growing s->send and selecting again when they did not fit. */
static int select_all(oktopk_state *s, const float *g, size_t n, float t, size_t *m)
{
    size_t c = select_fitting(s, g, n, t);
    if (c > s->send_cap / sizeof(rb_pair)) {
        RB_TRY(rb_grow_pairs(&s->send, &s->send_cap, c));
        c = select_fitting(s, g, n, t);
    }
    *m = c;
    return RB_OK;
}

/* Their ratio2threshold: *t = the k-th largest magnitude of g, and the
 * pairs above it. */
static int select_above_kth(oktopk_state *s, const float *g, size_t n, double *t, size_t *m)
{
    for (size_t i = 0; i < n; i++)
        s->mag[i] = magnitude(g[i]);
    *t = finite_threshold(rb_kth_largest(s->mag, n, s->k));
    return select_all(s, g, n, (float)*t, m);
}

/* This call's local threshold *t (their ratio2threshold on a re-estimating
 * call, add2residual otherwise) and the m pairs above it in s->send.  The
 * buffer holds floor(4k/3) + 1 pairs at least, so add2residual's count
 * (more than 4k/3 or not) selects in the same pass. */
static int select_local(rb_reducer *r, const float *g, int reestimate, double *t, size_t *m)
{
    oktopk_state *s = r->impl;
    size_t n = r->n, k = s->k, most = 4 * k / 3;
    RB_TRY(rb_grow_pairs(&s->send, &s->send_cap, most + 1));
    *t = 0.0;
    if (n == 0) {
        *m = 0;
        return RB_OK;
    }
    if (reestimate)
        return select_above_kth(s, g, n, t, m);
    *t = s->t_local;
    if (*t == 0.0) {   /* no factor moves 0 (header comment) */
        size_t c = select_fitting(s, g, n, 0.0f);
        if (c <= most) {
            *m = c;
            return RB_OK;
        }
        return select_above_kth(s, g, n, t, m);
    }
    for (int loops = 0; loops < 5; loops++) {
        size_t c = select_fitting(s, g, n, (float)*t);
        if (c <= most) {   /* all fitted */
            *m = c;
            return RB_OK;
        }
        *t = finite_threshold(*t * 1.03);
    }
    return select_all(s, g, n, (float)*t, m);
}

/* Keep the reduced pairs that pass: non-zero (re-estimating call) or
 * |sum| > t_g (otherwise); returns how many, in place, in index order. */
static size_t keep_reduced(oktopk_state *s, size_t u, int reestimate)
{
    float t = (float)s->t_global;
    size_t j = 0;
    for (size_t i = 0; i < u; i++) {
        float v = s->reduced[i].val;
        if (reestimate ? v != 0.0f : magnitude(v) > t)
            s->reduced[j++] = s->reduced[i];
    }
    return j;
}

/* The exact top-min(k, all) of s->result by |sum| (ties: lower index),
 * compacted in index order; sets t_g (their k2globalthreshold). */
static size_t global_topk(rb_reducer *r, size_t all)
{
    oktopk_state *s = r->impl;
    size_t kk = s->k < all ? s->k : all;
    if (kk == 0)
        return 0;
    for (size_t i = 0; i < all; i++)
        s->mag[i] = magnitude(s->result[i].val);
    float t = rb_kth_largest(s->mag, all, kk);
    size_t above = 0;
    for (size_t i = 0; i < all; i++)
        above += magnitude(s->result[i].val) > t;
    size_t ties = kk - above, j = 0;
    for (size_t i = 0; i < all; i++) {
        float a = magnitude(s->result[i].val);
        if (a > t || (a == t && ties > 0 && ties--))
            s->result[j++] = s->result[i];
    }
    s->t_global = finite_threshold(t);
    return j;
}

/* Their update_residuals: zero the residual where this rank sent an element
 * that was kept (both lists index-sorted). */
static void clear_delivered(oktopk_state *s, size_t sent, size_t kept)
{
    for (size_t a = 0, b = 0; a < sent && b < kept;) {
        uint32_t x = s->send[a].idx, y = s->result[b].idx;
        if (x == y)
            s->residual[x] = 0.0f;
        a += x <= y;
        b += y <= x;
    }
}

static void nudge(double *t, size_t got, size_t k, double high, double factor)
{
    if ((double)got < 2.0 * (double)k / 3.0)
        *t /= factor;
    else if ((double)got > high * (double)k)
        *t = finite_threshold(*t * factor);
}

static int topk_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    oktopk_state *s = r->impl;
    size_t n = r->n, m = 0, u = 0, all = 0;
    int reestimate = s->calls % (uint64_t)r->cfg.opts.oktopk_reestimate == 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    if (s->residual)
        for (size_t i = 0; i < n; i++) {
            grad[i] += s->residual[i];
            s->residual[i] = isfinite(grad[i]) ? grad[i] : 0.0f;
        }
    double t;
    RB_TRY(select_local(r, grad, reestimate, &t, &m));
    s->t_local = t;
    nudge(&s->t_local, m, s->k, 5.0 / 4.0, 1.012);
    st->nnz_local = m;
    RB_TRY(rebalance_and_split(r, st, m));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(split_and_reduce(r, st, &u));
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    u = keep_reduced(s, u, reestimate);
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(gather_regions(r, st, u, &all));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    if (reestimate || (s->t_global == 0.0 && 3 * all > 4 * s->k)) {
        /* all <= n: distinct indices.  A t_g of 0 is re-estimated: no
         * factor moves it (header comment); every rank gathered the same
         * sums, so every rank decides alike. */
        all = global_topk(r, all);
    } else {
        nudge(&s->t_global, all, s->k, 4.0 / 3.0, 1.008);
    }
    if (s->residual)
        clear_delivered(s, m, all);
    memset(grad, 0, n * sizeof *grad);
    for (size_t i = 0; i < all; i++)   /* divided, as theirs, not scaled by 1/p */
        grad[s->result[i].idx] = s->result[i].val / (float)r->size;
    st->nnz_result = all;
    return RB_OK;
}

static int oktopk_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    if (r->cfg.opts.oktopk_select == RB_OKTOPK_TOPK)
        return topk_reduce(r, grad, st);
    return union_reduce(r, grad, st);
}

static unsigned oktopk_traits_with(const rb_options *o)
{
    return o->oktopk_select == RB_OKTOPK_TOPK ? RB_TRAIT_LOSSY : RB_TRAIT_EXACT;
}

/* Cost model (docs/cost-model.md): pack; the regions' estimate (an
 * allreduce of 2p - 1 uint64) amortised over oktopk_repartition calls;
 * alltoall of the counts; p - 1 exchange steps, each non-empty with
 * probability 1 - (1 - 1/p)^k for k pairs spread over p regions; the
 * owner's accumulate and extract; allgather of the counts, allgatherv of
 * the union; decode.  oktopk_select=topk: each rank sends min(nnz, K) pairs
 * (K = the global k), their union is taken as min(U, p min(nnz, K)); the
 * gather carries that union on a re-estimating call (1 in
 * oktopk_reestimate) and K pairs on the others; the selection passes over
 * the gradient (count, select; on a re-estimating call a copy and a
 * quickselect) and the decode's zero fill are charged as memory traffic. */
static void oktopk_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean, u = in->nnz_union;
    double kmax = in->nnz_max, gathered = u, leave = (p - 1) / p;
    if (in->opts.oktopk_select == RB_OKTOPK_TOPK) {
        double big_k = fmax(1.0, floor(in->opts.oktopk_density * n));
        double share = 1.0 / in->opts.oktopk_reestimate;
        k = fmin(k, big_k), kmax = fmin(kmax, big_k), u = fmin(u, p * k);
        gathered = share * u + (1 - share) * fmin(u, big_k);
        rb_model_local(in, out, 8 * n + share * 8 * n);
    }
    rb_model_local(in, out, 4 * n + 8 * kmax);
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
    rb_model_p2p(in, out, (p - 1) * nonempty, 8 * k * leave, 8 * kmax * leave);
    rb_model_local(in, out, 16 * k + n / (8 * p) + 8 * u / p);
    rb_model_allgather(in, out, 4);
    rb_model_allgatherv(in, out, 8 * gathered);
    rb_model_local(in, out, 12 * gathered + (in->opts.oktopk_select == RB_OKTOPK_TOPK ? 4 * n : 0));
}

/* Between calls: the call count (re-partitioning and re-estimation follow
 * it), the region bounds, the thresholds, k and the residual. */
static int oktopk_state_io(rb_reducer *r, struct rb_state_io *io)
{
    oktopk_state *s = r->impl;
    RB_TRY(rb_state_field(io, "calls", &s->calls, sizeof s->calls));
    RB_TRY(rb_state_field(io, "k", &s->k, sizeof s->k));
    RB_TRY(rb_state_field(io, "t_local", &s->t_local, sizeof s->t_local));
    RB_TRY(rb_state_field(io, "t_global", &s->t_global, sizeof s->t_global));
    RB_TRY(rb_state_field(io, "bound", s->bound, ((size_t)r->size + 1) * sizeof *s->bound));
    return rb_state_field(io, "residual", s->residual, s->residual ? r->n * sizeof *s->residual : 0);
}

/* Memory bound: the pairs, and under oktopk_select=topk the |g| scratch
 * of its threshold and the residual. */
static double oktopk_state_bytes(const rb_options *o, double n, double k, int p)
{
    double topk = o->oktopk_select == RB_OKTOPK_TOPK ? 4.0 * n * (o->error_feedback ? 2 : 1) : 0.0;
    return rb_state_bytes_pairs(n, k, p) + topk;
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_balance = {
    "oktopk_balance", RB_OPT_BOOL, NULL,
    "regions of similar non-zero counts, estimated from every rank's quantiles (on), "
    "or even ranges of the index space (off)",
    RB_OPTION_FIELD(oktopk_balance), 0, 1, 1, 0};
static const rb_option_def opt_repartition = {
    "oktopk_repartition", RB_OPT_INT, NULL,
    "re-estimate the balanced regions every N calls (Ok-Topk: 64), reusing them in between",
    RB_OPTION_FIELD(oktopk_repartition), 1, 1 << 30, 64, 0};
static const rb_option_def opt_throttle = {
    "oktopk_throttle", RB_OPT_INT, NULL,
    "exchange steps posted at once, each batch summed while the next is in flight "
    "(Ok-Topk: 4)",
    RB_OPTION_FIELD(oktopk_throttle), 1, 1 << 20, 4, 0};
static const rb_option_def opt_select = {
    "oktopk_select", RB_OPT_ENUM, "union|topk",
    "the result: the exact union of the inputs (union), or Ok-Topk's global top-k of about "
    "k = oktopk_density x n elements, local and global thresholds as its authors' code (topk: lossy)",
    RB_OPTION_FIELD(oktopk_select), 0, 1, RB_OKTOPK_UNION, 0};
static const rb_option_def opt_density = {
    "oktopk_density", RB_OPT_DOUBLE, NULL,
    "oktopk_select=topk: k = max(1, floor(density x n)) (Ok-Topk's --density)",
    RB_OPTION_FIELD(oktopk_density), 1e-12, 1.0, 0.01, 0};
static const rb_option_def opt_reestimate = {
    "oktopk_reestimate", RB_OPT_INT, NULL,
    "oktopk_select=topk: exact local and global top-k thresholds every N calls (Ok-Topk: 32), "
    "the previous ones, nudged as Ok-Topk does, in between",
    RB_OPTION_FIELD(oktopk_reestimate), 1, 1 << 30, 32, 0};
static const rb_option_def *const oktopk_options[] = {
    &opt_balance, &opt_repartition, &opt_throttle, &opt_select, &opt_density, &opt_reestimate,
    &rb_opt_error_feedback, NULL};

const rb_reducer_ops rb_oktopk_ops = {
    .name = "oktopk",
    .options = oktopk_options,
    .description = "Ok-Topk's exact part: balanced split-and-reduce with rotating partners, "
                   "allgatherv of the reduced regions",
    .traits = RB_TRAIT_EXACT,
    .traits_with = oktopk_traits_with,
    .state_size = sizeof(oktopk_state),
    .state_bytes = oktopk_state_bytes,
    .init = oktopk_init,
    .reduce = oktopk_reduce,
    .fini = oktopk_fini,
    .state = oktopk_state_io,
    .model = oktopk_model,
};
