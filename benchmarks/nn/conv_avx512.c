/* rb_train's direct convolutions with AVX-512F (see conv_avx512.h),
 * built with a per-function target attribute and chosen at run time
 * (nn_conv_direct_usable), so the program still runs without AVX-512. */
#include "conv_avx512.h"

#include <string.h>

#include "avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* LANES (16) output channels per vector.  FWD_PIXELS pixels of a row are
 * accumulated at once (one weight load feeds that many FMAs, and 8+
 * independent chains cover the FMA latency); the weight gradient takes
 * DW_TAPS taps x 2 pixels; the input gradient keeps DX_VECTORS vectors of
 * a pixel's k rows of k*c values. */
enum { FWD_PIXELS = 14, DW_TAPS = 12, DX_VECTORS = 20 };

static int groups(const conv_geom *g) { return (g->oc + LANES - 1) / LANES; }
static int taps(const conv_geom *g) { return g->k * g->k * g->c; }
static int row_taps(const conv_geom *g) { return g->k * g->c; }
/* Vectors per kernel row of the input gradient, and per pixel. */
static int dx_row_vectors(const conv_geom *g) { return (row_taps(g) + LANES - 1) / LANES; }
static int dx_vectors(const conv_geom *g) { return g->k * dx_row_vectors(g); }

int nn_conv_direct_usable(const conv_geom *g, int need_dx)
{
    if (g->c < 1 || g->k < 1 || g->oc < 1 || g->oh < 1 || g->ow < 1)
        return 0;
    if (need_dx && dx_vectors(g) > DX_VECTORS)
        return 0;
    return __builtin_cpu_supports("avx512f");
}

/* One input channel and at most 8 output channels (LeNet's conv1 on
 * MNIST: 6): a vector holds two neighbouring pixels, lane 2c + h channel
 * c of pixel h, so a 64-bit broadcast of two adjacent inputs feeds 16
 * lanes (the plain layout would use 6 of 16 lanes per FMA).  Kernels up
 * to 5x5 (the weight gradient keeps 3 kernel rows of taps in registers). */
enum { PAIR_CHANNELS = 8, PAIR_MAX_K = 5, PAIR_BLOCK = 12, PAIR_ROWS = 3 };

static int use_pairs(const conv_geom *g)
{
    return g->c == 1 && g->oc <= PAIR_CHANNELS && g->k <= PAIR_MAX_K;
}

size_t nn_conv_direct_packed_size(const conv_geom *g)
{
    size_t fwd = (size_t)groups(g) * (size_t)taps(g) * LANES;
    if (use_pairs(g))
        fwd += (size_t)(taps(g) + 1) * LANES;   /* interleaved weights, bias */
    size_t dx = (size_t)g->oc * (size_t)dx_vectors(g) * LANES;
    return fwd > dx ? fwd : dx;
}

/* wt[group][tap][lane] = w[group * LANES + lane][tap], zero past oc;
 * for pixel pairs then wt[tap][2c + h] = w[c][tap] (h = 0, 1). */
void nn_conv_direct_pack_forward(const conv_geom *g, const float *w, float *wt)
{
    int kkc = taps(g);
    for (int grp = 0; grp < groups(g); grp++)
        for (int t = 0; t < kkc; t++)
            for (int lane = 0; lane < LANES; lane++) {
                int o = grp * LANES + lane;
                *wt++ = o < g->oc ? w[(size_t)o * kkc + t] : 0.0f;
            }
    if (use_pairs(g))
        for (int t = 0; t < kkc; t++)
            for (int lane = 0; lane < LANES; lane++)
                *wt++ = lane / 2 < g->oc ? w[(size_t)(lane / 2) * kkc + t] : 0.0f;
}

/* wt[o][ky][v][lane] = w[o][ky][v * LANES + lane], zero past k*c: each
 * kernel row padded to whole vectors. */
