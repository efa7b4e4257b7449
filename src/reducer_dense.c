/* dense: MPI_Allreduce of the whole buffer, then divide by p.  The
 * reference every other reducer is compared with, so its timed call holds
 * exactly that: no encode phase, no statistics pass (the benchmark counts
 * its input itself, untimed). */
#include "rb_internal.h"
#include "reducer_sparse.h"

static int dense_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce_floats(r, st, grad, r->n));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_scale(grad, r->n, 1.0f / (float)r->size);
    st->nnz_result = r->n;
    return RB_OK;
}

#ifdef HAVE_CUDA
#include "rb_device.h"

/* Device buffers with the NCCL transport: ncclAllReduce in place, then a
 * scale kernel; each device call completes before the next phase starts. */
static int dense_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_allreduce_sum(r, st, dgrad, r->n));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_TRY(rb_device_scale(r, dgrad, r->n, 1.0f / (float)r->size));
    st->nnz_result = r->n;
    return RB_OK;
}
#define DENSE_REDUCE_DEVICE dense_reduce_device
#else
#define DENSE_REDUCE_DEVICE NULL
#endif

/* Cost model (docs/cost-model.md): allreduce of 4n bytes, scale. */
static void dense_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in);
    rb_model_allreduce(in, out, 4 * n);
    rb_model_local(in, out, 8 * n);
}

const rb_reducer_ops rb_dense_ops = {
    .name = "dense",
    .description = "MPI_Allreduce of the whole buffer (reference)",
    .traits = RB_TRAIT_EXACT,
    .reduce = dense_reduce,
    .reduce_device = DENSE_REDUCE_DEVICE,
    .model = dense_model,
};
