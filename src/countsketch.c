/* Count sketch: hashes modulo 2^61 - 1, insert, query, merge, scale.
 * See reducer_sketch.h for the hash formulas and docs/s2.md for why they
 * have the independence the count-sketch analysis needs. */
#include "reducer_sketch.h"
#include "rb_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P RB_CS_PRIME

/* ------------------------------------------------------------ arithmetic */

static inline uint64_t mod_p(uint64_t x)
{
    x = (x & P) + (x >> 61);
    return x >= P ? x - P : x;
}

/* Branch-free (and so vectorisable): x + y - p, plus p back if that
 * wrapped below zero. */
static inline uint64_t add_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    uint64_t t = x + y - P;
    return t + ((0 - (t >> 63)) & P);
}

static inline uint64_t mul_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    unsigned __int128 z = (unsigned __int128)x * y;
    uint64_t s = ((uint64_t)z & P) + (uint64_t)(z >> 61);
    return mod_p(s);
}

static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value uniform in [lo, p) by rejection from 61-bit draws. */
static uint64_t draw_below_p(uint64_t *state, uint64_t lo)
{
    for (;;) {
        uint64_t v = splitmix64(state) >> 3;
        if (v >= lo && v < P)
            return v;
    }
}

void rb_cs_row_coeffs(uint64_t seed, int j, rb_cs_coeffs *out)
{
    uint64_t state = seed ^ (0x5332u + (uint64_t)j * 0x100000001b3ULL);
    out->a = draw_below_p(&state, 1);
    out->b = draw_below_p(&state, 0);
    for (int i = 0; i < 4; i++)
        out->k[i] = draw_below_p(&state, 0);
}

/* ------------------------------------------------------------ hashes */

static inline uint64_t bucket_hash(const rb_cs_coeffs *co, uint64_t x)
{
    return add_p(mul_p(co->a, x), co->b);
}

static inline uint64_t sign_poly(const rb_cs_coeffs *co, uint64_t x)
{
    uint64_t v = add_p(mul_p(co->k[3], x), co->k[2]);
    v = add_p(mul_p(v, x), co->k[1]);
    return add_p(mul_p(v, x), co->k[0]);
}

/* Range reduction without division: top 32 of the 61 bits times c. */
static inline uint32_t bucket_of(uint64_t h, size_t cols)
{
    return (uint32_t)(((h >> 29) * (uint64_t)cols) >> 32);
}

/* v with its sign bit flipped where sgn has bit 31 set. */
static inline float flip(float v, uint32_t sgn)
{
    union { float f; uint32_t u; } b = {v};
    b.u ^= sgn;
    return b.f;
}

/* Flip the sign of v when the polynomial value is odd. */
static inline float apply_sign(float v, uint64_t poly)
{
    return flip(v, (uint32_t)(poly & 1u) << 31);
}

uint32_t rb_cs_bucket(const rb_countsketch *cs, int j, uint64_t x)
{
    return bucket_of(bucket_hash(&cs->co[j], mod_p(x)), cs->cols);
}

int rb_cs_sign(const rb_countsketch *cs, int j, uint64_t x)
{
    return (sign_poly(&cs->co[j], mod_p(x)) & 1u) ? -1 : 1;
}

/* ------------------------------------------------------------ walks */

/* Runs of consecutive indices are hashed by LANES interleaved walks: lane l
 * visits x0 + l, x0 + l + LANES, ...  The bucket hash is linear, so it steps
 * by LANES a mod p; the sign polynomial is cubic, so it steps by exact
 * finite differences: its value and first two differences are each advanced
 * by one addition mod p, the third difference is constant.  Runs shorter
 * than DIRECT_MAX are hashed by direct evaluation instead.  CHUNK: elements
 * hashed into arrays at a time, and decoded before each median. */
enum { LANES = 16, CHUNK = 512, DIRECT_MAX = RB_CS_SHORT_RUN };

typedef struct lane_walk {
    uint64_t h[LANES];          /* bucket hash H at the lane's element */
    uint64_t d0[LANES], d1[LANES], d2[LANES];   /* sign poly and 1st, 2nd differences */
    uint64_t step_h, d3;        /* LANES a mod p; the 3rd difference, the same for all */
} lane_walk;

/* v * x mod p for v < p and x < 2^32 without a 128-bit product: v's 32-bit
 * halves times x, and 2^61 = 1 mod p folds the high part back, so loops of
 * these vectorise.  Same value as mul_p. */
