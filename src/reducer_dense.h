/* dense's own header: what src/reducer_dense.c and its NCCL path,
 * src/cuda/dense_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_DENSE_H
#define RB_REDUCER_DENSE_H

#include "rb_internal.h"
#include "reducer_sparse.h"

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/dense_nccl.c). */
int dense_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
