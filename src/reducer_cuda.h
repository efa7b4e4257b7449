/* CUDA kernels of libreducer (src/cuda/rb_kernels.cu), callable from C, and
 * the bitmap OR over ranks of a reducer's NCCL transport: the public face
 * of a CUDA build (installed with it; rb_gpubench and rb_train's device
 * sparsifier use them).
 *
 * Every function enqueues work on `stream` and returns a cudaError_t as
 * int (0 = cudaSuccess) from the launch; results are ready after the stream
 * synchronises, except where a function says it synchronises itself.
 * Device code uses sm_60 features at most (float atomicAdd, 64-bit atomicOr,
 * __shfl_*_sync / __ballot_sync) so a CUDA <= 12 build for P100 works.
 */
#ifndef RB_KERNELS_H
#define RB_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "reducer_sketch.h"   /* rb_cs_coeffs, RB_CS_MAX_ROWS, RB_CS_PRIME */
#include "reducer_sparse.h"   /* rb_pair */

#ifdef __cplusplus
extern "C" {
#endif

/* x *= s */
int rbk_scale(float *x, size_t n, float s, cudaStream_t stream);
/* y = x - y (s2's error feedback: residual = gradient - estimate) */
int rbk_subtract_from(float *y, const float *x, size_t n, cudaStream_t stream);
/* x += y (sparcml: a partner's dense stream) */
int rbk_add(float *x, const float *y, size_t n, cudaStream_t stream);
/* Gossip mixes, rounded like the host code (no fused multiply-add):
 * x = (x + y) / 2 (synchronous), x += (recv - sent) / 2 (asynchronous). */
int rbk_average(float *x, const float *y, size_t n, cudaStream_t stream);
int rbk_add_half_difference(float *x, const float *recv, const float *sent, size_t n,
                            cudaStream_t stream);

/* ---- non-zero scan and compaction (index order, like rb_pack_nonzero) */
/* Scratch bytes rbk_pack_nonzero needs for n elements. */
size_t rbk_pack_scratch_bytes(size_t n);
/* *d_count (device) = number of non-zeros of x. */
int rbk_count_nonzero(const float *x, size_t n, unsigned long long *d_count,
                      cudaStream_t stream);
/* out[0..k) = (index + base, value) of the non-zeros of x in index order;
 * *d_count (device) = k.  out must hold the non-zero count. */
int rbk_pack_nonzero(const float *x, size_t n, uint32_t base, rb_pair *out,
                     unsigned long long *d_count, void *scratch, cudaStream_t stream);
/* x[p.idx - base] += / = p.val */
int rbk_scatter_add(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream);
int rbk_scatter_set(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream);
/* x[p.idx - base] += p.val * s (add) or = p.val * s (set), rounded like
 * rb_scatter_add_scaled / rb_scatter_set_scaled; the indices of p must be
 * distinct (one rank's packed stream): no atomics, so launches in rank
 * order sum in the host path's order. */
int rbk_scatter_add_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s,
                           cudaStream_t stream);
int rbk_scatter_set_scaled(float *x, uint32_t base, const rb_pair *p, size_t k, float s,
                           cudaStream_t stream);
/* x[p.idx - base] = 0 */
int rbk_scatter_zero(float *x, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream);
/* Set bit p.idx - base of bm for every pair (bm is not cleared first). */
int rbk_mark_pairs(uint64_t *bm, uint32_t base, const rb_pair *p, size_t k, cudaStream_t stream);
/* out[j] (device, j < parts) = first position in the index-sorted p with
 * idx >= n * j / parts: where shard j of [0, n) starts (rb_pair_lower_bound). */
int rbk_shard_bounds(const rb_pair *p, size_t k, size_t n, int parts, uint64_t *out,
                     cudaStream_t stream);
/* out[i] = (list[i] + base, x[list[i]]) */
int rbk_gather_pairs(const float *x, const uint32_t *list, size_t k, uint32_t base, rb_pair *out,
                     cudaStream_t stream);
/* *d_count (device) = set bits in bm[0..words). */
int rbk_popcount(const uint64_t *bm, size_t words, unsigned long long *d_count,
                 cudaStream_t stream);

/* ---- bitmaps (bit i of word i/64, like reducer_sparse.h) */
/* Bit g set when any of x[g*group .. (g+1)*group) is non-zero (row bitmap:
 * group = cols; block bitmap: group = block size).  bm is overwritten. */
int rbk_bitmap_of_groups(const float *x, size_t n, size_t group, uint64_t *bm,
                         cudaStream_t stream);
