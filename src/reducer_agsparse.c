/* agsparse: every rank allgathers every rank's (index, value) pairs and sums
 * them locally.
 *
 *   encode  pack the local non-zeros (index order), from the dense buffer
 *           (zeroing them there in the same pass) or from the rows of
 *           rb_reduce_rows
 *   comm    allgather of the p counts (uint64), allgatherv of the pairs
 *   decode  add every rank's pairs scaled by 1/p in rank order into the
 *           zeroed gradient (so every rank computes bit-identical results); rows
 *           (rb_reduce_rows): the same sums into the rows that hold them
 *           (rb_rowset_sum_streams)
 *
 * Wire bytes per rank (ring model, docs/wire-bytes.md), K = sum of counts:
 *   sent = 8(p-1) + 8K(p-1)/p,  recv = 8(p-1) + 8(K - k_self).
 * The allgatherv takes int counts: more than INT_MAX pairs in all is
 * refused with RB_ERR_UNSUPPORTED on every rank (they all see the same K).
 * Device buffers under transport=nccl stay on the GPU (agsparse_reduce_device,
 * same wire bytes). */
#include "reducer_agsparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void agsparse_fini(rb_reducer *r)
{
    agsparse_state *s = r->impl;
    free(s->send);
    free(s->recv);
    free(s->nnz_of);
    free(s->offs);
    free(s->row_base);
    free(s->row_seen);
    free(s->counts);
    free(s->displs);
}

static int agsparse_init(rb_reducer *r)
{
    agsparse_state *s = r->impl;
    size_t p = (size_t)r->size;
    s->nnz_of = rb_calloc(p, sizeof *s->nnz_of);
    s->counts = rb_calloc(p, sizeof *s->counts);
    s->displs = rb_calloc(p, sizeof *s->displs);
    s->offs = rb_calloc(p + 1, sizeof *s->offs);
    s->row_base = rb_calloc(rb_bitmap_words(r->cfg.rows), sizeof *s->row_base);
    s->row_seen = rb_calloc(rb_bitmap_words(r->cfg.rows), sizeof *s->row_seen);
    if (!s->nnz_of || !s->counts || !s->displs || !s->offs || !s->row_base ||
        !s->row_seen)
        return rb_fail(RB_ERR_NOMEM, "agsparse: no memory for %zu ranks / %zu elements", p, r->n);
    return RB_OK;
}

/* Every rank's k pairs (s->send) into s->recv in rank order; *total. */
static int gather_pairs(rb_reducer *r, rb_stats *st, size_t k, size_t *total_out)
{
    agsparse_state *s = r->impl;
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
    *total_out = (size_t)total;
    return rb_allgatherv(r, st, s->send, (int)k, MPI_UINT64_T, s->recv, s->counts, s->displs);
}

static int agsparse_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    agsparse_state *s = r->impl;
    size_t k = 0, total = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    /* Packing zeroes the local support in the same pass (the lines are in
     * cache then): the decode adds into zeros without a walk to zero it. */
    RB_TRY(rb_take_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(gather_pairs(r, st, k, &total));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_scatter_add_scaled(grad, 0, s->recv, total, 1.0f / (float)r->size);
    return RB_OK;
}

/* Rows: the pairs packed from the rows, the same exchange, the same sums
 * made in the rows that hold them. */
static int agsparse_reduce_rows(rb_reducer *r, rb_rows_call *c, rb_stats *st)
{
    agsparse_state *s = r->impl;
    size_t k = 0, total = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_rows_pack_grow(c->in, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(gather_pairs(r, st, k, &total));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    for (int i = 0; i <= r->size; i++)
        s->offs[i] = i < r->size ? (size_t)s->displs[i] : total;
    return rb_rowset_sum_streams(c->rows, r->cfg.cols, s->recv, s->offs, (size_t)r->size,
                                 1.0f / (float)r->size, s->row_seen, s->row_base,
                                 rb_bitmap_words(r->cfg.rows));
}

/* Cost model (docs/cost-model.md): pack (zeroing the local support on the
 * way), allgather of the counts, allgatherv of all K = p k pairs, then add
 * the K pairs. */
static void agsparse_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), k = in->nnz_mean, all = in->ranks * k;
    rb_model_local(in, out, 4 * n + 8 * in->nnz_max);
    rb_model_allgather(in, out, 8);
    rb_model_allgatherv(in, out, 8 * all);
    rb_model_local(in, out, 12 * all);
}

static double pairs_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)o;
    return rb_state_bytes_pairs(n, k, p);
}

const rb_reducer_ops rb_agsparse_ops = {
    .name = "agsparse",
    .description = "allgather of (index, value) pairs, summed locally",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(agsparse_state),
    .state_bytes = pairs_state_bytes,
    .init = agsparse_init,
    .init_device = RB_NCCL_OP(agsparse_init_device),
    .reduce = agsparse_reduce,
    .reduce_device = RB_NCCL_OP(agsparse_reduce_device),
    .reduce_rows = agsparse_reduce_rows,
    .fini_device = RB_NCCL_OP(agsparse_fini_device),
    .fini = agsparse_fini,
    .model = agsparse_model,
};
