/* agsparse's own header: what src/reducer_agsparse.c and its NCCL path,
 * src/cuda/agsparse_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_AGSPARSE_H
#define RB_REDUCER_AGSPARSE_H

#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

typedef struct agsparse_state {
    rb_pair *send, *recv;
    size_t send_cap, recv_cap;
    uint64_t *nnz_of;       /* per rank */
    int *counts, *displs;   /* per rank, for the allgatherv */
    /* rows path: the rank streams in recv (p + 1), a bitmap of the rows
     * (zero between calls) and the slot of each of its words */
    size_t *offs, *row_base;
    uint64_t *row_seen;
    struct agsparse_device *dev;   /* device buffers of the NCCL path, else NULL */
} agsparse_state;

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/agsparse_nccl.c). */
void agsparse_fini_device(rb_reducer *r);
int agsparse_init_device(rb_reducer *r);
int agsparse_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
