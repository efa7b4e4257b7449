/* Count sketch (Charikar, Chen, Farach-Colton 2002): r rows x c columns of
 * floats.  Element x goes, in row j, to bucket h_j(x) with sign s_j(x); the
 * estimate of x is the median over rows of s_j(x) * table[j][h_j(x)].
 *
 * Hashes are pure functions of (seed, row j, element index x), computed with
 * integer arithmetic modulo the Mersenne prime p = 2^61 - 1, so another
 * implementation (a GPU kernel) can reproduce them bit for bit:
 *
 *   bucket  h_j(x) = ((((a_j x + b_j) mod p) >> 29) * c) >> 32     2-wise
 *   sign    s_j(x) = +1 if ((k3 x^3 + k2 x^2 + k1 x + k0) mod p) is even,
 *                    -1 otherwise                                   4-wise
 *
 * with a_j in [1, p) and b_j, k0..k3 in [0, p) drawn by splitmix64 from the
 * seed and j (rb_cs_row_coeffs).  docs/s2.md states the independence
 * argument.  Runs of consecutive indices (an embedding row) are hashed by
 * exact finite differences: four additions mod p per element, no division,
 * 16 interleaved walks in SIMD registers (AVX-512 or AVX2 when the CPU has
 * them, portable C otherwise; the same integers on every path).
 */
#ifndef RB_COUNTSKETCH_H
#define RB_COUNTSKETCH_H

#include <stddef.h>
#include <stdint.h>

#include "reducer_sparse.h"

#define RB_CS_MAX_ROWS 5
#define RB_CS_PRIME ((uint64_t)0x1fffffffffffffffULL) /* 2^61 - 1 */
/* Widest table: buckets are computed in 64 bits as (h >> 29) * c >> 32. */
#define RB_CS_MAX_COLS ((size_t)UINT32_MAX)

/* Hash coefficients of one sketch row. */
typedef struct rb_cs_coeffs {
    uint64_t a, b;          /* bucket: a*x + b mod p */
    uint64_t k[4];          /* sign: k3 x^3 + k2 x^2 + k1 x + k0 mod p */
} rb_cs_coeffs;

/* Instruction sets of the hash walks, lowest first. */
enum { RB_CS_ISA_PORTABLE, RB_CS_ISA_AVX2, RB_CS_ISA_AVX512 };

typedef struct rb_countsketch {
    int rows;                        /* r, 1..RB_CS_MAX_ROWS */
    int isa;                         /* RB_CS_ISA_*: the best this CPU runs
                                      * (rb_cs_init); tests may lower it */
    size_t cols;                     /* c, current width */
    uint64_t seed;
    rb_cs_coeffs co[RB_CS_MAX_ROWS];
    float *table;                    /* rows * cols floats, row-major */
    size_t cap_bytes;                /* allocated bytes of table */
} rb_countsketch;

/* Coefficients of row j for seed (pure function; exposed for tests and a
 * future device implementation). */
void rb_cs_row_coeffs(uint64_t seed, int j, rb_cs_coeffs *out);

/* RB_ERR_NOMEM, with "sketch of N counters needs X" in rb_last_error(),
 * when a rows x cols table could not be held on this machine (more than
 * its physical memory, or a size that overflows); cols is a double so a
 * width computed from options is checked before it is cast. */
int rb_cs_check_size(int rows, double cols);
/* Allocate a zeroed r x c sketch.  RB_ERR_ARG for r outside 1..5 or c
 * outside 1..RB_CS_MAX_COLS; RB_ERR_NOMEM
 * (rb_cs_check_size, or the allocation failed). */
int rb_cs_init(rb_countsketch *cs, int rows, size_t cols, uint64_t seed);
/* Change the width, keeping the allocation when it is large enough; the
 * table is zeroed. */
int rb_cs_set_cols(rb_countsketch *cs, size_t cols);
/* New hash functions (coefficients from seed); the table is zeroed. */
void rb_cs_set_seed(rb_countsketch *cs, uint64_t seed);
void rb_cs_free(rb_countsketch *cs);
void rb_cs_zero(rb_countsketch *cs);
static inline size_t rb_cs_size(const rb_countsketch *cs)
{
    return (size_t)cs->rows * cs->cols;
}

/* The hashes of element x in row j (direct evaluation). */
uint32_t rb_cs_bucket(const rb_countsketch *cs, int j, uint64_t x);
int rb_cs_sign(const rb_countsketch *cs, int j, uint64_t x);

/* Add v[i] for elements x0 + i, i < len (zeros add nothing). */
void rb_cs_insert_run(rb_countsketch *cs, uint64_t x0, const float *v, size_t len);
static inline void rb_cs_insert(rb_countsketch *cs, uint64_t x, float v)
{
    rb_cs_insert_run(cs, x, &v, 1);
}
/* out[i] = estimate of element x0 + i, i < len. */
void rb_cs_query_run(const rb_countsketch *cs, uint64_t x0, float *out, size_t len);
float rb_cs_query(const rb_countsketch *cs, uint64_t x);

/* The same for scattered elements idx[i], i < n, hashed together: for
 * elements in runs shorter than RB_CS_SHORT_RUN, much cheaper than a call
 * per run.  Insertion adds in the order given. */
#define RB_CS_SHORT_RUN 32
void rb_cs_insert_at(rb_countsketch *cs, const uint32_t *idx, const float *v, size_t n);
void rb_cs_query_at(const rb_countsketch *cs, const uint32_t *idx, float *out, size_t n);

/* dst += src.  RB_ERR_ARG unless both have the same rows, cols and seed. */
int rb_cs_merge(rb_countsketch *dst, const rb_countsketch *src);
/* Multiply every counter by s (e.g. 1/p after a sum-allreduce). */
void rb_cs_scale(rb_countsketch *cs, float s);

#endif
