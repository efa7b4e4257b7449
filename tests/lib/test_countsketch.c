/* Unit tests of the count sketch (src/countsketch.c).  Single process; every
 * statistical check uses fixed seeds and states its bound. */
#include "reducer_sketch.h"
#include "reducer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static uint64_t rng_state = 12345;
static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double next_unit(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }
/* Integers in [-m, m]: exact in float, and so are their sums below 2^24. */
static float next_int(int m) { return (float)((int)(next_u64() % (uint64_t)(2 * m + 1)) - m); }

static int tables_equal(const rb_countsketch *a, const rb_countsketch *b)
{
    return rb_cs_size(a) == rb_cs_size(b)
        && memcmp(a->table, b->table, rb_cs_size(a) * sizeof(float)) == 0;
}

/* Starts of runs: the index space's start, 32-bit indices, around the
 * hash modulus p = 2^61 - 1 (x0 + i crosses p: the walk must wrap to
 * 0, 1, ... as direct evaluation of x mod p does) and far above it. */
static const uint64_t run_starts[] = {0, 1, 1000003, (1ULL << 32) - 3000, RB_CS_PRIME - 700,
                                      RB_CS_PRIME - 1, RB_CS_PRIME + 5, 1ULL << 63};
/* Run lengths around the 16 lanes and the 512-element chunk. */
static const size_t run_lens[] = {32, 33, 47, 511, 512, 513, 1500};

/* The stepped hashes (the lane walks of runs >= 32 elements) are the
 * direct ones, read off element by element: in a one-row sketch whose
 * counter k holds k + 1, the walk's estimate of element x is +-(h(x) + 1)
 * with the sign s(x).  For the coefficients of sketch rows 0..4 of several
 * seeds, widths from 1 to 4M (buckets < 2^24: the floats are exact), the
 * run starts and lengths above, and every instruction set this CPU has. */
static void test_walk_hashes_are_direct(void)
{
    const size_t widths[] = {1, 2, 3, 17, 997, 65536, 165464, 1000003, 4194301};
    enum { MAX_LEN = 1500 };
    static float q[MAX_LEN];
    int best = -1;
    size_t checked = 0, bad = 0;
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        rb_countsketch cs;
        CHECK(rb_cs_init(&cs, 1, widths[wi], 0) == RB_OK, "init");
        for (size_t k = 0; k < widths[wi]; k++)
            cs.table[k] = (float)(k + 1);
        best = cs.isa;
        for (uint64_t seed = 11; seed < 14; seed++)
            for (int j = 0; j < RB_CS_MAX_ROWS; j++) {
                rb_cs_row_coeffs(seed * 0x9e3779b97f4a7c15ULL + wi, j, &cs.co[0]);
                for (int isa = RB_CS_ISA_PORTABLE; isa <= best; isa++) {
                    cs.isa = isa;
                    for (size_t si = 0; si < sizeof run_starts / sizeof run_starts[0]; si++) {
                        uint64_t x0 = run_starts[si];
                        size_t len = run_lens[(si + (size_t)j + seed) % (sizeof run_lens / sizeof run_lens[0])];
                        rb_cs_query_run(&cs, x0, q, len);
                        for (size_t i = 0; i < len; i++) {
                            uint32_t b = (uint32_t)fabsf(q[i]) - 1;
                            int sign = signbit(q[i]) ? -1 : 1;
                            bad += b != rb_cs_bucket(&cs, 0, x0 + i) || sign != rb_cs_sign(&cs, 0, x0 + i);
                        }
                        checked += len;
                    }
                }
            }
        rb_cs_free(&cs);
    }
    CHECK(bad == 0, "stepped hashes: %zu of %zu differ from direct evaluation", bad, checked);
    fprintf(stderr, "stepped hashes == direct: %zu elements, instruction sets 0..%d\n", checked, best);
}

/* Inserting a run (walks) adds the same floats in the same order to every
 * counter as inserting its elements one by one (direct hashes), so the
 * tables are bitwise equal for any values, and so are the estimates, NaN,
 * infinity and -0 included; on every instruction set. */
