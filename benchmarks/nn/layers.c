/* Layer forward/backward on the CPU (see layers.h): OpenBLAS, the AVX2 and
 * AVX-512 kernels (small_gemm.c, conv_avx512.c, dense_avx512.c) where the
 * CPU has them, and loops GCC vectorises; split over threads
 * (layer_threads.h). */
#include "conv_avx512.h"
#include "dense_avx512.h"
#include "layer_threads.h"
#include "layers.h"
#include "small_gemm.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Loops that GCC vectorises get a copy per x86-64 level, picked when the
 * program loads (the build has no -march: CI machines differ).  Level 4
 * is AVX-512, 3 AVX2 + FMA. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RB_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RB_VECTOR_CLONES
#endif

/* GCC vectors of VEC_LANES floats / ints, for loops GCC would not
 * vectorise as written (reductions over a float, selects between values
 * and their indices); compiled once per x86-64 level with the functions
 * that use them (RB_VECTOR_CLONES).  They are passed by pointer or
 * through macros: a 64-byte vector argument or return value has no ABI
 * without AVX-512, which GCC reports (-Wpsabi). */
enum { VEC_LANES = 16 };
typedef float vfloat __attribute__((vector_size(VEC_LANES * sizeof(float))));
typedef int32_t vint __attribute__((vector_size(VEC_LANES * sizeof(int32_t))));

#define VSPLAT(x) ((vfloat){0} + (float)(x))
/* Lanes of a where mask is all ones, else of b (C has no vector ?:). */
#define VSELECT(mask, a, b) ((vfloat)(((vint)(a) & (mask)) | ((vint)(b) & ~(mask))))
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(vfloat))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(vfloat))

static void shape_in(layer *l, int c, int h, int w) { l->in_c = c, l->in_h = h, l->in_w = w; }
static void shape_out(layer *l, int c, int h, int w) { l->out_c = c, l->out_h = h, l->out_w = w; }

size_t nn_layer_in_size(const layer *l)
{
    if (l->kind == LAYER_EMBED)
        return (size_t)l->ctx;
    return (size_t)l->in_c * (size_t)l->in_h * (size_t)l->in_w;
}

size_t nn_layer_out_size(const layer *l) { return (size_t)l->out_c * (size_t)l->out_h * (size_t)l->out_w; }

static size_t conv_patch(const layer *l) { return (size_t)l->k * (size_t)l->k * (size_t)l->in_c; }
static size_t out_pixels(const layer *l) { return (size_t)l->out_h * (size_t)l->out_w; }
static size_t batch_pixels(const layer *l, int batch) { return (size_t)batch * out_pixels(l); }
/* Conv input with its zero border (see im2col); floats per sample. */
static size_t padded_w(const layer *l) { return (size_t)l->in_w + 2 * (size_t)l->pad; }
static size_t padded_h(const layer *l) { return (size_t)l->in_h + 2 * (size_t)l->pad; }
static size_t padded_size(const layer *l) { return padded_h(l) * padded_w(l) * (size_t)l->in_c; }
/* im2col copies runs as whole vectors of this many floats. */
enum { COPY_VEC = 4 };

/* The batch is convolved a chunk of samples at a time, so that the GEMMs
 * read the patch rows im2col has just written, and col2im the dcol the
 * GEMM has just written, from L2 instead of memory: with the whole batch
 * at once LeNet's 5 MB (conv1) and 3.8 MB (conv2) patch matrices, and
 * conv2's dcol, went through memory (and OpenBLAS clears C first when
 * beta = 0). */
enum { CHUNK_BYTES = 256 << 10 };

static int chunk_samples(const layer *l)
{
    size_t n = CHUNK_BYTES / (out_pixels(l) * conv_patch(l) * sizeof(float));
    if (n < 1)
        return 1;
    return n < (size_t)l->max_batch ? (int)n : l->max_batch;
}

static float *aligned_floats(size_t n);

int nn_layer_dense(layer *l, int in, int out, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_DENSE;
    shape_in(l, in, 1, 1);
    shape_out(l, out, 1, 1);
    l->n_w = (size_t)in * (size_t)out;
    l->n_b = (size_t)out;
    l->max_batch = max_batch;
    if (!nn_dense512_usable())
        return 0;
    l->xt = aligned_floats(nn_dense512_packed_size(max_batch, in));
    return l->xt ? 0 : -1;
}

