/* rb_train's AVX2 and AVX-512 kernels (see small_gemm.h).  Small-n GEMMs
 * with AVX2 + FMA: one pixel's n <= 8 channels fill one 8-lane register
 * (masked loads and stores), so no lane work is lost to a 16-wide tile
 * and nothing is packed.  Then the AVX-512 direct convolutions and dense
 * GEMMs.  Built with per-function target attributes and chosen at run
 * time, so the program still runs on CPUs without AVX2 / AVX-512. */
#include "small_gemm.h"

#include <cblas.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2_FMA __attribute__((target("avx2,fma")))
#define INLINE_AVX2_FMA static inline __attribute__((always_inline, target("avx2,fma")))

/* Rows (or columns of a) per block: eight independent FMA chains keep
 * both FMA units busy despite the 4-cycle latency. */
enum { BLOCK = 8 };

static int can_run(int n, int k)
{
    return n >= 1 && n <= SMALL_GEMM_MAX_N && k >= 1 && k <= SMALL_GEMM_MAX_K &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           openblas_get_num_threads() == 1;
}

/* Lanes 0..n-1 of a mask for _mm256_mask{load,store}_ps. */
INLINE_AVX2_FMA __m256i lane_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* y rows 0..m-1 += a rows . w^T, with wt[kk * 8 + o] = w[o][kk] (zero for
 * o >= n).  m is a constant at each call, so acc stays in registers. */
INLINE_AVX2_FMA void abt_rows(int m, const float *a, int k, const float *wt, __m256i mask, int n,
                              float *y)
{
    __m256 acc[BLOCK];
    for (int i = 0; i < m; i++)
        acc[i] = _mm256_maskload_ps(y + (size_t)i * n, mask);
    for (int kk = 0; kk < k; kk++) {
        __m256 w = _mm256_load_ps(wt + (size_t)kk * 8);
        for (int i = 0; i < m; i++)
            acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + (size_t)i * k + kk), w, acc[i]);
    }
    for (int i = 0; i < m; i++)
        _mm256_maskstore_ps(y + (size_t)i * n, mask, acc[i]);
}

static AVX2_FMA void abt(size_t rows, int n, int k, const float *a, const float *w, float *y)
{
    _Alignas(32) float wt[SMALL_GEMM_MAX_K * 8];
    for (int kk = 0; kk < k; kk++)
        for (int o = 0; o < 8; o++)
            wt[kk * 8 + o] = o < n ? w[(size_t)o * k + kk] : 0.0f;
    __m256i mask = lane_mask(n);
    size_t r = 0;
    for (; r + BLOCK <= rows; r += BLOCK)
        abt_rows(BLOCK, a + r * k, k, wt, mask, n, y + r * n);
    for (; r < rows; r++)
        abt_rows(1, a + r * k, k, wt, mask, n, y + r * n);
}

/* acc[j * 8 + o] = sum over rows of dy[r][o] * a[r][j], j < m (a points at
 * the block's first column).  m is a constant at each call. */
INLINE_AVX2_FMA void atb_cols(int m, size_t rows, const float *dy, int n, const float *a, int k,
                              __m256i mask, float *acc_out)
{
    __m256 acc[BLOCK];
    for (int j = 0; j < m; j++)
        acc[j] = _mm256_setzero_ps();
    for (size_t r = 0; r < rows; r++) {
        __m256 d = _mm256_maskload_ps(dy + r * n, mask);
        for (int j = 0; j < m; j++)
            acc[j] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + r * k + j), d, acc[j]);
    }
    for (int j = 0; j < m; j++)
        _mm256_store_ps(acc_out + (size_t)j * 8, acc[j]);
}

static AVX2_FMA void atb(size_t rows, int n, int k, const float *dy, const float *a, float *dw)
{
    _Alignas(32) float acc[SMALL_GEMM_MAX_K * 8];
    __m256i mask = lane_mask(n);
    for (int kk = 0; kk < k; kk += BLOCK) {
        const float *col = a + kk;
        float *out = acc + (size_t)kk * 8;
        switch (k - kk < BLOCK ? k - kk : BLOCK) {
        case 8: atb_cols(8, rows, dy, n, col, k, mask, out); break;
        case 7: atb_cols(7, rows, dy, n, col, k, mask, out); break;
        case 6: atb_cols(6, rows, dy, n, col, k, mask, out); break;
        case 5: atb_cols(5, rows, dy, n, col, k, mask, out); break;
        case 4: atb_cols(4, rows, dy, n, col, k, mask, out); break;
        case 3: atb_cols(3, rows, dy, n, col, k, mask, out); break;
        case 2: atb_cols(2, rows, dy, n, col, k, mask, out); break;
        default: atb_cols(1, rows, dy, n, col, k, mask, out); break;
        }
    }
    for (int o = 0; o < n; o++)
        for (int kk = 0; kk < k; kk++)
            dw[(size_t)o * k + kk] += acc[kk * 8 + o];
}

