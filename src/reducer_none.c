/* none: no communication; each rank keeps its own gradient (local SGD, the
 * compute-efficiency reference).  Its call does nothing and times nothing;
 * device buffers stay where they are under transport=nccl (no copy to the
 * host and back). */
#include "rb_internal.h"

static int none_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_OK;
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
#define NONE_REDUCE_DEVICE none_reduce
#else
#define NONE_REDUCE_DEVICE NULL
#endif

/* Cost model (docs/cost-model.md): the call does nothing. */
static void none_model(const rb_model_input *in, rb_model_result *out)
{
    (void)in, (void)out;
}

const rb_reducer_ops rb_none_ops = {
    .name = "none",
    .description = "no communication (local SGD reference)",
    .traits = RB_TRAIT_NOCOMM,
    .reduce = none_reduce,
    .reduce_device = NONE_REDUCE_DEVICE,
    .model = none_model,
};