int nn_layer_relu(layer *l, int c, int h, int w, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_RELU;
    shape_in(l, c, h, w);
    shape_out(l, c, h, w);
    l->max_batch = max_batch;
    return 0;
}

static int reference_kernels;

void nn_layer_set_reference_kernels(int on) { reference_kernels = on; }

static conv_geom geometry(const layer *l)
{
    return (conv_geom){l->in_c, l->k, l->out_c, l->out_h, l->out_w, padded_w(l) * l->in_c};
}

/* 64-byte aligned floats (the direct kernels load packed weights aligned). */
static float *aligned_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

/* Floats per part of each conv scratch buffer. */
static size_t col_stride(const layer *l)
{
    /* slack: see im2col */
    return part_stride((size_t)chunk_samples(l) * out_pixels(l) * conv_patch(l) + COPY_VEC);
}

static size_t xpad_stride(const layer *l)
{
    return part_stride((size_t)chunk_samples(l) * padded_size(l) + COPY_VEC);
}

static size_t dxpad_stride(const layer *l) { return part_stride(padded_size(l)); }

static size_t pool_row_stride(const layer *l)
{
    return part_stride((size_t)l->in_w * (size_t)l->in_c);
}

static size_t packed_stride(const layer *l)
{
    conv_geom g = geometry(l);
    return nn_conv_direct_packed_size(&g);   /* a multiple of 16 floats: parts stay aligned */
}

/* The direct kernels' buffers, where they can run; 0 or -1 (no memory). */
static int conv_direct_buffers(layer *l)
{
    conv_geom g = geometry(l);
    if (!nn_conv_direct_usable(&g, 0))
        return 0;
    size_t parts = (size_t)l->parts;
    l->wt = aligned_floats(packed_stride(l));
    l->dwt = aligned_floats(parts * packed_stride(l));
    l->dxpad = malloc(parts * dxpad_stride(l) * sizeof(float));
    return l->wt && l->dwt && l->dxpad ? 0 : -1;
}

int nn_layer_conv(layer *l, int in_c, int h, int w, int out_c, int k, int pad, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_CONV;
    l->k = k, l->pad = pad;
    shape_in(l, in_c, h, w);
    shape_out(l, out_c, h + 2 * pad - k + 1, w + 2 * pad - k + 1);
    l->n_w = (size_t)out_c * conv_patch(l);
    l->n_b = (size_t)out_c;
    l->max_batch = max_batch;
    l->parts = nn_layer_parts();
    size_t parts = (size_t)l->parts;
    l->col = malloc(parts * col_stride(l) * sizeof(float));
    l->dcol = malloc(parts * col_stride(l) * sizeof(float));
    l->xpad = malloc(parts * xpad_stride(l) * sizeof(float));
    l->dbpart = malloc(parts * part_stride(l->n_b) * sizeof(float));
    l->dwpart = parts > 1 ? malloc((parts - 1) * part_stride(l->n_w) * sizeof(float)) : NULL;
    if (conv_direct_buffers(l) < 0)
        return -1;
    return l->col && l->dcol && l->xpad && l->dbpart && (parts == 1 || l->dwpart) ? 0 : -1;
}

int nn_layer_maxpool(layer *l, int c, int h, int w, int k, int max_batch)
{
    memset(l, 0, sizeof *l);
    l->kind = LAYER_MAXPOOL;
    l->k = k;
    shape_in(l, c, h, w);
    shape_out(l, c, h / k, w / k);
    l->max_batch = max_batch;
    l->argmax = malloc((size_t)max_batch * nn_layer_out_size(l) * sizeof(int32_t));
    l->parts = nn_layer_parts();
    size_t rows = pool_row_stride(l) * (size_t)l->parts;
    l->col = malloc(rows * sizeof(float));
    l->rowarg = malloc(rows * sizeof(int32_t));
    return l->argmax && l->col && l->rowarg ? 0 : -1;
}

int nn_layer_embed(layer *l, int vocab, int dim, int ctx, int max_batch)
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