static void test_walk_matches_direct(void)
{
    const size_t widths[] = {5, 997, 165464};
    enum { MAX_LEN = 1500 };
    static float v[MAX_LEN], q[MAX_LEN];
    for (int rows = 1; rows <= 5; rows += 2)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            for (size_t si = 0; si < sizeof run_starts / sizeof run_starts[0]; si++) {
                uint64_t x0 = run_starts[si];
                size_t len = run_lens[(si + wi) % (sizeof run_lens / sizeof run_lens[0])];
                rb_countsketch run, one;
                CHECK(rb_cs_init(&run, rows, widths[wi], 7 + si) == RB_OK, "init");
                CHECK(rb_cs_init(&one, rows, widths[wi], 7 + si) == RB_OK, "init");
                for (size_t i = 0; i < len; i++)
                    v[i] = next_unit() < 0.1 ? 0.0f : (float)(next_unit() - 0.5);
                for (size_t i = 0; i < len; i++)
                    rb_cs_insert(&one, x0 + i, v[i]);
                for (int isa = RB_CS_ISA_PORTABLE; isa <= one.isa; isa++) {
                    run.isa = isa;
                    rb_cs_zero(&run);
                    rb_cs_insert_run(&run, x0, v, len);
                    CHECK(tables_equal(&run, &one), "walk insert != direct insert (rows %d, c %zu, x0 %llu, isa %d)",
                          rows, widths[wi], (unsigned long long)x0, isa);
                }
                for (size_t k = 0; k < rb_cs_size(&run); k += 7)   /* what NaN / Inf gradients leave */
                    run.table[k] = k % 3 == 0 ? NAN : k % 3 == 1 ? -INFINITY : -0.0f;
                for (int isa = RB_CS_ISA_PORTABLE; isa <= one.isa; isa++) {
                    run.isa = isa;
                    rb_cs_query_run(&run, x0, q, len);
                    size_t bad = 0;
                    for (size_t i = 0; i < len; i++)
                        bad += memcmp(&q[i], &(float){rb_cs_query(&run, x0 + i)}, sizeof(float)) != 0;
                    CHECK(bad == 0, "walk query != direct query at %zu of %zu elements (rows %d, c %zu, x0 %llu, isa %d)",
                          bad, len, rows, widths[wi], (unsigned long long)x0, isa);
                }
                rb_cs_free(&run);
                rb_cs_free(&one);
            }
}

/* Runs read their values and write their estimates only inside the run:
 * with the run ending at a page that cannot be touched, for every length
 * that ends inside a group of lanes, on every instruction set (a vector
 * load or store past the end would fault here). */
static void test_walk_stays_in_run(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED && mprotect(map + page, page, PROT_NONE) == 0, "guard page");
    if (map == MAP_FAILED)
        return;
    float *end = (float *)(map + page);
    for (int rows = 1; rows <= 5; rows += 2) {
        rb_countsketch cs;
        CHECK(rb_cs_init(&cs, rows, 1000, 5) == RB_OK, "init");
        for (int isa = cs.isa; isa >= RB_CS_ISA_PORTABLE; isa--) {
            cs.isa = isa;
            for (size_t len = 32; len <= 80; len++) {
                float *v = end - len;
                for (size_t i = 0; i < len; i++)
                    v[i] = (float)i;
                rb_cs_insert_run(&cs, 3, v, len);
                rb_cs_query_run(&cs, 3, v, len);
            }
        }
        rb_cs_free(&cs);
    }
    munmap(map, 2 * page);
}

/* Scattered elements hashed together (rb_cs_insert_at / rb_cs_query_at,
 * 32-bit products) hash exactly like direct evaluation (128-bit products),
 * over the whole 32-bit index range and its ends, with repeated indices,
 * for counts that end inside a lane group and inside a chunk. */
