/* What the reducers share on sparse data (reducer_sparse.h): the non-zero scans
 * (SIMD where the CPU has it), pairs packed, merged and scattered,
 * bitmaps, the k-th largest.  The row form: rowset.c. */
#include "reducer_sparse.h"

#include "rb_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the non-zero scan -------------------------------------------------
 * Every scan is built on one primitive, the mask of 64 floats: bit j set
 * when x[j] != 0.0f (NaN is non-zero, -0.0 is zero).  On x86 it is a vector
 * compare and a movemask per 4, 8 or 16 floats.  The scans then work on
 * mask words: a popcount to count, ctz to visit the non-zeros, so the pack
 * branches once per non-zero instead of once per element or block (2.3x
 * faster than block skipping at density 0.01 with SSE2, 3.5x with AVX-512;
 * only at density 1 is it no faster).  The library is built for baseline
 * x86-64 (-O3, no -march), so each scan is compiled for SSE2, AVX2 and
 * AVX-512 and the CPU picks one (scan()); other architectures
 * get a plain loop.  Every version finds the same non-zeros. */
#if defined(__x86_64__) && defined(__GNUC__)
#define RB_SCAN_X86 1
#include <immintrin.h>
#endif

typedef uint64_t (*mask64_fn)(const float *x);

/* Mask of x[0..len), len <= 64. */
static inline uint64_t mask_short(const float *x, size_t len)
{
    uint64_t m = 0;
    for (size_t j = 0; j < len; j++)
        m |= (uint64_t)(x[j] != 0.0f) << j;
    return m;
}

static inline uint64_t mask64_plain(const float *x) { return mask_short(x, 64); }

#ifdef RB_SCAN_X86
static inline uint64_t mask64_sse2(const float *x)
{
    const __m128 zero = _mm_setzero_ps();
    uint64_t m = 0;
    for (unsigned j = 0; j < 16; j++) {
        __m128 v = _mm_loadu_ps(x + 4 * j);
        m |= (uint64_t)(unsigned)_mm_movemask_ps(_mm_cmpneq_ps(v, zero)) << (4 * j);
    }
    return m;
}

__attribute__((target("avx2"))) static inline uint64_t mask64_avx2(const float *x)
{
    const __m256 zero = _mm256_setzero_ps();
    uint64_t m = 0;
    for (unsigned j = 0; j < 8; j++) {
        __m256 v = _mm256_loadu_ps(x + 8 * j);
        m |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)) << (8 * j);
    }
    return m;
}

__attribute__((target("avx512f"))) static inline uint64_t mask64_avx512(const float *x)
{
    const __m512 zero = _mm512_setzero_ps();
    uint64_t m = 0;
    for (unsigned j = 0; j < 4; j++) {
        __m512 v = _mm512_loadu_ps(x + 16 * j);
        m |= (uint64_t)_mm512_cmp_ps_mask(v, zero, _CMP_NEQ_UQ) << (16 * j);
    }
    return m;
}
#endif

/* The scan bodies, inlined into each version below with its mask. */
#define SCAN_BODY static inline __attribute__((always_inline))

SCAN_BODY size_t count_body(mask64_fn mask, const float *x, size_t n)
{
    size_t k = 0, i = 0;
    for (; i + 64 <= n; i += 64)
        k += (size_t)__builtin_popcountll(mask(x + i));
    return k + (size_t)__builtin_popcountll(mask_short(x + i, n - i));
}

/* Packs the non-zeros of x[0..n) after out[0..*k) while they fit in cap
 * pairs; returns n when all did, else the index of the first that did not.
 * Nothing is written past the last pair packed.  take (x itself, or NULL):
 * each element packed is set to zero there. */
SCAN_BODY size_t pack_body(mask64_fn mask, const float *x, size_t n, uint32_t base,
                           rb_pair *out, size_t cap, size_t *kp, float *take)
{
    size_t k = *kp;
    for (size_t i = 0; i < n; i += 64) {
        size_t len = n - i < 64 ? n - i : 64;
        uint64_t m = len == 64 ? mask(x + i) : mask_short(x + i, len);
        if (cap - k < 64) {              /* near the end of out: pair by pair */
            for (; m; m &= m - 1) {
                unsigned j = (unsigned)__builtin_ctzll(m);
                if (k == cap) {
                    *kp = k;
                    return i + j;
                }
                out[k++] = (rb_pair){base + (uint32_t)(i + j), x[i + j]};
                if (take)
                    take[i + j] = 0.0f;
            }
        } else if (m == ~(uint64_t)0) {  /* all 64: no branch per element */
            for (unsigned j = 0; j < 64; j++)
                out[k + j] = (rb_pair){base + (uint32_t)(i + j), x[i + j]};
            if (take)
                memset(take + i, 0, 64 * sizeof *take);
            k += 64;
        } else {
            for (; m; m &= m - 1) {
                unsigned j = (unsigned)__builtin_ctzll(m);
                out[k++] = (rb_pair){base + (uint32_t)(i + j), x[i + j]};
                if (take)
                    take[i + j] = 0.0f;
            }
        }
    }
    *kp = k;
    return n;
}

