/* CUDA kernels of libreducer; interface and conventions in reducer_cuda.h.
 * sm_60 features at most: float atomicAdd, 64-bit atomicOr/atomicAdd,
 * __ballot_sync, __shfl_*_sync, __syncthreads_count. */
#include "reducer_cuda.h"

#include <cstring>

namespace {

constexpr int kThreads = 256;                 /* threads per block */
constexpr int kRounds = 8;                    /* rounds of kThreads per tile */
constexpr size_t kTile = (size_t)kThreads * kRounds;
constexpr int kMaxGrid = 65535 * 4;           /* grid-stride loops above this */

unsigned grid_for(size_t n, size_t per_block = kThreads)
{
    size_t g = (n + per_block - 1) / per_block;
    if (g == 0)
        g = 1;
    return (unsigned)(g < (size_t)kMaxGrid ? g : (size_t)kMaxGrid);
}

int launch_status() { return (int)cudaGetLastError(); }

__global__ void scale_kernel(float *x, size_t n, float s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] *= s;
}

/* y = x - y, a non-finite difference as 0: the s2 residual keeps finite
 * values only, as on the host (reducer_s2.c). */
__global__ void subtract_from_kernel(float *y, const float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float d = x[i] - y[i];
        y[i] = isfinite(d) ? d : 0.0f;
    }
}

/* The gossip mixes, rounded like the host code (no fused multiply-add):
 * x = (x + y) / 2, and x += (recv - sent) / 2. */
__global__ void average_kernel(float *x, const float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __fmul_rn(0.5f, __fadd_rn(x[i], y[i]));
}

__global__ void add_kernel(float *x, const float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __fadd_rn(x[i], y[i]);
}

__global__ void add_half_difference_kernel(float *x, const float *recv, const float *sent,
                                           size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = __fadd_rn(x[i], __fmul_rn(0.5f, __fsub_rn(recv[i], sent[i])));
}

/* ---- ordered compaction: tile t of kTile items is handled by block t in
 * kRounds rounds; per round a warp ballot gives each item its rank.
 * Pass 1 counts per tile, pass 2 scans the tile counts, pass 3 writes. */

struct NonzeroPred {
    const float *x;
    __device__ bool operator()(size_t i) const { return x[i] != 0.0f; }
};
struct BitPred {
    const uint64_t *bm;
    __device__ bool operator()(size_t i) const { return (bm[i >> 6] >> (i & 63)) & 1u; }
};
struct PairEmit {
    const float *x;
    uint32_t base;
    rb_pair *out;
    __device__ void operator()(size_t i, unsigned long long pos) const
    {
        rb_pair p;
        p.idx = (uint32_t)i + base;
        p.val = x[i];
        out[pos] = p;
    }
};
struct IndexEmit {
    uint32_t *out;
    __device__ void operator()(size_t i, unsigned long long pos) const { out[pos] = (uint32_t)i; }
};

template <class Pred>
__global__ void tile_count_kernel(Pred pred, size_t n, size_t ntiles,
                                  unsigned long long *tile_counts, unsigned long long *total)
{
    for (size_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        unsigned long long c = 0;
        for (int r = 0; r < kRounds; r++) {
            size_t i = t * kTile + (size_t)r * kThreads + threadIdx.x;
            c += (unsigned long long)__syncthreads_count(i < n && pred(i));
        }
        if (threadIdx.x == 0) {
            if (tile_counts)
                tile_counts[t] = c;
            if (total)
                atomicAdd(total, c);
        }
    }
}

/* Exclusive scan of ntiles counts in place by one block; total into *total. */
__global__ void tile_scan_kernel(unsigned long long *counts, size_t ntiles,
                                 unsigned long long *total)
{
    __shared__ unsigned long long warp_sums[kThreads / 32];
    __shared__ unsigned long long carry;
    if (threadIdx.x == 0)
        carry = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (size_t base = 0; base < ntiles; base += kThreads) {
        size_t i = base + threadIdx.x;
        unsigned long long v = i < ntiles ? counts[i] : 0, incl = v;
        for (int d = 1; d < 32; d <<= 1) {
            unsigned long long o = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d)
                incl += o;
        }
        if (lane == 31)
            warp_sums[warp] = incl;
        __syncthreads();
        unsigned long long before = carry;
        for (int w = 0; w < warp; w++)
            before += warp_sums[w];
        if (i < ntiles)
            counts[i] = before + incl - v;
        __syncthreads();
        if (threadIdx.x == kThreads - 1)
            carry = before + incl;
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *total = carry;
}