static void test_scattered_matches_direct(void)
{
    enum { N = 1001 };
    static uint32_t idx[N];
    static float v[N], q[N];
    const size_t widths[] = {997, 1000003};
    for (int rows = 1; rows <= 5; rows += 2)
        for (int w = 0; w < 2; w++)
            for (uint64_t seed = 1; seed <= 6; seed++) {
                rb_countsketch at, one;
                CHECK(rb_cs_init(&at, rows, widths[w], seed * 7919) == RB_OK, "init");
                CHECK(rb_cs_init(&one, rows, widths[w], seed * 7919) == RB_OK, "init");
                for (size_t i = 0; i < N; i++) {
                    uint32_t ends[] = {0, 1, UINT32_MAX, UINT32_MAX - 1, 1U << 31};
                    idx[i] = i < 5 ? ends[i] : i % 10 == 9 ? idx[i / 2] : (uint32_t)next_u64();
                    v[i] = (float)(next_unit() - 0.5);
                }
                rb_cs_insert_at(&at, idx, v, N);
                for (size_t i = 0; i < N; i++)
                    rb_cs_insert(&one, idx[i], v[i]);
                CHECK(tables_equal(&at, &one), "scattered insert != direct insert (rows %d, c %zu, seed %llu)",
                      rows, widths[w], (unsigned long long)seed);
                rb_cs_query_at(&at, idx, q, N);
                size_t bad = 0;
                for (size_t i = 0; i < N; i++)
                    bad += memcmp(&q[i], &(float){rb_cs_query(&at, idx[i])}, sizeof(float)) != 0;
                CHECK(bad == 0, "scattered query != direct query at %zu elements", bad);
                rb_cs_free(&at);
                rb_cs_free(&one);
            }
}

/* sketch(a) + sketch(b) == sketch(a + b), bitwise: integer values keep
 * every float sum exact whatever the order. */
static void test_linearity(void)
{
    const size_t n = 5000;
    float *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *ab = calloc(n, sizeof *ab);
    for (size_t i = 0; i < n; i++) {
        if (next_unit() < 0.3) a[i] = next_int(1000);
        if (next_unit() < 0.3) b[i] = next_int(1000);
        ab[i] = a[i] + b[i];
    }
    for (int rows = 1; rows <= 5; rows += 2) {
        rb_countsketch sa, sb, sab;
        rb_cs_init(&sa, rows, 311, 99);
        rb_cs_init(&sb, rows, 311, 99);
        rb_cs_init(&sab, rows, 311, 99);
        rb_cs_insert_run(&sa, 0, a, n);
        for (size_t i = 0; i < n; i++)        /* b element by element */
            if (b[i] != 0.0f)
                rb_cs_insert(&sb, i, b[i]);
        rb_cs_insert_run(&sab, 0, ab, n);
        CHECK(rb_cs_merge(&sa, &sb) == RB_OK, "merge");
        CHECK(tables_equal(&sa, &sab), "sketch(a)+sketch(b) != sketch(a+b), rows %d", rows);
        rb_countsketch other;
        rb_cs_init(&other, rows, 311, 100);
        CHECK(rb_cs_merge(&sa, &other) == RB_ERR_ARG, "merge across seeds accepted");
        rb_cs_free(&other);
        rb_cs_init(&other, rows, 312, 99);
        CHECK(rb_cs_merge(&sa, &other) == RB_ERR_ARG, "merge across widths accepted");
        rb_cs_free(&other);
        rb_cs_free(&sa);
        rb_cs_free(&sb);
        rb_cs_free(&sab);
    }
    free(a);
    free(b);
    free(ab);
}

/* Bucket counts over 2^20 consecutive indices: each of 64 buckets expects
 * 16384 +- 128 (binomial sd); bound 6 sd.  Signs: +1 fraction 1/2 +- 6 sd. */
static void test_hash_balance(void)
{
    rb_countsketch cs;
    rb_cs_init(&cs, 5, 64, 2024);
    const size_t n = 1u << 20;
    for (int j = 0; j < 5; j++) {
        size_t count[64] = {0}, plus = 0;
        for (size_t x = 0; x < n; x++) {
            uint32_t b = rb_cs_bucket(&cs, j, x);
            CHECK(b < 64, "bucket %u out of range", b);
            if (b < 64) count[b]++;
            plus += rb_cs_sign(&cs, j, x) > 0;
        }
        for (int b = 0; b < 64; b++)
            CHECK(fabs((double)count[b] - 16384.0) < 6 * 128.0, "row %d bucket %d count %zu", j, b, count[b]);
        CHECK(fabs((double)plus - n / 2.0) < 6 * 512.0, "row %d: %zu of %zu signs +1", j, plus, n);
    }
    rb_cs_free(&cs);
}

/* 4-wise independence of the signs, in the form the analysis uses: over
 * seeds, E[s(x1)s(x2)s(x3)s(x4)] = 0 and E[s(x1)s(x2)] = 0 for distinct x.
 * 20000 seeds: sd 1/sqrt(20000) = 0.0071; bound 0.04 (5.6 sd).  Adjacent
 * indices are the case a weak family (linear signs) gets wrong. */
