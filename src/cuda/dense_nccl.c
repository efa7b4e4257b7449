/* dense's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_dense.c). */
#include "reducer_dense.h"
#include "rb_device.h"
#include "reducer_cuda.h"


#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* Device buffers with the NCCL transport: ncclAllReduce in place, then a
 * scale kernel; each device call completes before the next phase starts. */
int dense_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_allreduce_sum(r, st, dgrad, r->n));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_TRY(rb_device_scale(r, dgrad, r->n, 1.0f / (float)r->size));
    st->nnz_result = r->n;
    return RB_OK;
}
#endif
