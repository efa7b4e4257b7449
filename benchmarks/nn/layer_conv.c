/* The convolution layer on the CPU (see layers.h): im2col and GEMM over
 * chunks of samples, or the AVX-512 direct kernels (conv_avx512.c) where
 * the CPU has them; split over threads (layer_threads.h). */
#include "conv_avx512.h"
#include "layer_conv.h"
#include "small_gemm.h"

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------- conv */
/* The patch matrix is col[(s, oy, ox), (ky, kx, c)], P x KC row-major.  For
 * one output pixel and one kernel row ky the K x C inputs are contiguous in
 * NHWC, so im2col and col2im move runs of K*C floats, and the GEMM writes
 * the output in NHWC directly.  (The transposed layout this replaced
 * gathered conv2's input at a stride of C and transposed the output.)
 *
 * im2col first copies the batch into xpad with its zero border, so a run
 * never needs bounds checks, and then copies each run as whole vectors of
 * COPY_VEC floats: the floats past a run's end land in the next segment of
 * the patch row before that segment is written (segments are written in
 * order), or in the slack after the buffer.  LeNet's conv1 has runs of 5
 * floats, 250k of them per batch of 64: per-run loop overhead, not memory
 * bandwidth, was what im2col cost. */

/* Each sample of x with a zero border of l->pad pixels, into xp. */
static void pad_input(const layer *l, const float *x, float *xp, int batch)
{
    size_t row = (size_t)l->in_w * l->in_c, prow = padded_w(l) * l->in_c;
    size_t side = (size_t)l->pad * l->in_c, band = (size_t)l->pad * prow;
    for (int s = 0; s < batch; s++) {
        memset(xp, 0, band * sizeof(float));
        xp += band;
        for (int y = 0; y < l->in_h; y++, xp += prow, x += row) {
            memset(xp, 0, side * sizeof(float));
            memcpy(xp + side, x, row * sizeof(float));
            memset(xp + side + row, 0, side * sizeof(float));
        }
        memset(xp, 0, band * sizeof(float));
        xp += band;
    }
}

/* Inverse of pad_input: the interior of each padded sample, into x. */
static void crop_input(const layer *l, const float *xp, float *x, int batch)
{
    size_t row = (size_t)l->in_w * l->in_c, prow = padded_w(l) * l->in_c;
    size_t side = (size_t)l->pad * l->in_c, band = (size_t)l->pad * prow;
    for (int s = 0; s < batch; s++) {
        xp += band;
        for (int y = 0; y < l->in_h; y++, xp += prow, x += row)
            memcpy(x, xp + side, row * sizeof(float));
        xp += band;
    }
}

/* Visit each (patch row segment, padded input run) pair of the batch in
 * order: fn gets the col segment and the input run of K*C floats. */
typedef void (*patch_fn)(float *seg, float *in, size_t run);

/* Always inlined: fn is then a known function, inlined into the loop (an
 * indirect call per run of 5 to 30 floats cost more than the copy). */
static inline __attribute__((always_inline)) void
for_each_patch_row(const layer *l, float *xp, float *col, int batch, patch_fn fn)
{
    size_t C = (size_t)l->in_c, K = (size_t)l->k, run = K * C, prow = padded_w(l) * C;
    float *row = col;
    for (int s = 0; s < batch; s++) {
        float *sample = xp + (size_t)s * padded_size(l);
        for (int oy = 0; oy < l->out_h; oy++)
            for (int ox = 0; ox < l->out_w; ox++) {
                float *in = sample + (size_t)oy * prow + (size_t)ox * C;
                for (size_t ky = 0; ky < K; ky++, row += run)
                    fn(row, in + ky * prow, run);
            }
    }
}

/* Whole vectors: may write up to COPY_VEC - 1 floats past seg + run. */
static inline void gather_run(float *seg, float *in, size_t run)
{
    for (size_t i = 0; i < run; i += COPY_VEC)
        memcpy(seg + i, in + i, COPY_VEC * sizeof(float));
}

static inline void scatter_add_run(float *seg, float *in, size_t run)
{
    for (size_t i = 0; i < run; i++)
        in[i] += seg[i];
}

/* xpad: scratch for the padded samples. */
static void im2col(const layer *l, const float *x, float *col, float *xpad, int batch)
{
    pad_input(l, x, xpad, batch);
    for_each_patch_row(l, xpad, col, batch, gather_run);
}

/* Adjoint of im2col: dx = crop(sum of the scattered dcol runs).  Without a
 * border the padded layout is dx's own, so the sum goes there directly. */
