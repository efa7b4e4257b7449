/* Layer forward/backward on the CPU with CBLAS (see layers.h). */
#include "layers.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void shape_in(layer *l, int c, int h, int w) { l->in_c = c, l->in_h = h, l->in_w = w; }
static void shape_out(layer *l, int c, int h, int w) { l->out_c = c, l->out_h = h, l->out_w = w; }

size_t layer_in_size(const layer *l)
{
    if (l->kind == LAYER_EMBED)
        return (size_t)l->ctx;
    return (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
}

size_t layer_out_size(const layer *l) { return (size_t)l->out_c * (size_t)l->out_h * (size_t)l->out_w; }

static size_t conv_patch(const layer *l) { return (size_t)l->k * (size_t)l->k * (size_t)l->in_c; }
static size_t out_pixels(const layer *l) { return (size_t)l->out_h * (size_t)l->out_w; }

int layer_dense(layer *l, int in, int out, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_DENSE;
    shape_in(l, in, 1, 1);
    shape_out(l, out, 1, 1);
    l->n_w = (size_t)in * (size_t)out;
    l->n_b = (size_t)out;
    l->max_batch = max_batch;
    return 0;
}

int layer_relu(layer *l, int c, int h, int w, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_RELU;
    shape_in(l, c, h, w);
    shape_out(l, c, h, w);
    l->max_batch = max_batch;
    return 0;
}

int layer_conv(layer *l, int in_c, int h, int w, int out_c, int k, int pad, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_CONV;
    l->k = k, l->pad = pad;
    shape_in(l, in_c, h, w);
    shape_out(l, out_c, h + 2 * pad - k + 1, w + 2 * pad - k + 1);
    l->n_w = (size_t)out_c * conv_patch(l);
    l->n_b = (size_t)out_c;
    l->max_batch = max_batch;
    size_t n = (size_t)max_batch * out_pixels(l) * conv_patch(l);
    l->col = malloc(n * sizeof(float));
    l->dcol = malloc(n * sizeof(float));
    return l->col && l->dcol ? 0 : -1;
}

int layer_maxpool(layer *l, int c, int h, int w, int k, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_MAXPOOL;
    l->k = k;
    shape_in(l, c, h, w);
    shape_out(l, c, h / k, w / k);
    l->max_batch = max_batch;
    l->argmax = malloc((size_t)max_batch * layer_out_size(l) * sizeof(int32_t));
    return l->argmax ? 0 : -1;
}

int layer_embed(layer *l, int vocab, int dim, int ctx, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_EMBED;
    l->vocab = vocab, l->ctx = ctx;
    shape_in(l, ctx, 1, 1);
    shape_out(l, ctx * dim, 1, 1);
    l->n_w = (size_t)vocab * (size_t)dim;
    l->max_batch = max_batch;
    return 0;
}

void layer_free(layer *l)
{
    free(l->col);
    free(l->dcol);
    free(l->argmax);
    l->col = l->dcol = NULL;
    l->argmax = NULL;
}

double layer_flops(const layer *l)
{
    switch (l->kind) {
    case LAYER_DENSE: return 2.0 * (double)l->n_w;
    case LAYER_CONV: return 2.0 * (double)l->n_w * (double)out_pixels(l);
    default: return 0.0;
    }
}

/* ------------------------------------------------------------------ dense */
static void dense_forward(layer *l, const float *x, float *y, int batch)
{
    int in = l->in_c, out = l->out_c;
    for (int s = 0; s < batch; s++)
        memcpy(y + (size_t)s * out, l->b, (size_t)out * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out, in, 1.0f, x, in, l->w, in,
                1.0f, y, out);
}

static void bias_grad(float *db, const float *dy, size_t rows, size_t cols)
{
    memset(db, 0, cols * sizeof(float));
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            db[c] += dy[r * cols + c];
}

static void dense_backward(layer *l, const float *x, const float *dy, float *dx, int batch)
{
    int in = l->in_c, out = l->out_c;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, batch, 1.0f, dy, out, x, in,
                0.0f, l->dw, in);
    bias_grad(l->db, dy, (size_t)batch, (size_t)out);
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, in, out, 1.0f, dy, out,
                    l->w, in, 0.0f, dx, in);
}

/* ------------------------------------------------------------------- conv */
/* The patch matrix is col[(s, oy, ox), (ky, kx, c)], P x KC row-major.  For
 * one output pixel and one kernel row ky the K x C inputs are contiguous in
 * NHWC, so im2col and col2im move runs of up to K*C floats, and the GEMM
 * writes the output in NHWC directly.  (The transposed layout this
 * replaced gathered conv2's input at a stride of C and transposed the
 * output: LeNet forward+backward 24.9 GFLOP/s then, 29.6 now, best of 5
 * runs each, interleaved, against 102 GFLOP/s of OpenBLAS SGEMM.) */
