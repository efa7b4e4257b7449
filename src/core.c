/* Reducer life cycle: create/destroy, dispatch of a call (dense, rows,
 * device), and phase timing.  The config's defaults and the ranks'
 * agreement on it are in config.c, the communication wrappers in comm.c,
 * allocation and the agreement of a status in base.c. */
#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

#include <stdlib.h>
#include <string.h>

/* Device buffers that the reducer's device path (NCCL) reduces where they
 * are; the transport decides (rb_device_direct), and a reducer without
 * reduce_device (or a build without NCCL, RB_NCCL_OP) stages them. */
static int on_device_path(const rb_reducer *r)
{
    return r->cfg.device == RB_DEVICE_CUDA && r->ops->reduce_device && rb_device_direct(r);
}

/* Device buffers that go through a host copy (r->host_stage). */
static int goes_staged(const rb_reducer *r)
{
    return r->cfg.device == RB_DEVICE_CUDA && !on_device_path(r);
}

/* The reducer's state (zeroed, ops->state_size bytes), its buffers (init)
 * and those of its device path (init_device).  On failure rb_destroy frees
 * what was made. */
static int init_reducer(rb_reducer *r)
{
    const rb_reducer_ops *ops = r->ops;
    if (ops->state_size && !(r->impl = calloc(1, ops->state_size)))
        return rb_fail(RB_ERR_NOMEM, "%s: no memory", ops->name);
    RB_TRY(ops->init ? ops->init(r) : RB_OK);
    return on_device_path(r) && ops->init_device ? ops->init_device(r) : RB_OK;
}

static void fini_reducer(rb_reducer *r)
{
    if (!r->ops || !r->impl)
        return;
    if (r->ops->fini_device)
        r->ops->fini_device(r);
    if (r->ops->fini)
        r->ops->fini(r);
    free(r->impl);
    r->impl = NULL;
}

int rb_create(const rb_config *cfg, rb_reducer **out)
{
    if (!cfg || !out)
        return rb_fail(RB_ERR_ARG, "rb_create: NULL argument");
    *out = NULL;
    if (cfg->comm == MPI_COMM_NULL)
        return rb_fail(RB_ERR_ARG, "rb_create: MPI_COMM_NULL");
    const rb_reducer_ops *ops = NULL;
    int rc = rb_config_check(cfg, &ops);
    if (rc != RB_OK)
        return rc;

    rb_reducer *r = calloc(1, sizeof *r);
    int local = r ? RB_OK : rb_fail(RB_ERR_NOMEM, "rb_create: no memory");
    if (r) {
        r->ops = ops;
        r->cfg = *cfg;
        r->n = cfg->rows * cfg->cols;
        r->cur_phase = RB_PHASE_COUNT_;
        r->comm = MPI_COMM_NULL;
        local = rb_mpi_check(MPI_Comm_dup(cfg->comm, &r->comm), "MPI_Comm_dup");
    }
    if (local == RB_OK)   /* MPI errors come back as codes: the library never exits */
        local = rb_mpi_check(MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_RETURN),
                             "MPI_Comm_set_errhandler");
    if (local == RB_OK) {
        MPI_Comm_rank(r->comm, &r->rank);
        MPI_Comm_size(r->comm, &r->size);
        if (cfg->device == RB_DEVICE_CUDA)
            local = rb_device_init(r);
    }
    if (local == RB_OK && goes_staged(r)) {   /* now, not in a call: no rank fails alone */
        r->host_stage = rb_calloc(r->n, sizeof(float));
        if (!r->host_stage)
            local = rb_fail(RB_ERR_NOMEM, "no memory for the host staging buffer");
    }
    if (local == RB_OK)
        local = init_reducer(r);
    rc = rb_agree(cfg->comm, local);
    if (rc != RB_OK) {
        rb_destroy(r);
        return rc;
    }
    *out = r;
    return RB_OK;
}