/* One byte (0/1) per bit and back: the form NCCL can merge with ncclMax. */
int rbk_bitmap_to_bytes(const uint64_t *bm, size_t nbits, uint8_t *bytes, cudaStream_t stream);
int rbk_bytes_to_bitmap(const uint8_t *bytes, size_t nbits, uint64_t *bm, cudaStream_t stream);
/* dst[w] = OR over q of all[q * words + w] (after an allgather). */
int rbk_bitmap_or_rows(uint64_t *dst, const uint64_t *all, size_t words, int nrows,
                       cudaStream_t stream);

/* ---- blocks: gather the blocks whose bit is set into a packed buffer and
 * back.  list[0..nb) = indices of set bits of bm in order (compaction). */
int rbk_bitmap_list(const uint64_t *bm, size_t nbits, uint32_t *list,
                    unsigned long long *d_count, void *scratch, cudaStream_t stream);
int rbk_pack_blocks(const float *x, size_t n, size_t block, const uint32_t *list,
                    size_t nb, float *packed, cudaStream_t stream);
/* x = 0 outside the listed blocks, packed values inside (scaled by s). */
int rbk_unpack_blocks(float *x, size_t n, size_t block, const uint32_t *list,
                      size_t nb, const float *packed, float s, cudaStream_t stream);

/* ---- count sketch, hashes identical to src/countsketch.c ---------------- */
typedef struct rbk_sketch {
    int rows;                           /* r */
    size_t cols;                        /* c */
    rb_cs_coeffs co[RB_CS_MAX_ROWS];    /* from rb_cs_row_coeffs(seed, j) */
} rbk_sketch;
/* The element index of x[i] is x0 + i.  table (r*c floats) += sign *
 * value at bucket for every non-zero x[i] (float atomicAdd: the sums'
 * order is the hardware's, and subnormal results flush to zero). */
int rbk_cs_insert(const rbk_sketch *sk, float *table, const float *x, size_t n,
                  uint64_t x0, cudaStream_t stream);
/* x[i] = scale * median_j sign_j * table[j][bucket_j] (r = 1, 3 or 5) for elements of rows
 * (of `cols` elements) whose bit is set in row_bm; 0 elsewhere.  row_bm
 * NULL: every element is decoded. */
int rbk_cs_decode(const rbk_sketch *sk, const float *table, float *x, size_t n,
                  size_t cols, const uint64_t *row_bm, uint64_t x0, float scale,
                  cudaStream_t stream);
/* Hashes of element x in row j, computed on the device (tests). */
int rbk_cs_hashes(const rbk_sketch *sk, const uint64_t *keys, size_t k,
                  uint32_t *bucket, int8_t *sign, cudaStream_t stream);

/* ---- sparsification (training) */
/* With residual (error feedback): x += residual first, then residual = the
 * dropped part.  Keeps elements with |x| >= t, zeroes the rest. */
int rbk_threshold(float *x, float *residual, size_t n, float t, cudaStream_t stream);
/* *t_out = the k-th largest |x| (radix select on the float bits; k >= 1,
 * k <= n).  Synchronises the stream (four small histogram copies).
 * Keeping |x| >= *t_out keeps at least k elements (more on ties) when x
 * has no NaN: a NaN's bits rank above Inf's, so with NaNs it keeps fewer
 * (the host's selection is no better defined with NaN). */
int rbk_topk_threshold(const float *x, size_t n, size_t k, float *t_out,
                       unsigned int *d_hist, cudaStream_t stream);

/* ---- over ranks (the NCCL transport of reducer r; src/device_cuda.c) */
/* Bitwise OR of a device bitmap over ranks (NCCL has no bitwise OR):
 * MAX_BYTES expands to a byte per bit and ncclMax-allreduces (ring wire:
 * 2(p-1)/p x nbits bytes); ALLGATHER gathers the packed bitmaps and ORs
 * them ((p-1) x nbits/8 bytes); AUTO picks the fewer wire bytes (allgather
 * below 16 ranks).  scratch: max(nbits, p * 8 * words) bytes. */
enum { RB_BITMAP_MAX_BYTES = 0, RB_BITMAP_ALLGATHER = 1, RB_BITMAP_AUTO = 2 };
/* By tag, so nvcc compiles this header without MPI's (reducer.h). */
struct rb_reducer;
struct rb_stats;
int rb_device_bitmap_or(struct rb_reducer *r, struct rb_stats *st, uint64_t *dbm, size_t nbits,
                        int method, void *scratch);
/* The scratch bytes rb_device_bitmap_or needs for nbits (either method). */
size_t rb_device_bitmap_or_scratch(const struct rb_reducer *r, size_t nbits);

#ifdef __cplusplus
}
#endif
#endif
