/* parallax's own header: what src/reducer_parallax.c and its NCCL path,
 * src/cuda/parallax_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_PARALLAX_H
#define RB_REDUCER_PARALLAX_H

#include "exchange.h"
#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

typedef struct parallax_state {
    rb_pair *send, *recv, *tmp, *result;
    size_t send_cap, recv_cap, tmp_cap, result_cap;
    int servers;
    rb_exchange x;             /* counts and displacements of the pair exchanges */
    struct parallax_device *dev;   /* device buffers of the NCCL path, else NULL */
} parallax_state;

int parallax_pull(rb_reducer *r, rb_stats *st, const rb_pair *red, size_t kr, size_t *kall);
uint32_t parallax_shard_lo(size_t n, int servers, int i);

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/parallax_nccl.c). */
void parallax_fini_device(rb_reducer *r);
int parallax_init_device(rb_reducer *r);
int parallax_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