template <class Pred, class Emit>
__global__ void tile_write_kernel(Pred pred, Emit emit, size_t n, size_t ntiles,
                                  const unsigned long long *tile_offsets)
{
    __shared__ unsigned warp_counts[kThreads / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (size_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        unsigned long long off = tile_offsets[t];
        for (int r = 0; r < kRounds; r++) {
            size_t i = t * kTile + (size_t)r * kThreads + threadIdx.x;
            bool keep = i < n && pred(i);
            unsigned mask = __ballot_sync(0xffffffffu, keep);
            if (lane == 0)
                warp_counts[warp] = __popc(mask);
            __syncthreads();
            unsigned before = 0, all = 0;
            for (int w = 0; w < kThreads / 32; w++) {
                if (w < warp)
                    before += warp_counts[w];
                all += warp_counts[w];
            }
            if (keep)
                emit(i, off + before + __popc(mask & ((1u << lane) - 1u)));
            off += all;
            __syncthreads();
        }
    }
}

template <class Pred, class Emit>
int compact(Pred pred, Emit emit, size_t n, unsigned long long *d_count, void *scratch,
            cudaStream_t s)
{
    size_t ntiles = (n + kTile - 1) / kTile;
    unsigned long long *offsets = (unsigned long long *)scratch;
    if (ntiles == 0)
        return (int)cudaMemsetAsync(d_count, 0, sizeof *d_count, s);
    tile_count_kernel<<<grid_for(ntiles, 1), kThreads, 0, s>>>(pred, n, ntiles, offsets, nullptr);
    tile_scan_kernel<<<1, kThreads, 0, s>>>(offsets, ntiles, d_count);
    tile_write_kernel<<<grid_for(ntiles, 1), kThreads, 0, s>>>(pred, emit, n, ntiles, offsets);
    return launch_status();
}

__global__ void scatter_kernel(float *x, uint32_t base, const rb_pair *p, size_t k, bool add)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x) {
        rb_pair q = p[i];
        if (add)
            atomicAdd(&x[q.idx - base], q.val);
        else
            x[q.idx - base] = q.val;
    }
}

/* Indices distinct within p: plain stores, rounded like
 * rb_scatter_add_scaled / rb_scatter_set_scaled. */
__global__ void scatter_scaled_kernel(float *x, uint32_t base, const rb_pair *p, size_t k,
                                      float s, bool add)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x) {
        rb_pair q = p[i];
        float v = __fmul_rn(q.val, s);
        x[q.idx - base] = add ? __fadd_rn(x[q.idx - base], v) : v;
    }
}

__global__ void scatter_zero_kernel(float *x, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x)
        x[p[i].idx - base] = 0.0f;
}

__global__ void mark_pairs_kernel(uint64_t *bm, uint32_t base, const rb_pair *p, size_t k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t idx = p[i].idx - base;
        atomicOr((unsigned long long *)&bm[idx >> 6], 1ull << (idx & 63));
    }
}

/* out[j] = first position of p (index-sorted) with idx >= key_j, where
 * key_j = n * j / parts (the shard starts of parallax / sparcml rsag). */
__global__ void shard_bounds_kernel(const rb_pair *p, size_t k, size_t n, int parts,
                                    uint64_t *out)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= parts)
        return;
    uint32_t key = (uint32_t)((uint64_t)n * (uint64_t)j / (uint64_t)parts);
    size_t lo = 0, hi = k;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].idx < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[j] = lo;
}

__global__ void gather_pairs_kernel(const float *x, const uint32_t *list, size_t k,
                                    uint32_t base, rb_pair *out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t at = list[i];
        out[i] = rb_pair{at + base, x[at]};
    }
}

__global__ void popcount_kernel(const uint64_t *bm, size_t words, unsigned long long *d_count)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        c += (unsigned long long)__popcll(bm[i]);
    for (int off = 16; off > 0; off /= 2)
        c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(d_count, c);
}

/* ---- bitmaps */
/* Each warp takes 32 consecutive elements; a lane sets the bit of its group
 * only if it holds the first non-zero of that group within the warp, so
 * dense data costs at most one atomic per group per warp. */
