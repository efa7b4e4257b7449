/* One layer of benchmarks/nn: its fields (layers.h has the functions), and
 * what the layers' files share: the target clones of vectorised loops,
 * the threads' minimum work, the convolution's chunking and scratch
 * strides, the layer shapes. */
#ifndef NN_LAYER_H
#define NN_LAYER_H

#include "conv_avx512.h"
#include "layer_threads.h"

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

/* Loops that GCC vectorises get a copy per x86-64 level, picked when the
 * program loads (the build has no -march: CI machines differ).  Level 4
 * is AVX-512, 3 AVX2 + FMA. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RB_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RB_VECTOR_CLONES
#endif

/* Work below which a layer runs as one part: ~10 us of one core. */
enum { PART_MIN_MACS = 1 << 18 };

/* im2col copies runs as whole vectors of this many floats. */
enum { COPY_VEC = 4 };

/* The batch is convolved a chunk of samples at a time, so that the GEMMs
 * read the patch rows im2col has just written, and col2im the dcol the
 * GEMM has just written, from L2 instead of memory: with the whole batch
 * at once LeNet's 5 MB (conv1) and 3.8 MB (conv2) patch matrices, and
 * conv2's dcol, went through memory (and OpenBLAS clears C first when
 * beta = 0). */
enum { CHUNK_BYTES = 256 << 10 };

static inline void shape_in(layer *l, int c, int h, int w) { l->in_c = c, l->in_h = h, l->in_w = w; }

static inline void shape_out(layer *l, int c, int h, int w) { l->out_c = c, l->out_h = h, l->out_w = w; }

static inline size_t conv_patch(const layer *l) { return (size_t)l->k * (size_t)l->k * (size_t)l->in_c; }

static inline size_t out_pixels(const layer *l) { return (size_t)l->out_h * (size_t)l->out_w; }

static inline size_t batch_pixels(const layer *l, int batch) { return (size_t)batch * out_pixels(l); }

/* Conv input with its zero border (see im2col); floats per sample. */
static inline size_t padded_w(const layer *l) { return (size_t)l->in_w + 2 * (size_t)l->pad; }

static inline size_t padded_h(const layer *l) { return (size_t)l->in_h + 2 * (size_t)l->pad; }

static inline size_t padded_size(const layer *l) { return padded_h(l) * padded_w(l) * (size_t)l->in_c; }

static inline int chunk_samples(const layer *l)
{
    size_t n = CHUNK_BYTES / (out_pixels(l) * conv_patch(l) * sizeof(float));
    if (n < 1)
        return 1;
    return n < (size_t)l->max_batch ? (int)n : l->max_batch;
}

static inline conv_geom geometry(const layer *l)
{
    return (conv_geom){l->in_c, l->k, l->out_c, l->out_h, l->out_w, padded_w(l) * l->in_c};
}

/* Floats per part of each conv scratch buffer. */
static inline size_t col_stride(const layer *l)
{
    /* slack: see im2col */
    return part_stride((size_t)chunk_samples(l) * out_pixels(l) * conv_patch(l) + COPY_VEC);
}

static inline size_t xpad_stride(const layer *l)
{
    return part_stride((size_t)chunk_samples(l) * padded_size(l) + COPY_VEC);
}

static inline size_t dxpad_stride(const layer *l) { return part_stride(padded_size(l)); }

static inline size_t packed_stride(const layer *l)
{
    conv_geom g = geometry(l);
    return nn_conv_direct_packed_size(&g);   /* a multiple of 16 floats: parts stay aligned */
}

/* Floats per sample in and out (an embedding's input: ctx ids). */
static inline size_t nn_layer_in_size(const layer *l)
{
    if (l->kind == LAYER_EMBED)
        return (size_t)l->ctx;
    return (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
}

static inline size_t nn_layer_out_size(const layer *l)
{
    return (size_t)l->out_c * (size_t)l->out_h * (size_t)l->out_w;
}

/* 1: the reference kernels only (nn_layer_set_reference_kernels). */
extern int nn_reference_kernels;
/* db[c] = the sum over rows of dy[r * ld + c], c < cols: the bias
 * gradient (layer_bias.c). */
void nn_bias_grad(float *db, const float *dy, size_t rows, size_t cols,
                                       size_t ld);

#endif