/* Mirrors the constructors above: change one, change this. */
double nn_layer_scratch_bytes(const layer *built, int max_batch)
{
    layer c = *built, *l = &c;
    l->max_batch = max_batch;
    double parts = (double)l->parts, floats = 0.0;
    switch (l->kind) {
    case LAYER_DENSE:
        floats = nn_dense512_usable() ? (double)nn_dense512_packed_size(max_batch, l->in_c) + 16.0 : 0.0;
        break;
    case LAYER_CONV: {
        floats = parts * (2.0 * (double)col_stride(l) + (double)xpad_stride(l) +
                          (double)part_stride(l->n_b));
        if (parts > 1)
            floats += (parts - 1.0) * (double)part_stride(l->n_w);
        conv_geom g = geometry(l);
        if (nn_conv_direct_usable(&g, 0))
            floats += (1.0 + parts) * (double)packed_stride(l) + parts * (double)dxpad_stride(l);
        break;
    }
    case LAYER_MAXPOOL:   /* argmax and rowarg are int32: 4 bytes like a float */
        floats = (double)max_batch * (double)nn_layer_out_size(l) + 2.0 * parts * (double)pool_row_stride(l);
        break;
    default:
        break;
    }
    return 4.0 * floats;
}

void nn_layer_free(layer *l)
{
    free(l->col);
    free(l->dcol);
    free(l->xpad);
    free(l->argmax);
    free(l->rowarg);
    free(l->wt);
    free(l->dwt);
    free(l->dxpad);
    free(l->dwpart);
    free(l->dbpart);
    free(l->xt);
    l->col = l->dcol = l->xpad = l->wt = l->dwt = l->dxpad = l->dwpart = l->dbpart = l->xt = NULL;
    l->argmax = l->rowarg = NULL;
}

double nn_layer_flops(const layer *l)
{
    switch (l->kind) {
    case LAYER_DENSE: return 2.0 * (double)l->n_w;
    case LAYER_CONV: return 2.0 * (double)l->n_w * (double)out_pixels(l);
    default: return 0.0;
    }
}

/* ------------------------------------------------------------------ dense */
/* Work below which a layer runs as one part: ~10 us of one core. */
enum { PART_MIN_MACS = 1 << 18 };

typedef struct dense_job {
    layer *l;
    const float *x, *dy;
    float *y, *dx;
    int batch, avx512;
} dense_job;

static int dense_avx512(const layer *l) { return !reference_kernels && l->xt; }

/* Output columns [o0, o1) of part p: y = bias + x W^T. */
static void dense_forward_part(void *ctx, int p, int parts)
{
    const dense_job *j = ctx;
    const layer *l = j->l;
    int in = l->in_c, out = l->out_c;
    int o0 = (int)part_start((size_t)out, parts, p), o1 = (int)part_start((size_t)out, parts, p + 1);
    if (j->avx512) {
        nn_dense512_forward(l->xt, j->batch, in, l->w, l->b, out, o0, o1, j->y);
        return;
    }
    for (int s = 0; s < j->batch; s++)
        memcpy(j->y + (size_t)s * out + o0, l->b + o0, (size_t)(o1 - o0) * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, j->batch, o1 - o0, in, 1.0f, j->x, in,
                l->w + (size_t)o0 * in, in, 1.0f, j->y + o0, out);
}

static void dense_forward(layer *l, const float *x, float *y, int batch, int threads)
{
    dense_job j = {l, x, NULL, y, NULL, batch, dense_avx512(l)};
    if (j.avx512)
        nn_dense512_pack_input(x, batch, l->in_c, l->xt);
    double macs = (double)batch * (double)l->n_w;
    nn_run_parts(nn_parts_for(threads, macs, PART_MIN_MACS, (size_t)l->out_c), dense_forward_part, &j);
}

/* db[c] = the sum over rows of dy[r * ld + c], c < cols.  Summed
 * ROW_BLOCK rows at a time as one flat block of ROW_BLOCK * cols floats
 * when the rows are contiguous and that fits the accumulator: a loop over
 * conv1's 6 columns did not vectorise (175 us per LeNet batch of 64, 25 us
 * this way). */
