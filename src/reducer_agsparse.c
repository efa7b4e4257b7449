/* agsparse: every rank allgathers every rank's (index, value) pairs and sums
 * them locally.
 *
 *   encode  count + pack the local non-zeros (index order)
 *   comm    allgather of the p counts (uint64), allgatherv of the pairs
 *   decode  zero the local support, add every rank's pairs scaled by 1/p in
 *           rank order (so every rank computes bit-identical results)
 *
 * Wire bytes per rank (ring model, docs/wire-bytes.md), K = sum of counts:
 *   sent = 8(p-1) + 8K(p-1)/p,  recv = 8(p-1) + 8(K - k_self).
 * The allgatherv takes int counts: more than INT_MAX pairs in all is
 * refused with RB_ERR_UNSUPPORTED on every rank (they all see the same K). */
#include "rb_internal.h"
#include "sparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct agsparse_state {
    rb_pair *send, *recv;
    size_t send_cap, recv_cap;
    uint64_t *nnz_of;       /* per rank */
    int *counts, *displs;   /* per rank, for the allgatherv */
    uint64_t *seen;         /* bitmap of n bits: the union support */
} agsparse_state;

static void agsparse_fini(rb_reducer *r)
{
    agsparse_state *s = r->impl;
    free(s->send);
    free(s->recv);
    free(s->nnz_of);
    free(s->counts);
    free(s->displs);
    free(s->seen);
    free(s);
    r->impl = NULL;
}

static int agsparse_init(rb_reducer *r)
{
    agsparse_state *s = calloc(1, sizeof *s);
    if (!s)
        return rb_fail(RB_ERR_NOMEM, "agsparse: no memory");
    r->impl = s;
    size_t p = (size_t)r->size;
    s->nnz_of = rb_calloc(p, sizeof *s->nnz_of);
    s->counts = rb_calloc(p, sizeof *s->counts);
    s->displs = rb_calloc(p, sizeof *s->displs);
    s->seen = rb_calloc(rb_bitmap_words(r->n), sizeof *s->seen);
    if (!s->nnz_of || !s->counts || !s->displs || !s->seen)
        return rb_fail(RB_ERR_NOMEM, "agsparse: no memory for %zu ranks / %zu elements", p, r->n);
    return RB_OK;
}

/* Union support size: distinct indices over all received pairs. */
static uint64_t union_size(agsparse_state *s, size_t n, const rb_pair *pairs, size_t total)
{
    memset(s->seen, 0, rb_bitmap_words(n) * sizeof *s->seen);
    uint64_t distinct = 0;
    for (size_t i = 0; i < total; i++) {
        size_t idx = pairs[i].idx;
        distinct += !rb_bitmap_test(s->seen, idx);
        rb_bitmap_set(s->seen, idx);
    }
    return distinct;
}

static int agsparse_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    agsparse_state *s = r->impl;
    size_t k = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;

    rb_phase_start(r, st, RB_PHASE_COMM);
    uint64_t mine = k, total = 0;
    RB_TRY(rb_allgather(r, st, &mine, 1, MPI_UINT64_T, s->nnz_of));
    for (int i = 0; i < r->size; i++)
        total += s->nnz_of[i];
    if (total > (uint64_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED,
                       "agsparse: %llu pairs in all exceed the MPI count limit (INT_MAX)",
                       (unsigned long long)total);
    for (int i = 0, off = 0; i < r->size; i++) {
        s->counts[i] = (int)s->nnz_of[i];
        s->displs[i] = off;
        off += s->counts[i];
    }
    void *buf = s->recv;
    RB_TRY(rb_reserve(&buf, &s->recv_cap, (size_t)total, sizeof(rb_pair)));
    s->recv = buf;
    RB_TRY(rb_allgatherv(r, st, s->send, (int)k, MPI_UINT64_T, s->recv, s->counts, s->displs));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    for (size_t i = 0; i < k; i++)
        grad[s->send[i].idx] = 0.0f;
    rb_scatter_add_scaled(grad, 0, s->recv, (size_t)total, 1.0f / (float)r->size);
    st->nnz_result = union_size(s, r->n, s->recv, (size_t)total);
    return RB_OK;
}

const rb_reducer_ops rb_agsparse_ops = {
    .name = "agsparse",
    .description = "allgather of (index, value) pairs, summed locally",
    .traits = RB_TRAIT_EXACT,
    .init = agsparse_init,
    .reduce = agsparse_reduce,
    .fini = agsparse_fini,
};
