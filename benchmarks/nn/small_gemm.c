/* rb_train's small-n GEMMs with AVX2 + FMA (see small_gemm.h): one
 * pixel's n <= 8 channels fill one 8-lane register (masked loads and
 * stores), so no lane work is lost to a 16-wide tile and nothing is
 * packed.  Built with per-function target attributes and chosen at run
 * time, so the program still runs on CPUs without AVX2.  The AVX-512
 * kernels: conv_avx512.c, dense_avx512.c. */
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

#endif
