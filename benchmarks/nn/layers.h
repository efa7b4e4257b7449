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

#include <stddef.h>
#include <stdint.h>

typedef enum { LAYER_DENSE, LAYER_RELU, LAYER_CONV, LAYER_MAXPOOL, LAYER_EMBED } layer_kind;

typedef struct layer {
    layer_kind kind;
    int in_c, in_h, in_w;      /* per-sample input shape (dense: in_c features) */
    int out_c, out_h, out_w;   /* per-sample output shape */
    int k, pad;                /* conv kernel and zero padding; pool window */
    int vocab, ctx;            /* embedding: table rows, ids per sample (dim = out_c / ctx) */
    size_t n_w, n_b;           /* parameter counts */
    float *w, *b, *dw, *db;    /* views into the model's buffers (NULL if none) */
    int max_batch;
    float *col, *dcol;         /* conv scratch: im2col of one chunk of samples (pixels x
                                  patch), its gradient; pool: a row of window maxima */
    float *xpad;               /* conv scratch: the input with its zero border */
    int32_t *argmax;           /* pool: input index of each output */
    int32_t *rowarg;           /* pool scratch: indices of a row of window maxima
                                  (their values in col) */
    float *wt, *dwt, *dxpad;   /* conv, direct kernels (NULL without AVX-512): packed
                                  weights, packed weight gradient, one sample's padded
                                  input gradient */
    int parts;                 /* conv, pool: parts (threads) whose scratch is kept: col,
                                  dcol, xpad, dwt, dxpad, pool rows hold one block each */
    float *dwpart, *dbpart;    /* conv with parts > 1: weight gradients of parts 1..,
                                  bias gradients of every part */
    float *xt;                 /* dense, AVX-512 kernels (NULL without): the input
                                  transposed (nn_dense512_pack_input) */
} layer;

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

size_t nn_layer_in_size(const layer *l);   /* floats per sample */
size_t nn_layer_out_size(const layer *l);
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