/* rb_reduce_rows' buffers: the row form it hands out and a dense scratch
 * buffer (rb_rows_scratch). */
typedef struct rb_rows_state {
    rb_rowset out;
    float *scratch;
    size_t scratch_cap;
} rb_rows_state;

static void rows_state_free(rb_reducer *r)
{
    if (!r->rows_state)
        return;
    rb_rowset_free(&r->rows_state->out);
    free(r->rows_state->scratch);
    free(r->rows_state);
    r->rows_state = NULL;
}

void rb_destroy(rb_reducer *r)
{
    if (!r)
        return;
    fini_reducer(r);
    if (r->device_ctx)
        rb_device_fini(r);
    rows_state_free(r);
    free(r->host_stage);
    if (r->comm != MPI_COMM_NULL)
        MPI_Comm_free(&r->comm);
    free(r);
}

static void stats_reset(rb_stats *st)
{
    memset(st, 0, sizeof *st);
    st->partner = -1;
}

/* Around a reducer's call: the counts it does not assign keep NNZ_UNSET
 * and end as 0 with their `counted` bit clear, so the reducers just assign
 * what their algorithm counts. */
#define NNZ_UNSET UINT64_MAX

static void stats_open(rb_stats *st)
{
    st->nnz_local = st->nnz_result = NNZ_UNSET;
}

static void stats_finish(rb_stats *st)
{
    if (st->nnz_local != NNZ_UNSET)
        st->counted |= RB_COUNTED_NNZ_LOCAL;
    else
        st->nnz_local = 0;
    if (st->nnz_result != NNZ_UNSET)
        st->counted |= RB_COUNTED_NNZ_RESULT;
    else
        st->nnz_result = 0;
}

/* Device buffers without a device path go through a host copy (r->host_stage,
 * allocated by rb_create).  The copies are timed as encode and decode, so
 * phase times compare with the NCCL path's. */
static int reduce_staged(rb_reducer *r, float *dgrad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_device_to_host(r, r->host_stage, dgrad, r->n));
    RB_TRY(r->ops->reduce(r, r->host_stage, st));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    return rb_device_from_host(r, dgrad, r->host_stage, r->n);
}

/* Device buffers (checked to be on this rank's GPU): reduced where they
 * are by the reducer's NCCL path, else through a host copy. */
static int reduce_device_buffer(rb_reducer *r, float *dgrad, rb_stats *st)
{
    if (r->n > 0)
        RB_TRY(rb_device_check_buffer(r, dgrad));
    return goes_staged(r) ? reduce_staged(r, dgrad, st) : r->ops->reduce_device(r, dgrad, st);
}

int rb_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_stats scratch;
    if (!st)
        st = &scratch;
    stats_reset(st);
    if (!r || (!grad && r->n > 0))
        return rb_fail(RB_ERR_ARG, "rb_reduce: NULL argument");
    stats_open(st);
    int rc = r->cfg.device == RB_DEVICE_CUDA ? reduce_device_buffer(r, grad, st)
                                             : r->ops->reduce(r, grad, st);
    rb_phase_stop(r, st);
    stats_finish(st);
    return rc;
}

int rb_rows_scratch(rb_reducer *r, float **buf)
{
    rb_rows_state *rs = r->rows_state;
    if (!rs->scratch) {   /* the first call on every rank */
        void *b = NULL;
        int rc = rb_agree(r->comm, rb_reserve(&b, &rs->scratch_cap, r->n, sizeof(float)));
        if (rc != RB_OK) {
            free(b);
            rs->scratch_cap = 0;
            return rc;
        }
        rs->scratch = b;
    }
    *buf = rs->scratch;
    return RB_OK;
}