SCAN_BODY void elements_body(mask64_fn mask, const float *x, size_t n, uint64_t *bm)
{
    size_t w = 0;
    for (; (w + 1) * 64 <= n; w++)
        bm[w] = mask(x + w * 64);
    if (n % 64)
        bm[w] = mask_short(x + w * 64, n % 64);
}

/* Groups of more than one element: bit g when group g has a non-zero;
 * returns the non-zeros of x. */
SCAN_BODY size_t groups_body(mask64_fn mask, const float *x, size_t n, size_t group,
                             uint64_t *bm)
{
    size_t ngroups = (n + group - 1) / group, total = 0;
    memset(bm, 0, rb_bitmap_words(ngroups) * sizeof *bm);
    for (size_t g = 0, lo = 0; g < ngroups; g++, lo += group) {
        size_t len = n - lo < group ? n - lo : group, c;
        if (group >= 64) {
            c = count_body(mask, x + lo, len);
        } else {
            c = 0;
            for (size_t j = 0; j < len; j++)
                c += x[lo + j] != 0.0f;
        }
        bm[g >> 6] |= (uint64_t)(c != 0) << (g & 63);
        total += c;
    }
    return total;
}

typedef struct scan_impl {
    size_t (*count)(const float *x, size_t n);
    size_t (*pack)(const float *x, size_t n, uint32_t base, rb_pair *out, size_t cap, size_t *k);
    size_t (*take)(float *x, size_t n, uint32_t base, rb_pair *out, size_t cap, size_t *k);
    void (*elements)(const float *x, size_t n, uint64_t *bm);
    size_t (*groups)(const float *x, size_t n, size_t group, uint64_t *bm);
} scan_impl;

#define SCAN_IMPL(name, target, mask)                                                         \
    target static size_t count_##name(const float *x, size_t n)                              \
    {                                                                                         \
        return count_body(mask, x, n);                                                        \
    }                                                                                         \
    target static size_t pack_##name(const float *x, size_t n, uint32_t base, rb_pair *out,  \
                                     size_t cap, size_t *k)                                   \
    {                                                                                         \
        return pack_body(mask, x, n, base, out, cap, k, NULL);                                \
    }                                                                                         \
    target static size_t take_##name(float *x, size_t n, uint32_t base, rb_pair *out,        \
                                     size_t cap, size_t *k)                                   \
    {                                                                                         \
        return pack_body(mask, x, n, base, out, cap, k, x);                                   \
    }                                                                                         \
    target static void elements_##name(const float *x, size_t n, uint64_t *bm)               \
    {                                                                                         \
        elements_body(mask, x, n, bm);                                                        \
    }                                                                                         \
    target static size_t groups_##name(const float *x, size_t n, size_t group, uint64_t *bm) \
    {                                                                                         \
        return groups_body(mask, x, n, group, bm);                                            \
    }                                                                                         \
    static const scan_impl scan_##name = {count_##name, pack_##name, take_##name,             \
                                          elements_##name, groups_##name};

#ifdef RB_SCAN_X86
SCAN_IMPL(sse2, , mask64_sse2)
SCAN_IMPL(avx2, __attribute__((target("avx2,popcnt"))), mask64_avx2)
SCAN_IMPL(avx512, __attribute__((target("avx512f,avx2,popcnt"))), mask64_avx512)
#else
SCAN_IMPL(plain, , mask64_plain)
#endif

static const scan_impl *forced_scan;   /* rb_scan_use */

/* The widest version this CPU (and its OS) runs. */
static const scan_impl *scan(void)
{
    if (forced_scan)
        return forced_scan;
#ifdef RB_SCAN_X86
    if (__builtin_cpu_supports("avx512f"))
        return &scan_avx512;
    if (__builtin_cpu_supports("avx2"))
        return &scan_avx2;
    return &scan_sse2;
#else
    return &scan_plain;
#endif
}

