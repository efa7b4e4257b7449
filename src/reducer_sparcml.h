/* sparcml's own header: what src/reducer_sparcml.c and its NCCL path,
 * src/cuda/sparcml_nccl.c, share.  Private to the library. */
#ifndef RB_REDUCER_SPARCML_H
#define RB_REDUCER_SPARCML_H

#include "exchange.h"
#include "rb_device.h"
#include "rowset.h"
#include "reducer_sparse.h"

typedef struct sparcml_state {
    rb_pair *a, *b, *c;         /* stream, received stream, merge output */
    size_t cap_a, cap_b, cap_c;
    float *dense_in;            /* a partner's dense stream */
    size_t cap_dense;
    int p2;                     /* largest power of two <= p */
    /* rsag */
    rb_exchange x;             /* counts and displacements of the pair exchanges */
    uint64_t *nnz_of;
    /* host path: s->a already holds this call's local pairs */
    int packed;
    /* rb_reduce_rows: the call, and whether its rows still have to be
     * written into grad (a scratch buffer) before grad is read */
    rb_rows_call *rows_call;
    int rows_pending;
    struct sparcml_device *dev;   /* device buffers of the NCCL path, else NULL */
} sparcml_state;

/* The stream of this rank during recursive doubling: k sorted pairs in
 * s->a, or (dense) the partial sum in grad itself. */
typedef struct sparcml_stream {
    size_t k;
    int dense;
} sparcml_stream;

/* The steps sparcml is made of, where the streams live: host memory and
 * MPI (host_backend), or device memory and NCCL (device_backend).  One
 * driver (sparcml_run) and one recursive doubling use either. */
typedef struct sparcml_backend {
    /* recursive doubling */
    int (*swap)(rb_reducer *r, rb_stats *st, float *grad, const sparcml_stream *m, int dest, int src,
                uint64_t *their_head);
    int (*combine)(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t their_head);
    int (*adopt)(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t head);
    int (*rsag)(rb_reducer *r, rb_stats *st, float *grad, sparcml_stream *m);
    int (*dense_allreduce)(rb_reducer *r, rb_stats *st, float *grad);
    /* pack the k non-zeros of grad into the stream (index order) */
    int (*pack)(rb_reducer *r, const float *grad, size_t k);
    /* grad = the sum / p: scaled in place (dense) or set from the stream */
    int (*decode)(rb_reducer *r, float *grad, const sparcml_stream *m);
    /* make grad hold the local input before it is read dense (NULL: it does) */
    int (*materialize)(rb_reducer *r, float *grad);
} sparcml_backend;

#define DENSE_MARK UINT64_MAX

int sparcml_adopt_result(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t head);
int sparcml_choose_algo(rb_reducer *r, rb_stats *st, size_t k, int *algo, int *dense_all);
int sparcml_combine(rb_reducer *r, float *grad, sparcml_stream *m, uint64_t their_head);
size_t sparcml_range_lo(size_t n, int p, int i);
int sparcml_recdbl(rb_reducer *r, rb_stats *st, float *grad, sparcml_stream *m,
                  const sparcml_backend *ops);
int sparcml_rsag(rb_reducer *r, rb_stats *st, float *grad, sparcml_stream *m);
int sparcml_run(rb_reducer *r, float *grad, rb_stats *st, size_t k,
                       const sparcml_backend *b);
void sparcml_swap_pairs(rb_pair **x, size_t *xc, rb_pair **y, size_t *yc);
int sparcml_swap_streams(rb_reducer *r, rb_stats *st, float *grad, const sparcml_stream *m,
                        int dest, int src, uint64_t *their_head);
int sparcml_too_big(const rb_reducer *r, size_t k);

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path (src/cuda/sparcml_nccl.c). */
void sparcml_fini_device(rb_reducer *r);
int sparcml_init_device(rb_reducer *r);
int sparcml_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st);
#endif

#endif
