#include "sparse.h"

#include "rb_internal.h"

#include <string.h>

size_t rb_count_nonzero(const float *x, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (x[i] != 0.0f);
    return k;
}

/* Whether x[0..n) is all zero in the sense of x == 0.0f (-0.0 is zero, NaN
 * is not): the OR of the bit patterns has no magnitude bit set.  A loop
 * without an early exit, so it vectorises. */
static inline int all_zero(const float *x, size_t n)
{
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        acc |= u;
    }
    return !(acc & 0x7fffffffu);
}

/* Packs the non-zeros of x[i..n) after out[0..*k) while they fit in cap
 * pairs; returns n when all did, else the index of the first that did not.
 * All-zero blocks are skipped; inside a block with a non-zero, every element
 * is written at out[k] and k advances past non-zeros only (no branch to
 * mispredict: 8x faster at density 0.5, 2x at 0.01).  Those writes may land
 * past the last non-zero, so they are used only while a block fits. */
static size_t pack_while_room(const float *x, size_t i, size_t n, uint32_t base,
                              rb_pair *out, size_t cap, size_t *k)
{
    enum { BLOCK = 16 };
    size_t kk = *k;
    for (; i < n; i += BLOCK) {
        size_t len = n - i < BLOCK ? n - i : BLOCK;
        if (all_zero(x + i, len))
            continue;
        if (len == BLOCK && kk + BLOCK <= cap) {
            for (size_t j = i; j < i + BLOCK; j++) {
                out[kk] = (rb_pair){base + (uint32_t)j, x[j]};
                kk += (x[j] != 0.0f);
            }
            continue;
        }
        for (size_t j = i; j < i + len; j++) {
            if (x[j] == 0.0f)   /* not NaN */
                continue;
            if (kk == cap) {
                *k = kk;
                return j;
            }
            out[kk++] = (rb_pair){base + (uint32_t)j, x[j]};
        }
    }
    *k = kk;
    return n;
}

size_t rb_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out, size_t cap)
{
    size_t k = 0;
    pack_while_room(x, 0, n, base, out, cap, &k);
    return k;
}

void rb_scatter_add(float *x, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++)
        x[p[i].idx - base] += p[i].val;
}

void rb_scatter_set(float *x, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++)
        x[p[i].idx - base] = p[i].val;
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
    memcpy(out + k, a + i, (ka - i) * sizeof *out);
    k += ka - i;
    memcpy(out + k, b + j, (kb - j) * sizeof *out);
    return k + (kb - j);
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

/* Whether any of x[0..n) is non-zero.  A loop that stops at the first
 * non-zero does not vectorise, so whole blocks are tested at once: 3x
 * faster on the all-zero rows of 1024 floats that make most of a sparse
 * embedding gradient. */
static int any_nonzero(const float *x, size_t n)
{
    enum { BLOCK = 64 };
    size_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK)
        if (!all_zero(x + i, BLOCK))
            return 1;
    return !all_zero(x + i, n - i);
}

/* Groups of one element: a word of the bitmap from 64 compares, without the
 * branch per element that mispredicts at middling densities. */
static void bitmap_of_elements(const float *x, size_t n, uint64_t *bm)
{
    size_t w = 0;
    for (; (w + 1) * 64 <= n; w++) {
        uint64_t bits = 0;
        for (unsigned k = 0; k < 64; k++)
            bits |= (uint64_t)(x[w * 64 + k] != 0.0f) << k;
        bm[w] = bits;
    }
    if (n % 64) {
        uint64_t bits = 0;
        for (size_t i = w * 64; i < n; i++)
            bits |= (uint64_t)(x[i] != 0.0f) << (i - w * 64);
        bm[w] = bits;
    }
}

void rb_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm)
{
    size_t ngroups = group ? (n + group - 1) / group : 0;
    if (group == 1) {
        bitmap_of_elements(x, n, bm);
        return;
    }
    memset(bm, 0, rb_bitmap_words(ngroups) * sizeof *bm);
    for (size_t g = 0; g < ngroups; g++) {
        size_t lo = g * group, hi = lo + group < n ? lo + group : n;
        if (any_nonzero(x + lo, hi - lo))
            rb_bitmap_set(bm, g);
    }
}

size_t rb_bitmap_popcount(const uint64_t *bm, size_t nbits)
{
    size_t words = nbits / 64, c = 0;
    for (size_t w = 0; w < words; w++)
        c += (size_t)__builtin_popcountll(bm[w]);
    if (nbits & 63)
        c += (size_t)__builtin_popcountll(bm[words] & (((uint64_t)1 << (nbits & 63)) - 1));
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
    for (size_t i = 0; i < k; i++)
        x[p[i].idx - base] = p[i].val * s;
}

void rb_scatter_add_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s)
{
    for (size_t i = 0; i < k; i++)
        x[p[i].idx - base] += p[i].val * s;
}

/* One pass when the buffer is large enough (usually: it is kept between
 * calls); else count, grow with some slack, pack again. */
int rb_pack_nonzero_grow(const float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k)
{
    *k = 0;
    if (pack_while_room(x, 0, n, 0, *buf, *buf ? *cap / sizeof(rb_pair) : 0, k) == n)
        return RB_OK;
    size_t nnz = rb_count_nonzero(x, n);
    void *b = *buf;
    int rc = rb_reserve(&b, cap, nnz + nnz / 8 + 16, sizeof(rb_pair));
    *buf = b;
    if (rc != RB_OK)
        return rc;
    *k = rb_pack_nonzero(x, n, 0, *buf, *cap / sizeof(rb_pair));
    return RB_OK;
}
