/* Unit tests of the CUDA kernels (src/cuda/rb_kernels.cu) against the CPU
 * code they must match: src/sparse.c (scan, pack, scatter, bitmaps) and
 * src/countsketch.c (hashes bit for bit; decode to the same floats; insert
 * to the same floats up to the order of the atomic additions).  Exit 77 (skip) with the reason when no GPU is usable.
 * `gpu_kernels --probe` only checks for a GPU (0 = present, 77 = none). */
#include "reducer_sketch.h"
#include "reducer_cuda.h"
#include "reducer_sparse.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { fails++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)
#define CU(call) do { cudaError_t e_ = (cudaError_t)(call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "ERROR %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    exit(99); } } while (0)

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static void fill(float *x, size_t n, double density)
{
    for (size_t i = 0; i < n; i++)
        x[i] = unif() < density ? (float)(unif() * 2.0 - 1.0) : 0.0f;
}

static void *dmalloc(size_t bytes)
{
    void *p = NULL;
    CU(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}
static void *to_dev(const void *h, size_t bytes)
{
    void *d = dmalloc(bytes);
    if (bytes)
        CU(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}
static void to_host(void *h, const void *d, size_t bytes)
{
    if (bytes)
        CU(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 2047, 2048, 2049, 100003, (1u << 20) + 7};
static const double densities[] = {0.0, 0.01, 0.5, 1.0};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NDENS (sizeof densities / sizeof densities[0])

static void test_scan_pack_scatter(void)
{
    for (size_t si = 0; si < NSIZES; si++)
        for (size_t di = 0; di < NDENS; di++) {
            size_t n = sizes[si];
            float *x = malloc((n + 1) * sizeof *x);
            fill(x, n, densities[di]);
            size_t k = rb_count_nonzero(x, n);
            rb_pair *ref = malloc((k + 1) * sizeof *ref), *got = malloc((k + 1) * sizeof *got);
            rb_pack_nonzero(x, n, 5, ref, k + 1);
            float *dx = to_dev(x, n * sizeof *x);
            rb_pair *dp = dmalloc((k + 1) * sizeof *dp);
            unsigned long long *dc = dmalloc(sizeof *dc), hc = 0, hc2 = 0;
            void *scratch = dmalloc(rbk_pack_scratch_bytes(n));
            CU(rbk_count_nonzero(dx, n, dc, 0));
            to_host(&hc, dc, sizeof hc);
            CHECK(hc == k, "count_nonzero n=%zu d=%g: %llu != %zu", n, densities[di], hc, k);
            CU(rbk_pack_nonzero(dx, n, 5, dp, dc, scratch, 0));
            to_host(&hc2, dc, sizeof hc2);
            to_host(got, dp, k * sizeof *got);
            CHECK(hc2 == k && memcmp(got, ref, k * sizeof *got) == 0,
                  "pack_nonzero n=%zu d=%g: %llu pairs, differ from CPU", n, densities[di], hc2);
            /* scatter back onto y = x: add doubles, set restores */
            float *y = malloc((n + 1) * sizeof *y);
            memcpy(y, x, n * sizeof *y);
            rb_scatter_add(y, 5, ref, k);
            CU(rbk_scatter_add(dx, 5, dp, k, 0));
            float *gy = malloc((n + 1) * sizeof *gy);
            to_host(gy, dx, n * sizeof *gy);
            CHECK(memcmp(gy, y, n * sizeof *y) == 0, "scatter_add n=%zu differs", n);
            CU(rbk_scatter_set(dx, 5, dp, k, 0));
            to_host(gy, dx, n * sizeof *gy);
            CHECK(memcmp(gy, x, n * sizeof *x) == 0, "scatter_set n=%zu differs", n);
            cudaFree(dx); cudaFree(dp); cudaFree(dc); cudaFree(scratch);
            free(x); free(y); free(gy); free(ref); free(got);
        }
}

static void test_bitmaps(void)
{
    static const size_t groups[] = {1, 3, 32, 33, 64, 1000};
    for (size_t si = 0; si < NSIZES; si++)
        for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
            size_t n = sizes[si], g = groups[gi];
            size_t nbits = (n + g - 1) / g, words = rb_bitmap_words(nbits);
            float *x = malloc((n + 1) * sizeof *x);
            fill(x, n, gi % 2 ? 0.002 : 0.3);
            uint64_t *ref = calloc(words + 1, 8), *got = calloc(words + 1, 8);
            rb_bitmap_of_groups(x, n, g, ref);
            float *dx = to_dev(x, n * sizeof *x);
            uint64_t *dbm = dmalloc((words + 1) * 8);
            CU(rbk_bitmap_of_groups(dx, n, g, dbm, 0));
            to_host(got, dbm, words * 8);
            CHECK(memcmp(got, ref, words * 8) == 0, "bitmap_of_groups n=%zu group=%zu differs", n, g);
            /* bytes round trip */
            uint8_t *db = dmalloc(nbits + 1), *hb = malloc(nbits + 1);
            CU(rbk_bitmap_to_bytes(dbm, nbits, db, 0));
            to_host(hb, db, nbits);
            int bytes_ok = 1;
            for (size_t i = 0; i < nbits; i++)
                bytes_ok &= hb[i] == (uint8_t)rb_bitmap_test(ref, i);
            CHECK(bytes_ok, "bitmap_to_bytes n=%zu group=%zu", n, g);
            CU(cudaMemset(dbm, 0xff, (words + 1) * 8));
            CU(rbk_bytes_to_bitmap(db, nbits, dbm, 0));
            to_host(got, dbm, words * 8);
            CHECK(memcmp(got, ref, words * 8) == 0, "bytes_to_bitmap n=%zu group=%zu", n, g);
            /* list of set bits, pack and unpack the blocks */
            size_t nb = rb_bitmap_popcount(ref, nbits);
            uint32_t *dl = dmalloc((nbits + 1) * 4), *hl = malloc((nbits + 1) * 4);
            unsigned long long *dc = dmalloc(8), hc = 0;
            void *scratch = dmalloc(rbk_pack_scratch_bytes(nbits));
            CU(rbk_bitmap_list(dbm, nbits, dl, dc, scratch, 0));
            to_host(&hc, dc, 8);
            to_host(hl, dl, nb * 4);
            int list_ok = hc == nb;
            for (size_t i = 0, j = 0; list_ok && i < nbits; i++)
                if (rb_bitmap_test(ref, i))
                    list_ok &= hl[j++] == i;
            CHECK(list_ok, "bitmap_list n=%zu group=%zu: %llu of %zu", n, g, hc, nb);
            float *dpk = dmalloc((nb * g + 1) * 4), *back = malloc((n + 1) * 4);
            CU(rbk_pack_blocks(dx, n, g, dl, nb, dpk, 0));
            CU(rbk_unpack_blocks(dx, n, g, dl, nb, dpk, 1.0f, 0));
            to_host(back, dx, n * 4);
            CHECK(memcmp(back, x, n * 4) == 0, "pack/unpack blocks n=%zu group=%zu", n, g);
            cudaFree(dx); cudaFree(dbm); cudaFree(db); cudaFree(dl); cudaFree(dc);
            cudaFree(scratch); cudaFree(dpk);
            free(x); free(ref); free(got); free(hb); free(hl); free(back);
        }
    /* OR of p bitmaps after an allgather */
    enum { P = 5, W = 37 };
    uint64_t all[P * W], ref[W] = {0}, got[W];
    for (int i = 0; i < P * W; i++)
        all[i] = rnd() & rnd() & rnd();
    for (int q = 0; q < P; q++)
        rb_bitmap_or(ref, all + q * W, W);
    uint64_t *dall = to_dev(all, sizeof all), *ddst = dmalloc(sizeof got);
    CU(rbk_bitmap_or_rows(ddst, dall, W, P, 0));
    to_host(got, ddst, sizeof got);
    CHECK(memcmp(got, ref, sizeof ref) == 0, "bitmap_or_rows");
    cudaFree(dall); cudaFree(ddst);
}

static rbk_sketch sketch_of(const rb_countsketch *cs)
{
    rbk_sketch sk;
    memset(&sk, 0, sizeof sk);
    sk.rows = cs->rows;
    sk.cols = cs->cols;
    memcpy(sk.co, cs->co, sizeof sk.co);
    return sk;
}

static void test_cs_hashes(void)
{
    static const size_t widths[] = {1, 7, 1000, 1u << 20, 4294967295u};
    const uint64_t keys[] = {0, 1, 2, 3, 1000, 4294967295ull, RB_CS_PRIME - 1, RB_CS_PRIME,
                             RB_CS_PRIME + 1, 0xffffffffffffffffull, 0x123456789abcdefull};
    enum { NK = sizeof keys / sizeof keys[0] + 1000 };
    uint64_t k[NK];
    memcpy(k, keys, sizeof keys);
    for (size_t i = sizeof keys / sizeof keys[0]; i < NK; i++)
        k[i] = rnd() >> (rnd() % 64);
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        rb_countsketch cs;
        memset(&cs, 0, sizeof cs);
        /* the table is not needed: set the coefficients by hand */
        cs.rows = 5;
        cs.cols = widths[wi];
        cs.seed = 1234 + wi;
        for (int j = 0; j < 5; j++)
            rb_cs_row_coeffs(cs.seed, j, &cs.co[j]);
        rbk_sketch sk = sketch_of(&cs);
        uint64_t *dk = to_dev(k, sizeof k);
        uint32_t *db = dmalloc(NK * 5 * 4), hb[NK * 5];
        int8_t *ds = dmalloc(NK * 5), hs[NK * 5];
        CU(rbk_cs_hashes(&sk, dk, NK, db, ds, 0));
        to_host(hb, db, sizeof hb);
        to_host(hs, ds, sizeof hs);
        int bad = 0;
        for (size_t i = 0; i < NK; i++)
            for (int j = 0; j < 5; j++)
                bad += hb[i * 5 + j] != rb_cs_bucket(&cs, j, k[i]) || hs[i * 5 + j] != rb_cs_sign(&cs, j, k[i]);
        CHECK(bad == 0, "cs hashes width %zu: %d of %d differ from countsketch.c", widths[wi], bad, NK * 5);
        cudaFree(dk); cudaFree(db); cudaFree(ds);
    }
}

/* Insert on both sides and decode on both sides.  exact: no bucket gets two
 * values, so the float sums are the same whatever the order. */
static void cs_case(int rows, size_t cols, size_t n, size_t row_len, double density, uint64_t x0)
{
    rb_countsketch cs;
    if (rb_cs_init(&cs, rows, cols, 77 + rows) != 0) {
        CHECK(0, "rb_cs_init(%d, %zu)", rows, cols);
        return;
    }
    float *x = malloc((n + 1) * 4), *ref = malloc((n + 1) * 4), *got = malloc((n + 1) * 4);
    fill(x, n, density);
    rb_cs_insert_run(&cs, x0, x, n);
    rbk_sketch sk = sketch_of(&cs);
    float *dx = to_dev(x, n * 4), *dt = dmalloc(rows * cols * 4);
    float *gt = malloc(rows * cols * 4);
    CU(cudaMemset(dt, 0, rows * cols * 4));
    CU(rbk_cs_insert(&sk, dt, dx, n, x0, 0));
    to_host(gt, dt, rows * cols * 4);
    double maxdiff = 0, maxabs = 0;
    for (size_t i = 0; i < rows * cols; i++) {
        double d = fabs((double)gt[i] - cs.table[i]);
        if (isnan(d) || d > maxdiff)   /* fmax would drop a NaN: keep it, so it fails */
            maxdiff = d;
        maxabs = fmax(maxabs, fabs((double)cs.table[i]));
    }
    size_t nnz = rb_count_nonzero(x, n);
    int exact = nnz * 50 < cols;   /* collisions unlikely; checked below */
    CHECK(maxdiff <= 1e-5 * (maxabs + 1e-30) * sqrt((double)nnz + 1),
          "cs insert r=%d c=%zu n=%zu: max |gpu - cpu| %g (max %g)", rows, cols, n, maxdiff, maxabs);
    if (exact && maxdiff != 0)
        fprintf(stderr, "note: r=%d c=%zu n=%zu: sums differ in order (collision), %g\n", rows, cols, n, maxdiff);
    /* decode the CPU table on the GPU: bit-identical to rb_cs_query_run */
    size_t nrows = (n + row_len - 1) / row_len;
    uint64_t *bm = calloc(rb_bitmap_words(nrows) + 1, 8);
    rb_bitmap_of_groups(x, n, row_len, bm);
    for (size_t rr = 0; rr < nrows; rr += 7)
        rb_bitmap_set(bm, rr);          /* some all-zero rows decode too */
    const float scale = 0.25f;
    /* counters a NaN or Inf gradient leaves, and negative zeros: the
     * median networks must order them as countsketch.c's do */
    for (size_t i = 0; i < rows * cols; i += 97)
        cs.table[i] = i % 2 ? -0.0f : NAN;
    CU(cudaMemcpy(dt, cs.table, rows * cols * 4, cudaMemcpyHostToDevice));
    uint64_t *dbm = to_dev(bm, rb_bitmap_words(nrows) * 8);
    CU(rbk_cs_decode(&sk, dt, dx, n, row_len, dbm, x0, scale, 0));
    to_host(got, dx, n * 4);
    rb_cs_scale(&cs, scale);
    rb_cs_query_run(&cs, x0, ref, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float want = rb_bitmap_test(bm, i / row_len) ? ref[i] : 0.0f;
        /* the same bits (a NaN's payload may differ: GPU arithmetic
         * returns the canonical NaN) */
        bad += isnan(want) ? !isnan(got[i]) : memcmp(&want, &got[i], 4) != 0;
    }
    CHECK(bad == 0, "cs decode r=%d c=%zu n=%zu cols=%zu: %zu of %zu differ from the CPU",
          rows, cols, n, row_len, bad, n);
    cudaFree(dx); cudaFree(dt); cudaFree(dbm);
    free(x); free(ref); free(got); free(gt); free(bm);
    rb_cs_free(&cs);
}

static void test_cs(void)
{
    for (int rows = 1; rows <= 5; rows += 2) {
        cs_case(rows, 4096, 100003, 100, 0.01, 0);
        cs_case(rows, 1 << 20, 5000, 50, 0.002, 123456789);
        cs_case(rows, 1, 333, 1, 0.5, 7);
        cs_case(rows, 1000, 1, 1, 1.0, 4294967295ull);
        /* more elements than threads in the capped grid: each thread
         * walks several keys by finite differences */
        cs_case(rows, 1 << 16, (1 << 20) + 7, 1024, 0.01, 5);
    }
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static void test_sparsify(void)
{
    size_t n = 100003;
    float *x = malloc(n * 4), *res = malloc(n * 4), *gx = malloc(n * 4), *gr = malloc(n * 4);
    fill(x, n, 0.7);
    for (size_t i = 0; i < n; i++)
        res[i] = (float)(unif() - 0.5) * 0.1f;
    float *dx = to_dev(x, n * 4), *dr = to_dev(res, n * 4);
    const float t = 0.3f;
    CU(rbk_threshold(dx, dr, n, t, 0));
    to_host(gx, dx, n * 4);
    to_host(gr, dr, n * 4);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float v = x[i] + res[i];
        int keep = fabsf(v) >= t;
        bad += gx[i] != (keep ? v : 0.0f) || gr[i] != (keep ? 0.0f : v);
    }
    CHECK(bad == 0, "threshold with error feedback: %zu wrong", bad);
    /* threshold 0 with a residual: x += residual, residual = 0 (s2's error
     * feedback on the device), then residual = x - residual */
    CU(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dr, res, n * 4, cudaMemcpyHostToDevice));
    CU(rbk_threshold(dx, dr, n, 0.0f, 0));
    to_host(gx, dx, n * 4);
    to_host(gr, dr, n * 4);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += gx[i] != x[i] + res[i] || gr[i] != 0.0f;
    CHECK(bad == 0, "threshold 0 adds and clears the residual: %zu wrong", bad);
    CU(cudaMemcpy(dr, res, n * 4, cudaMemcpyHostToDevice));
    CU(rbk_subtract_from(dr, dx, n, 0));
    to_host(gr, dr, n * 4);
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += gr[i] != gx[i] - res[i];
    CHECK(bad == 0, "subtract_from: %zu wrong", bad);
    /* top-k threshold = k-th largest |x| */
    float *a = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        a[i] = fabsf(x[i]);
    qsort(a, n, 4, cmp_desc);
    CU(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    unsigned int *dh = dmalloc(256 * 4);
    const size_t ks[] = {1, 2, 10, 1000, 70000, n};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        float got = -1;
        CU(rbk_topk_threshold(dx, n, ks[i], &got, dh, 0));
        CHECK(got == a[ks[i] - 1], "topk k=%zu: %g, want %g", ks[i], got, a[ks[i] - 1]);
    }
    float dummy;
    CHECK(rbk_topk_threshold(dx, n, 0, &dummy, dh, 0) != 0, "topk k=0 must fail");
    cudaFree(dx); cudaFree(dr); cudaFree(dh);
    free(x); free(res); free(gx); free(gr); free(a);
}