void nn_conv_direct_pack_grad_x(const conv_geom *g, const float *w, float *wt)
{
    int kc = row_taps(g), nv = dx_row_vectors(g);
    for (int o = 0; o < g->oc; o++)
        for (int ky = 0; ky < g->k; ky++)
            for (int i = 0; i < nv * LANES; i++)
                *wt++ = i < kc ? w[((size_t)o * g->k + (size_t)ky) * kc + (size_t)i] : 0.0f;
}

void nn_conv_direct_unpack_grad_w(const conv_geom *g, const float *dwt, float *dw)
{
    int kkc = taps(g);
    for (int o = 0; o < g->oc; o++)
        for (int t = 0; t < kkc; t++)
            dw[(size_t)o * kkc + t] = dwt[((size_t)(o / LANES) * kkc + t) * LANES + o % LANES];
}

INLINE_AVX512 __mmask16 group_mask(const conv_geom *g, int grp)
{
    int n = g->oc - grp * LANES;
    return n >= LANES ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* Pixels [0, r) of an output row from x (the padded input at the row's
 * first pixel): acc = bias + sum over taps.  r and c are constants at
 * each call, so acc stays in registers and the broadcasts address x at
 * fixed displacements. */
INLINE_AVX512 void fwd_pixels(int r, int c, const conv_geom *g, const float *x, const float *wt,
                              __m512 bias, __mmask16 m, float *y)
{
    __m512 acc[FWD_PIXELS];
    for (int i = 0; i < r; i++)
        acc[i] = bias;
    int kc = g->k * c;
    for (int ky = 0; ky < g->k; ky++) {
        const float *xr = x + (size_t)ky * g->prow, *wk = wt + (size_t)ky * kc * LANES;
        for (int j = 0; j < kc; j++) {
            __m512 w = _mm512_load_ps(wk + (size_t)j * LANES);
            for (int i = 0; i < r; i++)
                acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(xr[i * c + j]), w, acc[i]);
        }
    }
    for (int i = 0; i < r; i++)
        _mm512_mask_storeu_ps(y + (size_t)i * g->oc, m, acc[i]);
}

/* Blocks of at most `most` items, as even as possible: block b of nb
 * starts at n * b / nb. */
static int block_count(int n, int most) { return (n + most - 1) / most; }
static int block_start(int n, int nb, int b) { return (int)((long)n * b / nb); }

/* Every output row of one group of channels; c is a constant per caller. */
INLINE_AVX512 void fwd_group(int c, const conv_geom *g, const float *xpad, const float *wt,
                             __m512 bias, __mmask16 m, float *y)
{
    int nb = block_count(g->ow, FWD_PIXELS);
    for (int oy = 0; oy < g->oh; oy++)
        for (int b = 0; b < nb; b++) {
            int ox = block_start(g->ow, nb, b), r = block_start(g->ow, nb, b + 1) - ox;
            const float *x = xpad + (size_t)oy * g->prow + (size_t)ox * c;
            float *yp = y + ((size_t)oy * g->ow + (size_t)ox) * g->oc;
#define FWD(R) fwd_pixels(R, c, g, x, wt, bias, m, yp)
            switch (r) { CASES_13_TO_14(FWD) CASES_2_TO_12(FWD) default: FWD(1); }
#undef FWD
        }
}

/* Channel counts of LeNet's layers (1: MNIST, 3: CIFAR, 6: conv2) get
 * their own copy, where the input offsets are constants. */
#define FWD_FOR_C(name, C)                                                                        \
    static AVX512 void name(const conv_geom *g, const float *xpad, const float *wt, __m512 bias,  \
                            __mmask16 m, float *y)                                                \
    {                                                                                             \
        fwd_group(C, g, xpad, wt, bias, m, y);                                                    \
    }
FWD_FOR_C(fwd_group_c1, 1)
FWD_FOR_C(fwd_group_c3, 3)
FWD_FOR_C(fwd_group_c6, 6)
FWD_FOR_C(fwd_group_any, g->c)