static inline uint64_t mul_p32(uint64_t v, uint32_t x)
{
    uint64_t lo = (uint64_t)(uint32_t)v * x;            /* < 2^64 */
    uint64_t hi = (uint64_t)(uint32_t)(v >> 32) * x;    /* < 2^61 */
    /* hi 2^32 = (hi >> 29) 2^61 + (hi mod 2^29) 2^32 */
    uint64_t s = (lo & P) + (lo >> 61) + (hi >> 29) + ((hi & ((1ULL << 29) - 1)) << 32);
    return mod_p(s);                                    /* s < 2^63 */
}

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
static void walk_start(lane_walk *w, const rb_cs_coeffs *co, uint64_t x0)
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
    s.p = _mm512_set1_epi64((long long)P);
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
    const __m256i p = _mm256_set1_epi64x((long long)P), c = _mm256_set1_epi64x(cols);
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

static int best_isa(void)
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
static void gather_signed(const float *t, const uint32_t *restrict b, const uint32_t *restrict s,
                          float *restrict e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        e[i] = flip(t[b[i]], s[i]);
}

/* Table row t += the signed values v[0..n) of walk w. */
static void walk_insert(int isa, lane_walk *w, size_t cols, const float *v, size_t n, float *t)
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
static void walk_query(int isa, lane_walk *w, size_t cols, const float *t, size_t n, float *out)
{
#ifdef CS_X86
    if (isa >= RB_CS_ISA_AVX512 && cols <= (size_t)INT32_MAX + 1) {
        query_avx512(w, (uint32_t)cols, t, n, out);
        return;
    }
#endif
    uint32_t bucket[CHUNK], sgn[CHUNK];
    walk_hashes(isa, w, (uint32_t)cols, n, NULL, bucket, sgn);
    gather_signed(t, bucket, sgn, out, n);
}

/* ------------------------------------------------------------ life cycle */

/* Bytes in binary units ("3.6 TiB"). */
static const char *format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (bytes >= 1024.0 && u + 1 < sizeof unit / sizeof unit[0])
        bytes /= 1024.0, u++;
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
    return buf;
}

/* This machine's physical memory in bytes; 0 when unknown. */
static double physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

int rb_cs_check_size(int rows, double cols)
{
    double counters = (double)rows * cols, bytes = counters * sizeof(float);
    double phys = physical_memory();
    /* Refused before calloc is asked: a size that overflows size_t, or one
     * no allocator here can give, fails with the amount named. */
    if (bytes >= (double)(SIZE_MAX / 2) || (phys > 0 && bytes > phys)) {
        char need[32], have[32];
        return rb_fail(RB_ERR_NOMEM, "sketch of %.0f counters needs %s%s%s", counters,
                       format_bytes(bytes, need, sizeof need),
                       phys > 0 ? ", more than this machine's " : "",
                       phys > 0 ? format_bytes(phys, have, sizeof have) : "");
    }
    return RB_OK;
}

static int check_shape(int rows, size_t cols)
{
    if (rows < 1 || rows > RB_CS_MAX_ROWS)
        return rb_fail(RB_ERR_ARG, "count sketch rows %d outside 1..%d", rows, RB_CS_MAX_ROWS);
    if (cols < 1)
        return rb_fail(RB_ERR_ARG, "count sketch width 0 (at least 1)");
    RB_TRY(rb_cs_check_size(rows, (double)cols));
    if (cols > RB_CS_MAX_COLS)
        return rb_fail(RB_ERR_ARG, "count sketch width %zu outside 1..%zu", cols, RB_CS_MAX_COLS);
    return RB_OK;
}

int rb_cs_init(rb_countsketch *cs, int rows, size_t cols, uint64_t seed)
{
    memset(cs, 0, sizeof *cs);
    RB_TRY(check_shape(rows, cols));
    cs->rows = rows;
    cs->isa = best_isa();
    rb_cs_set_seed(cs, seed);
    return rb_cs_set_cols(cs, cols);
}

void rb_cs_set_seed(rb_countsketch *cs, uint64_t seed)
{
    cs->seed = seed;
    for (int j = 0; j < cs->rows; j++)
        rb_cs_row_coeffs(seed, j, &cs->co[j]);
    rb_cs_zero(cs);
}

