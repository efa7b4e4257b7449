/* Kernels of rb_train's layers for what OpenBLAS (0.3.21, AVX2 kernels on
 * every x86 CPU it knows) does poorly, each built with a per-function
 * target attribute and chosen at run time, so the program runs on any
 * x86-64 CPU (and elsewhere, where they report that they do not run):
 *
 * 1. GEMMs of a convolution with at most 8 output channels, for the CPUs
 * with AVX2 and FMA (the im2col path).  OpenBLAS runs these shapes at a third of its SGEMM
 * rate (LeNet's conv1 has 6 channels and K = 25: a third of its 16-wide
 * AVX2 tile does work, and it packs the tall matrix first); a kernel that
 * keeps one pixel's channels in one 8-lane register runs them about twice
 * as fast.  Each function returns 0 when it did the work, and -1, having
 * touched nothing, when the CPU lacks AVX2/FMA, the shape does not fit, or
 * OpenBLAS has more than one thread (these kernels use one): the caller
 * then calls cblas_sgemm.
 *
 * The AVX-512 kernels: conv_avx512.h (direct convolutions) and
 * dense_avx512.h (dense-layer GEMMs). */
#ifndef NN_SMALL_GEMM_H
#define NN_SMALL_GEMM_H

#include <stddef.h>

enum { SMALL_GEMM_MAX_N = 8, SMALL_GEMM_MAX_K = 1024 };

/* y[rows x n] += a[rows x k] w[n x k]^T (all row-major, no padding). */
int nn_small_gemm_add_abt(size_t rows, int n, int k, const float *a, const float *w, float *y);

/* dw[n x k] += dy[rows x n]^T a[rows x k]. */
int nn_small_gemm_atb(size_t rows, int n, int k, const float *dy, const float *a, float *dw);

#endif
