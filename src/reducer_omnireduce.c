/* omnireduce: block-sparse: OR-reduced block bitmap, union blocks sum-allreduced.
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int omnireduce_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 'omnireduce' is not implemented yet");
}

static int omnireduce_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_omnireduce_ops = {
    .name = "omnireduce",
    .description = "block-sparse: OR-reduced block bitmap, union blocks sum-allreduced",
    .traits = RB_TRAIT_EXACT,
    .init = omnireduce_init,
    .reduce = omnireduce_reduce,
};
