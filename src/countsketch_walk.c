/* The count sketch's hash walks over runs of consecutive indices, in
 * AVX-512, AVX2 or portable C (the same integers on every path); see
 * countsketch_walk.h and reducer_sketch.h. */
#include "countsketch_walk.h"

#include <string.h>

/* The walks of sketch row co from x0 (indices x0 + i must not pass 2^64).
 * With x = x0 mod p the sign polynomial of x + y is, as a polynomial in y,
 *   T(y) = k3 y^3 + t2 y^2 + t1 y + t0,
 *   t2 = 3 k3 x + k2,  t1 = (3 k3 x + 2 k2) x + k1,  t0 = S(x),
 * and lane l (step L = LANES) starts from
 *   d0 = T(l) = t0 + t1 l + t2 l^2 + k3 l^3
 *   d1 = T(l+L) - T(l) = t1 L + t2 (2lL + L^2) + k3 (3l^2 L + 3l L^2 + L^3)
 *   d2 = T(l+2L) - 2T(l+L) + T(l) = t2 2L^2 + k3 (6l L^2 + 6L^3)
 *   d3 = 6 k3 L^3,
 * products of t's with multipliers below 2^16: one vectorised pass. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void rb_cs_walk_start(lane_walk *w, const rb_cs_coeffs *co, uint64_t x0)
{
    const uint32_t L = LANES;
    const uint64_t x = mod_p(x0), k3 = co->k[3];
    const uint64_t k3x3 = mul_p(mul_p32(k3, 3), x);
    const uint64_t t2 = add_p(k3x3, co->k[2]);
    const uint64_t t1 = add_p(mul_p(add_p(k3x3, mul_p32(co->k[2], 2)), x), co->k[1]);
    const uint64_t t0 = sign_poly(co, x), h = bucket_hash(co, x);
    const uint64_t t1_L = mul_p32(t1, L), t2_2LL = mul_p32(t2, 2 * L * L);
    for (uint32_t l = 0; l < LANES; l++) {
        w->h[l] = add_p(h, mul_p32(co->a, l));
        w->d0[l] = add_p(add_p(t0, mul_p32(t1, l)), add_p(mul_p32(t2, l * l), mul_p32(k3, l * l * l)));
        w->d1[l] = add_p(t1_L, add_p(mul_p32(t2, 2 * l * L + L * L),
                                     mul_p32(k3, 3 * l * l * L + 3 * l * L * L + L * L * L)));
        w->d2[l] = add_p(t2_2LL, mul_p32(k3, 6 * l * L * L + 6 * L * L * L));
    }
    w->step_h = mul_p32(co->a, L);
    w->d3 = mul_p32(k3, 6 * L * L * L);
}

/* The walks as kernels.  Every instruction set computes the same integers
 * and adds into each counter in index order, so tables and estimates are
 * bitwise the same on every path (tested).  AVX-512 hashes sixteen
 * elements in registers and adds or gathers their counters at once; the
 * other paths hash a chunk into arrays (walk_hashes), then add or gather. */

/* bucket[i] and bits[i] for the next n elements, i < n rounded up to LANES
 * (the arrays hold that many).  bits[i] is the sign as a mask (bit 31 set
 * for -1); given values v (encode), the bits of the signed value v[i]
 * instead, and v is read only below n. */