static size_t batch_pixels(const layer *l, int batch) { return (size_t)batch * out_pixels(l); }

/* Kernel columns kx whose input column ox + kx - pad lies inside 0..W-1. */
static void valid_kx(const layer *l, int ox, int *lo, int *hi)
{
    int first = l->pad - ox, end = l->in_w + l->pad - ox;
    *lo = first > 0 ? first : 0;
    *hi = end < l->k ? end : l->k;
    if (*hi < *lo)
        *hi = *lo;
}

/* Visit each (patch row segment, input run) pair of the batch: fn gets the
 * col row segment of K*C floats, the input run (NULL when the kernel row is
 * outside the image) and the valid kx range. */
typedef void (*patch_fn)(float *seg, float *in, int lo, int hi, int C, int K);

/* Always inlined: fn is then a known function, inlined into the loop (an
 * indirect call per run of 5 to 30 floats cost more than the copy). */
static inline __attribute__((always_inline)) void
for_each_patch_row(const layer *l, float *x, float *col, int batch, patch_fn fn)
{
    int C = l->in_c, H = l->in_h, W = l->in_w, K = l->k, OH = l->out_h, OW = l->out_w;
    size_t KC = conv_patch(l), run = (size_t)K * (size_t)C;
    float *row = col;
    for (int s = 0; s < batch; s++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++, row += KC) {
                int lo, hi;
                valid_kx(l, ox, &lo, &hi);
                for (int ky = 0; ky < K; ky++) {
                    int iy = oy + ky - l->pad;
                    float *in = NULL;
                    if (iy >= 0 && iy < H)   /* input at kx = lo (never before the row) */
                        in = x + (((size_t)s * H + (size_t)iy) * W + (size_t)(ox - l->pad + lo)) * C;
                    fn(row + (size_t)ky * run, in, lo, hi, C, K);
                }
            }
}

static inline void gather_run(float *seg, float *in, int lo, int hi, int C, int K)
{
    size_t a = (size_t)lo * C, b = in ? (size_t)hi * C : a, end = (size_t)K * C;
    for (size_t i = 0; i < a; i++)
        seg[i] = 0.0f;
    for (size_t i = a; i < b; i++)
        seg[i] = in[i - a];
    for (size_t i = b; i < end; i++)
        seg[i] = 0.0f;
}

static inline void scatter_add_run(float *seg, float *in, int lo, int hi, int C, int K)
{
    (void)K;
    if (!in)
        return;
    size_t a = (size_t)lo * C, b = (size_t)hi * C;
    for (size_t i = a; i < b; i++)
        in[i - a] += seg[i];
}

static void im2col(const layer *l, const float *x, float *col, int batch)
{
    /* gather_run only reads through `in` */
    for_each_patch_row(l, (float *)(uintptr_t)x, col, batch, gather_run);
}

/* Adjoint of im2col: dx (zeroed here) += scattered dcol. */
static void col2im(const layer *l, const float *dcol, float *dx, int batch)
{
    memset(dx, 0, (size_t)batch * layer_in_size(l) * sizeof(float));
    for_each_patch_row(l, dx, (float *)(uintptr_t)dcol, batch, scatter_add_run);
}

static void conv_forward(layer *l, const float *x, float *y, int batch)
{
    int P = (int)batch_pixels(l, batch), KC = (int)conv_patch(l), OC = l->out_c;
    im2col(l, x, l->col, batch);
    for (int p = 0; p < P; p++)
        memcpy(y + (size_t)p * OC, l->b, (size_t)OC * sizeof(float));
    /* y[P x OC] += col[P x KC] W^T */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, P, OC, KC, 1.0f, l->col, KC, l->w, KC,
                1.0f, y, OC);
}

/* Uses the im2col of the input kept by the forward pass. */
static void conv_backward(layer *l, const float *dy, float *dx, int batch)
{
    int P = (int)batch_pixels(l, batch), KC = (int)conv_patch(l), OC = l->out_c;
    /* dW[OC x KC] = dy^T col */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, KC, P, 1.0f, dy, OC, l->col, KC, 0.0f,
                l->dw, KC);
    bias_grad(l->db, dy, (size_t)P, (size_t)OC);
    if (!dx)
        return;
    /* dcol[P x KC] = dy W */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, P, KC, OC, 1.0f, dy, OC, l->w, KC, 0.0f,
                l->dcol, KC);
    col2im(l, l->dcol, dx, batch);
}