__global__ void bitmap_groups_kernel(const float *x, size_t n, size_t group, uint64_t *bm)
{
    const int lane = threadIdx.x & 31;
    for (size_t i0 = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) & ~(size_t)31; i0 < n;
         i0 += (size_t)gridDim.x * blockDim.x) {
        size_t i = i0 + lane;
        bool nz = i < n && x[i] != 0.0f;
        unsigned mask = __ballot_sync(0xffffffffu, nz);
        if (!nz)
            continue;
        size_t g = i / group, start = g * group;
        int lo = start > i0 ? (int)(start - i0) : 0;      /* first lane of my group */
        unsigned before = mask & ((1u << lane) - 1u) & ~((1u << lo) - 1u);
        if (before == 0)
            atomicOr((unsigned long long *)&bm[g >> 6], 1ull << (g & 63));
    }
}

__global__ void bitmap_to_bytes_kernel(const uint64_t *bm, size_t nbits, uint8_t *bytes)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nbits;
         i += (size_t)gridDim.x * blockDim.x)
        bytes[i] = (uint8_t)((bm[i >> 6] >> (i & 63)) & 1u);
}

/* One warp per 64-bit word: each lane reads two bytes, a ballot packs them. */
__global__ void bytes_to_bitmap_kernel(const uint8_t *bytes, size_t nbits, uint64_t *bm)
{
    const int lane = threadIdx.x & 31;
    size_t words = (nbits + 63) / 64;
    size_t warps = ((size_t)gridDim.x * blockDim.x) / 32;
    for (size_t w = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; w < words; w += warps) {
        size_t i = w * 64 + lane;
        unsigned lo = __ballot_sync(0xffffffffu, i < nbits && bytes[i] != 0);
        unsigned hi = __ballot_sync(0xffffffffu, i + 32 < nbits && bytes[i + 32] != 0);
        if (lane == 0)
            bm[w] = ((uint64_t)hi << 32) | lo;
    }
}

__global__ void bitmap_or_rows_kernel(uint64_t *dst, const uint64_t *all, size_t words, int nrows)
{
    for (size_t w = blockIdx.x * (size_t)blockDim.x + threadIdx.x; w < words;
         w += (size_t)gridDim.x * blockDim.x) {
        uint64_t v = 0;
        for (int q = 0; q < nrows; q++)
            v |= all[(size_t)q * words + w];
        dst[w] = v;
    }
}

__global__ void pack_blocks_kernel(const float *x, size_t n, size_t block, const uint32_t *list,
                                   size_t nb, float *packed)
{
    size_t total = nb * block;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < total;
         j += (size_t)gridDim.x * blockDim.x) {
        size_t src = (size_t)list[j / block] * block + j % block;
        packed[j] = src < n ? x[src] : 0.0f;
    }
}

__global__ void unpack_blocks_kernel(float *x, size_t n, size_t block, const uint32_t *list,
                                     size_t nb, const float *packed, float s)
{
    size_t total = nb * block;
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < total;
         j += (size_t)gridDim.x * blockDim.x) {
        size_t dst = (size_t)list[j / block] * block + j % block;
        if (dst < n)
            x[dst] = packed[j] * s;
    }
}

/* ---- count sketch: arithmetic mod p = 2^61 - 1, as in countsketch.c */
constexpr uint64_t kP = RB_CS_PRIME;

__device__ __forceinline__ uint64_t mod_p(uint64_t v)
{
    v = (v & kP) + (v >> 61);
    return v >= kP ? v - kP : v;
}

/* a * b mod p for a, b < 2^61 (product < 2^122; 2^64 = 8 mod p). */
__device__ __forceinline__ uint64_t mulmod_p(uint64_t a, uint64_t b)
{
    uint64_t lo = a * b, hi = __umul64hi(a, b);
    uint64_t v = (lo & kP) + ((lo >> 61) | (hi << 3));
    return v >= kP ? v - kP : v;
}

__device__ __forceinline__ uint64_t addmod_p(uint64_t a, uint64_t b)
{
    uint64_t v = a + b;
    return v >= kP ? v - kP : v;
}