/* This rank's input is what rb_reduce_rows promises to take. */
static int check_rows(const rb_reducer *r, const rb_rows *in)
{
    if (!in)
        return rb_fail(RB_ERR_ARG, "rb_reduce_rows: NULL input");
    if (in->cols != r->cfg.cols)
        return rb_fail(RB_ERR_ARG, "rb_reduce_rows: rows of %zu floats, the reducer's have %zu",
                       in->cols, r->cfg.cols);
    if (in->nrows > r->cfg.rows)
        return rb_fail(RB_ERR_ARG, "rb_reduce_rows: %zu rows listed, the gradient has %zu",
                       in->nrows, r->cfg.rows);
    if (in->nrows && (!in->ids || !in->values))
        return rb_fail(RB_ERR_ARG, "rb_reduce_rows: NULL %s with %zu rows",
                       in->ids ? "values" : "ids", in->nrows);
    for (size_t i = 0; i < in->nrows; i++) {
        int64_t id = in->ids[i];
        if (id < 0 || (uint64_t)id >= r->cfg.rows)
            return rb_fail(RB_ERR_ARG, "rb_reduce_rows: row id %lld (ids[%zu]) outside [0, %zu)",
                           (long long)id, i, r->cfg.rows);
        if (i && id <= in->ids[i - 1])
            return rb_fail(RB_ERR_ARG, "rb_reduce_rows: row ids not strictly increasing: "
                           "ids[%zu] = %lld after %lld", i, (long long)id,
                           (long long)in->ids[i - 1]);
    }
    return RB_OK;
}

int rb_reduce_rows_generic(rb_reducer *r, rb_rows_call *c, rb_stats *st)
{
    float *x = NULL;
    RB_TRY(rb_rows_scratch(r, &x));
    if (c->dense)
        x = c->dense;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    rb_rows_to_dense(c->in, x, r->cfg.rows);
    RB_TRY(r->ops->reduce(r, x, st));
    c->dense_result = x;
    return RB_OK;
}

/* What the caller asked for, from the op's row form or dense result. */
static int deliver_rows(rb_reducer *r, rb_rows_call *c, rb_rows *out, rb_stats *st)
{
    rb_rowset *rows = &r->rows_state->out;
    rb_phase_start(r, st, RB_PHASE_DECODE);
    if (c->dense_result) {
        if (c->dense && c->dense != c->dense_result)
            memcpy(c->dense, c->dense_result, r->n * sizeof(float));
        if (out)
            RB_TRY(rb_rowset_from_dense(rows, c->dense_result, r->cfg.rows, r->cfg.cols));
    } else if (c->dense) {
        rb_rows view;
        rb_rowset_view(rows, &view);
        rb_rows_to_dense(&view, c->dense, r->cfg.rows);
    }
    if (out)
        rb_rowset_view(rows, out);
    return RB_OK;
}

int rb_reduce_rows(rb_reducer *r, const rb_rows *in, float *dense, rb_rows *out, rb_stats *st)
{
    rb_stats scratch;
    if (!st)
        st = &scratch;
    stats_reset(st);
    if (out)
        *out = (rb_rows){0, r ? r->cfg.cols : 0, NULL, NULL};
    if (!r)
        return rb_fail(RB_ERR_ARG, "rb_reduce_rows: NULL reducer");
    if (r->cfg.device != RB_DEVICE_HOST)   /* the same on every rank */
        return rb_fail(RB_ERR_UNSUPPORTED, "rb_reduce_rows: rows are taken in host memory only; "
                       "this reducer was created for CUDA buffers (use rb_reduce)");
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    int local = check_rows(r, in);
    if (local == RB_OK && !r->rows_state && !(r->rows_state = calloc(1, sizeof *r->rows_state)))
        local = rb_fail(RB_ERR_NOMEM, "rb_reduce_rows: no memory");
    rb_phase_start(r, st, RB_PHASE_COMM);
    /* A reducer that never communicates has no collective to protect: a
     * rank's own error is its answer, and the no-communication reference
     * sends nothing at all. */
    int rc = r->ops->traits & RB_TRAIT_NOCOMM ? local : rb_agree(r->comm, local);
    if (rc == RB_OK) {
        rb_rows_call call = {in, dense, &r->rows_state->out, NULL};
        rc = r->ops->reduce_rows ? r->ops->reduce_rows(r, &call, st)
                                 : rb_reduce_rows_generic(r, &call, st);
        if (rc == RB_OK)
            rc = deliver_rows(r, &call, out, st);
    }
    rb_phase_stop(r, st);
    return rc;
}

