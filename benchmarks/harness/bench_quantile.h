/* Quantiles of measured samples. */
#ifndef BENCH_QUANTILE_H
#define BENCH_QUANTILE_H

#include <stddef.h>

/* q-quantile (0..1) of v[0..n) by sorting a copy (nearest rank); NaN if
 * n == 0. */
double bench_quantile(const double *v, size_t n, double q);

#endif