static void test_sign_independence(void)
{
    const uint64_t quads[][4] = {{0, 1, 2, 3}, {10, 11, 12, 13}, {5, 1029, 2053, 3077}, {7, 8, 100000, 4000000000ULL}};
    const int seeds = 20000;
    for (size_t q = 0; q < sizeof quads / sizeof quads[0]; q++) {
        double sum4 = 0, sum2 = 0;
        for (int s = 0; s < seeds; s++) {
            rb_cs_coeffs co;
            rb_countsketch cs = {.rows = 1, .cols = 1};
            rb_cs_row_coeffs((uint64_t)s * 7919 + 1, 0, &co);
            cs.co[0] = co;
            int p = 1;
            for (int i = 0; i < 4; i++)
                p *= rb_cs_sign(&cs, 0, quads[q][i]);
            sum4 += p;
            sum2 += rb_cs_sign(&cs, 0, quads[q][0]) * rb_cs_sign(&cs, 0, quads[q][1]);
        }
        CHECK(fabs(sum4 / seeds) < 0.04, "quad %zu: E[s1 s2 s3 s4] = %.4f", q, sum4 / seeds);
        CHECK(fabs(sum2 / seeds) < 0.04, "pair %zu: E[s1 s2] = %.4f", q, sum2 / seeds);
    }
}

/* Put chosen per-row estimates for element x into the table. */
static void plant(rb_countsketch *cs, uint64_t x, const float *vals)
{
    rb_cs_zero(cs);
    for (int j = 0; j < cs->rows; j++)
        cs->table[(size_t)j * cs->cols + rb_cs_bucket(cs, j, x)] = (float)rb_cs_sign(cs, j, x) * vals[j];
}

/* The query is the median over rows: every order of 5 (and 3) values. */
static void test_median(void)
{
    rb_countsketch cs5, cs3;
    rb_cs_init(&cs5, 5, 1u << 16, 5);
    rb_cs_init(&cs3, 3, 1u << 16, 5);
    int perm[5] = {0, 1, 2, 3, 4}, bad = 0;
    for (int a = 0; a < 5; a++) for (int b = 0; b < 5; b++) for (int c = 0; c < 5; c++)
    for (int d = 0; d < 5; d++) for (int e = 0; e < 5; e++) {
        int p[5] = {a, b, c, d, e}, seen = 0;
        for (int i = 0; i < 5; i++) seen |= 1 << p[i];
        if (seen != 31) continue;
        float vals[5];
        for (int i = 0; i < 5; i++) vals[i] = (float)(p[i] * 3 - 5);
        plant(&cs5, 777, vals);
        bad += rb_cs_query(&cs5, 777) != (float)(2 * 3 - 5);
        if (p[0] < 3 && p[1] < 3 && p[2] < 3) {
            plant(&cs3, 777, vals);
            bad += rb_cs_query(&cs3, 777) != (float)(1 * 3 - 5);
        }
    }
    (void)perm;
    CHECK(bad == 0, "%d median queries wrong", bad);
    rb_cs_free(&cs5);
    rb_cs_free(&cs3);
}

/* An isolated heavy value among k small ones, c = 4k, r = 5: its estimate is
 * exact unless >= 3 of its 5 rows hold a colliding element; a row collides
 * with probability 1 - (1 - 1/c)^k ~ 1 - e^-1/4 = 0.221, so P(>= 3 of 5) =
 * 0.074.  Bound: the decode error exceeds 1% of ||x||_2 in at most 12% of
 * 400 trials (0.074 + 4.5 binomial sd).  Observed rate printed. */
static void test_heavy_value(void)
{
    const size_t n = 20000, k = 500, c = 4 * k;
    const int trials = 400;
    float *x = calloc(n, sizeof *x);
    int over = 0;
    for (int t = 0; t < trials; t++) {
        memset(x, 0, n * sizeof *x);
        double norm2 = 0;
        for (size_t i = 0; i < k; i++) {
            size_t at = next_u64() % n;
            x[at] = (float)(next_unit() * 2 - 1);
        }
        size_t heavy = next_u64() % n;
        x[heavy] = 20.0f;
        for (size_t i = 0; i < n; i++) norm2 += (double)x[i] * x[i];
        rb_countsketch cs;
        rb_cs_init(&cs, 5, c, 1000 + (uint64_t)t);
        rb_cs_insert_run(&cs, 0, x, n);
        double err = fabs(rb_cs_query(&cs, heavy) - 20.0);
        over += err > 0.01 * sqrt(norm2);
        rb_cs_free(&cs);
    }
    printf("heavy value, c = 4 nnz, r = 5: error > 1%% of ||x|| in %d of %d trials (bound 48)\n",
           over, trials);
    CHECK(over <= 48, "heavy value error > 1%% of ||x|| in %d of %d trials", over, trials);
    free(x);
}

