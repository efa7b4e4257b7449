/* none: no communication; each rank keeps its own gradient (local SGD, the
 * compute-efficiency reference).  Device buffers are counted where they
 * are under transport=nccl (no copy to the host and back). */
#include "rb_device.h"
#include "sparse.h"

static int none_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    st->nnz_local = rb_count_nonzero(grad, r->n);
    st->nnz_result = st->nnz_local;
    return RB_OK;
}

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
static int none_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_device_count_nonzero(r, dgrad, r->n, &st->nnz_local));
    st->nnz_result = st->nnz_local;
    return RB_OK;
}
#define NONE_REDUCE_DEVICE none_reduce_device
#else
#define NONE_REDUCE_DEVICE NULL
#endif

/* Cost model (docs/cost-model.md): the non-zero count, nothing sent. */
static void none_model(const rb_model_input *in, rb_model_result *out)
{
    rb_model_local(in, out, 4 * rb_model_elements(in));
}

const rb_reducer_ops rb_none_ops = {
    .name = "none",
    .description = "no communication (local SGD reference)",
    .traits = RB_TRAIT_NOCOMM,
    .reduce = none_reduce,
    .reduce_device = NONE_REDUCE_DEVICE,
    .model = none_model,
};
