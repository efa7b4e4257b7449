/* parallax: sparse parameter server, as Parallax (Kim et al., EuroSys'19)
 * handles sparse variables.  The index space is sharded into S contiguous
 * ranges, one per server: parallax_servers=1 -> S = 1, rank 0 serves all
 * (the S2 authors' setup); parallax_servers=0 -> S = p, rank i serves
 * range i.
 *
 *   encode  pack the local non-zeros (of the dense buffer, or of the rows
 *           of rb_reduce_rows); split them by server range
 *   comm    push: alltoall of the per-server counts, alltoallv of the pairs
 *           (non-servers receive nothing); servers merge-sum the p streams;
 *           pull: S = 1 -> bcast of the result from rank 0,
 *                 S = p -> allgather of counts + allgatherv of the ranges
 *   decode  set the result pairs, scaled by 1/p, into the gradient (rows:
 *           into the rows that hold them)
 *
 * Pushes are counted exactly per message; the collectives of the pull with
 * the ring / pipelined-chain models (docs/wire-bytes.md).  MPI counts are
 * ints, so gradients over INT_MAX elements are refused (RB_ERR_UNSUPPORTED,
 * on every rank alike), and so is a call whose pairs for one server exceed
 * INT_MAX (possible with one server: p x n pairs at most).  Device buffers under transport=nccl stay on the
 * GPU (parallax_reduce_device, same wire bytes). */
#include "reducer_parallax.h"

#include <limits.h>
#include <stdlib.h>

static void parallax_fini(rb_reducer *r)
{
    parallax_state *s = r->impl;
    free(s->send);
    free(s->recv);
    free(s->tmp);
    free(s->result);
    rb_exchange_free(&s->x);
}

static int parallax_init(rb_reducer *r)
{
    parallax_state *s = r->impl;
    s->servers = r->cfg.opts.parallax_servers == 1 ? 1 : r->size;
    size_t p = (size_t)r->size;
    RB_TRY(rb_exchange_init(&s->x, p, "parallax"));
    if (r->n > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED, "parallax: %zu elements exceed INT_MAX", r->n);
    return RB_OK;
}

uint32_t parallax_shard_lo(size_t n, int servers, int i)
{
    return (uint32_t)((uint64_t)n * (uint64_t)i / (uint64_t)servers);
}

/* Where server i's shard starts; ranks that serve nothing get no pairs. */
static uint64_t server_first_index(const void *ctx, int i)
{
    const rb_reducer *r = ctx;
    const parallax_state *s = r->impl;
    return i < s->servers ? parallax_shard_lo(r->n, s->servers, i) : UINT64_MAX;
}

/* A server receives every rank's pairs of its shard: with one server up
 * to p x n, more than the int displacements of MPI_Alltoallv can hold.
 * Only where that is possible do the ranks agree on the check (one int
 * allreduce), so the server does not fail alone. */
static int check_server_total(rb_reducer *r, size_t total)
{
    parallax_state *s = r->impl;
    uint64_t widest_shard = ((uint64_t)r->n + (uint64_t)s->servers - 1) / (uint64_t)s->servers;
    if ((uint64_t)r->size * widest_shard <= (uint64_t)INT_MAX)
        return RB_OK;
    int local = total <= (size_t)INT_MAX
        ? RB_OK
        : rb_fail(RB_ERR_UNSUPPORTED, "parallax: the server of rank %d receives %zu pairs, over "
                  "the MPI count limit (INT_MAX); use parallax_servers=0", r->rank, total);
    return rb_agree(r->comm, local);
}

/* Push every pair to the server of its range; servers merge-sum what they
 * got into *red (kr pairs). */
static int push_and_sum(rb_reducer *r, rb_stats *st, size_t k, rb_pair **red, size_t *kr)
{
    parallax_state *s = r->impl;
    int p = r->size;
    size_t total = 0;
    rb_exchange_split(&s->x, p, s->send, k, server_first_index, r);
    RB_TRY(rb_exchange_counts(r, st, &s->x, &total));
    RB_TRY(check_server_total(r, total));
    RB_TRY(rb_grow_pairs(&s->recv, &s->recv_cap, total));
    RB_TRY(rb_grow_pairs(&s->tmp, &s->tmp_cap, total));
    RB_TRY(rb_alltoallv(r, st, s->send, s->x.scounts, s->x.sdispls, MPI_UINT64_T,
                        s->recv, s->x.rcounts, s->x.rdispls));
    *kr = rb_merge_sum_many(s->recv, s->x.offs, (size_t)p, s->tmp, red);
    return RB_OK;
}

