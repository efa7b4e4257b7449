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
 * 2. Direct convolutions and 3. dense-layer GEMMs with AVX-512F (below):
 * callers ask nn_conv_direct_usable / nn_dense512_usable first. */
#ifndef NN_SMALL_GEMM_H
#define NN_SMALL_GEMM_H

#include <stddef.h>

enum { SMALL_GEMM_MAX_N = 8, SMALL_GEMM_MAX_K = 1024 };

/* y[rows x n] += a[rows x k] w[n x k]^T (all row-major, no padding). */
int nn_small_gemm_add_abt(size_t rows, int n, int k, const float *a, const float *w, float *y);

/* dw[n x k] += dy[rows x n]^T a[rows x k]. */
int nn_small_gemm_atb(size_t rows, int n, int k, const float *dy, const float *a, float *dw);

/* 2. Direct convolution (no im2col) with AVX-512F, one sample at a time.
 * The input is NHWC with its zero border already added (`prow` floats per
 * padded row); the output and dy are NHWC; filters are KRSC (oc x k x k x
 * c), as the layers keep them.  Vectorised over 16 output channels: the
 * input values are broadcast from where they lie, so nothing is copied
 * into patch rows (im2col wrote 5 MB per LeNet batch for conv1 and redid
 * it in the backward pass).  Weights are first packed by
 * conv_direct_pack_* into `nn_conv_direct_packed_size` floats (64-byte
 * aligned). */
typedef struct conv_geom {
    int c, k, oc;   /* input channels, kernel size, output channels */
    int oh, ow;     /* output rows and columns */
    size_t prow;    /* floats per padded input row: padded width x c */
} conv_geom;

/* 1 when the CPU has AVX-512F and the kernels take the shape (with
 * need_dx, the input gradient too); 0 otherwise: use im2col + GEMM. */
int nn_conv_direct_usable(const conv_geom *g, int need_dx);
size_t nn_conv_direct_packed_size(const conv_geom *g);
void nn_conv_direct_pack_forward(const conv_geom *g, const float *w, float *wt);
void nn_conv_direct_pack_grad_x(const conv_geom *g, const float *w, float *wt);
/* y = bias + x * w for one sample (wt from nn_conv_direct_pack_forward). */
void nn_conv_direct_forward(const conv_geom *g, const float *xpad, const float *wt,
                         const float *bias, float *y);
/* dwt += the weight gradient of one sample, in the packed layout; start
 * from zeros and unpack into dw (oc x k x k x c) after the last sample. */
void nn_conv_direct_grad_w(const conv_geom *g, const float *xpad, const float *dy, float *dwt);
void nn_conv_direct_unpack_grad_w(const conv_geom *g, const float *dwt, float *dw);
/* dxpad += the input gradient of one sample, padded like xpad (wt from
 * nn_conv_direct_pack_grad_x). */
void nn_conv_direct_grad_x(const conv_geom *g, const float *dy, const float *wt, float *dxpad);

/* 3. The three GEMMs of a dense layer with AVX-512F, on row-major buffers
 * as the layers keep them: x (batch x in), w (out x in), y and dy (batch
 * x out).  OpenBLAS 0.3.21 runs this CPU (AVX-512) with its AVX2 kernels
 * at half the FMA width; these keep 6-8 rows x 64 columns of the result
 * in registers.  Each computes one range of the result, so that the
 * layers' threads can split it. */
int nn_dense512_usable(void);
/* x transposed into batch columns padded to whole blocks of 64 (zeros),
 * for nn_dense512_forward: nn_dense512_packed_size floats, 64-byte aligned. */
size_t nn_dense512_packed_size(int batch, int in);
void nn_dense512_pack_input(const float *x, int batch, int in, float *xt);
/* y[b][o] = bias[o] + sum_i x[b][i] w[o][i], for o in [o0, o1). */
void nn_dense512_forward(const float *xt, int batch, int in, const float *w, const float *bias,
                      int out, int o0, int o1, float *y);
/* dw[o][i] = sum_b dy[b][o] x[b][i], for o in [o0, o1) (overwritten). */
void nn_dense512_grad_w(const float *dy, const float *x, int batch, int in, int out, int o0, int o1,
                     float *dw);
/* dx[b][i] = sum_o dy[b][o] w[o][i], for i in [i0, i1) (overwritten). */
void nn_dense512_grad_x(const float *dy, const float *w, int batch, int in, int out, int i0, int i1,
                     float *dx);

#endif