int rb_count_nonzeros(rb_reducer *r, const float *grad, uint64_t *nnz)
{
    if (!r || !nnz || (!grad && r->n > 0))
        return rb_fail(RB_ERR_ARG, "rb_count_nonzeros: NULL argument");
    *nnz = 0;
    if (r->cfg.device == RB_DEVICE_HOST || r->n == 0) {
        *nnz = rb_count_nonzero(grad, r->n);
        return RB_OK;
    }
#ifdef HAVE_CUDA
    RB_TRY(rb_device_check_buffer(r, grad));
    return rb_device_count_nonzero(r, grad, r->n, nnz);
#else
    return rb_fail(RB_ERR_UNSUPPORTED, "rb_count_nonzeros: this build has no CUDA support");
#endif
}

int rb_mix_params(rb_reducer *r, float *params, rb_stats *st)
{
    rb_stats scratch;
    if (!st)
        st = &scratch;
    stats_reset(st);
    if (!r)
        return rb_fail(RB_ERR_ARG, "rb_mix_params: NULL reducer");
    if (!r->ops->mix_params)
        return rb_fail(RB_ERR_UNSUPPORTED, "reducer '%s' does not mix parameters", r->ops->name);
    stats_open(st);
    int rc = r->ops->mix_params(r, params, st);
    rb_phase_stop(r, st);
    stats_finish(st);
    return rc;
}

int rb_progress(rb_reducer *r)
{
    if (!r)
        return rb_fail(RB_ERR_ARG, "rb_progress: NULL reducer");
    return r->ops->progress ? r->ops->progress(r) : RB_OK;
}

int rb_flush(rb_reducer *r, float *grad, float *params, rb_stats *st)
{
    rb_stats scratch;
    if (!st)
        st = &scratch;
    stats_reset(st);
    if (!r)
        return rb_fail(RB_ERR_ARG, "rb_flush: NULL reducer");
    stats_open(st);
    int rc = r->ops->flush ? r->ops->flush(r, grad, params, st) : RB_OK;
    rb_phase_stop(r, st);
    stats_finish(st);
    return rc;
}

/* The time of a phase change; none is read when phases are not timed. */
static double phase_clock(const rb_reducer *r)
{
    return r->cfg.phase_times ? MPI_Wtime() : 0.0;
}

/* Ends the current phase at time now. */
static void phase_stop_at(rb_reducer *r, rb_stats *st, double now)
{
    if (r->cur_phase == RB_PHASE_COUNT_)
        return;
    st->t_phase[r->cur_phase] += now - r->phase_t0;
    if (r->cfg.hook)
        r->cfg.hook(r->cfg.hook_ctx, (rb_phase)r->cur_phase, 0);
    r->cur_phase = RB_PHASE_COUNT_;
}

void rb_phase_stop(rb_reducer *r, rb_stats *st)
{
    if (r->cur_phase != RB_PHASE_COUNT_)
        phase_stop_at(r, st, phase_clock(r));
}

/* One clock read per phase change (each costs ~50 ns, against a 1 us
 * allreduce of 4 KiB); a second only after a hook, whose own time belongs
 * to no phase. */
void rb_phase_start(rb_reducer *r, rb_stats *st, rb_phase phase)
{
    double now = phase_clock(r);
    phase_stop_at(r, st, now);
    if (r->cfg.hook) {
        r->cfg.hook(r->cfg.hook_ctx, phase, 1);
        now = phase_clock(r);
    }
    r->cur_phase = phase;
    st->phases |= RB_PHASE_BIT(phase);
    r->phase_t0 = now;
}