__device__ __forceinline__ uint32_t cs_bucket(const rb_cs_coeffs &co, uint64_t x, uint64_t cols)
{
    uint64_t h = addmod_p(mulmod_p(co.a, x), co.b);
    return (uint32_t)(((h >> 29) * cols) >> 32);
}

/* Sign applied by flipping the sign bit when the polynomial is odd, as
 * apply_sign() in countsketch.c does, so results are bit-identical. */
__device__ __forceinline__ float apply_sign(float v, uint32_t bit)
{
    return __uint_as_float(__float_as_uint(v) ^ (bit << 31));
}

__device__ __forceinline__ uint64_t submod_p(uint64_t a, uint64_t b)
{
    return a >= b ? a - b : a + kP - b;
}

__device__ __forceinline__ uint64_t sign_poly(const rb_cs_coeffs &co, uint64_t x)
{
    uint64_t h = addmod_p(mulmod_p(co.k[3], x), co.k[2]);
    h = addmod_p(mulmod_p(h, x), co.k[1]);
    return addmod_p(mulmod_p(h, x), co.k[0]);
}

/* Hashes of keys x, x+S, x+2S, ... (mod p) by exact finite differences, as
 * the CPU walks x, x+1, ...: per step one addition for the (linear) bucket
 * hash and three for the (cubic) sign polynomial, instead of five 64-bit
 * modular products.  A thread of a grid-stride loop walks with S = the
 * grid size, so loads stay coalesced. */
struct HashWalk {
    uint64_t h, aS, d0, d1, d2, d3;
    __device__ void start(const rb_cs_coeffs &co, uint64_t x, uint64_t S)
    {
        h = addmod_p(mulmod_p(co.a, x), co.b);
        aS = mulmod_p(co.a, S);
        uint64_t x1 = addmod_p(x, S), x2 = addmod_p(x1, S), x3 = addmod_p(x2, S);
        uint64_t p0 = sign_poly(co, x), p1 = sign_poly(co, x1);
        uint64_t p2 = sign_poly(co, x2), p3 = sign_poly(co, x3);
        d0 = p0;
        d1 = submod_p(p1, p0);
        d2 = submod_p(addmod_p(p2, p0), addmod_p(p1, p1));
        uint64_t t2 = addmod_p(p2, addmod_p(p2, p2)), t1 = addmod_p(p1, addmod_p(p1, p1));
        d3 = submod_p(addmod_p(p3, t1), addmod_p(t2, p0));
    }
    __device__ __forceinline__ void step()
    {
        h = addmod_p(h, aS);
        d0 = addmod_p(d0, d1);
        d1 = addmod_p(d1, d2);
        d2 = addmod_p(d2, d3);
    }
    __device__ __forceinline__ uint32_t bucket(uint64_t cols) const
    {
        return (uint32_t)(((h >> 29) * cols) >> 32);
    }
    __device__ __forceinline__ uint32_t sign_bit() const { return (uint32_t)(d0 & 1u); }
};

/* Threads of the sketch kernels: enough to fill the GPU, few enough that
 * each walks many elements (the walk set-up costs 13 modular products). */
constexpr unsigned kSketchBlocks = 2048;

template <int R>
__global__ void cs_insert_kernel(rbk_sketch sk, float *table, const float *x, size_t n, uint64_t x0)
{
    const size_t S = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    HashWalk w[R];
#pragma unroll
    for (int j = 0; j < R; j++)
        w[j].start(sk.co[j], mod_p(x0 + i), S % kP);
    for (; i < n; i += S) {
        float v = x[i];
        if (v != 0.0f) {
#pragma unroll
            for (int j = 0; j < R; j++)
                atomicAdd(&table[(size_t)j * sk.cols + w[j].bucket(sk.cols)], apply_sign(v, w[j].sign_bit()));
        }
#pragma unroll
        for (int j = 0; j < R; j++)
            w[j].step();
    }
}

/* The median networks of countsketch.c, with its compare-exchange
 * (y < x ? y : x, x < y ? y : x), not fminf/fmaxf: those drop a NaN and
 * order signed zeros otherwise, so the CPU's floats would not come out. */
#define CSWAP(x, y) do { float lo_ = (y) < (x) ? (y) : (x), hi_ = (x) < (y) ? (y) : (x); \
                         x = lo_; y = hi_; } while (0)
