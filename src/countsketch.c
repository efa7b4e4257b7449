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

static inline uint64_t add_p(uint64_t x, uint64_t y)   /* x, y < p */
{
    uint64_t s = x + y;
    return s >= P ? s - P : s;
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

/* Flip the sign of v when the polynomial value is odd. */
static inline float apply_sign(float v, uint64_t poly)
{
    union { float f; uint32_t u; } b = {v};
    b.u ^= (uint32_t)(poly & 1u) << 31;
    return b.f;
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

static void walk_start(hash_walk *w, const rb_cs_coeffs *co, uint64_t x0)
{
    uint64_t x = mod_p(x0);
    w->h = bucket_hash(co, x);
    w->a = co->a;
    uint64_t p0 = sign_poly(co, x), p1 = sign_poly(co, add_p(x, 1));
    uint64_t p2 = sign_poly(co, add_p(x, 2)), p3 = sign_poly(co, add_p(x, 3));
    w->d0 = p0;
    w->d1 = sub_p(p1, p0);
    w->d2 = sub_p(add_p(p2, p0), add_p(p1, p1));                 /* p2 - 2p1 + p0 */
    uint64_t three_p2 = add_p(p2, add_p(p2, p2)), three_p1 = add_p(p1, add_p(p1, p1));
    w->d3 = sub_p(add_p(p3, three_p1), add_p(three_p2, p0));     /* p3 - 3p2 + 3p1 - p0 */
}

static inline void walk_step(hash_walk *w)
{
    w->h = add_p(w->h, w->a);
    w->d0 = add_p(w->d0, w->d1);
    w->d1 = add_p(w->d1, w->d2);
    w->d2 = add_p(w->d2, w->d3);
}

/* Below this run length direct evaluation is cheaper than the walk set-up. */
enum { WALK_MIN_RUN = 8, QUERY_CHUNK = 256 };

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

static void insert_row_walk(rb_countsketch *cs, int j, uint64_t x0, const float *v, size_t len)
{
    float *t = cs->table + (size_t)j * cs->cols;
    const size_t cols = cs->cols;
    hash_walk w;
    walk_start(&w, &cs->co[j], x0);
    for (size_t i = 0; i < len; i++) {
        t[bucket_of(w.h, cols)] += apply_sign(v[i], w.d0);
        walk_step(&w);
    }
}

void rb_cs_insert_run(rb_countsketch *cs, uint64_t x0, const float *v, size_t len)
{
    for (int j = 0; j < cs->rows; j++) {
        if (len < WALK_MIN_RUN)
            insert_row_direct(cs, j, x0, v, len);
        else
            insert_row_walk(cs, j, x0, v, len);
    }
}

void rb_cs_insert_pairs(rb_countsketch *cs, const rb_pair *p, size_t k)
{
    for (size_t i = 0; i < k; i++)
        rb_cs_insert_run(cs, p[i].idx, &p[i].val, 1);
}

/* ------------------------------------------------------------ query */

static inline float median3(float a, float b, float c)
{
    return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c));
}

#define CSWAP(x, y) do { float lo_ = fminf(x, y), hi_ = fmaxf(x, y); x = lo_; y = hi_; } while (0)
static inline float median5(float a, float b, float c, float d, float e)
{
    /* Enough of a sorting network to place the middle element. */
    CSWAP(a, b); CSWAP(d, e); CSWAP(c, e); CSWAP(c, d);
    CSWAP(a, d); CSWAP(a, c); CSWAP(b, e); CSWAP(b, d); CSWAP(b, c);
    return c;
}
#undef CSWAP

/* est[i] = sign * counter of element x0 + i in row j, i < len. */
static void row_estimates(const rb_countsketch *cs, int j, uint64_t x0, float *est, size_t len)
{
    const float *t = cs->table + (size_t)j * cs->cols;
    const size_t cols = cs->cols;
    if (len < WALK_MIN_RUN) {
        const rb_cs_coeffs *co = &cs->co[j];
        for (size_t i = 0; i < len; i++) {
            uint64_t x = mod_p(x0 + i);
            est[i] = apply_sign(t[bucket_of(bucket_hash(co, x), cols)], sign_poly(co, x));
        }
        return;
    }
    hash_walk w;
    walk_start(&w, &cs->co[j], x0);
    for (size_t i = 0; i < len; i++) {
        est[i] = apply_sign(t[bucket_of(w.h, cols)], w.d0);
        walk_step(&w);
    }
}

void rb_cs_query_run(const rb_countsketch *cs, uint64_t x0, float *out, size_t len)
{
    if (cs->rows == 1) {
        row_estimates(cs, 0, x0, out, len);
        return;
    }
    float est[RB_CS_MAX_ROWS][QUERY_CHUNK];
    for (size_t lo = 0; lo < len; lo += QUERY_CHUNK) {
        size_t n = len - lo < QUERY_CHUNK ? len - lo : QUERY_CHUNK;
        for (int j = 0; j < cs->rows; j++)
            row_estimates(cs, j, x0 + lo, est[j], n);
        if (cs->rows == 3) {
            for (size_t i = 0; i < n; i++)
                out[lo + i] = median3(est[0][i], est[1][i], est[2][i]);
        } else {
            for (size_t i = 0; i < n; i++)
                out[lo + i] = median5(est[0][i], est[1][i], est[2][i], est[3][i], est[4][i]);
        }
    }
}

float rb_cs_query(const rb_countsketch *cs, uint64_t x)
{
    float v;
    rb_cs_query_run(cs, x, &v, 1);
    return v;
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
    float est[QUERY_CHUNK];
    size_t found = 0;
    for (size_t lo = 0; lo < n; lo += QUERY_CHUNK) {
        size_t len = n - lo < QUERY_CHUNK ? n - lo : QUERY_CHUNK;
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
