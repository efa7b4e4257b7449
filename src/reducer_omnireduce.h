/* omnireduce's own header: what src/reducer_omnireduce.c and its NCCL path,
 * src/cuda/omnireduce_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_OMNIREDUCE_H
#define RB_REDUCER_OMNIREDUCE_H

#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

typedef struct omni_state {
    uint64_t *bitmap;
    size_t nblocks, words;
    size_t *slot_base;      /* rows path: union blocks before each bitmap word */
    float *packed;          /* union blocks, worst case all n elements (host path) */
    struct omni_device *dev;  /* device buffers of the NCCL path, else NULL */
} omni_state;

size_t omni_union_elements(const omni_state *s, size_t n, size_t b, size_t nb);

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/omnireduce_nccl.c). */
void omni_fini_device(rb_reducer *r);
int omni_init_device(rb_reducer *r);
int omni_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
