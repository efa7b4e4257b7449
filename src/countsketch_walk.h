/* The count sketch's hashing, shared by countsketch.c (insert, query,
 * life cycle) and countsketch_walk.c (the hash walks over runs, in SIMD
 * where the CPU has it): arithmetic modulo p = 2^61 - 1, the bucket and
 * sign hashes, and the walks' interface.  Private to the library. */
#ifndef RB_COUNTSKETCH_WALK_H
#define RB_COUNTSKETCH_WALK_H

#include "reducer_sketch.h"

#include <stddef.h>
#include <stdint.h>


static inline uint64_t mod_p(uint64_t x)
{
    x = (x & RB_CS_PRIME) + (x >> 61);
    return x >= RB_CS_PRIME ? x - RB_CS_PRIME : x;
}

/* Branch-free (and so vectorisable): x + y - p, plus p back if that
 * wrapped below zero. */
static inline uint64_t add_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    uint64_t t = x + y - RB_CS_PRIME;
    return t + ((0 - (t >> 63)) & RB_CS_PRIME);
}

static inline uint64_t mul_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    unsigned __int128 z = (unsigned __int128)x * y;
    uint64_t s = ((uint64_t)z & RB_CS_PRIME) + (uint64_t)(z >> 61);
    return mod_p(s);
}

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
    uint64_t s = (lo & RB_CS_PRIME) + (lo >> 61) + (hi >> 29) + ((hi & ((1ULL << 29) - 1)) << 32);
    return mod_p(s);                                    /* s < 2^63 */
}

/* The walks of sketch row co from x0 (indices x0 + i must not pass 2^64). */
void rb_cs_walk_start(lane_walk *w, const rb_cs_coeffs *co, uint64_t x0);
/* Table row t += the signed values v[0..n) of walk w. */
void rb_cs_walk_insert(int isa, lane_walk *w, size_t cols, const float *v, size_t n, float *t);
/* out[i] = signed counter in table row t of the next n <= CHUNK elements
 * of walk w. */
void rb_cs_walk_query(int isa, lane_walk *w, size_t cols, const float *t, size_t n, float *out);
/* out[i] = t[b[i]] with sign s[i]. */
void rb_cs_gather_signed(const float *t, const uint32_t *restrict b, const uint32_t *restrict s,
                          float *restrict e, size_t n);
/* The best instruction set this CPU runs (RB_CS_ISA_*). */
int rb_cs_best_isa(void);

#endif
