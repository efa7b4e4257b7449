/* AVX-512F kernels of rb_train's convolution layers (conv_avx512.c);
 * callers ask nn_conv_direct_usable first. */
#ifndef NN_CONV_AVX512_H
#define NN_CONV_AVX512_H

#include <stddef.h>

/* Direct convolution (no im2col) with AVX-512F, one sample at a time.
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

#endif