/* ------------------------------------------ one input channel, pixel pairs */
/* (x[0], x[1]) in every pair of lanes: a 64-bit broadcast. */
INLINE_AVX512 __m512 pair_of(const float *x)
{
    double two;
    memcpy(&two, x, sizeof two);
    return _mm512_castpd_ps(_mm512_set1_pd(two));
}

/* Index vectors: from pairs (lane 2c + h) to the two pixels' channels
 * one after the other (lane h * oc + c), as they lie in NHWC; and back. */
INLINE_AVX512 __m512i pairs_to_pixels(int oc)
{
    _Alignas(64) int32_t idx[LANES];
    for (int j = 0; j < LANES; j++)
        idx[j] = j < oc ? 2 * j : j < 2 * oc ? 2 * (j - oc) + 1 : LANES - 1;
    return _mm512_load_si512(idx);
}

/* Lane LANES - 1 of the loaded vector is zero (2 oc < 16) or unused. */
INLINE_AVX512 __m512i pixels_to_pairs(int oc, int single)
{
    _Alignas(64) int32_t idx[LANES];
    for (int j = 0; j < LANES; j++) {
        int c = j / 2, h = j % 2;
        idx[j] = c < oc && !(single && h) ? h * oc + c : LANES - 1;
    }
    return _mm512_load_si512(idx);
}

/* Pixels [2 r0, 2 r0 + 2 n) of an output row from x (its padded input
 * row at the first pixel): n pairs, n a constant. */
INLINE_AVX512 void fwd_pairs(int n, const conv_geom *g, const float *x, const float *wp,
                             __m512 bias, __m512i order, __mmask16 m, float *y)
{
    __m512 acc[PAIR_BLOCK];
    for (int i = 0; i < n; i++)
        acc[i] = bias;
    for (int ky = 0; ky < g->k; ky++) {
        const float *xr = x + (size_t)ky * g->prow;
        for (int kx = 0; kx < g->k; kx++) {
            __m512 w = _mm512_load_ps(wp + (size_t)(ky * g->k + kx) * LANES);
            for (int i = 0; i < n; i++)
                acc[i] = _mm512_fmadd_ps(pair_of(xr + 2 * i + kx), w, acc[i]);
        }
    }
    for (int i = 0; i < n; i++)
        _mm512_mask_storeu_ps(y + (size_t)2 * i * g->oc, m, _mm512_permutexvar_ps(order, acc[i]));
}

static AVX512 void forward_pairs(const conv_geom *g, const float *xpad, const float *wt,
                                 const float *bias, float *y)
{
    const float *wp = wt + (size_t)taps(g) * LANES;   /* after the plain layout */
    __mmask16 m1 = group_mask(g, 0), m2 = (__mmask16)((1u << 2 * g->oc) - 1u);
    __m512 b1 = _mm512_maskz_loadu_ps(m1, bias);
    _Alignas(64) float bp[LANES];   /* bias[c] in lanes 2c and 2c + 1 */
    for (int j = 0; j < LANES; j++)
        bp[j] = j / 2 < g->oc ? bias[j / 2] : 0.0f;
    __m512 b2 = _mm512_load_ps(bp);
    __m512i order = pairs_to_pixels(g->oc);
    int pairs = g->ow / 2, nb = block_count(pairs, PAIR_BLOCK);
    for (int oy = 0; oy < g->oh; oy++) {
        const float *x = xpad + (size_t)oy * g->prow;
        float *yr = y + (size_t)oy * g->ow * g->oc;
        for (int b = 0; b < nb; b++) {
            int p0 = block_start(pairs, nb, b), n = block_start(pairs, nb, b + 1) - p0;
#define FP(N) fwd_pairs(N, g, x + 2 * p0, wp, b2, order, m2, yr + (size_t)2 * p0 * g->oc)
            switch (n) { CASES_2_TO_12(FP) default: FP(1); }
#undef FP
        }
        if (g->ow % 2)   /* the last pixel alone, plain layout */
            fwd_pixels(1, 1, g, x + g->ow - 1, wt, b1, m1, yr + (size_t)(g->ow - 1) * g->oc);
    }
}