static void walk_portable(lane_walk *w, uint32_t cols, size_t n, const float *v,
                          uint32_t *restrict bucket, uint32_t *restrict bits)
{
    for (size_t i = 0; i < n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            bucket[i + l] = bucket_of(w->h[l], cols);
            bits[i + l] = (uint32_t)w->d0[l] << 31;
            w->h[l] = add_p(w->h[l], w->step_h);
            w->d0[l] = add_p(w->d0[l], w->d1[l]);
            w->d1[l] = add_p(w->d1[l], w->d2[l]);
            w->d2[l] = add_p(w->d2[l], w->d3);
        }
    for (size_t i = 0; v && i < n; i++) {
        uint32_t vb;
        memcpy(&vb, &v[i], sizeof vb);
        bits[i] ^= vb;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CS_X86 1
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define AVX2 __attribute__((target("avx2")))

/* The sixteen lanes of a walk in pairs of registers of eight 64-bit
 * integers (lanes 0-7, 8-15), with the constants of the step. */
typedef struct walk512 {
    __m512i h[2], d0[2], d1[2], d2[2];
    __m512i step_h, d3, p, cols;
} walk512;

AVX512 static inline walk512 load512(const lane_walk *w, uint32_t cols)
{
    walk512 s;
    for (int k = 0; k < 2; k++) {
        s.h[k] = _mm512_loadu_si512(w->h + 8 * k);
        s.d0[k] = _mm512_loadu_si512(w->d0 + 8 * k);
        s.d1[k] = _mm512_loadu_si512(w->d1 + 8 * k);
        s.d2[k] = _mm512_loadu_si512(w->d2 + 8 * k);
    }
    s.step_h = _mm512_set1_epi64((long long)w->step_h);
    s.d3 = _mm512_set1_epi64((long long)w->d3);
    s.p = _mm512_set1_epi64((long long)RB_CS_PRIME);
    s.cols = _mm512_set1_epi64(cols);
    return s;
}

AVX512 static inline void store512(lane_walk *w, const walk512 *s)
{
    for (int k = 0; k < 2; k++) {
        _mm512_storeu_si512(w->h + 8 * k, s->h[k]);
        _mm512_storeu_si512(w->d0 + 8 * k, s->d0[k]);
        _mm512_storeu_si512(w->d1 + 8 * k, s->d1[k]);
        _mm512_storeu_si512(w->d2 + 8 * k, s->d2[k]);
    }
}

/* x + y mod p: t = x + y < 2p; t - p wraps above t when t < p, so the
 * unsigned minimum is the reduced sum. */
AVX512 static inline __m512i add_p512(__m512i x, __m512i y, __m512i p)
{
    __m512i t = _mm512_add_epi64(x, y);
    return _mm512_min_epu64(t, _mm512_sub_epi64(t, p));
}

AVX512 static inline void step512(walk512 *s)
{
    for (int k = 0; k < 2; k++) {
        s->h[k] = add_p512(s->h[k], s->step_h, s->p);
        s->d0[k] = add_p512(s->d0[k], s->d1[k], s->p);
        s->d1[k] = add_p512(s->d1[k], s->d2[k], s->p);
        s->d2[k] = add_p512(s->d2[k], s->d3, s->p);
    }
}

/* The sixteen buckets: the high halves of the 32 x 32 -> 64-bit products
 * (H >> 29) * c, both registers' picked by one permute. */
AVX512 static inline __m512i buckets512(const walk512 *s)
{
    const __m512i hi = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512i q0 = _mm512_mul_epu32(_mm512_srli_epi64(s->h[0], 29), s->cols);
    __m512i q1 = _mm512_mul_epu32(_mm512_srli_epi64(s->h[1], 29), s->cols);
    return _mm512_permutex2var_epi32(q0, hi, q1);
}

/* The sixteen signs as masks: bit 0 of the polynomials moved to bit 31. */
AVX512 static inline __m512i signs512(const walk512 *s)
{
    const __m512i lo = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_slli_epi32(_mm512_permutex2var_epi32(s->d0[0], lo, s->d0[1]), 31);
}

/* The lanes that hold one of the `left` elements still to do. */
static inline __mmask16 live16(size_t left)
{
    return left >= LANES ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* t[bucket] += signed v[i] for the next n elements. */
AVX512 static void insert_avx512(lane_walk *w, uint32_t cols, const float *v, size_t n, float *t)
{
    walk512 s = load512(w, cols);
    for (size_t i = 0; i < n; i += LANES) {
        uint32_t b[LANES];
        float sv[LANES];
        __m512i vi = _mm512_maskz_loadu_epi32(live16(n - i), v + i);
        _mm512_storeu_si512(b, buckets512(&s));
        _mm512_storeu_si512(sv, _mm512_xor_si512(vi, signs512(&s)));
        step512(&s);
        for (size_t k = 0, m = n - i < LANES ? n - i : LANES; k < m; k++)
            t[b[k]] += sv[k];
    }
    store512(w, &s);
}

/* out[i] = signed counter of the next n elements.  The gather takes
 * signed 32-bit indices: tables of at most 2^31 columns only. */
AVX512 static void query_avx512(lane_walk *w, uint32_t cols, const float *t, size_t n, float *out)
{
    walk512 s = load512(w, cols);
    for (size_t i = 0; i < n; i += LANES) {
        __mmask16 live = live16(n - i);
        __m512i c = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, buckets512(&s), t, 4);
        _mm512_mask_storeu_epi32(out + i, live, _mm512_xor_si512(c, signs512(&s)));
        step512(&s);
    }
    store512(w, &s);
}

/* x + y mod p: u = x + y - p is negative (as a signed integer) exactly
 * when x + y < p; then take x + y. */
AVX2 static inline __m256i add_p256(__m256i x, __m256i y, __m256i p)
{
    __m256i t = _mm256_add_epi64(x, y), u = _mm256_sub_epi64(t, p);
    return _mm256_blendv_epi8(u, t, _mm256_cmpgt_epi64(_mm256_setzero_si256(), u));
}

/* The 32-bit high (or low) halves of the 64-bit lanes of a (lanes 0-3)
 * and b (4-7), in lane order: picked per 128-bit half, then reordered. */
AVX2 static inline __m256i halves256(__m256i a, __m256i b, int high)
{
    __m256 x = _mm256_castsi256_ps(a), y = _mm256_castsi256_ps(b);
    __m256 s = high ? _mm256_shuffle_ps(x, y, _MM_SHUFFLE(3, 1, 3, 1))
                    : _mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_permute4x64_epi64(_mm256_castps_si256(s), _MM_SHUFFLE(3, 1, 2, 0));
}

/* walk_portable's results for lanes first .. first+7 (two registers of
 * four 64-bit lanes per quantity: their state fits the sixteen AVX2
 * registers, all sixteen lanes would not). */
AVX2 static void walk_avx2_half(lane_walk *w, int first, uint32_t cols, size_t n, const float *v,
                                uint32_t *restrict bucket, uint32_t *restrict bits)
{
    const __m256i p = _mm256_set1_epi64x((long long)RB_CS_PRIME), c = _mm256_set1_epi64x(cols);
    const __m256i step_h = _mm256_set1_epi64x((long long)w->step_h), d3 = _mm256_set1_epi64x((long long)w->d3);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    uint64_t *q[4] = {w->h + first, w->d0 + first, w->d1 + first, w->d2 + first};
    __m256i s[4][2];
    for (int k = 0; k < 4; k++)
        for (int m = 0; m < 2; m++)
            s[k][m] = _mm256_loadu_si256((const __m256i *)(q[k] + 4 * m));
    for (size_t i = first; i < n + first; i += LANES) {
        __m256i b0 = _mm256_mul_epu32(_mm256_srli_epi64(s[0][0], 29), c);
        __m256i b1 = _mm256_mul_epu32(_mm256_srli_epi64(s[0][1], 29), c);
        __m256i sgn = _mm256_slli_epi32(halves256(s[1][0], s[1][1], 0), 31);
        if (v) {
            int left = i >= n ? 0 : n - i >= 8 ? 8 : (int)(n - i);
            __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
            sgn = _mm256_xor_si256(sgn, _mm256_maskload_epi32((const int *)(v + i), live));
        }
        _mm256_storeu_si256((__m256i *)(bucket + i), halves256(b0, b1, 1));
        _mm256_storeu_si256((__m256i *)(bits + i), sgn);
        for (int m = 0; m < 2; m++) {
            s[0][m] = add_p256(s[0][m], step_h, p);
            s[1][m] = add_p256(s[1][m], s[2][m], p);
            s[2][m] = add_p256(s[2][m], s[3][m], p);
            s[3][m] = add_p256(s[3][m], d3, p);
        }
    }
    for (int k = 0; k < 4; k++)
        for (int m = 0; m < 2; m++)
            _mm256_storeu_si256((__m256i *)(q[k] + 4 * m), s[k][m]);
}
#undef AVX512
#undef AVX2
#endif

int rb_cs_best_isa(void)
{
#ifdef CS_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return RB_CS_ISA_AVX512;
    if (__builtin_cpu_supports("avx2"))
        return RB_CS_ISA_AVX2;
#endif
    return RB_CS_ISA_PORTABLE;
}

/* The next n <= CHUNK hashes of walk w, as walk_portable gives them. */
static void walk_hashes(int isa, lane_walk *w, uint32_t cols, size_t n, const float *v,
                        uint32_t *bucket, uint32_t *bits)
{
#ifdef CS_X86
    if (isa >= RB_CS_ISA_AVX2) {
        walk_avx2_half(w, 0, cols, n, v, bucket, bits);
        walk_avx2_half(w, 8, cols, n, v, bucket, bits);
        return;
    }
#endif
    (void)isa;
    walk_portable(w, cols, n, v, bucket, bits);
}

/* t[b[i]] += the float with bits sv[i]. */
static void scatter_add(float *t, const uint32_t *restrict b, const uint32_t *restrict sv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, &sv[i], sizeof v);
        t[b[i]] += v;
    }
}