static void col2im(const layer *l, const float *dcol, float *dx, float *xpad, int batch)
{
    float *acc = l->pad ? xpad : dx;
    memset(acc, 0, (size_t)batch * padded_size(l) * sizeof(float));
    /* scatter_add_run only reads through `seg` */
    for_each_patch_row(l, acc, (float *)(uintptr_t)dcol, batch, scatter_add_run);
    if (l->pad)
        crop_input(l, acc, dx, batch);
}

/* Each of the rows of y starts as the bias. */
static void fill_rows(float *y, const float *b, size_t rows, size_t cols)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            y[r * cols + c] = b[c];
}

/* ---------------------------------------------------- conv, by samples */
/* A part convolves the samples [s0, s1) of the batch with its own
 * scratch: the direct kernels one sample at a time, im2col + GEMM a chunk
 * of samples at a time.  Weight and bias gradients go to the part's own
 * buffers (part 0: the layer's weight gradient) and are summed after. */
typedef struct conv_scratch {
    float *col, *dcol, *xpad, *dxpad, *dwt, *dw, *db;
} conv_scratch;

static conv_scratch scratch_of(const layer *l, int p, int parts)
{
    size_t q = (size_t)p;
    conv_scratch sc = {l->col + q * col_stride(l), l->dcol + q * col_stride(l),
                       l->xpad + q * xpad_stride(l), NULL, NULL,
                       p ? l->dwpart + (q - 1) * part_stride(l->n_w) : l->dw,
                       parts > 1 ? l->dbpart + q * part_stride(l->n_b) : l->db};
    if (l->wt) {
        sc.dxpad = l->dxpad + q * dxpad_stride(l);
        sc.dwt = l->dwt + q * packed_stride(l);
    }
    return sc;
}

typedef struct conv_job {
    layer *l;
    const float *x, *dy;
    float *y, *dx;
    int batch, direct;
} conv_job;

/* Sample s of x, with its zero border (in xpad) when the layer pads. */
static const float *padded_sample(const layer *l, const float *x, int s, float *xpad)
{
    const float *xs = x + (size_t)s * nn_layer_in_size(l);
    if (!l->pad)
        return xs;
    pad_input(l, xs, xpad, 1);
    return xpad;
}

/* Samples s..s+n-1, where n is what is left of a chunk before s1. */
static int chunk_at(const layer *l, int s, int s1)
{
    int step = chunk_samples(l);
    return s1 - s < step ? s1 - s : step;
}

static void conv_forward_samples(const conv_job *j, int s0, int s1, conv_scratch *sc)
{
    const layer *l = j->l;
    int KC = (int)conv_patch(l), OC = l->out_c;
    if (j->direct) {
        conv_geom g = geometry(l);
        for (int s = s0; s < s1; s++)
            nn_conv_direct_forward(&g, padded_sample(l, j->x, s, sc->xpad), l->wt, l->b,
                                j->y + (size_t)s * nn_layer_out_size(l));
        return;
    }
    for (int s = s0, n; s < s1; s += n) {
        n = chunk_at(l, s, s1);
        int P = (int)batch_pixels(l, n);
        float *ys = j->y + batch_pixels(l, s) * (size_t)OC;
        im2col(l, j->x + (size_t)s * nn_layer_in_size(l), sc->col, sc->xpad, n);
        fill_rows(ys, l->b, (size_t)P, (size_t)OC);
        /* y[P x OC] += col[P x KC] W^T */
        if (nn_small_gemm_add_abt((size_t)P, OC, KC, sc->col, l->w, ys) != 0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, P, OC, KC, 1.0f, sc->col, KC,
                        l->w, KC, 1.0f, ys, OC);
    }
}

/* im2col + GEMM redoes each chunk's im2col rather than keep the whole
 * batch's from the forward pass: in L2 that costs less than writing the
 * patch matrix to memory and reading it back (LeNet's conv1: 5 MB per
 * batch of 64). */
