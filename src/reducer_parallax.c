/* parallax: sparse parameter server (index space sharded over servers).
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int parallax_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 'parallax' is not implemented yet");
}

static int parallax_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_parallax_ops = {
    .name = "parallax",
    .description = "sparse parameter server (index space sharded over servers)",
    .traits = RB_TRAIT_EXACT,
    .init = parallax_init,
    .reduce = parallax_reduce,
};