__device__ __forceinline__ float median3(float a, float b, float c)
{
    CSWAP(a, b); CSWAP(b, c); CSWAP(a, b);
    return b;
}

__device__ __forceinline__ float median5(float a, float b, float c, float d, float e)
{
    CSWAP(a, b); CSWAP(d, e); CSWAP(c, e); CSWAP(c, d);
    CSWAP(a, d); CSWAP(a, c); CSWAP(b, e); CSWAP(b, d); CSWAP(b, c);
    return c;
}
#undef CSWAP

template <int R>
__global__ void cs_decode_kernel(rbk_sketch sk, const float *table, float *x, size_t n,
                                 size_t cols, const uint64_t *row_bm, uint64_t x0, float scale)
{
    const size_t S = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    HashWalk w[R];
#pragma unroll
    for (int j = 0; j < R; j++)
        w[j].start(sk.co[j], mod_p(x0 + i), S % kP);
    for (; i < n; i += S) {
        bool in_union = true;
        if (row_bm) {
            size_t row = i / cols;
            in_union = (row_bm[row >> 6] >> (row & 63)) & 1u;
        }
        float m = 0.0f;
        if (in_union) {
            float est[R];
#pragma unroll
            for (int j = 0; j < R; j++)
                est[j] = apply_sign(table[(size_t)j * sk.cols + w[j].bucket(sk.cols)], w[j].sign_bit());
            if (R == 1)
                m = est[0];
            else if (R == 3)
                m = median3(est[0], est[1], est[2 % R]);
            else
                m = median5(est[0], est[1 % R], est[2 % R], est[3 % R], est[4 % R]);
            m = scale == 1.0f ? m : scale * m;
        }
        x[i] = m;
#pragma unroll
        for (int j = 0; j < R; j++)
            w[j].step();
    }
}

__global__ void cs_hashes_kernel(rbk_sketch sk, const uint64_t *keys, size_t k,
                                 uint32_t *bucket, int8_t *sign)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < k;
         i += (size_t)gridDim.x * blockDim.x) {
        uint64_t key = mod_p(keys[i]);
        for (int j = 0; j < sk.rows; j++) {
            bucket[i * sk.rows + j] = cs_bucket(sk.co[j], key, sk.cols);
            sign[i * sk.rows + j] = (sign_poly(sk.co[j], key) & 1u) ? -1 : 1;
        }
    }
}

/* ---- sparsification */
__global__ void threshold_kernel(float *x, float *residual, size_t n, float t)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = x[i] + (residual ? residual[i] : 0.0f);
        bool keep = fabsf(v) >= t;
        x[i] = keep ? v : 0.0f;
        if (residual)
            residual[i] = keep ? 0.0f : v;
    }
}

/* 256-bin histogram of byte `shift` of the bits of |x| among the elements
 * whose higher bits equal `prefix` (under `prefix_mask`). */
__global__ void radix_hist_kernel(const float *x, size_t n, uint32_t prefix, uint32_t prefix_mask,
                                  int shift, unsigned int *hist)
{
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t key = __float_as_uint(fabsf(x[i]));
        if ((key & prefix_mask) == prefix)
            atomicAdd(&local[(key >> shift) & 0xffu], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b])
            atomicAdd(&hist[b], local[b]);
}

} // namespace

extern "C" {

int rbk_scale(float *x, size_t n, float s, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, s);
    return launch_status();
}

int rbk_subtract_from(float *y, const float *x, size_t n, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    subtract_from_kernel<<<grid_for(n), kThreads, 0, stream>>>(y, x, n);
    return launch_status();
}

int rbk_average(float *x, const float *y, size_t n, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    average_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, y, n);
    return launch_status();
}

int rbk_add(float *x, const float *y, size_t n, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    add_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, y, n);
    return launch_status();
}

int rbk_add_half_difference(float *x, const float *recv, const float *sent, size_t n,
                            cudaStream_t stream)
{
    if (n == 0)
        return 0;
    add_half_difference_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, recv, sent, n);
    return launch_status();
}

size_t rbk_pack_scratch_bytes(size_t n)
{
    size_t ntiles = (n + kTile - 1) / kTile;
    return (ntiles ? ntiles : 1) * sizeof(unsigned long long);
}

