/* Count sketch: hashes modulo 2^61 - 1, insert, query, merge, F2 estimate,
 * heavy hitters.  See countsketch.h for the hash formulas and docs/s2.md
 * for why they have the independence the count-sketch analysis needs. */
#include "countsketch.h"
#include "rb_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define P RB_CS_PRIME

/* ------------------------------------------------------------ arithmetic */

static inline uint64_t mod_p(uint64_t x)
{
    x = (x & P) + (x >> 61);
    return x >= P ? x - P : x;
}

/* Branch-free (and so vectorisable): x + y - p, plus p back if that
 * wrapped below zero. */
static inline uint64_t add_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    uint64_t t = x + y - P;
    return t + ((0 - (t >> 63)) & P);
}

static inline uint64_t sub_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    return x >= y ? x - y : x + P - y;
}

static inline uint64_t mul_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    unsigned __int128 z = (unsigned __int128)x * y;
    uint64_t s = ((uint64_t)z & P) + (uint64_t)(z >> 61);
    return mod_p(s);
}

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
        if (v >= lo && v < P)
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

uint32_t rb_cs_bucket(const rb_countsketch *cs, int j, uint64_t x)
{
    return bucket_of(bucket_hash(&cs->co[j], mod_p(x)), cs->cols);
}

int rb_cs_sign(const rb_countsketch *cs, int j, uint64_t x)
{
    return (sign_poly(&cs->co[j], mod_p(x)) & 1u) ? -1 : 1;
}

/* Hash state that walks x0, x0+1, ... by exact finite differences of the
 * (linear) bucket and (cubic) sign polynomials: 4 additions mod p a step. */
typedef struct hash_walk {
    uint64_t h, a;              /* bucket hash at x, its increment */
    uint64_t d0, d1, d2, d3;    /* sign poly at x and its 1st..3rd differences */
} hash_walk;

/* d0..d3 = value and 1st..3rd forward differences of a cubic sampled at
 * four equally spaced points. */
static void differences(uint64_t p0, uint64_t p1, uint64_t p2, uint64_t p3, uint64_t d[4])
{
    uint64_t three_p1 = add_p(p1, add_p(p1, p1)), three_p2 = add_p(p2, add_p(p2, p2));
    d[0] = p0;
    d[1] = sub_p(p1, p0);
    d[2] = sub_p(add_p(p2, p0), add_p(p1, p1));                  /* p2 - 2p1 + p0 */
    d[3] = sub_p(add_p(p3, three_p1), add_p(three_p2, p0));      /* p3 - 3p2 + 3p1 - p0 */
}

static void walk_start(hash_walk *w, const rb_cs_coeffs *co, uint64_t x0)
{
    uint64_t x = mod_p(x0), d[4];
    w->h = bucket_hash(co, x);
    w->a = co->a;
    differences(sign_poly(co, x), sign_poly(co, add_p(x, 1)),
                sign_poly(co, add_p(x, 2)), sign_poly(co, add_p(x, 3)), d);
    w->d0 = d[0], w->d1 = d[1], w->d2 = d[2], w->d3 = d[3];
}

static inline void walk_step(hash_walk *w)
{
    w->h = add_p(w->h, w->a);
    w->d0 = add_p(w->d0, w->d1);
    w->d1 = add_p(w->d1, w->d2);
    w->d2 = add_p(w->d2, w->d3);
}

/* LANES interleaved walks with stride LANES, so the additions of one step
 * are independent (and vectorise); hashes come out CHUNK at a time.  Runs
 * shorter than DIRECT_MAX are hashed by direct evaluation instead. */
enum { LANES = 8, CHUNK = 256, DIRECT_MAX = RB_CS_SHORT_RUN };

typedef struct lane_walk {
    uint64_t h[LANES], d0[LANES], d1[LANES], d2[LANES], d3[LANES];
    uint64_t step_a;            /* LANES * a mod p */
} lane_walk;

