/* Count sketch: hashes modulo 2^61 - 1, insert, query, merge, scale.
 * See reducer_sketch.h for the hash formulas and docs/s2.md for why they
 * have the independence the count-sketch analysis needs. */
#include "countsketch_walk.h"
#include "rb_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ arithmetic */

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
        if (v >= lo && v < RB_CS_PRIME)
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

uint32_t rb_cs_bucket(const rb_countsketch *cs, int j, uint64_t x)
{
    return bucket_of(bucket_hash(&cs->co[j], mod_p(x)), cs->cols);
}

int rb_cs_sign(const rb_countsketch *cs, int j, uint64_t x)
{
    return (sign_poly(&cs->co[j], mod_p(x)) & 1u) ? -1 : 1;
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
    cs->isa = rb_cs_best_isa();
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
        rb_cs_walk_start(&w, &cs->co[j], x0);
        rb_cs_walk_insert(cs->isa, &w, cs->cols, v, len, t);
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
            rb_cs_walk_start(&w[j], &cs->co[j], x0);
    for (size_t lo = 0; lo < len; lo += CHUNK) {
        size_t n = len - lo < CHUNK ? len - lo : CHUNK;
        for (int j = 0; j < r; j++) {
            float *e = r == 1 ? out + lo : est[j];
            if (!walk) {
                estimate_direct(cs, j, x0 + lo, e, n);
                continue;
            }
            rb_cs_walk_query(cs->isa, &w[j], cs->cols, cs->table + (size_t)j * cs->cols, n, e);
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
            rb_cs_gather_signed(cs->table + (size_t)j * cs->cols, bucket, sgn,
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
