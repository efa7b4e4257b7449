/* AVX-512F kernels of rb_train's dense layers (dense_avx512.c); callers
 * ask nn_dense512_usable first. */
#ifndef NN_DENSE_AVX512_H
#define NN_DENSE_AVX512_H

#include <stddef.h>

/* The three GEMMs of a dense layer with AVX-512F, on row-major buffers
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
