/* agsparse: allgather of (index, value) pairs, summed locally.
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int agsparse_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 'agsparse' is not implemented yet");
}

static int agsparse_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_agsparse_ops = {
    .name = "agsparse",
    .description = "allgather of (index, value) pairs, summed locally",
    .traits = RB_TRAIT_EXACT,
    .init = agsparse_init,
    .reduce = agsparse_reduce,
};