/* Element-wise mixes against the host expressions, bit for bit. */
static void test_mixes(void)
{
    size_t n = 100003;
    float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4), *g = malloc(n * 4);
    fill(x, n, 0.9), fill(y, n, 0.9), fill(z, n, 0.9);
    float *dx = to_dev(x, n * 4), *dy = to_dev(y, n * 4), *dz = to_dev(z, n * 4);
    size_t bad[3] = {0, 0, 0};
    CU(rbk_average(dx, dy, n, 0));
    to_host(g, dx, n * 4);
    for (size_t i = 0; i < n; i++)
        bad[0] += memcmp(&g[i], &(float){0.5f * (x[i] + y[i])}, 4) != 0;
    CU(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    CU(rbk_add_half_difference(dx, dy, dz, n, 0));
    to_host(g, dx, n * 4);
    for (size_t i = 0; i < n; i++)
        bad[1] += memcmp(&g[i], &(float){x[i] + 0.5f * (y[i] - z[i])}, 4) != 0;
    CU(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    CU(rbk_add(dx, dy, n, 0));
    to_host(g, dx, n * 4);
    for (size_t i = 0; i < n; i++)
        bad[2] += memcmp(&g[i], &(float){x[i] + y[i]}, 4) != 0;
    CHECK(bad[0] == 0 && bad[1] == 0 && bad[2] == 0,
          "average / add_half_difference / add: %zu / %zu / %zu differ", bad[0], bad[1], bad[2]);
    cudaFree(dx); cudaFree(dy); cudaFree(dz);
    free(x); free(y); free(z); free(g);
}

/* Scaled scatters, zeroing, index bitmap + popcount, shard starts and
 * gather, against sparse.c. */
static void test_stream_kernels(void)
{
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        float *x = malloc((n + 1) * 4), *y = malloc((n + 1) * 4), *g = malloc((n + 1) * 4);
        fill(x, n, 0.3);
        fill(y, n, 0.5);
        size_t k = rb_count_nonzero(x, n);
        rb_pair *p = malloc((k + 1) * sizeof *p);
        rb_pack_nonzero(x, n, 0, p, k + 1);
        rb_pair *dp = to_dev(p, k * sizeof *p);
        float *dy = to_dev(y, n * 4);
        float *ref = malloc((n + 1) * 4);
        memcpy(ref, y, n * 4);
        rb_scatter_add_scaled(ref, 0, p, k, 0.25f);
        CU(rbk_scatter_add_scaled(dy, 0, dp, k, 0.25f, 0));
        to_host(g, dy, n * 4);
        CHECK(memcmp(g, ref, n * 4) == 0, "scatter_add_scaled n=%zu differs", n);
        rb_scatter_set_scaled(ref, 0, p, k, 1.0f / 3.0f);
        CU(rbk_scatter_set_scaled(dy, 0, dp, k, 1.0f / 3.0f, 0));
        to_host(g, dy, n * 4);
        CHECK(memcmp(g, ref, n * 4) == 0, "scatter_set_scaled n=%zu differs", n);
        for (size_t i = 0; i < k; i++)
            ref[p[i].idx] = 0.0f;
        CU(rbk_scatter_zero(dy, 0, dp, k, 0));
        to_host(g, dy, n * 4);
        CHECK(memcmp(g, ref, n * 4) == 0, "scatter_zero n=%zu differs", n);
        /* bitmap of indices (twice: marking is idempotent) and popcount */
        size_t words = rb_bitmap_words(n);
        uint64_t *dbm = dmalloc((words + 1) * 8);
        unsigned long long *dc = dmalloc(sizeof *dc), hc = 0;
        CU(cudaMemset(dbm, 0, (words + 1) * 8));
        CU(rbk_mark_pairs(dbm, 0, dp, k, 0));
        CU(rbk_mark_pairs(dbm, 0, dp, k, 0));
        CU(rbk_popcount(dbm, words, dc, 0));
        to_host(&hc, dc, sizeof hc);
        CHECK(hc == k, "mark_pairs + popcount n=%zu: %llu, want %zu", n, hc, k);
        /* shard starts = rb_pair_lower_bound of n * j / parts */
        enum { PARTS = 7 };
        uint64_t *db = dmalloc(PARTS * 8), hb[PARTS];
        CU(rbk_shard_bounds(dp, k, n, PARTS, db, 0));
        to_host(hb, db, sizeof hb);
        size_t badb = 0;
        for (int j = 0; j < PARTS; j++)
            badb += hb[j] != rb_pair_lower_bound(p, k, (uint32_t)((uint64_t)n * j / PARTS));
        CHECK(badb == 0, "shard_bounds n=%zu: %zu wrong", n, badb);
        /* gather of listed positions rebuilds the packed stream */
        uint32_t *list = malloc((k + 1) * 4);
        for (size_t i = 0; i < k; i++)
            list[i] = p[i].idx - 3;   /* positions relative to base 3 */
        float *dx = to_dev(x, n * 4);
        uint32_t *dl = to_dev(list, k * 4);
        rb_pair *dout = dmalloc((k + 1) * sizeof *dout), *out = malloc((k + 1) * sizeof *out);
        if (k && p[0].idx >= 3) {
            CU(rbk_gather_pairs(dx + 3, dl, k, 3, dout, 0));
            to_host(out, dout, k * sizeof *out);
            CHECK(memcmp(out, p, k * sizeof *p) == 0, "gather_pairs n=%zu differs", n);
        }
        cudaFree(dp); cudaFree(dy); cudaFree(dbm); cudaFree(dc); cudaFree(db); cudaFree(dx);
        cudaFree(dl); cudaFree(dout);
        free(x); free(y); free(g); free(p); free(ref); free(list); free(out);
    }
}

/* 1 and a reason when this process can use a GPU, else 0. */
static int have_gpu(char *why, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(why, len, "no usable GPU (cudaGetDeviceCount: %s)", cudaGetErrorString(e));
        return 0;
    }
    if (count == 0) {
        snprintf(why, len, "no GPU (cudaGetDeviceCount = 0)");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    char why[256];
    if (!have_gpu(why, sizeof why)) {
        fprintf(stderr, "SKIP: %s: the CUDA kernel tests need a GPU\n", why);
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "--probe") == 0)
        return 0;
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    printf("# device 0: %s, sm_%d%d\n", prop.name, prop.major, prop.minor);
    test_scan_pack_scatter();
    test_bitmaps();
    test_cs_hashes();
    test_cs();
    test_sparsify();
    test_mixes();
    test_stream_kernels();
    printf("%d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
