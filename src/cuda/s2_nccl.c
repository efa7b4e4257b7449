/* s2's NCCL path: device buffers under transport=nccl (the host
 * algorithm, the rows path and the cost model are in src/reducer_s2.c). */
#include "reducer_s2.h"
#include "rb_device.h"
#include "reducer_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
/* The NCCL path: the same steps as s2_reduce with the buffers on the GPU
 * and the kernels of src/cuda (same hashes, same median networks).  The
 * bitmap OR is rb_device_bitmap_or's (allgather + OR below 16 ranks, a
 * byte per row and ncclMax from 16), so its wire bytes differ from the
 * host path's MPI_BOR allreduce. */
typedef struct s2_device {
    uint64_t *bitmap;        /* local rows, then the union */
    void *or_scratch;        /* rb_device_bitmap_or */
    float *table;            /* r x c sketch of this step */
    float *residual;         /* error feedback, NULL when off */
    size_t bitmap_cap, or_cap, table_cap, residual_cap;
} s2_device;

void s2_fini_device(rb_reducer *r)
{
    s2_state *s = r->impl;
    s2_device *d = s->dev;
    if (!d)
        return;
    rb_device_release((void **)&d->bitmap, &d->bitmap_cap);
    rb_device_release(&d->or_scratch, &d->or_cap);
    rb_device_release((void **)&d->table, &d->table_cap);
    rb_device_release((void **)&d->residual, &d->residual_cap);
    free(d);
    s->dev = NULL;
}

int s2_init_device(rb_reducer *r)
{
    s2_state *s = r->impl;
    s->dev = calloc(1, sizeof *s->dev);
    if (!s->dev)
        return rb_fail(RB_ERR_NOMEM, "s2: no memory");
    s2_device *d = s->dev;
    size_t or_bytes = rb_device_bitmap_or_scratch(r, r->cfg.rows);
    RB_TRY(rb_device_reserve((void **)&d->bitmap, &d->bitmap_cap, s->words * 8));
    RB_TRY(rb_device_reserve(&d->or_scratch, &d->or_cap, or_bytes));
    if (r->cfg.opts.error_feedback) {
        RB_TRY(rb_device_reserve((void **)&d->residual, &d->residual_cap, r->n * sizeof(float)));
        RB_TRY(rb_device_zero(r, d->residual, r->n * sizeof(float)));
        RB_TRY(rb_device_sync(r));
    }
    return RB_OK;
}

/* Width, zeroed table and hashes of this step's device sketch. */
static int device_sketch_for_step(rb_reducer *r, rb_stats *st, uint64_t nnz_local,
                                  rbk_sketch *sk)
{
    s2_state *s = r->impl;
    s2_device *d = s->dev;
    size_t cols = 1;
    RB_TRY(s2_step_width(r, st, nnz_local, &cols));
    size_t bytes = (size_t)s->cs.rows * cols * sizeof(float);
    if (bytes > d->table_cap) {   /* every rank takes this branch together */
        int rc = rb_agree(r->comm, rb_device_reserve((void **)&d->table, &d->table_cap, bytes));
        if (rc != RB_OK) {   /* the same capacity (none) on every rank again */
            rb_device_release((void **)&d->table, &d->table_cap);
            return rc;
        }
    }
    RB_TRY(rb_device_zero(r, d->table, bytes));
    sk->rows = s->cs.rows;
    sk->cols = cols;
    uint64_t seed = s2_call_seed(r, s);
    for (int j = 0; j < sk->rows; j++)
        rb_cs_row_coeffs(seed, j, &sk->co[j]);
    return RB_OK;
}

int s2_reduce_device(rb_reducer *r, float *dgrad, rb_stats *st)
{
    s2_state *s = r->impl;
    s2_device *d = s->dev;
    cudaStream_t stream = (cudaStream_t)rb_device_stream(r);
    const size_t n = r->n, nrows = r->cfg.rows, cols = r->cfg.cols;

    rb_phase_start(r, st, RB_PHASE_ENCODE);
    if (d->residual) {   /* g' = g + residual, residual = 0 */
        RB_DEV(rbk_add(dgrad, d->residual, n, stream));
        RB_TRY(rb_device_zero(r, d->residual, n * sizeof(float)));
    }
    RB_DEV(rbk_bitmap_of_groups(dgrad, n, cols, d->bitmap, stream));
    uint64_t nnz = 0;
    if (s2_width_needs_count(r)) {
        RB_TRY(rb_device_count_nonzero(r, dgrad, n, &nnz));
        st->nnz_local = nnz;
    }
    rbk_sketch sk;
    RB_TRY(device_sketch_for_step(r, st, nnz, &sk));
    s->calls++;
    RB_DEV(rbk_cs_insert(&sk, d->table, dgrad, n, 0, stream));
    if (d->residual) {   /* residual = g' - this rank's own estimate, on its rows (finite) */
        RB_DEV(rbk_cs_decode(&sk, d->table, d->residual, n, cols, d->bitmap, 0, 1.0f, stream));
        RB_DEV(rbk_subtract_from(d->residual, dgrad, n, stream));
    }
    RB_TRY(rb_device_sync(r));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_device_bitmap_or(r, st, d->bitmap, nrows, RB_BITMAP_AUTO, d->or_scratch));
    RB_TRY(rb_device_download(r, s->bitmap, d->bitmap, s->words * sizeof *s->bitmap));
    size_t union_rows = rb_bitmap_popcount(s->bitmap, nrows);
    st->nnz_result = (uint64_t)union_rows * cols;
    if (union_rows == 0)
        return RB_OK;   /* same on every rank: nothing to send, grad is all zero */
    RB_TRY(rb_device_allreduce_sum(r, st, d->table, (size_t)sk.rows * sk.cols));

    /* Decoding writes every element: the estimate on union rows, 0 elsewhere. */
    rb_phase_start(r, st, RB_PHASE_DECODE);
    RB_DEV(rbk_cs_decode(&sk, d->table, dgrad, n, cols, d->bitmap, 0, 1.0f / (float)r->size,
                         stream));
    return rb_device_sync(r);
}
#endif
