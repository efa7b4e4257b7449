/* none: no communication; each rank keeps its own gradient (local SGD, the
 * compute-efficiency reference). */
#include "rb_internal.h"
#include "sparse.h"

static int none_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    st->nnz_local = rb_count_nonzero(grad, r->n);
    st->nnz_result = st->nnz_local;
    return RB_OK;
}

const rb_reducer_ops rb_none_ops = {
    .name = "none",
    .description = "no communication (local SGD reference)",
    .traits = RB_TRAIT_NOCOMM,
    .reduce = none_reduce,
};
