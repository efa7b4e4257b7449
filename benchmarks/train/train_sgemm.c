/* rb_train --bench-sgemm: what OpenBLAS's SGEMM reaches on this core, the
 * yardstick for the model's own GFLOP/s. */
#include "train.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

double train_sgemm_gflops(void)
{
    const int n = 512;
    float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
          *c = malloc((size_t)n * n * sizeof *c);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.1f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    int reps = 0;
    double t0 = MPI_Wtime(), t;
    do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        reps++;
    } while ((t = MPI_Wtime() - t0) < 1.0);
    free(a), free(b), free(c);
    return 2.0 * n * n * (double)n * reps / t / 1e9;
}