int rbk_count_nonzero(const float *x, size_t n, unsigned long long *d_count, cudaStream_t stream)
{
    int rc = (int)cudaMemsetAsync(d_count, 0, sizeof *d_count, stream);
    size_t ntiles = (n + kTile - 1) / kTile;
    if (rc || ntiles == 0)
        return rc;
    tile_count_kernel<<<grid_for(ntiles, 1), kThreads, 0, stream>>>(NonzeroPred{x}, n, ntiles,
                                                                     nullptr, d_count);
    return launch_status();
}

int rbk_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out,
                     unsigned long long *d_count, void *scratch, cudaStream_t stream)
{
    return compact(NonzeroPred{x}, PairEmit{x, base, out}, n, d_count, scratch, stream);
}

int rbk_scatter_add(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream)
{
    if (k == 0)
        return 0;
    scatter_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, base, p, k, true);
    return launch_status();
}

int rbk_scatter_set(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream)
{
    if (k == 0)
        return 0;
    scatter_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, base, p, k, false);
    return launch_status();
}

int rbk_scatter_add_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s,
                           cudaStream_t stream)
{
    if (k == 0)
        return 0;
    scatter_scaled_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, base, p, k, s, true);
    return launch_status();
}

int rbk_scatter_set_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s,
                           cudaStream_t stream)
{
    if (k == 0)
        return 0;
    scatter_scaled_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, base, p, k, s, false);
    return launch_status();
}

int rbk_scatter_zero(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream)
{
    if (k == 0)
        return 0;
    scatter_zero_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, base, p, k);
    return launch_status();
}

int rbk_mark_pairs(uint64_t *bm, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream)
{
    if (k == 0)
        return 0;
    mark_pairs_kernel<<<grid_for(k), kThreads, 0, stream>>>(bm, base, p, k);
    return launch_status();
}

int rbk_shard_bounds(const rb_pair *p, size_t k, size_t n, int parts, uint64_t *out,
                     cudaStream_t stream)
{
    if (parts <= 0)
        return (int)cudaErrorInvalidValue;
    shard_bounds_kernel<<<grid_for((size_t)parts), kThreads, 0, stream>>>(p, k, n, parts, out);
    return launch_status();
}

int rbk_gather_pairs(const float *x, const uint32_t *list, size_t k, uint32_t base, rb_pair *out,
                     cudaStream_t stream)
{
    if (k == 0)
        return 0;
    gather_pairs_kernel<<<grid_for(k), kThreads, 0, stream>>>(x, list, k, base, out);
    return launch_status();
}

int rbk_popcount(const uint64_t *bm, size_t words, unsigned long long *d_count,
                 cudaStream_t stream)
{
    int rc = (int)cudaMemsetAsync(d_count, 0, sizeof *d_count, stream);
    if (rc || words == 0)
        return rc;
    popcount_kernel<<<grid_for(words), kThreads, 0, stream>>>(bm, words, d_count);
    return launch_status();
}

int rbk_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm, cudaStream_t stream)
{
    if (n == 0)              /* an empty gradient (0 x 0 too): no bits */
        return 0;
    if (group == 0)
        return (int)cudaErrorInvalidValue;
    size_t words = ((n + group - 1) / group + 63) / 64;
    int rc = (int)cudaMemsetAsync(bm, 0, words * sizeof *bm, stream);
    if (rc)
        return rc;
    bitmap_groups_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, group, bm);
    return launch_status();
}

int rbk_bitmap_to_bytes(const uint64_t *bm, size_t nbits, uint8_t *bytes, cudaStream_t stream)
{
    if (nbits == 0)
        return 0;
    bitmap_to_bytes_kernel<<<grid_for(nbits), kThreads, 0, stream>>>(bm, nbits, bytes);
    return launch_status();
}

int rbk_bytes_to_bitmap(const uint8_t *bytes, size_t nbits, uint64_t *bm, cudaStream_t stream)
{
    if (nbits == 0)
        return 0;
    bytes_to_bitmap_kernel<<<grid_for((nbits + 63) / 64 * 32), kThreads, 0, stream>>>(bytes, nbits, bm);
    return launch_status();
}

int rbk_bitmap_or_rows(uint64_t *dst, const uint64_t *all, size_t words, int nrows,
                       cudaStream_t stream)
{
    if (words == 0)
        return 0;
    bitmap_or_rows_kernel<<<grid_for(words), kThreads, 0, stream>>>(dst, all, words, nrows);
    return launch_status();
}

