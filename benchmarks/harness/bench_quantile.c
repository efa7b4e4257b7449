/* Quantiles (bench_quantile.h). */
#include "bench_quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    /* Nearest-rank definition. */
    size_t k = (size_t)ceil(q * (double)n);
    double r = c[k == 0 ? 0 : k - 1];
    free(c);
    return r;
}
