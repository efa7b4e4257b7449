/* Sparse helpers shared by the reducers: non-zero scan, pack/unpack of
 * (index, value) pairs, merge of sorted pair streams, bitmaps. */
#ifndef RB_SPARSE_H
#define RB_SPARSE_H

#include <stddef.h>
#include <stdint.h>

/* One non-zero on the wire: 8 bytes, sent as one MPI_UINT64_T. */
typedef struct rb_pair {
    uint32_t idx;
    float val;
} rb_pair;

/* Largest element count whose indices fit rb_pair.idx. */
#define RB_MAX_ELEMENTS ((size_t)UINT32_MAX)

/* The scans below treat x != 0.0f as non-zero: NaN is, -0.0 is not.  They
 * come in versions for the CPU's vector width, picked at run time. */
/* For tests: use the scan version named ("sse2", "avx2", "avx512" on x86,
 * "plain" elsewhere; NULL = the CPU's widest again).  RB_ERR_UNSUPPORTED
 * when the build or the CPU lacks it.  Not thread-safe. */
int rb_scan_use(const char *name);
size_t rb_count_nonzero(const float *x, size_t n);
/* Write the non-zeros of x[0..n) in index order (index + base); returns how
 * many.  out holds cap pairs, cap >= rb_count_nonzero(x, n); nothing is
 * written past the last pair. */
size_t rb_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out, size_t cap);
/* x[p.idx - base] += p.val for each pair. */
void rb_scatter_add(float *x, uint32_t base, const rb_pair *p, size_t k);
/* x[p.idx - base] = p.val for each pair. */
void rb_scatter_set(float *x, uint32_t base, const rb_pair *p, size_t k);
/* Merge two index-sorted streams, summing equal indices.  out must hold
 * ka + kb pairs; returns the merged length.  Sums that cancel to 0 are kept
 * (the support is the union of supports). */
size_t rb_merge_sum(const rb_pair *a, size_t ka, const rb_pair *b, size_t kb,
                    rb_pair *out);
void rb_scale(float *x, size_t n, float s);
/* dst[i] = src[i] (* scale when scaled), i < n, with stores that bypass the
 * caches: for copies larger than the caches, whose destination is not read
 * again soon.  Bit for bit the plain loop's values. */
void rb_copy_streaming(float *dst, const float *src, size_t n, float scale, int scaled);
/* x[p.idx - base] = p.val * s (decode of a reduced stream into the average). */
void rb_scatter_set_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s);
/* x[p.idx - base] += p.val * s. */
void rb_scatter_add_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s);
/* Pack the non-zeros of x[0..n) in index order into *buf (capacity *cap
 * bytes, kept between calls), growing it first when they do not fit;
 * *k = count.  RB_OK or RB_ERR_NOMEM. */
int rb_pack_nonzero_grow(const float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k);
/* The same, but for at most limit pairs: when x has more non-zeros, *k is
 * still their count and *buf holds nothing usable.  One pass over x unless
 * *buf has to grow (it never grows past limit pairs). */
int rb_pack_nonzero_upto(const float *x, size_t n, size_t limit, rb_pair **buf, size_t *cap,
                         size_t *k);
/* rb_pack_nonzero_grow, and every element packed is set to zero in x
 * (in the same pass: x is then all zero, -0.0 aside). */
int rb_take_nonzero_grow(float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k);
/* First position in the index-sorted stream p[0..k) with idx >= idx. */
size_t rb_pair_lower_bound(const rb_pair *p, size_t k, uint32_t idx);
/* Merge-sum m index-sorted streams stored back to back in a: stream j is
 * a[offs[j] .. offs[j+1]).  Streams are merged pairwise in rounds (0+1,
 * 2+3, ...), so the summation order depends only on m, not on the caller.
 * tmp must hold offs[m] pairs; offs (m + 1 entries) is clobbered.  Returns
 * the merged length and sets *out to where the result lies (in a or tmp). */
size_t rb_merge_sum_many(rb_pair *a, size_t *offs, size_t m, rb_pair *tmp,
                         rb_pair **out);

/* Set bits of x: the instruction where the build targets it, else a few
 * operations (GCC's fallback for __builtin_popcountll is a library call). */
static inline unsigned rb_popcount64(uint64_t x)
{
#ifdef __POPCNT__
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* Bitmaps: bit i of word i/64. */
static inline size_t rb_bitmap_words(size_t nbits) { return (nbits + 63) / 64; }
static inline int rb_bitmap_test(const uint64_t *bm, size_t i)
{
    return (int)((bm[i >> 6] >> (i & 63)) & 1u);
}
static inline void rb_bitmap_set(uint64_t *bm, size_t i)
{
    bm[i >> 6] |= (uint64_t)1 << (i & 63);
}
/* Bit g set when any of x[g*group .. (g+1)*group) (clipped to n) is
 * non-zero; ngroups = ceil(n / group).  bm is overwritten. */
void rb_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm);
/* The same in the same pass, returning the non-zeros of x. */
size_t rb_bitmap_of_groups_count(const float *x, size_t n, size_t group, uint64_t *bm);
size_t rb_bitmap_popcount(const uint64_t *bm, size_t nbits);
void rb_bitmap_or(uint64_t *dst, const uint64_t *src, size_t words);

/* The k-th largest (1-based) of v[0..n), 1 <= k <= n; reorders v.  The
 * exact top-k threshold of oktopk_select=topk and of rb_train's
 * --sparsify topk. */
float rb_kth_largest(float *v, size_t n, size_t k);

#endif