/* ------------------------------------------------------------ pool, relu */
static void pool_forward(layer *l, const float *x, float *y, int batch)
{
    int C = l->in_c, H = l->in_h, W = l->in_w, K = l->k;
    size_t o = 0;
    for (int s = 0; s < batch; s++)
        for (int oy = 0; oy < l->out_h; oy++)
            for (int ox = 0; ox < l->out_w; ox++)
                for (int c = 0; c < C; c++, o++) {
                    float best = -FLT_MAX;
                    int32_t at = 0;
                    for (int ky = 0; ky < K; ky++)
                        for (int kx = 0; kx < K; kx++) {
                            size_t i = (((size_t)s * H + (size_t)(oy * K + ky)) * W +
                                        (size_t)(ox * K + kx)) * C + (size_t)c;
                            /* selects, not a branch: which input wins is unpredictable */
                            int better = x[i] > best;
                            best = better ? x[i] : best;
                            at = better ? (int32_t)i : at;
                        }
                    y[o] = best;
                    l->argmax[o] = at;
                }
}

static void pool_backward(layer *l, const float *dy, float *dx, int batch)
{
    memset(dx, 0, (size_t)batch * layer_in_size(l) * sizeof(float));
    size_t n = (size_t)batch * layer_out_size(l);
    for (size_t o = 0; o < n; o++)
        dx[l->argmax[o]] += dy[o];
}

/* ReLU with a sign mask instead of a compare: the sign of a conv output is
 * a coin toss, and the branch GCC emits at -O2 for x > 0 ? x : 0
 * mispredicted often enough to make ReLU ~17% of a LeNet step. */
static uint32_t float_bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static float bits_float(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* All ones when the sign bit of b is clear, else zero. */
static uint32_t keep_if_positive(uint32_t b) { return (b >> 31) - 1u; }

static void relu_forward(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b = float_bits(x[i]);
        y[i] = bits_float(b & keep_if_positive(b));
    }
}

/* y is the forward output, so y > 0 exactly when its bits are non-zero
 * (ReLU never returns -0.0: a negative input gives +0.0). */
static void relu_backward(const float *y, const float *dy, float *dx, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t nonzero = 0u - (uint32_t)(float_bits(y[i]) != 0u);
        dx[i] = bits_float(float_bits(dy[i]) & nonzero);
    }
}

/* -------------------------------------------------------------- embedding */
static int embed_dim(const layer *l) { return l->out_c / l->ctx; }

static void embed_forward(layer *l, const int32_t *ids, float *y, int batch)
{
    size_t d = (size_t)embed_dim(l);
    for (size_t i = 0; i < (size_t)batch * (size_t)l->ctx; i++)
        memcpy(y + i * d, l->w + (size_t)ids[i] * d, d * sizeof(float));
}

static void embed_backward(layer *l, const int32_t *ids, const float *dy, int batch)
{
    size_t d = (size_t)embed_dim(l);
    for (size_t i = 0; i < (size_t)batch * (size_t)l->ctx; i++) {
        float *row = l->dw + (size_t)ids[i] * d;
        for (size_t j = 0; j < d; j++)
            row[j] += dy[i * d + j];
    }
}

/* ---------------------------------------------------------------- dispatch */
void layer_forward(layer *l, const void *in, float *out, int batch)
{
    switch (l->kind) {
    case LAYER_DENSE: dense_forward(l, in, out, batch); break;
    case LAYER_CONV: conv_forward(l, in, out, batch); break;
    case LAYER_MAXPOOL: pool_forward(l, in, out, batch); break;
    case LAYER_RELU: relu_forward(in, out, (size_t)batch * layer_out_size(l)); break;
    case LAYER_EMBED: embed_forward(l, in, out, batch); break;
    }
}

void layer_backward(layer *l, const void *in, const float *out, const float *dout, float *din,
                    int batch)
{
    switch (l->kind) {
    case LAYER_DENSE: dense_backward(l, in, dout, din, batch); break;
    case LAYER_CONV: conv_backward(l, dout, din, batch); break;
    case LAYER_MAXPOOL:
        if (din)
            pool_backward(l, dout, din, batch);
        break;
    case LAYER_RELU:
        if (din)
            relu_backward(out, dout, din, (size_t)batch * layer_out_size(l));
        break;
    case LAYER_EMBED: embed_backward(l, in, dout, batch); break;
    }
}

double softmax_xent(const float *logits, const int32_t *labels, int batch, int classes,
                    float *dlogits, double scale, int *correct)
{
    double loss = 0.0;
    int ok = 0;
    for (int s = 0; s < batch; s++) {
        const float *z = logits + (size_t)s * classes;
        int arg = 0;
        for (int c = 1; c < classes; c++)
            if (z[c] > z[arg])
                arg = c;
        double sum = 0.0;
        for (int c = 0; c < classes; c++)
            sum += exp((double)z[c] - z[arg]);
        double logsum = log(sum) + z[arg];
        loss += logsum - z[labels[s]];
        ok += arg == labels[s];
        if (dlogits) {
            float *g = dlogits + (size_t)s * classes;
            for (int c = 0; c < classes; c++)
                g[c] = (float)((exp((double)z[c] - logsum) - (c == labels[s])) / scale);
        }
    }
    if (correct)
        *correct = ok;
    return loss;
}