/* Every rank gets all servers' sums into s->result; returns the count. */
int parallax_pull(rb_reducer *r, rb_stats *st, const rb_pair *red, size_t kr, size_t *kall)
{
    parallax_state *s = r->impl;
    if (s->servers == 1) {
        uint64_t count = kr;
        RB_TRY(rb_bcast(r, st, &count, 1, MPI_UINT64_T, 0));
        RB_TRY(rb_grow_pairs(&s->result, &s->result_cap, (size_t)count));
        if (r->rank == 0)
            for (size_t i = 0; i < kr; i++)
                s->result[i] = red[i];
        *kall = (size_t)count;
        return rb_bcast(r, st, s->result, (int)count, MPI_UINT64_T, 0);
    }
    int mine = (int)kr;
    size_t total = 0;
    RB_TRY(rb_exchange_gather_counts(r, st, mine, &s->x, &total));
    RB_TRY(rb_grow_pairs(&s->result, &s->result_cap, total));
    *kall = total;
    return rb_allgatherv(r, st, red, mine, MPI_UINT64_T, s->result, s->x.rcounts, s->x.rdispls);
}

/* The k local pairs (s->send) to the servers and the sums of all back into
 * s->result (*kall pairs). */
static int push_pull(rb_reducer *r, rb_stats *st, size_t k, size_t *kall)
{
    rb_pair *red = NULL;
    size_t kr = 0;
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(push_and_sum(r, st, k, &red, &kr));
    return parallax_pull(r, st, red, kr, kall);
}

static int parallax_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    parallax_state *s = r->impl;
    size_t k = 0, kall = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(push_pull(r, st, k, &kall));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    /* The union support contains the local one: every local non-zero is
     * overwritten, everything else is already zero. */
    rb_scatter_set_scaled(grad, 0, s->result, kall, 1.0f / (float)r->size);
    st->nnz_result = kall;
    return RB_OK;
}

/* Rows: the pairs packed from the rows, the same push and pull, the
 * result set into its rows. */
static int parallax_reduce_rows(rb_reducer *r, rb_rows_call *c, rb_stats *st)
{
    parallax_state *s = r->impl;
    size_t k = 0, kall = 0;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_rows_pack_grow(c->in, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(push_pull(r, st, k, &kall));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    st->nnz_result = kall;
    return rb_rowset_from_pairs(c->rows, r->cfg.cols, s->result, kall, 1.0f / (float)r->size);
}

/* Cost model (docs/cost-model.md): pack, alltoall of the counts, push of
 * the pairs, servers merge-sum, pull.  One server receives every other
 * rank's pairs; with a server per rank each receives about k. */
static void parallax_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean, u = in->nnz_union;
    double l = rb_model_log2(in->ranks), leave = (p - 1) / p;
    rb_model_local(in, out, 4 * n + 8 * in->nnz_max);
    rb_model_alltoall(in, out, 4);
    if (in->opts.parallax_servers == 1) {
        rb_model_alltoallv(in, out, 8 * k * leave, 8 * k * (p - 1));
        rb_model_local(in, out, 16 * p * k * l);
        rb_model_bcast(in, out, 8);
        rb_model_bcast(in, out, 8 * u);
    } else {
        rb_model_alltoallv(in, out, 8 * k * leave, 8 * in->nnz_max * leave);
        rb_model_local(in, out, 16 * k * l);
        rb_model_allgather(in, out, 4);
        rb_model_allgatherv(in, out, 8 * u);
    }
    rb_model_local(in, out, 12 * u);
}

static double pairs_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)o;
    return rb_state_bytes_pairs(n, k, p);
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_servers = {
    "parallax_servers", RB_OPT_INT, NULL,
    "number of parameter servers the index space is sharded over: 1 (rank 0) or 0 (every rank)",
    RB_OPTION_FIELD(parallax_servers), 0, 1, 0, 0};
static const rb_option_def *const parallax_options[] = {&opt_servers, NULL};

const rb_reducer_ops rb_parallax_ops = {
    .name = "parallax",
    .options = parallax_options,
    .description = "sparse parameter server: shards sum pushed pairs, all ranks pull the result",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(parallax_state),
    .state_bytes = pairs_state_bytes,
    .init = parallax_init,
    .init_device = RB_NCCL_OP(parallax_init_device),
    .reduce = parallax_reduce,
    .reduce_device = RB_NCCL_OP(parallax_reduce_device),
    .reduce_rows = parallax_reduce_rows,
    .fini_device = RB_NCCL_OP(parallax_fini_device),
    .fini = parallax_fini,
    .model = parallax_model,
};