enum { ROW_BLOCK = 8, BLOCK_SUMS = 256 };

static RB_VECTOR_CLONES void bias_grad(float *db, const float *dy, size_t rows, size_t cols,
                                       size_t ld)
{
    float acc[BLOCK_SUMS] = {0};
    size_t block = ROW_BLOCK * cols, r = 0;
    if (block <= BLOCK_SUMS && ld == cols)
        for (; r + ROW_BLOCK <= rows; r += ROW_BLOCK)
            for (size_t i = 0; i < block; i++)
                acc[i] += dy[r * cols + i];
    memset(db, 0, cols * sizeof(float));
    for (size_t i = 0; i < (r ? block : 0); i++)
        db[i % cols] += acc[i];
    for (; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            db[c] += dy[r * ld + c];
}

/* Part p: the weight and bias gradients of output columns [o0, o1) and
 * the input gradient's columns [i0, i1); no two parts write the same
 * float, so nothing is summed across parts. */
static void dense_backward_part(void *ctx, int p, int parts)
{
    const dense_job *j = ctx;
    const layer *l = j->l;
    int in = l->in_c, out = l->out_c, B = j->batch;
    int o0 = (int)part_start((size_t)out, parts, p), o1 = (int)part_start((size_t)out, parts, p + 1);
    int i0 = (int)part_start((size_t)in, parts, p), i1 = (int)part_start((size_t)in, parts, p + 1);
    if (j->avx512)
        nn_dense512_grad_w(j->dy, j->x, B, in, out, o0, o1, l->dw);
    else
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o1 - o0, in, B, 1.0f, j->dy + o0, out,
                    j->x, in, 0.0f, l->dw + (size_t)o0 * in, in);
    bias_grad(l->db + o0, j->dy + o0, (size_t)B, (size_t)(o1 - o0), (size_t)out);
    if (!j->dx)
        return;
    if (j->avx512)
        nn_dense512_grad_x(j->dy, l->w, B, in, out, i0, i1, j->dx);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, i1 - i0, out, 1.0f, j->dy, out,
                    l->w + i0, in, 0.0f, j->dx + i0, in);
}

static void dense_backward(layer *l, const float *x, const float *dy, float *dx, int batch,
                           int threads)
{
    dense_job j = {l, x, dy, NULL, dx, batch, dense_avx512(l)};
    double macs = (double)batch * (double)l->n_w * (dx ? 2 : 1);
    size_t items = (size_t)(l->out_c < l->in_c ? l->out_c : l->in_c);
    nn_run_parts(nn_parts_for(threads, macs, PART_MIN_MACS, items), dense_backward_part, &j);
}

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
    bias_grad(sc->db, dy + (size_t)s0 * pixels * OC, (size_t)(s1 - s0) * pixels, (size_t)OC,
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
    return !reference_kernels && l->wt && nn_conv_direct_usable(&g, need_dx);
}

static int conv_parts(const layer *l, int batch, int threads)
{
    int t = threads < l->parts ? threads : l->parts;
    return nn_parts_for(t, (double)batch * (double)l->n_w * (double)out_pixels(l), PART_MIN_MACS,
                     (size_t)batch);
}

static void conv_forward(layer *l, const float *x, float *y, int batch, int threads)
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

