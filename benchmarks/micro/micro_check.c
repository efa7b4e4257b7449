/* rb_micro's validation: each rank's result against the exact average,
 * reduced over ranks into the row's error columns. */
#include "micro.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* Summing p values of magnitude <= 1 in another order, then dividing by p. */
double micro_exact_tolerance(int p) { return 8.0 * p * FLT_EPSILON; }

/* This rank's errors against the truth. */
typedef struct local_errors {
    double err2, ref2, max_abs;
    int64_t wrong;                 /* elements beyond the exact tolerance */
    uint64_t true_rows, hit_rows;  /* non-zero rows of the truth; of them, non-zero in the result */
} local_errors;

static local_errors errors_of(const micro_bufs *b, const bench_gradgen *g)
{
    size_t n = g->rows * g->cols;
    double tol = micro_exact_tolerance(g->nranks);
    local_errors e = {0};
    for (size_t i = 0; i < n; i++) {
        /* the truth is finite: a NaN result is an infinite error */
        double d = fabs((double)b->work[i] - (double)b->truth[i]);
        if (isnan(d))
            d = INFINITY;
        e.err2 += d * d;
        e.ref2 += (double)b->truth[i] * b->truth[i];
        if (d > e.max_abs)
            e.max_abs = d;
        e.wrong += d > tol;
    }
    for (size_t r = 0; r < g->rows; r++) {
        int truth_nz = 0, got_nz = 0;
        for (size_t c = 0; c < g->cols; c++) {
            truth_nz |= b->union_mask[r * g->cols + c];
            got_nz |= b->work[r * g->cols + c] != 0.0f;
        }
        e.true_rows += truth_nz;
        e.hit_rows += truth_nz && got_nz;
    }
    return e;
}

void micro_validate(micro_run *c, const bench_gradgen *g, unsigned traits, micro_row *row)
{
    size_t n = g->rows * g->cols;
    /* Test hook proving the validator catches a wrong value. */
    if (c->rank == 0 && n > 0 && getenv("RB_TEST_CORRUPT_RESULT"))
        c->bufs->work[n / 2] += 1.0f;
    local_errors e = errors_of(c->bufs, g);
    double rel = e.ref2 > 0 ? sqrt(e.err2 / e.ref2) : sqrt(e.err2);
    double local[3] = {rel, e.max_abs, (double)e.wrong}, worst[3];
    MPI_Allreduce(local, worst, 3, MPI_DOUBLE, MPI_MAX, c->comm);
    uint64_t rows_local[2] = {e.true_rows, e.hit_rows}, rows_min[2];
    MPI_Allreduce(rows_local, rows_min, 2, MPI_UINT64_T, MPI_MIN, c->comm);
    long long wrong_total = 0, wl = (long long)e.wrong;
    MPI_Allreduce(&wl, &wrong_total, 1, MPI_LONG_LONG, MPI_SUM, c->comm);
    row->checked = 1;
    row->rel_l2_err = worst[0];
    row->max_abs_err = worst[1];
    row->wrong = (traits & RB_TRAIT_EXACT) ? wrong_total : 0;
    row->recall = rows_min[0] ? (double)rows_min[1] / (double)rows_min[0] : 1.0;
    row->consensus = (traits & RB_TRAIT_GOSSIP) ? worst[0] : 0.0;
}