int rb_scan_use(const char *name)
{
    const scan_impl *impl = NULL;
    int runs = 1;
    forced_scan = NULL;
    if (!name)
        return RB_OK;
#ifdef RB_SCAN_X86
    if (!strcmp(name, "sse2"))
        impl = &scan_sse2;
    else if (!strcmp(name, "avx2"))
        impl = &scan_avx2, runs = __builtin_cpu_supports("avx2");
    else if (!strcmp(name, "avx512"))
        impl = &scan_avx512, runs = __builtin_cpu_supports("avx512f");
#else
    if (!strcmp(name, "plain"))
        impl = &scan_plain;
#endif
    if (!impl || !runs)
        return rb_fail(RB_ERR_UNSUPPORTED, "scan version %s: not %s", name,
                       impl ? "on this CPU" : "in this build");
    forced_scan = impl;
    return RB_OK;
}

size_t rb_count_nonzero(const float *x, size_t n)
{
    return scan()->count(x, n);
}

size_t rb_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out, size_t cap)
{
    size_t k = 0;
    scan()->pack(x, n, base, out, cap, &k);
    return k;
}

void rb_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm)
{
    (void)rb_bitmap_of_groups_count(x, n, group, bm);
}

size_t rb_bitmap_of_groups_count(const float *x, size_t n, size_t group, uint64_t *bm)
{
    if (group == 1) {
        scan()->elements(x, n, bm);
        return rb_bitmap_popcount(bm, n);
    }
    return group ? scan()->groups(x, n, group, bm) : 0;
}

/* The scatters walk a large buffer at the pairs' (sorted, irregular)
 * indices, a cache line every few hundred bytes: the hardware prefetcher
 * does not follow, each line is a miss.  Prefetching the line of the pair
 * 32 ahead keeps that many misses in flight (1.5-1.8x at 64 MiB, density
 * 0.01; no loss in cache). */
static inline void rb_prefetch_pair(const float *x, uint32_t base, const rb_pair *p, size_t i,
                                    size_t k)
{
    enum { AHEAD = 32 };
    if (i + AHEAD < k)
        __builtin_prefetch(x + (p[i + AHEAD].idx - base), 1, 3);
}

void rb_scatter_add(float *x, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        rb_prefetch_pair(x, base, p, i, k);
        x[p[i].idx - base] += p[i].val;
    }
}

void rb_scatter_set(float *x, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        rb_prefetch_pair(x, base, p, i, k);
        x[p[i].idx - base] = p[i].val;
    }
}

size_t rb_merge_sum(const rb_pair *a, size_t ka, const rb_pair *b, size_t kb,
                    rb_pair *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < ka && j < kb) {
        if (a[i].idx < b[j].idx) {
            out[k++] = a[i++];
        } else if (b[j].idx < a[i].idx) {
            out[k++] = b[j++];
        } else {
            out[k].idx = a[i].idx;
            out[k].val = a[i].val + b[j].val;
            k++, i++, j++;
        }
    }
    if (i < ka)   /* a or b may be NULL when empty */
        memcpy(out + k, a + i, (ka - i) * sizeof *out);
    k += ka - i;
    if (j < kb)
        memcpy(out + k, b + j, (kb - j) * sizeof *out);
    return k + (kb - j);
}

/* Streaming (non-temporal) stores write a line without reading it first:
 * for a buffer larger than the caches that is a third less traffic than
 * stores that allocate (read, then write back). */
void rb_copy_streaming(float *dst, const float *src, size_t n, float scale, int scaled)
{
    size_t i = 0;
#ifdef RB_SCAN_X86
    for (; i < n && ((uintptr_t)(dst + i) & 15); i++)
        dst[i] = scaled ? src[i] * scale : src[i];
    const __m128 s4 = _mm_set1_ps(scale);
    if (scaled)
        for (; i + 4 <= n; i += 4)
            _mm_stream_ps(dst + i, _mm_mul_ps(_mm_loadu_ps(src + i), s4));
    else
        for (; i + 4 <= n; i += 4)
            _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    _mm_sfence();
#endif
    for (; i < n; i++)
        dst[i] = scaled ? src[i] * scale : src[i];
}