int rbk_bitmap_list(const uint64_t *bm, size_t nbits, uint32_t *list,
                    unsigned long long *d_count, void *scratch, cudaStream_t stream)
{
    return compact(BitPred{bm}, IndexEmit{list}, nbits, d_count, scratch, stream);
}

int rbk_pack_blocks(const float *x, size_t n, size_t block, const uint32_t *list, size_t nb,
                    float *packed, cudaStream_t stream)
{
    if (nb == 0 || block == 0)
        return 0;
    pack_blocks_kernel<<<grid_for(nb * block), kThreads, 0, stream>>>(x, n, block, list, nb, packed);
    return launch_status();
}

int rbk_unpack_blocks(float *x, size_t n, size_t block, const uint32_t *list, size_t nb,
                      const float *packed, float s, cudaStream_t stream)
{
    int rc = n ? (int)cudaMemsetAsync(x, 0, n * sizeof *x, stream) : 0;
    if (rc || nb == 0 || block == 0)
        return rc;
    unpack_blocks_kernel<<<grid_for(nb * block), kThreads, 0, stream>>>(x, n, block, list, nb,
                                                                         packed, s);
    return launch_status();
}

int rbk_cs_insert(const rbk_sketch *sk, float *table, const float *x, size_t n, uint64_t x0,
                  cudaStream_t stream)
{
    if (n == 0)
        return 0;
    unsigned grid = grid_for(n) < kSketchBlocks ? grid_for(n) : kSketchBlocks;
    switch (sk->rows) {
    case 1: cs_insert_kernel<1><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, x0); break;
    case 3: cs_insert_kernel<3><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, x0); break;
    case 5: cs_insert_kernel<5><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, x0); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return launch_status();
}

int rbk_cs_decode(const rbk_sketch *sk, const float *table, float *x, size_t n, size_t cols,
                  const uint64_t *row_bm, uint64_t x0, float scale, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    if (cols == 0)
        return (int)cudaErrorInvalidValue;
    unsigned grid = grid_for(n) < kSketchBlocks ? grid_for(n) : kSketchBlocks;
    switch (sk->rows) {
    case 1: cs_decode_kernel<1><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, cols, row_bm, x0, scale); break;
    case 3: cs_decode_kernel<3><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, cols, row_bm, x0, scale); break;
    case 5: cs_decode_kernel<5><<<grid, kThreads, 0, stream>>>(*sk, table, x, n, cols, row_bm, x0, scale); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return launch_status();
}

int rbk_cs_hashes(const rbk_sketch *sk, const uint64_t *keys, size_t k, uint32_t *bucket,
                  int8_t *sign, cudaStream_t stream)
{
    if (k == 0)
        return 0;
    cs_hashes_kernel<<<grid_for(k), kThreads, 0, stream>>>(*sk, keys, k, bucket, sign);
    return launch_status();
}

int rbk_threshold(float *x, float *residual, size_t n, float t, cudaStream_t stream)
{
    if (n == 0)
        return 0;
    threshold_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, residual, n, t);
    return launch_status();
}

int rbk_topk_threshold(const float *x, size_t n, size_t k, float *t_out, unsigned int *d_hist,
                       cudaStream_t stream)
{
    if (k == 0 || k > n)
        return (int)cudaErrorInvalidValue;
    uint32_t prefix = 0, mask = 0;
    size_t need = k;                       /* rank still to find among the matches */
    for (int shift = 24; shift >= 0; shift -= 8) {
        unsigned int hist[256];
        int rc = (int)cudaMemsetAsync(d_hist, 0, sizeof hist, stream);
        if (rc)
            return rc;
        radix_hist_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, prefix, mask, shift, d_hist);
        if ((rc = launch_status()) != 0)
            return rc;
        rc = (int)cudaMemcpyAsync(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost, stream);
        if (rc || (rc = (int)cudaStreamSynchronize(stream)) != 0)
            return rc;
        int b = 255;                        /* from the largest bin down */
        while (b > 0 && hist[b] < need) {
            need -= hist[b];
            b--;
        }
        prefix |= (uint32_t)b << shift;
        mask |= 0xffu << shift;
    }
    memcpy(t_out, &prefix, sizeof *t_out);
    return 0;
}

} // extern "C"