int rb_cs_set_cols(rb_countsketch *cs, size_t cols)
{
    RB_TRY(check_shape(cs->rows, cols));
    void *buf = cs->table;
    if (rb_reserve(&buf, &cs->cap_bytes, (size_t)cs->rows * cols, sizeof(float)) != RB_OK) {
        char need[32];
        return rb_fail(RB_ERR_NOMEM, "sketch of %zu counters needs %s: the allocation failed",
                       (size_t)cs->rows * cols,
                       format_bytes((double)cs->rows * (double)cols * sizeof(float), need, sizeof need));
    }
    cs->table = buf;
    cs->cols = cols;
    rb_cs_zero(cs);
    return RB_OK;
}

void rb_cs_free(rb_countsketch *cs)
{
    free(cs->table);
    cs->table = NULL;
    cs->cap_bytes = 0;
}

void rb_cs_zero(rb_countsketch *cs)
{
    if (cs->table)
        memset(cs->table, 0, rb_cs_size(cs) * sizeof(float));
}

/* ------------------------------------------------------------ insert */

static void insert_row_direct(rb_countsketch *cs, int j, uint64_t x0, const float *v, size_t len)
{
    const rb_cs_coeffs *co = &cs->co[j];
    float *t = cs->table + (size_t)j * cs->cols;
    for (size_t i = 0; i < len; i++) {
        uint64_t x = mod_p(x0 + i);
        t[bucket_of(bucket_hash(co, x), cs->cols)] += apply_sign(v[i], sign_poly(co, x));
    }
}

/* One sketch row at a time over the whole run: its counters are the only
 * ones touched meanwhile (r tables of a wide sketch do not fit in L2 together,
 * one does). */
static void insert_walk(rb_countsketch *cs, uint64_t x0, const float *v, size_t len)
{
    for (int j = 0; j < cs->rows; j++) {
        lane_walk w;
        float *t = cs->table + (size_t)j * cs->cols;
        walk_start(&w, &cs->co[j], x0);
        walk_insert(cs->isa, &w, cs->cols, v, len, t);
    }
}

void rb_cs_insert_run(rb_countsketch *cs, uint64_t x0, const float *v, size_t len)
{
    if (len >= DIRECT_MAX) {
        insert_walk(cs, x0, v, len);
        return;
    }
    for (int j = 0; j < cs->rows; j++)
        insert_row_direct(cs, j, x0, v, len);
}

/* ------------------------------------------------------------ query */

/* Medians by the compare-exchange networks of the GPU kernels, (y < x ? y
 * : x, x < y ? y : x) as min and max, so NaNs and signed zeros come out the
 * same; one branch-free pass over the chunk that the compiler vectorises. */
#define CSWAP(x, y) do { float lo_ = (y) < (x) ? (y) : (x), hi_ = (x) < (y) ? (y) : (x); \
                         (x) = lo_; (y) = hi_; } while (0)

