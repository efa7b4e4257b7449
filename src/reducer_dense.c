/* dense: MPI_Allreduce of the whole buffer, then divide by p.  The
 * reference every other reducer is compared with. */
#include "rb_internal.h"
#include "sparse.h"

static int dense_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    st->nnz_local = rb_count_nonzero(grad, r->n);
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce_floats(r, st, grad, r->n));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_scale(grad, r->n, 1.0f / (float)r->size);
    st->nnz_result = r->n;
    return RB_OK;
}

const rb_reducer_ops rb_dense_ops = {
    .name = "dense",
    .description = "MPI_Allreduce of the whole buffer (reference)",
    .traits = RB_TRAIT_EXACT,
    .reduce = dense_reduce,
};