int nn_small_gemm_add_abt(size_t rows, int n, int k, const float *a, const float *w, float *y)
{
    if (!can_run(n, k))
        return -1;
    abt(rows, n, k, a, w, y);
    return 0;
}

int nn_small_gemm_atb(size_t rows, int n, int k, const float *dy, const float *a, float *dw)
{
    if (!can_run(n, k))
        return -1;
    atb(rows, n, k, dy, a, dw);
    return 0;
}

/* ------------------------------------------- direct convolution, AVX-512 */
#define AVX512 __attribute__((target("avx512f")))
#define INLINE_AVX512 static inline __attribute__((always_inline, target("avx512f")))

/* Clear the upper halves of the vector registers before returning to code
 * built for SSE2: GCC left them dirty here, and on this Zen 5 that made
 * the (SSE2) max pooling after a convolution 4.5x slower. */
INLINE_AVX512 void leave_avx512(void) { _mm256_zeroupper(); }

/* LANES output channels per vector.  FWD_PIXELS pixels of a row are
 * accumulated at once (one weight load feeds that many FMAs, and 8+
 * independent chains cover the FMA latency); the weight gradient takes
 * DW_TAPS taps x 2 pixels; the input gradient keeps DX_VECTORS vectors of
 * a pixel's k rows of k*c values. */
enum { LANES = 16, FWD_PIXELS = 14, DW_TAPS = 12, DX_VECTORS = 20 };

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

/* Switch cases that call CALL(n) with n a constant, for the register
 * blocks above: `switch (n) { CASES_2_TO_12(F) default: F(1); }`. */
#define CASE(n, CALL)                                                                             \
    case n: CALL(n); break;
#define CASES_2_TO_12(CALL)                                                                       \
    CASE(12, CALL) CASE(11, CALL) CASE(10, CALL) CASE(9, CALL) CASE(8, CALL) CASE(7, CALL)        \
    CASE(6, CALL) CASE(5, CALL) CASE(4, CALL) CASE(3, CALL) CASE(2, CALL)
#define CASES_13_TO_14(CALL) CASE(14, CALL) CASE(13, CALL)
#define CASES_15_TO_20(CALL)                                                                      \
    CASE(20, CALL) CASE(19, CALL) CASE(18, CALL) CASE(17, CALL) CASE(16, CALL) CASE(15, CALL)

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

/* ------------------------------------------------ dense layers, AVX-512 */
/* Register tiles: DENSE_VECS vectors of 16 columns (64) by DENSE_ROWS
 * rows (6: 24 accumulators, 4 loads and 6 broadcasts feed 24 FMAs), and
 * for the forward pass FWD_ROWS weight rows by 64 batch columns. */
enum { DENSE_VECS = 4, DENSE_COLS = DENSE_VECS * LANES, DENSE_ROWS = 6, FWD_ROWS = 6 };
/* The input gradient sums over `out` in blocks of GRADX_DEPTH, so that a
 * block of w (GRADX_DEPTH x 64 floats, 64 KB) stays in L2 for every
 * block of batch rows. */
enum { GRADX_DEPTH = 256 };

int nn_dense512_usable(void) { return __builtin_cpu_supports("avx512f"); }

static size_t padded_batch(int batch) { return ((size_t)batch + DENSE_COLS - 1) / DENSE_COLS * DENSE_COLS; }

size_t nn_dense512_packed_size(int batch, int in) { return padded_batch(batch) * (size_t)in; }

/* xt[i][b] = x[b][i], zero for b >= batch. */
void nn_dense512_pack_input(const float *x, int batch, int in, float *xt)
{
    size_t ld = padded_batch(batch);
    for (size_t i = 0; i < (size_t)in; i++) {
        float *row = xt + i * ld;
        for (size_t b = 0; b < (size_t)batch; b++)
            row[b] = x[b * (size_t)in + i];
        memset(row + batch, 0, (ld - (size_t)batch) * sizeof(float));
    }
}

/* Loads and stores of a tile's row: masked only where the 64 columns run
 * past the matrix (`full` is a constant at each call: GCC kept the four
 * masks on the stack and reloaded them for every load, which was the
 * input gradient's hottest instruction). */
