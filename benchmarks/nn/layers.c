/* Layer forward/backward on the CPU (see layers.h): OpenBLAS, the AVX2 and
 * AVX-512 kernels (small_gemm.c, conv_avx512.c, dense_avx512.c) where the
 * CPU has them, and loops GCC vectorises; split over threads
 * (layer_threads.h). */
#include "conv_avx512.h"
#include "dense_avx512.h"
#include "layer_threads.h"
#include "layers.h"
#include "layer.h"
#include "layer_conv.h"
#include "small_gemm.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int nn_reference_kernels;

void nn_layer_set_reference_kernels(int on) { nn_reference_kernels = on; }

/* 64-byte aligned floats (the direct kernels load packed weights aligned). */
static float *aligned_floats(size_t n)
{
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    return aligned_alloc(64, bytes ? bytes : 64);
}

static size_t pool_row_stride(const layer *l)
{
    return part_stride((size_t)l->in_w * (size_t)l->in_c);
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

typedef struct dense_job {
    layer *l;
    const float *x, *dy;
    float *y, *dx;
    int batch, avx512;
} dense_job;

static int dense_avx512(const layer *l) { return !nn_reference_kernels && l->xt; }

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
    nn_bias_grad(l->db + o0, j->dy + o0, (size_t)B, (size_t)(o1 - o0), (size_t)out);
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
    case LAYER_CONV: nn_conv_forward(l, in, out, batch, threads); break;
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
    case LAYER_CONV: nn_conv_backward(l, in, dout, din, batch, threads); break;
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