/* e[i] = counter b[i] with sign s[i] (AVX2 and AVX-512 clones gather). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void rb_cs_gather_signed(const float *t, const uint32_t *restrict b, const uint32_t *restrict s,
                          float *restrict e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        e[i] = flip(t[b[i]], s[i]);
}

/* Table row t += the signed values v[0..n) of walk w. */
void rb_cs_walk_insert(int isa, lane_walk *w, size_t cols, const float *v, size_t n, float *t)
{
#ifdef CS_X86
    if (isa >= RB_CS_ISA_AVX512) {
        insert_avx512(w, (uint32_t)cols, v, n, t);
        return;
    }
#endif
    uint32_t bucket[CHUNK], sv[CHUNK];
    for (size_t lo = 0; lo < n; lo += CHUNK) {
        size_t m = n - lo < CHUNK ? n - lo : CHUNK;
        walk_hashes(isa, w, (uint32_t)cols, m, v + lo, bucket, sv);
        scatter_add(t, bucket, sv, m);
    }
}

/* out[i] = signed counter in table row t of the next n <= CHUNK elements
 * of walk w. */
void rb_cs_walk_query(int isa, lane_walk *w, size_t cols, const float *t, size_t n, float *out)
{
#ifdef CS_X86
    if (isa >= RB_CS_ISA_AVX512 && cols <= (size_t)INT32_MAX + 1) {
        query_avx512(w, (uint32_t)cols, t, n, out);
        return;
    }
#endif
    uint32_t bucket[CHUNK], sgn[CHUNK];
    walk_hashes(isa, w, (uint32_t)cols, n, NULL, bucket, sgn);
    rb_cs_gather_signed(t, bucket, sgn, out, n);
}
