/* Layers of rb_train's models.  Activations are NHWC (sample-major, channel
 * last) so a convolution is one im2col + one SGEMM over the whole batch and
 * its result needs no transpose.  Parameters and gradients are views into
 * the model's flat buffers (see models.h), so a reducer sees every dense
 * gradient as one buffer.  Backward overwrites the parameter gradients
 * (except the embedding, which accumulates into a table the model zeroes).
 * CPU (BLAS) only for now; a device path would add a second implementation
 * of the same functions behind this interface. */
#ifndef NN_LAYERS_H
#define NN_LAYERS_H

#include "layer.h"

#include <stddef.h>
#include <stdint.h>


/* Fill shapes and parameter counts; allocate scratch for max_batch
 * samples and for as many threads as OpenBLAS has now (rb_train sets it
 * to --threads first; see "threads" in layers.c).  0 on success, -1 on
 * allocation failure. */
int nn_layer_dense(layer *l, int in, int out, int max_batch);
int nn_layer_relu(layer *l, int c, int h, int w, int max_batch);
int nn_layer_conv(layer *l, int in_c, int h, int w, int out_c, int k, int pad, int max_batch);
int nn_layer_maxpool(layer *l, int c, int h, int w, int k, int max_batch);
int nn_layer_embed(layer *l, int vocab, int dim, int ctx, int max_batch);
void nn_layer_free(layer *l);
/* Bytes of scratch the constructor of l's kind and shape allocates for
 * max_batch samples (l may have been built for another batch). */
double nn_layer_scratch_bytes(const layer *l, int max_batch);

/* 1: convolutions take im2col + GEMM and dense layers OpenBLAS even where
 * the AVX-512 kernels (small_gemm.h) would run; the tests compare the
 * two.  0 (default): AVX-512 kernels where the CPU and shape allow. */
void nn_layer_set_reference_kernels(int on);

/* nn_layer_in_size, nn_layer_out_size: floats per sample (layer.h). */
/* Floating-point operations of a forward pass per sample (2 per multiply-add). */
double nn_layer_flops(const layer *l);

/* in: batch x nn_layer_in_size floats (LAYER_EMBED: batch x ctx int32 ids). */
void nn_layer_forward(layer *l, const void *in, float *out, int batch);
/* din may be NULL (first layer: input gradient not needed).  For
 * LAYER_EMBED din is ignored and dout is added into the table gradient. */
void nn_layer_backward(layer *l, const void *in, const float *out, const float *dout,
                    float *din, int batch);

/* Softmax cross-entropy over logits[batch x classes]: returns the summed
 * loss, counts correct argmax predictions, and (if dlogits) writes the
 * gradient of the mean loss (divided by `scale`, the batch size). */
double nn_softmax_xent(const float *logits, const int32_t *labels, int batch, int classes,
                    float *dlogits, double scale, int *correct);

#endif
