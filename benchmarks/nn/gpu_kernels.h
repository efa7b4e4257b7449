/* CUDA kernels of rb_train's GPU models (gpu_kernels.cu), callable from
 * C.  What cuDNN and cuBLAS do not cover: the embedding gather / scatter,
 * the softmax cross-entropy and the fused momentum-SGD update.  Each
 * function enqueues on the legacy default stream (the one cuDNN and cuBLAS
 * use here) and returns the launch's cudaError_t as int (0 = success).
 * sm_60 features at most (float atomicAdd), like src/cuda/rb_kernels.cu. */
#ifndef NN_GPU_KERNELS_H
#define NN_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i][0..dim) = table[ids[i]][0..dim) for i < n (n = batch x ctx). */
int nn_gpu_embed_forward(const int32_t *ids, size_t n, const float *table, int dim, float *out);
/* dtable[ids[i]] += dout[i] (the caller zeroes dtable once per step). */
int nn_gpu_embed_backward(const int32_t *ids, size_t n, const float *dout, int dim, float *dtable);

/* Per sample s: loss[s] = logsumexp(z_s) - z_s[label], correct[s] =
 * (first argmax == label), dz_s = (softmax(z_s) - onehot) / scale.  Same
 * formula and tie rule as nn_softmax_xent in layers.c. */
int nn_gpu_softmax_xent(const float *logits, const int32_t *labels, int batch, int classes,
                    float *dlogits, float scale, float *loss, int32_t *correct);

/* v = mu v + (g + wd w); w -= lr v  (the host update in benchmarks/train/train_optim.c). */
int nn_gpu_sgd(float *w, const float *g, float *v, size_t n, float lr, float mu, float wd);

/* y[r][c] = b[c] for a rows x cols row-major y (dense layer bias). */
int nn_gpu_broadcast_rows(const float *b, float *y, int rows, int cols);

#ifdef __cplusplus
}
#endif
#endif