INLINE_AVX512 __m512 load_cols(int full, __mmask16 m, const float *p)
{
    return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

INLINE_AVX512 void store_cols(int full, __mmask16 m, float *p, __m512 v)
{
    if (full)
        _mm512_storeu_ps(p, v);
    else
        _mm512_mask_storeu_ps(p, m, v);
}

/* Masks of the DENSE_VECS vectors from column i of n columns. */
INLINE_AVX512 void column_masks(int i, int n, __mmask16 *m)
{
    for (int v = 0; v < DENSE_VECS; v++) {
        int left = n - i - v * LANES;
        m[v] = left >= LANES ? (__mmask16)0xFFFF : left <= 0 ? 0 : (__mmask16)((1u << left) - 1u);
    }
}

/* y rows [b0, b0 + nb) (nb <= 64) x weight rows [o, o + r): the tile
 * y^T[o..][b0..] over all of `in`, stored transposed with the bias. */
INLINE_AVX512 void fwd_tile(int r, const float *xt, size_t ld, int in, const float *w,
                            const float *bias, int nb, size_t out, float *y)
{
    __m512 acc[FWD_ROWS][DENSE_VECS];
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            acc[j][v] = _mm512_setzero_ps();
    for (size_t i = 0; i < (size_t)in; i++) {
        const float *xr = xt + i * ld;
        __m512 x[DENSE_VECS];
        for (int v = 0; v < DENSE_VECS; v++)
            x[v] = _mm512_load_ps(xr + v * LANES);
        for (int j = 0; j < r; j++) {
            __m512 a = _mm512_set1_ps(w[(size_t)j * in + i]);
            for (int v = 0; v < DENSE_VECS; v++)
                acc[j][v] = _mm512_fmadd_ps(a, x[v], acc[j][v]);
        }
    }
    _Alignas(64) float t[FWD_ROWS][DENSE_COLS];
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            _mm512_store_ps(&t[j][v * LANES], acc[j][v]);
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < r; j++)
            y[(size_t)b * out + j] = t[j][b] + bias[j];
}

AVX512 void nn_dense512_forward(const float *xt, int batch, int in, const float *w, const float *bias,
                             int out, int o0, int o1, float *y)
{
    size_t ld = padded_batch(batch);
    for (int b0 = 0; b0 < batch; b0 += DENSE_COLS) {
        int nb = batch - b0 < DENSE_COLS ? batch - b0 : DENSE_COLS;
        for (int o = o0; o < o1; o += FWD_ROWS) {
            int r = o1 - o < FWD_ROWS ? o1 - o : FWD_ROWS;
            const float *wo = w + (size_t)o * in;
            float *yo = y + (size_t)b0 * out + o;
#define FWD(R) fwd_tile(R, xt + b0, ld, in, wo, bias + o, nb, (size_t)out, yo)
            switch (r) { CASE(6, FWD) CASE(5, FWD) CASE(4, FWD) CASE(3, FWD) CASE(2, FWD) default: FWD(1); }
#undef FWD
        }
    }
    leave_avx512();
}

/* dw rows [o, o + r) x columns [i, i + 64) (masked at `in`): sum over
 * the batch of dy[b][o..] x x[b][i..]. */
INLINE_AVX512 void grad_w_tile(int r, int full, const float *dy, const float *x, int batch, int in,
                               int out, int i, const __mmask16 *m, float *dw)
{
    __m512 acc[DENSE_ROWS][DENSE_VECS];
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            acc[j][v] = _mm512_setzero_ps();
    for (size_t b = 0; b < (size_t)batch; b++) {
        const float *xr = x + b * (size_t)in + i, *d = dy + b * (size_t)out;
        __m512 xv[DENSE_VECS];
        for (int v = 0; v < DENSE_VECS; v++)
            xv[v] = load_cols(full, m[v], xr + v * LANES);
        for (int j = 0; j < r; j++) {
            __m512 a = _mm512_set1_ps(d[j]);
            for (int v = 0; v < DENSE_VECS; v++)
                acc[j][v] = _mm512_fmadd_ps(a, xv[v], acc[j][v]);
        }
    }
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            store_cols(full, m[v], dw + (size_t)j * in + i + v * LANES, acc[j][v]);
}

AVX512 void nn_dense512_grad_w(const float *dy, const float *x, int batch, int in, int out, int o0,
                            int o1, float *dw)
{
    __mmask16 m[DENSE_VECS];
    /* rows outer: a block's dy columns are read once, its dw rows written
     * in one stretch */
    for (int o = o0; o < o1; o += DENSE_ROWS) {
        int r = o1 - o < DENSE_ROWS ? o1 - o : DENSE_ROWS;
        const float *d = dy + o;
        float *dwo = dw + (size_t)o * in;
        for (int i = 0; i < in; i += DENSE_COLS) {
            column_masks(i, in, m);
#define GW(R)                                                                                     \
    (in - i >= DENSE_COLS ? grad_w_tile(R, 1, d, x, batch, in, out, i, m, dwo)                    \
                          : grad_w_tile(R, 0, d, x, batch, in, out, i, m, dwo))
            switch (r) { CASE(6, GW) CASE(5, GW) CASE(4, GW) CASE(3, GW) CASE(2, GW) default: GW(1); }
#undef GW
        }
    }
    leave_avx512();
}

