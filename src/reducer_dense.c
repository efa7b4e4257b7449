/* dense: MPI_Allreduce of the whole buffer, then divide by p.  The
 * reference every other reducer is compared with, so its timed call holds
 * exactly that: no encode phase, no statistics pass (the benchmark counts
 * its input itself, untimed). */
#include "reducer_dense.h"

static int dense_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce_floats(r, st, grad, r->n));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_scale(grad, r->n, 1.0f / (float)r->size);
    st->nnz_result = r->n;
    return RB_OK;
}

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
    .reduce_device = RB_NCCL_OP(dense_reduce_device),
    .model = dense_model,
};
