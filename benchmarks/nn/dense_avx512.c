/* rb_train's dense-layer GEMMs with AVX-512F (see dense_avx512.h), built
 * with a per-function target attribute and chosen at run time
 * (nn_dense512_usable), so the program still runs without AVX-512. */
#include "dense_avx512.h"

#include <string.h>

#include "avx512.h"

#if defined(__x86_64__) && defined(__GNUC__)
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

#else /* not x86-64 GCC/Clang: OpenBLAS */

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
