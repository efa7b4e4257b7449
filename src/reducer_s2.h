/* s2's own header: what src/reducer_s2.c and its NCCL path,
 * src/cuda/s2_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_S2_H
#define RB_REDUCER_S2_H

#include "reducer_sketch.h"
#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

typedef struct s2_state {
    rb_countsketch cs;       /* on the NCCL device path: hashes only */
    struct s2_device *dev;   /* that path's device buffers, else NULL */
    uint64_t *bitmap;        /* local rows, then the union after the OR */
    size_t words;            /* 64-bit words of one bitmap */
    float *residual;         /* error feedback: rows*cols, NULL when off */
    uint64_t *residual_rows; /* rows where residual may be non-zero */
    uint64_t calls;          /* rb_reduce calls so far (hash of the call) */
} s2_state;

uint64_t s2_call_seed(const rb_reducer *r, const s2_state *s);
int s2_step_width(rb_reducer *r, rb_stats *st, uint64_t nnz_local, size_t *cols);
int s2_width_needs_count(const rb_reducer *r);

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/s2_nccl.c). */
void s2_fini_device(rb_reducer *r);
int s2_init_device(rb_reducer *r);
int s2_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