static void conv_backward(layer *l, const float *x, const float *dy, float *dx, int batch,
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

/* ------------------------------------------------------------ pool, relu */
/* Max pooling runs over whole contiguous rows, so its loops vectorise
 * for any channel count (a loop per window over 6 channels did not): for
 * each output row, the maximum over the window positions (ky, kx) in
 * order is taken at every input pixel where a window can start, and every
 * K-th pixel of the result is kept.  A later position wins only if
 * strictly greater, so ties go to the first element of the window.
 * Selects, not branches: which input wins is unpredictable. */

/* m[j], at[j] for the window starts j < n of an output row whose first
 * input value is x[base] (k x k windows, rows of `row` floats, c
 * channels): the largest value over the window positions in row-major
 * order and its index, kept in registers for VEC_LANES starts at a time
 * (a pass over memory per position took twice as long). */
static inline void pool_row(const float *x, size_t base, size_t row, size_t c, size_t k,
                            size_t n, float *m, int32_t *at)
{
    vint iota;
    for (int i = 0; i < VEC_LANES; i++)
        iota[i] = i;
    size_t j = 0;
    for (; j + VEC_LANES <= n; j += VEC_LANES) {
        vfloat best, v;
        VLOAD(best, x + base + j);
        vint idx = iota + (int32_t)(base + j);
        for (size_t ky = 0; ky < k; ky++)
            for (size_t kx = !ky; kx < k; kx++) {
                size_t a = base + ky * row + kx * c + j;
                VLOAD(v, x + a);
                vint better = v > best;   /* strictly: ties keep the first */
                best = VSELECT(better, v, best);
                idx = (idx & ~better) | ((iota + (int32_t)a) & better);
            }
        VSTORE(m + j, best);
        memcpy(at + j, &idx, sizeof idx);
    }
    for (; j < n; j++) {
        size_t best_at = base + j;
        for (size_t ky = 0; ky < k; ky++)
            for (size_t kx = !ky; kx < k; kx++)
                if (x[base + ky * row + kx * c + j] > x[best_at])
                    best_at = base + ky * row + kx * c + j;
        m[j] = x[best_at];
        at[j] = (int32_t)best_at;
    }
}

/* Samples [s0, s1); m, at: the part's row scratch. */
static RB_VECTOR_CLONES void pool_forward_samples(const layer *l, const float *x, float *y,
                                                  size_t s0, size_t s1, float *m, int32_t *at)
{
    size_t C = (size_t)l->in_c, K = (size_t)l->k, row = (size_t)l->in_w * C;
    size_t n = ((size_t)l->in_w - K + 1) * C;   /* pixels where a window can start */
    int32_t *out_at = l->argmax + s0 * nn_layer_out_size(l);
    y += s0 * nn_layer_out_size(l);
    for (size_t s = s0; s < s1; s++)
        for (size_t oy = 0; oy < (size_t)l->out_h; oy++) {
            pool_row(x, (s * (size_t)l->in_h + oy * K) * row, row, C, K, n, m, at);
            for (size_t ox = 0; ox < (size_t)l->out_w; ox++, y += C, out_at += C)
                for (size_t c = 0; c < C; c++) {
                    y[c] = m[ox * K * C + c];
                    out_at[c] = at[ox * K * C + c];
                }
        }
}

/* Samples [s0, s1): argmax of sample s points into sample s of dx. */
static void pool_backward_samples(const layer *l, const float *dy, float *dx, size_t s0, size_t s1)
{
    size_t in = nn_layer_in_size(l), out = nn_layer_out_size(l);
    memset(dx + s0 * in, 0, (s1 - s0) * in * sizeof(float));
    for (size_t o = s0 * out; o < s1 * out; o++)
        dx[l->argmax[o]] += dy[o];
}

typedef struct pool_job {
    const layer *l;
    const float *x, *dy;
    float *y, *dx;
    int batch;
} pool_job;

static void pool_forward_part(void *ctx, int p, int parts)
{
    const pool_job *j = ctx;
    size_t B = (size_t)j->batch, row = pool_row_stride(j->l) * (size_t)p;
    pool_forward_samples(j->l, j->x, j->y, part_start(B, parts, p), part_start(B, parts, p + 1),
                         j->l->col + row, j->l->rowarg + row);
}

static void pool_backward_part(void *ctx, int p, int parts)
{
    const pool_job *j = ctx;
    size_t B = (size_t)j->batch;
    pool_backward_samples(j->l, j->dy, j->dx, part_start(B, parts, p), part_start(B, parts, p + 1));
}

/* Parts for pooling: ~2 float operations per input element. */
static int pool_parts(const layer *l, int batch, int threads)
{
    int t = threads < l->parts ? threads : l->parts;
    return nn_parts_for(t, (double)batch * (double)nn_layer_in_size(l), PART_MIN_MACS / 2, (size_t)batch);
}

static void pool_forward(layer *l, const float *x, float *y, int batch, int threads)
{
    pool_job j = {l, x, NULL, y, NULL, batch};
    nn_run_parts(pool_parts(l, batch, threads), pool_forward_part, &j);
}

static void pool_backward(layer *l, const float *dy, float *dx, int batch, int threads)
{
    pool_job j = {l, NULL, dy, NULL, dx, batch};
    nn_run_parts(pool_parts(l, batch, threads), pool_backward_part, &j);
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

static RB_VECTOR_CLONES void relu_forward(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b = float_bits(x[i]);
        y[i] = bits_float(b & keep_if_positive(b));
    }
}

/* y is the forward output, so y > 0 exactly when its bits are non-zero
 * (ReLU never returns -0.0: a negative input gives +0.0). */
static RB_VECTOR_CLONES void relu_backward(const float *y, const float *dy, float *dx, size_t n)
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

static RB_VECTOR_CLONES void embed_backward(layer *l, const int32_t *ids, const float *dy, int batch)
{
    size_t d = (size_t)embed_dim(l);
    for (size_t i = 0; i < (size_t)batch * (size_t)l->ctx; i++) {
        float *row = l->dw + (size_t)ids[i] * d;
        for (size_t j = 0; j < d; j++)
            row[j] += dy[i * d + j];
    }
}

/* ---------------------------------------------------------------- dispatch */
void nn_layer_forward(layer *l, const void *in, float *out, int batch)
{
    int blas, threads = nn_begin_threads(&blas);
    switch (l->kind) {
    case LAYER_DENSE: dense_forward(l, in, out, batch, threads); break;
    case LAYER_CONV: conv_forward(l, in, out, batch, threads); break;
    case LAYER_MAXPOOL: pool_forward(l, in, out, batch, threads); break;
    case LAYER_RELU: relu_forward(in, out, (size_t)batch * nn_layer_out_size(l)); break;
    case LAYER_EMBED: embed_forward(l, in, out, batch); break;
    }
    nn_end_threads(blas);
}

void nn_layer_backward(layer *l, const void *in, const float *out, const float *dout, float *din,
                    int batch)
{
    int blas, threads = nn_begin_threads(&blas);
    switch (l->kind) {
    case LAYER_DENSE: dense_backward(l, in, dout, din, batch, threads); break;
    case LAYER_CONV: conv_backward(l, in, dout, din, batch, threads); break;
    case LAYER_MAXPOOL:
        if (din)
            pool_backward(l, dout, din, batch, threads);
        break;
    case LAYER_RELU:
        if (din)
            relu_backward(out, dout, din, (size_t)batch * nn_layer_out_size(l));
        break;
    case LAYER_EMBED: embed_backward(l, in, dout, batch); break;
    }
    nn_end_threads(blas);
}

/* ---------------------------------------------------------------- softmax */
/* Rows of logits are processed VEC_LANES floats at a time (GCC vectors,
 * above): loops over a float accumulator do not vectorise without
 * -ffast-math. */

/* e^x in place for x <= 0, branch-free (glibc's exp in double, twice per
 * logit, was 28% of a wordlm step: 64 x 10,000 logits).  Cephes' expf: x
 * = n ln2 + r, |r| <= ln2/2, e^r by a degree-5 polynomial (about 1 ulp),
 * 2^n put into the exponent bits.  x is clamped at -87 (e^-87 = 1.6e-38,
 * the order of the smallest normal float), which only changes terms below
 * 1e-37 of the row's largest. */
static inline void exp_nonpositive(vfloat *v)
{
    const vfloat shifter = VSPLAT(12582912.0f);   /* 1.5 * 2^23: rounds to integers */
    vfloat x = VSELECT(*v > VSPLAT(-87.0f), *v, VSPLAT(-87.0f));
    vfloat big = x * 1.44269504088896341f + shifter;
    vfloat n = big - shifter;
    vfloat r = x - n * 0.693359375f + n * 2.12194440e-4f;
    vfloat p = VSPLAT(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* the low bits of big hold n (in [-126, 0]); add it to the exponent */
    vint nb = (vint)big - (vint)shifter;
    *v = (vfloat)((vint)p + (nb << 23));
}

static float exp_nonpositive_1(float x)
{
    vfloat v = VSPLAT(x);
    exp_nonpositive(&v);
    return v[0];
}

/* The largest of z[0..n) (n >= 1). */
static RB_VECTOR_CLONES float row_max(const float *z, size_t n)
{
    vfloat m = VSPLAT(z[0]), v;
    size_t c = 0;
    for (; c + VEC_LANES <= n; c += VEC_LANES) {
        VLOAD(v, z + c);
        m = VSELECT(v > m, v, m);
    }
    float best = m[0];
    for (int l = 1; l < VEC_LANES; l++)
        best = m[l] > best ? m[l] : best;
    for (; c < n; c++)
        best = z[c] > best ? z[c] : best;
    return best;
}

/* The first c with z[c] == top, or 0 if none (a NaN row). */
static RB_VECTOR_CLONES size_t row_find(const float *z, float top, size_t n)
{
    size_t c = 0;
    vfloat v;
    for (; c + VEC_LANES <= n; c += VEC_LANES) {
        VLOAD(v, z + c);
        vint hit = v == VSPLAT(top), none = {0};
        if (memcmp(&hit, &none, sizeof hit))
            break;
    }
    for (; c < n; c++)
        if (z[c] == top)
            return c;
    return 0;
}

/* e[c] = exp(z[c] - top) (e may be NULL: not kept); returns their sum. */
static RB_VECTOR_CLONES double row_exp_sum(const float *z, float top, size_t n, float *e)
{
    vfloat acc = {0}, t = VSPLAT(top), v;
    size_t c = 0;
    for (; c + VEC_LANES <= n; c += VEC_LANES) {
        VLOAD(v, z + c);
        v -= t;
        exp_nonpositive(&v);
        if (e)
            VSTORE(e + c, v);
        acc += v;
    }
    double sum = 0.0;
    for (; c < n; c++) {
        float v = exp_nonpositive_1(z[c] - top);
        if (e)
            e[c] = v;
        sum += v;
    }
    for (int l = 0; l < VEC_LANES; l++)
        sum += acc[l];
    return sum;
}

static RB_VECTOR_CLONES void row_scale(float *g, float by, size_t n)
{
    for (size_t c = 0; c < n; c++)
        g[c] *= by;
}

/* One exp per logit: the gradient softmax(z) - onehot is the stored e
 * scaled by 1 / sum.  The first of equal maxima is the prediction. */
typedef struct softmax_job {
    const float *logits;
    const int32_t *labels;
    float *dlogits;
    double scale;
    int batch, classes;
    double loss[MAX_PARTS];
    int correct[MAX_PARTS];
} softmax_job;

static void softmax_part(void *ctx, int p, int parts)
{
    softmax_job *j = ctx;
    size_t n = (size_t)j->classes, B = (size_t)j->batch;
    double loss = 0.0;
    int ok = 0;
    for (size_t s = part_start(B, parts, p); s < part_start(B, parts, p + 1); s++) {
        const float *z = j->logits + s * n;
        float top = row_max(z, n);
        float *g = j->dlogits ? j->dlogits + s * n : NULL;
        double sum = row_exp_sum(z, top, n, g);
        double logsum = log(sum) + top;
        int32_t label = j->labels[s];
        loss += logsum - z[label];
        ok += row_find(z, top, n) == (size_t)label;
        if (g) {
            row_scale(g, (float)(1.0 / (sum * j->scale)), n);
            g[label] -= (float)(1.0 / j->scale);
        }
    }
    j->loss[p] = loss;
    j->correct[p] = ok;
}

double nn_softmax_xent(const float *logits, const int32_t *labels, int batch, int classes,
                    float *dlogits, double scale, int *correct)
{
    softmax_job j = {logits, labels, dlogits, scale, batch, classes, {0}, {0}};
    int blas, threads = nn_begin_threads(&blas);
    /* ~30 float operations per logit */
    int parts = nn_parts_for(threads, 30.0 * batch * classes, PART_MIN_MACS, (size_t)batch);
    nn_run_parts(parts, softmax_part, &j);
    nn_end_threads(blas);
    double loss = 0.0;
    int ok = 0;
    for (int p = 0; p < parts; p++)
        loss += j.loss[p], ok += j.correct[p];
    if (correct)
        *correct = ok;
    return loss;
}
