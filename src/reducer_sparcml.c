/* sparcml: SparCML sparse allreduce (recursive doubling / reduce-scatter+allgather, dense switch).
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int sparcml_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 'sparcml' is not implemented yet");
}

static int sparcml_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_sparcml_ops = {
    .name = "sparcml",
    .description = "SparCML sparse allreduce (recursive doubling / reduce-scatter+allgather, dense switch)",
    .traits = RB_TRAIT_EXACT,
    .init = sparcml_init,
    .reduce = sparcml_reduce,
};
