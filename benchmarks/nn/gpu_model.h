/* rb_train's models on a GPU: the layers of models.h run with cuDNN
 * (convolution, max pooling, ReLU) and cuBLAS (fully connected), plus the
 * kernels of gpu_kernels.h (embedding, softmax cross-entropy, SGD).
 * Same parameter layout as the host model (one dense buffer at the same
 * offsets, the embedding table apart; NHWC activations), so a reducer sees
 * the same gradient buffer, only in device memory.  FP32 throughout: TF32
 * tensor-core math is switched off so results stay comparable with the CPU
 * path.  Built only with CUDA, cuDNN and cuBLAS (gpu_model_none.c else). */
#ifndef NN_GPU_MODEL_H
#define NN_GPU_MODEL_H

#include "models.h"

typedef struct gpu_model gpu_model;

/* Non-zero when this build has the GPU models. */
int nn_gpu_model_available(void);

/* Mirror m on the current GPU (parameters copied from the host model).
 * 0, or -1 with err filled (no GPU, out of memory, cuDNN refusing a shape). */
int nn_gpu_model_create(const model *m, gpu_model **out, char *err, size_t errlen);
void nn_gpu_model_free(gpu_model *g);

/* x (batch x nn_model_in_size floats, or int32 ids for wordlm) and labels on
 * the host, copied in.  Fills *loss (summed over the batch) and *correct,
 * and keeps the loss gradient for nn_gpu_model_backward.  Synchronous. */
int nn_gpu_model_forward(gpu_model *g, const void *x, const int32_t *y, int batch, double *loss,
                      int *correct, char *err, size_t errlen);
/* Backward of the last forward into the device gradients (the embedding
 * gradient is zeroed first).  Synchronous. */
int nn_gpu_model_backward(gpu_model *g, int batch, char *err, size_t errlen);
/* Momentum SGD on the device, dense (weight decay wd) and embedding (none). */
int nn_gpu_model_update(gpu_model *g, double lr, double mu, double wd, char *err, size_t errlen);

/* Device buffers, same sizes as the host model's (NULL when absent). */
float *nn_gpu_model_params(gpu_model *g);
float *nn_gpu_model_grads(gpu_model *g);
float *nn_gpu_model_eparams(gpu_model *g);
float *nn_gpu_model_egrads(gpu_model *g);

/* Copy n floats between host and device (synchronous); 0 or -1. */
int nn_gpu_copy_to_host(float *host, const float *dev, size_t n);
int nn_gpu_copy_to_device(float *dev, const float *host, size_t n);
/* Parameters back into the host model (checksums, archive).  0 or -1. */
int nn_gpu_model_download(gpu_model *g, model *m);
/* Top-k / threshold sparsification of a device gradient, with the host
 * code's semantics and results: g += residual (error feedback), keep
 * |g| >= t (top-k: t = the k-th largest |g|, k = ceil(fraction * n), by
 * radix select), residual = what was dropped.  The residual stays on the
 * GPU; nothing is copied to the host but four 1 KiB histograms for top-k. */
typedef struct gpu_sparsifier gpu_sparsifier;
int nn_gpu_sparsifier_create(size_t n, int error_feedback, gpu_sparsifier **out, char *err,
                          size_t errlen);
/* topk: 1 keeps the top `value` fraction, 0 keeps |g| >= value. */
int nn_gpu_sparsify(gpu_sparsifier *s, float *dgrad, int topk, double value, char *err,
                 size_t errlen);
void nn_gpu_sparsifier_free(gpu_sparsifier *s);

/* "cuDNN 9.19.0, cuBLAS 13.0.0" or why the GPU models are absent. */
const char *nn_gpu_model_libraries(void);

#endif
