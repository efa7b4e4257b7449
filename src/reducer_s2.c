/* s2: S2 Reducer: OR-reduced row bitmap + sum-allreduced count sketch.
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int s2_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 's2' is not implemented yet");
}

static int s2_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_s2_ops = {
    .name = "s2",
    .description = "S2 Reducer: OR-reduced row bitmap + sum-allreduced count sketch",
    .traits = RB_TRAIT_LOSSY,
    .init = s2_init,
    .reduce = s2_reduce,
};
