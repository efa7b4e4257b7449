/* none: no communication; each rank keeps its own gradient (local SGD, the
 * compute-efficiency reference).  Its call does nothing and times nothing;
 * device buffers stay where they are under transport=nccl (no copy to the
 * host and back).  Rows stay rows: the generic rows path would scatter them
 * into the whole dense table and read it back (~1.4 ms a step on embedlm),
 * which made the reference slower than reducers that communicate. */
#include "rb_internal.h"
#include "rowset.h"
#include "reducer_sparse.h"

#include <string.h>

static int none_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_OK;
}

/* The result is this rank's own rows: copied into the library's row form,
 * the only work a caller of rb_reduce_rows must get back. */
static int none_reduce_rows(rb_reducer *r, rb_rows_call *c, rb_stats *st)
{
    (void)r, (void)st;
    const rb_rows *in = c->in;
    RB_TRY(rb_rowset_reserve(c->rows, in->nrows, in->cols));
    if (in->nrows) {
        memcpy(c->rows->ids, in->ids, in->nrows * sizeof *in->ids);
        memcpy(c->rows->values, in->values, in->nrows * in->cols * sizeof *in->values);
    }
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
    .reduce_rows = none_reduce_rows,
    .model = none_model,
};