/* out[i] = median of est[0..r)[i], for r = 3 or 5. */
static void median_of(float est[][CHUNK], int r, float *restrict out, size_t n)
{
    if (r == 3) {
        for (size_t i = 0; i < n; i++) {
            float a = est[0][i], b = est[1][i], c = est[2][i];
            CSWAP(a, b); CSWAP(b, c); CSWAP(a, b);
            out[i] = b;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {   /* enough of a sorting network to place the middle */
        float a = est[0][i], b = est[1][i], c = est[2][i], d = est[3][i], e = est[4][i];
        CSWAP(a, b); CSWAP(d, e); CSWAP(c, e); CSWAP(c, d);
        CSWAP(a, d); CSWAP(a, c); CSWAP(b, e); CSWAP(b, d); CSWAP(b, c);
        out[i] = c;
    }
}
#undef CSWAP

/* est[i] = sign * counter of element x0 + i in row j, direct hashes. */
static void estimate_direct(const rb_countsketch *cs, int j, uint64_t x0, float *est, size_t n)
{
    const float *t = cs->table + (size_t)j * cs->cols;
    const rb_cs_coeffs *co = &cs->co[j];
    for (size_t i = 0; i < n; i++) {
        uint64_t x = mod_p(x0 + i);
        est[i] = apply_sign(t[bucket_of(bucket_hash(co, x), cs->cols)], sign_poly(co, x));
    }
}

/* Row by row within a chunk; one row writes straight into out. */
void rb_cs_query_run(const rb_countsketch *cs, uint64_t x0, float *out, size_t len)
{
    const int r = cs->rows, walk = len >= DIRECT_MAX;
    lane_walk w[RB_CS_MAX_ROWS];
    float est[RB_CS_MAX_ROWS][CHUNK];
    if (walk)
        for (int j = 0; j < r; j++)
            walk_start(&w[j], &cs->co[j], x0);
    for (size_t lo = 0; lo < len; lo += CHUNK) {
        size_t n = len - lo < CHUNK ? len - lo : CHUNK;
        for (int j = 0; j < r; j++) {
            float *e = r == 1 ? out + lo : est[j];
            if (!walk) {
                estimate_direct(cs, j, x0 + lo, e, n);
                continue;
            }
            walk_query(cs->isa, &w[j], cs->cols, cs->table + (size_t)j * cs->cols, n, e);
        }
        if (r > 1)
            median_of(est, r, out + lo, n);
    }
}

float rb_cs_query(const rb_countsketch *cs, uint64_t x)
{
    float v;
    rb_cs_query_run(cs, x, &v, 1);
    return v;
}

/* ------------------------------------------------------------ scattered indices */

/* bucket[i] and sign mask sgn[i] (bit 31) of element x[i], i < n: the
 * direct evaluation of bucket_hash and sign_poly, many elements at once. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void hash_at(const rb_cs_coeffs *co, size_t cols, const uint32_t *restrict x, size_t n,
                    uint32_t *restrict bucket, uint32_t *restrict sgn)
{
    const uint64_t a = co->a, b = co->b, k0 = co->k[0], k1 = co->k[1], k2 = co->k[2], k3 = co->k[3];
    const uint32_t c = (uint32_t)cols;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = add_p(mul_p32(a, x[i]), b);
        uint64_t v = add_p(mul_p32(k3, x[i]), k2);
        v = add_p(mul_p32(v, x[i]), k1);
        v = add_p(mul_p32(v, x[i]), k0);
        bucket[i] = (uint32_t)(((uint64_t)(uint32_t)(h >> 29) * c) >> 32);
        sgn[i] = (uint32_t)v << 31;
    }
}

void rb_cs_insert_at(rb_countsketch *cs, const uint32_t *idx, const float *v, size_t n)
{
    uint32_t bucket[CHUNK], sgn[CHUNK];
    for (size_t lo = 0; lo < n; lo += CHUNK) {
        size_t m = n - lo < CHUNK ? n - lo : CHUNK;
        for (int j = 0; j < cs->rows; j++) {
            float *t = cs->table + (size_t)j * cs->cols;
            hash_at(&cs->co[j], cs->cols, idx + lo, m, bucket, sgn);
            for (size_t i = 0; i < m; i++)
                t[bucket[i]] += flip(v[lo + i], sgn[i]);
        }
    }
}

void rb_cs_query_at(const rb_countsketch *cs, const uint32_t *idx, float *out, size_t n)
{
    const int r = cs->rows;
    uint32_t bucket[CHUNK], sgn[CHUNK];
    float est[RB_CS_MAX_ROWS][CHUNK];
    for (size_t lo = 0; lo < n; lo += CHUNK) {
        size_t m = n - lo < CHUNK ? n - lo : CHUNK;
        for (int j = 0; j < r; j++) {
            hash_at(&cs->co[j], cs->cols, idx + lo, m, bucket, sgn);
            gather_signed(cs->table + (size_t)j * cs->cols, bucket, sgn,
                          r == 1 ? out + lo : est[j], m);
        }
        if (r > 1)
            median_of(est, r, out + lo, m);
    }
}

/* ------------------------------------------------------------ the rest */

int rb_cs_merge(rb_countsketch *dst, const rb_countsketch *src)
{
    if (dst->rows != src->rows || dst->cols != src->cols || dst->seed != src->seed)
        return rb_fail(RB_ERR_ARG, "count sketch merge: shapes or seeds differ (%dx%zu seed %llu vs %dx%zu seed %llu)",
                       dst->rows, dst->cols, (unsigned long long)dst->seed,
                       src->rows, src->cols, (unsigned long long)src->seed);
    size_t n = rb_cs_size(dst);
    for (size_t i = 0; i < n; i++)
        dst->table[i] += src->table[i];
    return RB_OK;
}

void rb_cs_scale(rb_countsketch *cs, float s)
{
    rb_scale(cs->table, rb_cs_size(cs), s);
}