/* dx rows [b, b + r) x columns [i, i + 64) (masked at i1): dx (or 0 when
 * `first`) + sum over o in [oa, oz) of dy[b..][o] x w[o][i..]. */
INLINE_AVX512 void grad_x_tile(int r, int full, const float *dy, const float *w, int in, int out,
                               int oa, int oz, int i, const __mmask16 *m, int first, float *dx)
{
    __m512 acc[DENSE_ROWS][DENSE_VECS];
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            acc[j][v] = first ? _mm512_setzero_ps()
                              : load_cols(full, m[v], dx + (size_t)j * in + i + v * LANES);
    for (size_t o = (size_t)oa; o < (size_t)oz; o++) {
        const float *wr = w + o * (size_t)in + i;
        __m512 wv[DENSE_VECS];
        for (int v = 0; v < DENSE_VECS; v++)
            wv[v] = load_cols(full, m[v], wr + v * LANES);
        for (int j = 0; j < r; j++) {
            __m512 a = _mm512_set1_ps(dy[(size_t)j * out + o]);
            for (int v = 0; v < DENSE_VECS; v++)
                acc[j][v] = _mm512_fmadd_ps(a, wv[v], acc[j][v]);
        }
    }
    for (int j = 0; j < r; j++)
        for (int v = 0; v < DENSE_VECS; v++)
            store_cols(full, m[v], dx + (size_t)j * in + i + v * LANES, acc[j][v]);
}

AVX512 void nn_dense512_grad_x(const float *dy, const float *w, int batch, int in, int out, int i0,
                            int i1, float *dx)
{
    __mmask16 m[DENSE_VECS];
    for (int oa = 0; oa < out; oa += GRADX_DEPTH) {
        int oz = out - oa < GRADX_DEPTH ? out : oa + GRADX_DEPTH;
        for (int i = i0; i < i1; i += DENSE_COLS) {
            column_masks(i, i1, m);
            for (int b = 0; b < batch; b += DENSE_ROWS) {
                int r = batch - b < DENSE_ROWS ? batch - b : DENSE_ROWS;
                const float *d = dy + (size_t)b * out;
                float *dxb = dx + (size_t)b * in;
#define GX(R)                                                                                     \
    (i1 - i >= DENSE_COLS ? grad_x_tile(R, 1, d, w, in, out, oa, oz, i, m, oa == 0, dxb)          \
                          : grad_x_tile(R, 0, d, w, in, out, oa, oz, i, m, oa == 0, dxb))
                switch (r) { CASE(6, GX) CASE(5, GX) CASE(4, GX) CASE(3, GX) CASE(2, GX) default: GX(1); }
#undef GX
            }
        }
    }
    leave_avx512();
}

#else /* not x86-64 GCC/Clang: OpenBLAS does all GEMMs */

int nn_small_gemm_add_abt(size_t rows, int n, int k, const float *a, const float *w, float *y)
{
    (void)rows, (void)n, (void)k, (void)a, (void)w, (void)y;
    return -1;
}

int nn_small_gemm_atb(size_t rows, int n, int k, const float *dy, const float *a, float *dw)
{
    (void)rows, (void)n, (void)k, (void)dy, (void)a, (void)dw;
    return -1;
}


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


int nn_dense512_usable(void) { return 0; }

/* Never called: nn_dense512_usable says no. */
size_t nn_dense512_packed_size(int batch, int in)
{
    (void)batch, (void)in;
    return 0;
}

void nn_dense512_pack_input(const float *x, int batch, int in, float *xt)
{
    (void)x, (void)batch, (void)in, (void)xt;
}

void nn_dense512_forward(const float *xt, int batch, int in, const float *w, const float *bias,
                      int out, int o0, int o1, float *y)
{
    (void)xt, (void)batch, (void)in, (void)w, (void)bias, (void)out, (void)o0, (void)o1, (void)y;
}

void nn_dense512_grad_w(const float *dy, const float *x, int batch, int in, int out, int o0, int o1,
                     float *dw)
{
    (void)dy, (void)x, (void)batch, (void)in, (void)out, (void)o0, (void)o1, (void)dw;
}

void nn_dense512_grad_x(const float *dy, const float *w, int batch, int in, int out, int i0, int i1,
                     float *dx)
{
    (void)dy, (void)w, (void)batch, (void)in, (void)out, (void)i0, (void)i1, (void)dx;
}

#endif