static void lanes_start(lane_walk *w, const rb_cs_coeffs *co, uint64_t x0)
{
    hash_walk s;
    uint64_t pts[4 * LANES];
    walk_start(&s, co, x0);
    for (int i = 0; i < 4 * LANES; i++) {
        if (i < LANES)
            w->h[i] = s.h;
        pts[i] = s.d0;
        walk_step(&s);
    }
    for (int l = 0; l < LANES; l++) {
        uint64_t d[4];
        differences(pts[l], pts[l + LANES], pts[l + 2 * LANES], pts[l + 3 * LANES], d);
        w->d0[l] = d[0], w->d1[l] = d[1], w->d2[l] = d[2], w->d3[l] = d[3];
    }
    w->step_a = mul_p(co->a, LANES);
}

/* bucket[i] and sign mask sgn[i] (bit 31) of the next n elements, n a
 * multiple of LANES.  Compiled also for AVX2 and AVX-512 and picked at load
 * time where the compiler supports it: same integers, wider vectors. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void lanes_hash(lane_walk *w, size_t cols, size_t n, uint32_t *restrict bucket,
                       uint32_t *restrict sgn)
{
    uint64_t h[LANES], d0[LANES], d1[LANES], d2[LANES], d3[LANES];
    const uint64_t a = w->step_a;
    const uint32_t c = (uint32_t)cols;
    memcpy(h, w->h, sizeof h), memcpy(d0, w->d0, sizeof d0), memcpy(d1, w->d1, sizeof d1);
    memcpy(d2, w->d2, sizeof d2), memcpy(d3, w->d3, sizeof d3);
    for (size_t i = 0; i < n; i += LANES) {
        for (int l = 0; l < LANES; l++) {
            bucket[i + l] = (uint32_t)(((uint64_t)(uint32_t)(h[l] >> 29) * c) >> 32);
            sgn[i + l] = (uint32_t)d0[l] << 31;
            h[l] = add_p(h[l], a);
            d0[l] = add_p(d0[l], d1[l]);
            d1[l] = add_p(d1[l], d2[l]);
            d2[l] = add_p(d2[l], d3[l]);
        }
    }
    memcpy(w->h, h, sizeof h), memcpy(w->d0, d0, sizeof d0), memcpy(w->d1, d1, sizeof d1);
    memcpy(w->d2, d2, sizeof d2);
}

/* Ask for the counters of a chunk before they are used: the table is
 * usually larger than L2, and the hash pass knows every address first. */
static inline void prefetch_counters(const float *t, const uint32_t *bucket, size_t n, int write)
{
    if (write)
        for (size_t i = 0; i < n; i++)
            __builtin_prefetch(t + bucket[i], 1, 3);
    else
        for (size_t i = 0; i < n; i++)
            __builtin_prefetch(t + bucket[i], 0, 3);
}

static inline size_t round_lanes(size_t n) { return (n + LANES - 1) / LANES * LANES; }

/* ------------------------------------------------------------ life cycle */

static int check_shape(int rows, size_t cols)
{
    if (rows < 1 || rows > RB_CS_MAX_ROWS)
        return rb_fail(RB_ERR_ARG, "count sketch rows %d outside 1..%d", rows, RB_CS_MAX_ROWS);
    if (cols < 1 || cols > RB_CS_MAX_COLS)
        return rb_fail(RB_ERR_ARG, "count sketch width %zu outside 1..%zu", cols, RB_CS_MAX_COLS);
    return RB_OK;
}