/* Weight gradient by pairs, kernel rows [ky0, ky0 + rows) (k and rows
 * constants): their taps are summed in registers.  (All 25 taps of a 5x5
 * kernel at once made GCC spill accumulators in the inner loop.) */
INLINE_AVX512 void grad_w_pairs_rows(int k, int ky0, int rows, const conv_geom *g,
                                     const float *xpad, const float *dy, float *dwt)
{
    __m512 acc[PAIR_ROWS * PAIR_MAX_K];
    for (int t = 0; t < rows * k; t++)
        acc[t] = _mm512_setzero_ps();
    __m512i two = pixels_to_pairs(g->oc, 0), one = pixels_to_pairs(g->oc, 1);
    __mmask16 m2 = (__mmask16)((1u << 2 * g->oc) - 1u), m1 = group_mask(g, 0);
    for (int oy = 0; oy < g->oh; oy++) {
        const float *x = xpad + (size_t)(oy + ky0) * g->prow, *d = dy + (size_t)oy * g->ow * g->oc;
        int ox = 0;
        for (; ox + 2 <= g->ow; ox += 2) {
            __m512 dv = _mm512_permutexvar_ps(two, _mm512_maskz_loadu_ps(m2, d + (size_t)ox * g->oc));
            for (int ky = 0; ky < rows; ky++)
                for (int kx = 0; kx < k; kx++)
                    acc[ky * k + kx] = _mm512_fmadd_ps(
                        pair_of(x + (size_t)ky * g->prow + ox + kx), dv, acc[ky * k + kx]);
        }
        if (ox < g->ow) {   /* the last pixel alone: its pair lanes get zeros */
            __m512 dv = _mm512_permutexvar_ps(one, _mm512_maskz_loadu_ps(m1, d + (size_t)ox * g->oc));
            for (int ky = 0; ky < rows; ky++)
                for (int kx = 0; kx < k; kx++)
                    acc[ky * k + kx] = _mm512_fmadd_ps(
                        _mm512_set1_ps(x[(size_t)ky * g->prow + ox + kx]), dv, acc[ky * k + kx]);
        }
    }
    /* channel c's sum is lanes 2c + 2c+1: even lanes to the low half, odd
     * to the high half, added */
    __m512i split = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (int t = 0; t < rows * k; t++) {
        __m512 v = _mm512_permutexvar_ps(split, acc[t]);
        __m256 sum = _mm256_add_ps(_mm512_castps512_ps256(v),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        float *out = dwt + (size_t)(ky0 * k + t) * LANES;
        _mm256_store_ps(out, _mm256_add_ps(_mm256_load_ps(out), sum));
    }
}

/* Kernel rows in groups of at most PAIR_ROWS; k a constant. */
INLINE_AVX512 void grad_w_pairs_k(int k, const conv_geom *g, const float *xpad, const float *dy,
                                  float *dwt)
{
    for (int ky = 0; ky < k; ky += PAIR_ROWS) {
        if (k - ky >= PAIR_ROWS)
            grad_w_pairs_rows(k, ky, PAIR_ROWS, g, xpad, dy, dwt);
        else if (k - ky == 2)
            grad_w_pairs_rows(k, ky, 2, g, xpad, dy, dwt);
        else
            grad_w_pairs_rows(k, ky, 1, g, xpad, dy, dwt);
    }
}

static AVX512 void grad_w_pairs(const conv_geom *g, const float *xpad, const float *dy, float *dwt)
{
    switch (g->k) {
    case 5: grad_w_pairs_k(5, g, xpad, dy, dwt); break;
    case 4: grad_w_pairs_k(4, g, xpad, dy, dwt); break;
    case 3: grad_w_pairs_k(3, g, xpad, dy, dwt); break;
    case 2: grad_w_pairs_k(2, g, xpad, dy, dwt); break;
    default: grad_w_pairs_k(1, g, xpad, dy, dwt); break;
    }
}

AVX512 void nn_conv_direct_forward(const conv_geom *g, const float *xpad, const float *wt,
                                const float *bias, float *y)
{
    if (use_pairs(g)) {
        forward_pairs(g, xpad, wt, bias, y);
        leave_avx512();
        return;
    }
    int kkc = taps(g);
    for (int grp = 0; grp < groups(g); grp++) {
        __mmask16 m = group_mask(g, grp);
        __m512 b = _mm512_maskz_loadu_ps(m, bias + grp * LANES);
        const float *w = wt + (size_t)grp * kkc * LANES;
        float *yg = y + grp * LANES;
        switch (g->c) {
        case 1: fwd_group_c1(g, xpad, w, b, m, yg); break;
        case 3: fwd_group_c3(g, xpad, w, b, m, yg); break;
        case 6: fwd_group_c6(g, xpad, w, b, m, yg); break;
        default: fwd_group_any(g, xpad, w, b, m, yg); break;
        }
    }
    leave_avx512();
}

/* dwt[t][lane] += sum over the sample's pixels of dy[pixel][lane] x the
 * input at tap t, for the n taps [t0, t0 + n) of kernel row ky.  Two
 * pixels at a time into two sets of sums (more independent chains). */
INLINE_AVX512 void dw_taps(int n, const conv_geom *g, int ky, int t0, const float *xpad,
                           const float *dy, __mmask16 m, float *dwt)
{
    __m512 a0[DW_TAPS], a1[DW_TAPS];
    for (int j = 0; j < n; j++) {
        a0[j] = _mm512_load_ps(dwt + (size_t)j * LANES);
        a1[j] = _mm512_setzero_ps();
    }
    size_t c = (size_t)g->c;
    for (int oy = 0; oy < g->oh; oy++) {
        const float *x = xpad + (size_t)(oy + ky) * g->prow + (size_t)t0;
        const float *d = dy + (size_t)oy * g->ow * g->oc;
        int ox = 0;
        for (; ox + 2 <= g->ow; ox += 2, x += 2 * c, d += 2 * (size_t)g->oc) {
            __m512 d0 = _mm512_maskz_loadu_ps(m, d), d1 = _mm512_maskz_loadu_ps(m, d + g->oc);
            for (int j = 0; j < n; j++) {
                a0[j] = _mm512_fmadd_ps(_mm512_set1_ps(x[j]), d0, a0[j]);
                a1[j] = _mm512_fmadd_ps(_mm512_set1_ps(x[c + (size_t)j]), d1, a1[j]);
            }
        }
        if (ox < g->ow) {
            __m512 d0 = _mm512_maskz_loadu_ps(m, d);
            for (int j = 0; j < n; j++)
                a0[j] = _mm512_fmadd_ps(_mm512_set1_ps(x[j]), d0, a0[j]);
        }
    }
    for (int j = 0; j < n; j++)
        _mm512_store_ps(dwt + (size_t)j * LANES, _mm512_add_ps(a0[j], a1[j]));
}

AVX512 void nn_conv_direct_grad_w(const conv_geom *g, const float *xpad, const float *dy, float *dwt)
{
    if (use_pairs(g)) {
        grad_w_pairs(g, xpad, dy, dwt);
        leave_avx512();
        return;
    }
    int kc = row_taps(g), kkc = taps(g), nb = block_count(kc, DW_TAPS);
    for (int grp = 0; grp < groups(g); grp++) {
        __mmask16 m = group_mask(g, grp);
        const float *d = dy + grp * LANES;
        for (int ky = 0; ky < g->k; ky++)
            for (int b = 0; b < nb; b++) {
                int t0 = block_start(kc, nb, b), n = block_start(kc, nb, b + 1) - t0;
                float *acc = dwt + ((size_t)grp * kkc + (size_t)ky * kc + (size_t)t0) * LANES;
#define DW(N) dw_taps(N, g, ky, t0, xpad, d, m, acc)
                switch (n) { CASES_2_TO_12(DW) default: DW(1); }
#undef DW
            }
    }
    leave_avx512();
}

/* One pixel's input gradient: for each of the k kernel rows, the k*c
 * values sum over o of dy[o] w[o][ky][...], added into the padded input
 * row where the pixel's window lies.  n = k x vectors per row is a
 * constant; where vector v of the pixel goes: row_at[v] (its padded row,
 * from the window's first pixel) and mask[v] (the row's last vector is
 * partial). */
INLINE_AVX512 void dx_pixel(int n, int oc, const float *dy, const float *wt, float *const *row_at,
                            const __mmask16 *mask)
{
    __m512 acc[DX_VECTORS];
    for (int v = 0; v < n; v++)
        acc[v] = _mm512_setzero_ps();
    for (int o = 0; o < oc; o++, wt += (size_t)n * LANES) {
        __m512 d = _mm512_set1_ps(dy[o]);
        for (int v = 0; v < n; v++)
            acc[v] = _mm512_fmadd_ps(d, _mm512_load_ps(wt + (size_t)v * LANES), acc[v]);
    }
    for (int v = 0; v < n; v++) {
        float *p = row_at[v];
        _mm512_mask_storeu_ps(p, mask[v], _mm512_add_ps(_mm512_maskz_loadu_ps(mask[v], p), acc[v]));
    }
}

AVX512 void nn_conv_direct_grad_x(const conv_geom *g, const float *dy, const float *wt, float *dxpad)
{
    int n = dx_vectors(g), nv = dx_row_vectors(g), kc = row_taps(g);
    __mmask16 mask[DX_VECTORS];
    size_t offset[DX_VECTORS];   /* of vector v from the window's first value */
    for (int v = 0; v < n; v++) {
        int ky = v / nv, first = v % nv * LANES, left = kc - first;
        offset[v] = (size_t)ky * g->prow + (size_t)first;
        mask[v] = left >= LANES ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    }
    float *row_at[DX_VECTORS];
    for (int oy = 0; oy < g->oh; oy++)
        for (int ox = 0; ox < g->ow; ox++) {
            float *win = dxpad + (size_t)oy * g->prow + (size_t)ox * g->c;
            for (int v = 0; v < n; v++)
                row_at[v] = win + offset[v];
            const float *d = dy + ((size_t)oy * g->ow + (size_t)ox) * g->oc;
#define DX(N) dx_pixel(N, g->oc, d, wt, row_at, mask)
            switch (n) {
                CASES_15_TO_20(DX) CASES_13_TO_14(DX) CASES_2_TO_12(DX) default: DX(1);
            }
#undef DX
        }
    leave_avx512();
}

#else /* not x86-64 GCC/Clang: im2col and OpenBLAS */

int nn_conv_direct_usable(const conv_geom *g, int need_dx)
{
    (void)g, (void)need_dx;
    return 0;
}

/* Never called: nn_conv_direct_usable says no. */
size_t nn_conv_direct_packed_size(const conv_geom *g)
{
    (void)g;
    return 0;
}

void nn_conv_direct_pack_forward(const conv_geom *g, const float *w, float *wt) { (void)g, (void)w, (void)wt; }
void nn_conv_direct_pack_grad_x(const conv_geom *g, const float *w, float *wt) { (void)g, (void)w, (void)wt; }
void nn_conv_direct_unpack_grad_w(const conv_geom *g, const float *dwt, float *dw) { (void)g, (void)dwt, (void)dw; }

void nn_conv_direct_forward(const conv_geom *g, const float *xpad, const float *wt,
                         const float *bias, float *y)
{
    (void)g, (void)xpad, (void)wt, (void)bias, (void)y;
}

void nn_conv_direct_grad_w(const conv_geom *g, const float *xpad, const float *dy, float *dwt)
{
    (void)g, (void)xpad, (void)dy, (void)dwt;
}

void nn_conv_direct_grad_x(const conv_geom *g, const float *dy, const float *wt, float *dxpad)
{
    (void)g, (void)dy, (void)wt, (void)dxpad;
}

#endif