/* Unbiasedness: per row, est_i - x_i = sum_{j != i, h(j) = h(i)} s_i s_j x_j
 * has mean 0 and variance (||x||^2 - x_i^2)/c (2-wise buckets, 2-wise signs);
 * the median of r symmetric errors is symmetric too.  Mean over T seeds must
 * lie within 4 sd = 4 sqrt((||x||^2 - x_i^2)/(c T)) of x_i.  Values in
 * [0.5, 1] so a biased sign hash would miss by ~ sum(x)/c = 6 sd. */
static void test_unbiased(void)
{
    const size_t k = 256, c = 64;
    const int seeds = 3000;
    float x[256];
    double norm2 = 0;
    for (size_t i = 0; i < k; i++) {
        x[i] = (float)(0.5 + 0.5 * next_unit());
        norm2 += (double)x[i] * x[i];
    }
    const size_t probes[] = {0, 17, 100, 255};
    for (int rows = 1; rows <= 5; rows += 4) {
        double mean[4] = {0};
        for (int s = 0; s < seeds; s++) {
            rb_countsketch cs;
            rb_cs_init(&cs, rows, c, 50000 + (uint64_t)s);
            rb_cs_insert_run(&cs, 0, x, k);
            for (int p = 0; p < 4; p++)
                mean[p] += rb_cs_query(&cs, probes[p]) / seeds;
            rb_cs_free(&cs);
        }
        for (int p = 0; p < 4; p++) {
            double xi = x[probes[p]];
            double bound = 4 * sqrt((norm2 - xi * xi) / ((double)c * seeds));
            CHECK(fabs(mean[p] - xi) <= bound, "rows %d element %zu: mean estimate %.4f, true %.4f, bound %.4f",
                  rows, probes[p], mean[p], xi, bound);
        }
    }
}

static void test_shapes(void)
{
    rb_countsketch cs;
    CHECK(rb_cs_init(&cs, 0, 10, 1) == RB_ERR_ARG, "rows 0 accepted");
    CHECK(rb_cs_init(&cs, 6, 10, 1) == RB_ERR_ARG, "rows 6 accepted");
    CHECK(rb_cs_init(&cs, 3, 0, 1) == RB_ERR_ARG, "width 0 accepted");
    /* Impossibly large: refused before calloc, the amount named. */
    CHECK(rb_cs_init(&cs, 1, (size_t)1000000000000ULL, 1) == RB_ERR_NOMEM, "1e12 counters accepted");
    CHECK(strstr(rb_last_error(), "sketch of 1000000000000 counters needs 3.6 TiB") != NULL,
          "1e12 counters: detail '%s'", rb_last_error());
    CHECK(rb_cs_check_size(5, 1e300) == RB_ERR_NOMEM, "an overflowing size accepted");
    CHECK(rb_cs_init(&cs, 3, 1, 1) == RB_OK, "width 1 refused");
    rb_cs_insert(&cs, 5, 2.0f);
    CHECK(rb_cs_query(&cs, 5) == 2.0f, "width 1 single element");
    CHECK(rb_cs_set_cols(&cs, 1000) == RB_OK, "grow");
    CHECK(rb_cs_query(&cs, 5) == 0.0f, "grown table not zero");
    float *kept = cs.table;
    CHECK(rb_cs_set_cols(&cs, 10) == RB_OK && cs.table == kept, "shrink reallocated");
    rb_cs_insert_run(&cs, 0, NULL, 0);
    rb_cs_free(&cs);
}

int main(void)
{
    test_shapes();
    test_walk_hashes_are_direct();
    test_walk_matches_direct();
    test_walk_stays_in_run();
    test_scattered_matches_direct();
    test_linearity();
    test_hash_balance();
    test_sign_independence();
    test_median();
    test_heavy_value();
    test_unbiased();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