int rb_cs_init(rb_countsketch *cs, int rows, size_t cols, uint64_t seed)
{
    memset(cs, 0, sizeof *cs);
    RB_TRY(check_shape(rows, cols));
    cs->rows = rows;
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
    RB_TRY(rb_reserve(&buf, &cs->cap_bytes, (size_t)cs->rows * cols, sizeof(float)));
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

/* Hashes of the next n elements in every sketch row, with their counters
 * requested from memory before any is used (more misses in flight). */
static void chunk_hashes(const rb_countsketch *cs, lane_walk *w, size_t n,
                         uint32_t bucket[][CHUNK], uint32_t sgn[][CHUNK], int write)
{
    for (int j = 0; j < cs->rows; j++) {
        lanes_hash(&w[j], cs->cols, round_lanes(n), bucket[j], sgn[j]);
        prefetch_counters(cs->table + (size_t)j * cs->cols, bucket[j], n, write);
    }
}

static void insert_walk(rb_countsketch *cs, uint64_t x0, const float *v, size_t len)
{
    lane_walk w[RB_CS_MAX_ROWS];
    uint32_t bucket[RB_CS_MAX_ROWS][CHUNK], sgn[RB_CS_MAX_ROWS][CHUNK];
    for (int j = 0; j < cs->rows; j++)
        lanes_start(&w[j], &cs->co[j], x0);
    for (size_t lo = 0; lo < len; lo += CHUNK) {
        size_t n = len - lo < CHUNK ? len - lo : CHUNK;
        chunk_hashes(cs, w, n, bucket, sgn, 1);
        for (int j = 0; j < cs->rows; j++) {
            float *t = cs->table + (size_t)j * cs->cols;
            const uint32_t *b = bucket[j], *s = sgn[j];
            for (size_t i = 0; i < n; i++)
                t[b[i]] += flip(v[lo + i], s[i]);
        }
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

void rb_cs_insert_pairs(rb_countsketch *cs, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++)
        rb_cs_insert_run(cs, p[i].idx, &p[i].val, 1);
}

/* ------------------------------------------------------------ query */

/* Medians by compare-exchange networks run over whole arrays: each pass
 * is a branch-free element-wise min/max the compiler vectorises (scalar
 * code with one comparison for both outputs became branches). */
static void cswap(float *restrict a, float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = a[i], y = b[i];
        a[i] = y < x ? y : x;
        b[i] = x < y ? y : x;
    }
}

/* Leaves the median of e[0..r)[i] in e[r/2][i], for r = 3 or 5. */
static void median_network(float est[][CHUNK], int r, size_t n)
{
    if (r == 3) {
        cswap(est[0], est[1], n); cswap(est[1], est[2], n); cswap(est[0], est[1], n);
        return;
    }
    /* Enough of a sorting network for 5 to place the middle element. */
    static const unsigned char net[9][2] = {
        {0, 1}, {3, 4}, {2, 4}, {2, 3}, {0, 3}, {0, 2}, {1, 4}, {1, 3}, {1, 2}};
    for (int k = 0; k < 9; k++)
        cswap(est[net[k][0]], est[net[k][1]], n);
}

/* est[j][i] = sign * counter of element x0 + i in row j, direct hashes. */
static void estimates_direct(const rb_countsketch *cs, uint64_t x0, float *const *est, size_t n)
{
    for (int j = 0; j < cs->rows; j++) {
        const float *t = cs->table + (size_t)j * cs->cols;
        const rb_cs_coeffs *co = &cs->co[j];
        for (size_t i = 0; i < n; i++) {
            uint64_t x = mod_p(x0 + i);
            est[j][i] = apply_sign(t[bucket_of(bucket_hash(co, x), cs->cols)], sign_poly(co, x));
        }
    }
}

/* e[i] = counter b[i] with sign s[i]: a gather, which AVX2 and AVX-512
 * do in one instruction per vector (the clones pick at run time). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void gather_signed(const float *t, const uint32_t *restrict b, const uint32_t *restrict s,
                          float *restrict e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        e[i] = flip(t[b[i]], s[i]);
}

/* The same for the next n elements of the walks w. */
static void estimates_walk(const rb_countsketch *cs, lane_walk *w, float *const *est, size_t n)
{
    uint32_t bucket[RB_CS_MAX_ROWS][CHUNK], sgn[RB_CS_MAX_ROWS][CHUNK];
    chunk_hashes(cs, w, n, bucket, sgn, 0);
    for (int j = 0; j < cs->rows; j++)
        gather_signed(cs->table + (size_t)j * cs->cols, bucket[j], sgn[j], est[j], n);
}

void rb_cs_query_run(const rb_countsketch *cs, uint64_t x0, float *out, size_t len)
{
    const int r = cs->rows, walk = len >= DIRECT_MAX;
    lane_walk w[RB_CS_MAX_ROWS];
    float est[RB_CS_MAX_ROWS][CHUNK];
    if (walk)
        for (int j = 0; j < r; j++)
            lanes_start(&w[j], &cs->co[j], x0);
    for (size_t lo = 0; lo < len; lo += CHUNK) {
        size_t n = len - lo < CHUNK ? len - lo : CHUNK;
        float *dst[RB_CS_MAX_ROWS] = {0};   /* rows >= r unused (GCC -O3 cannot tell) */
        for (int j = 0; j < r; j++)
            dst[j] = r == 1 ? out + lo : est[j];   /* one row: no median, no copy */
        if (walk)
            estimates_walk(cs, w, dst, n);
        else
            estimates_direct(cs, x0 + lo, dst, n);
        if (r > 1) {
            median_network(est, r, n);
            memcpy(out + lo, est[r / 2], n * sizeof(float));
        }
    }
}

float rb_cs_query(const rb_countsketch *cs, uint64_t x)
{
    float v;
    rb_cs_query_run(cs, x, &v, 1);
    return v;
}

/* ------------------------------------------------------------ scattered indices */

/* v * x mod p for v < p and x < 2^32 without a 128-bit product: v's 32-bit
 * halves times x, and 2^61 = 1 mod p folds the high part back, so the
 * lanes of hash_at vectorise.  Same value as mul_p. */
static inline uint64_t mul_p32(uint64_t v, uint32_t x)
{
    uint64_t lo = (uint64_t)(uint32_t)v * x;            /* < 2^64 */
    uint64_t hi = (uint64_t)(uint32_t)(v >> 32) * x;    /* < 2^61 */
    /* hi 2^32 = (hi >> 29) 2^61 + (hi mod 2^29) 2^32 */
    uint64_t s = (lo & P) + (lo >> 61) + (hi >> 29) + ((hi & ((1ULL << 29) - 1)) << 32);
    return mod_p(s);                                    /* s < 2^63 */
}

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
            gather_signed(cs->table + (size_t)j * cs->cols, bucket, sgn,
                          r == 1 ? out + lo : est[j], m);
        }
        if (r > 1) {
            median_network(est, r, m);
            memcpy(out + lo, est[r / 2], m * sizeof(float));
        }
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rb_cs_l2sq_estimate(const rb_countsketch *cs)
{
    double per_row[RB_CS_MAX_ROWS];
    for (int j = 0; j < cs->rows; j++) {
        const float *t = cs->table + (size_t)j * cs->cols;
        double s = 0.0;
        for (size_t i = 0; i < cs->cols; i++)
            s += (double)t[i] * t[i];
        per_row[j] = s;
    }
    qsort(per_row, (size_t)cs->rows, sizeof per_row[0], cmp_double);
    return per_row[cs->rows / 2];
}

size_t rb_cs_heavy_hitters(const rb_countsketch *cs, uint64_t x0, size_t n,
                           float threshold, rb_pair *out, size_t max_out)
{
    float est[CHUNK];
    size_t found = 0;
    for (size_t lo = 0; lo < n; lo += CHUNK) {
        size_t len = n - lo < CHUNK ? n - lo : CHUNK;
        rb_cs_query_run(cs, x0 + lo, est, len);
        for (size_t i = 0; i < len; i++) {
            if (fabsf(est[i]) < threshold)
                continue;
            if (found < max_out)
                out[found] = (rb_pair){(uint32_t)(x0 + lo + i), est[i]};
            found++;
        }
    }
    return found;
}