static void conv_backward_samples(const conv_job *j, int s0, int s1, conv_scratch *sc)
{
    const layer *l = j->l;
    int KC = (int)conv_patch(l), OC = l->out_c;
    const float *dy = j->dy;
    if (j->direct) {
        conv_geom g = geometry(l);
        memset(sc->dwt, 0, packed_stride(l) * sizeof(float));
        for (int s = s0; s < s1; s++) {
            const float *dys = dy + (size_t)s * nn_layer_out_size(l);
            nn_conv_direct_grad_w(&g, padded_sample(l, j->x, s, sc->xpad), dys, sc->dwt);
            if (!j->dx)
                continue;
            float *dxs = j->dx + (size_t)s * nn_layer_in_size(l), *acc = l->pad ? sc->dxpad : dxs;
            memset(acc, 0, padded_size(l) * sizeof(float));
            nn_conv_direct_grad_x(&g, dys, l->wt, acc);
            if (l->pad)
                crop_input(l, acc, dxs, 1);
        }
        nn_conv_direct_unpack_grad_w(&g, sc->dwt, sc->dw);
    } else {
        memset(sc->dw, 0, l->n_w * sizeof(float));
        for (int s = s0, n; s < s1; s += n) {
            n = chunk_at(l, s, s1);
            int P = (int)batch_pixels(l, n);
            const float *dys = dy + batch_pixels(l, s) * (size_t)OC;
            im2col(l, j->x + (size_t)s * nn_layer_in_size(l), sc->col, sc->xpad, n);
            /* dW[OC x KC] += dy^T col */
            if (nn_small_gemm_atb((size_t)P, OC, KC, dys, sc->col, sc->dw) != 0)
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, KC, P, 1.0f, dys, OC,
                            sc->col, KC, 1.0f, sc->dw, KC);
            if (!j->dx)
                continue;
            /* dcol[P x KC] = dy W */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, P, KC, OC, 1.0f, dys, OC, l->w,
                        KC, 0.0f, sc->dcol, KC);
            col2im(l, sc->dcol, j->dx + (size_t)s * nn_layer_in_size(l), sc->xpad, n);
        }
    }
    size_t pixels = out_pixels(l);
    nn_bias_grad(sc->db, dy + (size_t)s0 * pixels * OC, (size_t)(s1 - s0) * pixels, (size_t)OC,
              (size_t)OC);
}

static void conv_forward_part(void *ctx, int p, int parts)
{
    const conv_job *j = ctx;
    conv_scratch sc = scratch_of(j->l, p, parts);
    size_t B = (size_t)j->batch;
    conv_forward_samples(j, (int)part_start(B, parts, p), (int)part_start(B, parts, p + 1), &sc);
}

static void conv_backward_part(void *ctx, int p, int parts)
{
    const conv_job *j = ctx;
    conv_scratch sc = scratch_of(j->l, p, parts);
    size_t B = (size_t)j->batch;
    conv_backward_samples(j, (int)part_start(B, parts, p), (int)part_start(B, parts, p + 1), &sc);
}

static int use_direct(const layer *l, int need_dx)
{
    conv_geom g = geometry(l);
    return !nn_reference_kernels && l->wt && nn_conv_direct_usable(&g, need_dx);
}

static int conv_parts(const layer *l, int batch, int threads)
{
    int t = threads < l->parts ? threads : l->parts;
    return nn_parts_for(t, (double)batch * (double)l->n_w * (double)out_pixels(l), PART_MIN_MACS,
                     (size_t)batch);
}

void nn_conv_forward(layer *l, const float *x, float *y, int batch, int threads)
{
    conv_job j = {l, x, NULL, y, NULL, batch, use_direct(l, 0)};
    if (j.direct) {
        conv_geom g = geometry(l);
        nn_conv_direct_pack_forward(&g, l->w, l->wt);
    }
    nn_run_parts(conv_parts(l, batch, threads), conv_forward_part, &j);
}

/* Parts 1.. hold their weight and bias gradients apart: add them up in
 * part order (the same sums for the same thread count). */
static void sum_part_gradients(layer *l, int parts)
{
    if (parts == 1)
        return;
    for (int p = 1; p < parts; p++) {
        const float *dw = l->dwpart + (size_t)(p - 1) * part_stride(l->n_w);
        for (size_t i = 0; i < l->n_w; i++)
            l->dw[i] += dw[i];
    }
    for (size_t c = 0; c < l->n_b; c++) {
        float sum = 0.0f;
        for (int p = 0; p < parts; p++)
            sum += l->dbpart[(size_t)p * part_stride(l->n_b) + c];
        l->db[c] = sum;
    }
}

void nn_conv_backward(layer *l, const float *x, const float *dy, float *dx, int batch,
                          int threads)
{
    conv_job j = {l, x, dy, NULL, dx, batch, use_direct(l, dx != NULL)};
    if (j.direct && dx) {
        conv_geom g = geometry(l);
        nn_conv_direct_pack_grad_x(&g, l->w, l->wt);
    }
    int parts = conv_parts(l, batch, threads);
    nn_run_parts(parts, conv_backward_part, &j);
    sum_part_gradients(l, parts);
}
