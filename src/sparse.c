#include "sparse.h"

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