/* The averaging pass of every dense path (dense, the dense fallbacks of
 * sparcml and omnireduce, the s2 sketch): compiled also for AVX2 and
 * AVX-512 and picked at load time, as in countsketch.c (3x faster on a
 * buffer in cache than SSE2, where the reference's pass must cost least
 * next to MPI_Allreduce's vectorised sum). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void rb_scale(float *x, size_t n, float s)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

size_t rb_bitmap_popcount(const uint64_t *bm, size_t nbits)
{
    size_t words = nbits / 64, c = 0;
    for (size_t w = 0; w < words; w++)
        c += rb_popcount64(bm[w]);
    if (nbits & 63)
        c += rb_popcount64(bm[words] & (((uint64_t)1 << (nbits & 63)) - 1));
    return c;
}

void rb_bitmap_or(uint64_t *dst, const uint64_t *src, size_t words)
{
    for (size_t w = 0; w < words; w++)
        dst[w] |= src[w];
}

size_t rb_pair_lower_bound(const rb_pair *p, size_t k, uint32_t idx)
{
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].idx < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t rb_merge_sum_many(rb_pair *a, size_t *offs, size_t m, rb_pair *tmp,
                         rb_pair **out)
{
    rb_pair *src = a, *dst = tmp;
    while (m > 1) {
        size_t k = 0, j = 0;
        for (size_t s = 0; s < m; s += 2, j++) {
            size_t lo = offs[s], mid = offs[s + 1];
            size_t hi = s + 2 <= m ? offs[s + 2] : mid;
            size_t len = rb_merge_sum(src + lo, mid - lo, src + mid, hi - mid, dst + k);
            offs[j] = k;
            k += len;
        }
        offs[j] = k;
        m = j;
        rb_pair *t = src;
        src = dst;
        dst = t;
    }
    *out = m ? src + offs[0] : src;
    return m ? offs[1] - offs[0] : 0;
}

void rb_scatter_set_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s)
{
    for (size_t i = 0; i < k; i++) {
        rb_prefetch_pair(x, base, p, i, k);
        x[p[i].idx - base] = p[i].val * s;
    }
}

void rb_scatter_add_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s)
{
    for (size_t i = 0; i < k; i++) {
        rb_prefetch_pair(x, base, p, i, k);
        x[p[i].idx - base] += p[i].val * s;
    }
}

/* One pass when the buffer is large enough (usually: it is kept between
 * calls); else count the rest, grow with some slack, pack again. */
int rb_pack_nonzero_upto(const float *x, size_t n, size_t limit, rb_pair **buf, size_t *cap,
                         size_t *k)
{
    const scan_impl *sc = scan();
    size_t room = *buf ? *cap / sizeof(rb_pair) : 0;
    *k = 0;
    size_t stop = sc->pack(x, n, 0, *buf, room < limit ? room : limit, k);
    if (stop == n)
        return RB_OK;
    *k += sc->count(x + stop, n - stop);
    if (*k > limit)
        return RB_OK;
    size_t want = *k + *k / 8 + 16;
    void *b = *buf;
    int rc = rb_reserve(&b, cap, want < limit ? want : limit, sizeof(rb_pair));
    *buf = b;
    if (rc != RB_OK)
        return rc;
    size_t again = 0;
    sc->pack(x, n, 0, *buf, *cap / sizeof(rb_pair), &again);
    return RB_OK;
}

int rb_pack_nonzero_grow(const float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k)
{
    return rb_pack_nonzero_upto(x, n, SIZE_MAX, buf, cap, k);
}

/* One pass when the buffer is large enough; else the rest is counted, the
 * buffer grown keeping what is packed (and zeroed) so far, and the pass
 * goes on where it stopped. */
int rb_take_nonzero_grow(float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k)
{
    const scan_impl *sc = scan();
    *k = 0;
    size_t stop = sc->take(x, n, 0, *buf, *buf ? *cap / sizeof(rb_pair) : 0, k);
    if (stop == n)
        return RB_OK;
    size_t done = *k, all = done + sc->count(x + stop, n - stop);
    void *b = NULL;
    size_t bcap = 0;
    RB_TRY(rb_reserve(&b, &bcap, all + all / 8 + 16, sizeof(rb_pair)));
    if (done)
        memcpy(b, *buf, done * sizeof(rb_pair));
    free(*buf);
    *buf = b;
    *cap = bcap;
    sc->take(x + stop, n - stop, (uint32_t)stop, *buf, bcap / sizeof(rb_pair), k);
    return RB_OK;
}

/* Hoare's quickselect, descending. */
float rb_kth_largest(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {   /* Hoare partition, descending */
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i >= j)
                break;
            float t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        /* v[lo..j] >= pivot >= v[j+1..hi] */
        if (want <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[want];
}
