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

size_t rb_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != 0.0f) {
            out[k].idx = base + (uint32_t)i;
            out[k].val = x[i];
            k++;
        }
    }
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

void rb_scale(float *x, size_t n, float s)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

void rb_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm)
{
    size_t ngroups = group ? (n + group - 1) / group : 0;
    memset(bm, 0, rb_bitmap_words(ngroups) * sizeof *bm);
    for (size_t g = 0; g < ngroups; g++) {
        size_t lo = g * group, hi = lo + group < n ? lo + group : n;
        for (size_t i = lo; i < hi; i++) {
            if (x[i] != 0.0f) {
                rb_bitmap_set(bm, g);
                break;
            }
        }
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

int rb_pack_nonzero_grow(const float *x, size_t n, rb_pair **buf, size_t *cap, size_t *k)
{
    size_t nnz = rb_count_nonzero(x, n);
    void *b = *buf;
    int rc = rb_reserve(&b, cap, nnz, sizeof(rb_pair));
    *buf = b;
    if (rc != RB_OK)
        return rc;
    *k = rb_pack_nonzero(x, n, 0, *buf);
    return RB_OK;
}
