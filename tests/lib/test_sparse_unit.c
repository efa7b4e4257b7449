/* Unit tests of the sparse helpers (src/sparse.c) and of the option table
 * (src/options.c).  No MPI communication. */
#include "reducer.h"
#include "rowset.h"
#include "reducer_sparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        failures++; } } while (0)

static void test_scan_pack(void)
{
    const float x[] = {0, 1.5f, 0, 0, -2, 0, 3, 0};
    CHECK(rb_count_nonzero(x, 8) == 3);
    CHECK(rb_count_nonzero(x, 0) == 0);
    CHECK(rb_count_nonzero(x, 1) == 0);
    rb_pair p[3];
    CHECK(rb_pack_nonzero(x, 8, 100, p, 3) == 3);
    CHECK(p[0].idx == 101 && p[0].val == 1.5f);
    CHECK(p[1].idx == 104 && p[1].val == -2);
    CHECK(p[2].idx == 106 && p[2].val == 3);
    float y[8] = {0};
    rb_scatter_set(y, 100, p, 3);
    CHECK(!memcmp(x, y, sizeof x));
    rb_scatter_add(y, 100, p, 3);
    CHECK(y[1] == 3.0f && y[4] == -4.0f && y[6] == 6.0f && y[0] == 0.0f);
    rb_scatter_set_scaled(y, 100, p, 3, 0.5f);
    CHECK(y[1] == 0.75f && y[4] == -1.0f && y[6] == 1.5f);
    rb_scatter_add_scaled(y, 100, p, 3, 2.0f);
    CHECK(y[1] == 3.75f && y[4] == -5.0f);
    /* streaming copies: the plain loop's values, any alignment and length */
    static float src[203], dst[203], want[203];
    for (size_t i = 0; i < 203; i++)
        src[i] = (float)i * 0.1f - 7.3f;
    for (size_t at = 0; at < 4; at++)
        for (size_t len = 0; len < 199; len += 13)
            for (int scaled = 0; scaled < 2; scaled++) {
                memset(dst, 0, sizeof dst);
                memset(want, 0, sizeof want);
                for (size_t i = 0; i < len; i++)
                    want[at + i] = scaled ? src[i] * (1.0f / 3) : src[i];
                rb_copy_streaming(dst + at, src, len, 1.0f / 3, scaled);
                CHECK(!memcmp(dst, want, sizeof dst));
            }
    rb_scale(y, 8, 2.0f);
    CHECK(y[6] == 15.0f && y[0] == 0.0f);
    /* -0.0f counts as zero */
    const float z[] = {-0.0f, 0.0f};
    CHECK(rb_count_nonzero(z, 2) == 0);

    rb_pair *buf = NULL;
    size_t cap = 0, k = 99;
    CHECK(rb_pack_nonzero_grow(x, 8, &buf, &cap, &k) == RB_OK);
    CHECK(k == 3 && cap >= 3 * sizeof(rb_pair) && buf[2].idx == 6);
    rb_pair *first = buf;
    CHECK(rb_pack_nonzero_grow(x, 4, &buf, &cap, &k) == RB_OK);
    CHECK(k == 1 && buf == first);   /* kept, not reallocated */
    CHECK(rb_pack_nonzero_grow(x, 0, &buf, &cap, &k) == RB_OK && k == 0);
    free(buf);
}

static void test_merge(void)
{
    const rb_pair a[] = {{1, 1.0f}, {4, 2.0f}, {9, -3.0f}};
    const rb_pair b[] = {{0, 5.0f}, {4, -2.0f}, {9, 1.0f}, {12, 7.0f}};
    rb_pair out[7];
    size_t k = rb_merge_sum(a, 3, b, 4, out);
    CHECK(k == 5);
    CHECK(out[0].idx == 0 && out[0].val == 5.0f);
    CHECK(out[1].idx == 1 && out[1].val == 1.0f);
    CHECK(out[2].idx == 4 && out[2].val == 0.0f);   /* cancellation kept */
    CHECK(out[3].idx == 9 && out[3].val == -2.0f);
    CHECK(out[4].idx == 12 && out[4].val == 7.0f);
    CHECK(rb_merge_sum(a, 0, b, 0, out) == 0);
    CHECK(rb_merge_sum(a, 3, b, 0, out) == 3 && out[2].idx == 9);
    CHECK(rb_merge_sum(a, 0, b, 4, out) == 4 && out[3].idx == 12);

    CHECK(rb_pair_lower_bound(b, 4, 0) == 0);
    CHECK(rb_pair_lower_bound(b, 4, 5) == 2);
    CHECK(rb_pair_lower_bound(b, 4, 9) == 2);
    CHECK(rb_pair_lower_bound(b, 4, 13) == 4);
    CHECK(rb_pair_lower_bound(b, 0, 13) == 0);

    /* four streams, one empty, back to back */
    rb_pair many[] = {{2, 1}, {5, 1}, /* s1 empty */ {2, 2}, {7, 2}, {5, 4}};
    size_t offs[] = {0, 2, 2, 4, 5};
    rb_pair tmp[5], *res = NULL;
    k = rb_merge_sum_many(many, offs, 4, tmp, &res);
    CHECK(k == 3);
    CHECK(res[0].idx == 2 && res[0].val == 3.0f);
    CHECK(res[1].idx == 5 && res[1].val == 5.0f);
    CHECK(res[2].idx == 7 && res[2].val == 2.0f);
    size_t offs1[] = {0, 2};
    k = rb_merge_sum_many(many, offs1, 1, tmp, &res);
    CHECK(k == 2 && res == many);
    size_t offs0[] = {0};
    CHECK(rb_merge_sum_many(many, offs0, 0, tmp, &res) == 0);
    size_t offs3[] = {0, 0, 0, 0};
    CHECK(rb_merge_sum_many(many, offs3, 3, tmp, &res) == 0);
}

static void test_bitmap(void)
{
    enum { N = 1000 };
    float x[N] = {0};
    x[0] = 1;      /* group 0 */
    x[639] = 2;    /* group 63 (group = 10) */
    x[640] = 3;    /* group 64: second word */
    x[999] = -1;   /* group 99, the last */
    size_t groups = (N + 9) / 10;
    uint64_t bm[2] = {~0ULL, ~0ULL};
    rb_bitmap_of_groups(x, N, 10, bm);
    CHECK(rb_bitmap_words(groups) == 2);
    CHECK(rb_bitmap_test(bm, 0) && rb_bitmap_test(bm, 63) && rb_bitmap_test(bm, 64));
    CHECK(rb_bitmap_test(bm, 99) && !rb_bitmap_test(bm, 1) && !rb_bitmap_test(bm, 98));
    CHECK(rb_bitmap_popcount(bm, groups) == 4);
    CHECK((bm[1] >> 36) == 0);   /* bits past the last group cleared */
    /* popcount ignores bits past nbits */
    uint64_t all[2] = {~0ULL, ~0ULL};
    CHECK(rb_bitmap_popcount(all, 70) == 70);
    CHECK(rb_bitmap_popcount(all, 64) == 64);
    CHECK(rb_bitmap_popcount(all, 0) == 0);
    /* a short last group: 1001 elements in groups of 7 -> 143 groups */
    float y[1001] = {0};
    y[1000] = 1;
    uint64_t bm3[3];
    rb_bitmap_of_groups(y, 1001, 7, bm3);
    CHECK(rb_bitmap_popcount(bm3, 143) == 1 && rb_bitmap_test(bm3, 142));
    uint64_t a[2] = {1, 0}, b[2] = {2, 1ULL << 63};
    rb_bitmap_or(a, b, 2);
    CHECK(a[0] == 3 && a[1] == 1ULL << 63);
    rb_bitmap_set(a, 100);
    CHECK(rb_bitmap_test(a, 100) && rb_bitmap_popcount(a, 128) == 4);
}

/* A test vector for the scans: all zero, a few non-zeros, or dense (30%,
 * 95%), drawn from the values where bits and x != 0 could disagree: -0.0
 * (zero), NaN, denormals; -0.0 also on a 64-float block edge. */
static void fill_tricky(float *x, size_t n, int trial, unsigned *seed)
{
    const float specials[] = {1.0f, -0.0f, NAN, 1e-45f, -1e-45f, -3.0f};
    const unsigned per_mille[] = {0, 300, 950};
    memset(x, 0, n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        unsigned draw = (*seed >> 8) % 1000;
        int sparse = trial % 3 == 0 && draw < (unsigned)(trial % 8);   /* ~0-7 per 1000 */
        if (sparse || draw < per_mille[trial % 3])
            x[i] = specials[(*seed >> 20) % 6];
    }
    if (n)
        x[(size_t)trial * 64 % n] = -0.0f;
}

enum { TRICKY_N = 4099, TRICKY_TRIALS = 45 };
static const size_t tricky_lengths[] = {0, 1, 15, 16, 17, 63, 64, 65, 1000, TRICKY_N};

/* rb_bitmap_of_groups against its definition, for group sizes around the
 * 64-float blocks and words it works in. */
static void test_bitmap_against_definition(void)
{
    static float x[TRICKY_N];
    static uint64_t got[TRICKY_N / 64 + 2], want[TRICKY_N / 64 + 2];
    const size_t groups[] = {1, 2, 7, 63, 64, 65, 128, 200, 1024, 4099, 5000};
    unsigned seed = 7;
    for (int trial = 0; trial < TRICKY_TRIALS; trial++) {
        fill_tricky(x, TRICKY_N, trial, &seed);
        for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++)
            for (size_t li = 0; li < sizeof tricky_lengths / sizeof *tricky_lengths; li++) {
                size_t g = groups[gi], n = tricky_lengths[li], ng = (n + g - 1) / g;
                memset(want, 0, sizeof want);
                memset(got, 0xa5, sizeof got);
                size_t nnz = 0;
                for (size_t i = 0; i < n; i++)
                    if (x[i] != 0.0f)
                        rb_bitmap_set(want, i / g), nnz++;
                rb_bitmap_of_groups(x, n, g, got);
                CHECK(memcmp(got, want, rb_bitmap_words(ng) * sizeof *got) == 0);
                memset(got, 0xa5, sizeof got);
                CHECK(rb_bitmap_of_groups_count(x, n, g, got) == nnz);
                CHECK(memcmp(got, want, rb_bitmap_words(ng) * sizeof *got) == 0);
                CHECK(rb_count_nonzero(x, n) == nnz);
            }
    }
}

/* rb_pack_nonzero against its definition, with out exactly as large as the
 * count (nothing may be written past it) and with room to spare. */
static void test_pack_against_definition(void)
{
    enum { GUARD = 20 };
    static float x[TRICKY_N];
    static rb_pair want[TRICKY_N], got[TRICKY_N + 40 + GUARD];
    const rb_pair sentinel = {0xdeadbeefu, 42.0f};
    unsigned seed = 11;
    for (int trial = 0; trial < TRICKY_TRIALS; trial++) {
        fill_tricky(x, TRICKY_N, trial, &seed);
        for (size_t li = 0; li < sizeof tricky_lengths / sizeof *tricky_lengths; li++) {
            size_t n = tricky_lengths[li], k = 0;
            for (size_t i = 0; i < n; i++)
                if (x[i] != 0.0f)
                    want[k++] = (rb_pair){(uint32_t)(1000 + i), x[i]};
            for (size_t spare = 0; spare <= 40; spare += 40) {
                for (size_t i = 0; i < k + spare + GUARD; i++)
                    got[i] = sentinel;
                CHECK(rb_pack_nonzero(x, n, 1000, got, k + spare) == k);
                CHECK(memcmp(got, want, k * sizeof *got) == 0);
                for (size_t i = k + spare; i < k + spare + GUARD; i++)
                    CHECK(!memcmp(&got[i], &sentinel, sizeof sentinel));
            }
        }
    }
    /* The growing variant, from a buffer too small for most of the trials. */
    rb_pair *buf = malloc(8 * sizeof *buf);
    size_t cap = 8 * sizeof *buf;
    for (int trial = 0; trial < TRICKY_TRIALS; trial++) {
        fill_tricky(x, TRICKY_N, trial, &seed);
        size_t k = 0, kw = 0, before = cap;
        for (size_t i = 0; i < TRICKY_N; i++)
            if (x[i] != 0.0f)
                want[kw++] = (rb_pair){(uint32_t)i, x[i]};
        CHECK(rb_pack_nonzero_grow(x, TRICKY_N, &buf, &cap, &k) == RB_OK);
        CHECK(k == kw && cap >= kw * sizeof *buf && !memcmp(buf, want, k * sizeof *buf));
        CHECK(cap == before || kw > before / sizeof *buf);   /* grown only when needed */
        /* taking: the same pairs, and x is zero afterwards (-0.0 left), also
         * when the buffer grows half-way */
        static float y[TRICKY_N];
        memcpy(y, x, sizeof y);
        rb_pair *tb = trial % 2 ? malloc(3 * sizeof *tb) : NULL;
        size_t tcap = trial % 2 ? 3 * sizeof *tb : 0, tk = 0;
        CHECK(rb_take_nonzero_grow(y, TRICKY_N, &tb, &tcap, &tk) == RB_OK);
        CHECK(tk == kw && (tk == 0 || !memcmp(tb, want, tk * sizeof *tb)));
        size_t left = 0;
        for (size_t i = 0; i < TRICKY_N; i++)
            left += y[i] != 0.0f || (x[i] != 0.0f && memcmp(&y[i], &(float){0.0f}, 4));
        CHECK(left == 0);
        free(tb);
        /* at most kw - 1 pairs: counted, not packed, the buffer not grown past that */
        size_t limit = kw ? kw - 1 : 0;
        rb_pair *small = NULL;
        size_t small_cap = 0;
        CHECK(rb_pack_nonzero_upto(x, TRICKY_N, limit, &small, &small_cap, &k) == RB_OK);
        CHECK(k == kw && small_cap <= (limit ? limit * sizeof *small + 64 : 64));
        CHECK(rb_pack_nonzero_upto(x, TRICKY_N, kw, &small, &small_cap, &k) == RB_OK);
        CHECK(k == kw && (k == 0 || !memcmp(small, want, k * sizeof *small)));
        free(small);
    }
    free(buf);
    /* The tightest case: a last block whose only zero comes after all the
     * non-zeros, with out holding exactly those. */
    for (size_t i = 0; i < 32; i++)
        x[i] = i == 31 ? 0.0f : 1.0f;
    got[31] = sentinel;
    CHECK(rb_pack_nonzero(x, 32, 0, got, 31) == 31);
    CHECK(!memcmp(&got[31], &sentinel, sizeof sentinel));
}

static size_t option_index(const char *key)
{
    for (size_t i = 0; i < rb_option_count(); i++)
        if (!strcmp(rb_option_info_at(i)->key, key))
            return i;
    return (size_t)-1;
}

static void expect_bad(const char *kv, const char *key)
{
    rb_options o;
    rb_options_default(&o);
    int rc = rb_options_set(&o, kv);
    if (rc != RB_ERR_ARG || !strstr(rb_last_error(), key)) {
        fprintf(stderr, "bad option '%s' -> %d, message '%s' should name '%s'\n",
                kv, rc, rb_last_error(), key);
        failures++;
    }
}

static void test_options(void)
{
    rb_options o;
    rb_options_default(&o);
    CHECK(rb_options_set(&o, "sparcml_algo=rsag") == RB_OK && o.sparcml_algo == RB_SPARCML_RSAG);
    CHECK(rb_options_set(&o, "sparcml_algo=recdbl") == RB_OK && o.sparcml_algo == RB_SPARCML_RECDBL);
    CHECK(rb_options_set(&o, "sparcml_switch=0.25") == RB_OK && o.sparcml_switch == 0.25);
    CHECK(rb_options_set(&o, "parallax_servers=1") == RB_OK && o.parallax_servers == 1);
    CHECK(rb_options_set(&o, "block_size=64") == RB_OK && o.block_size == 64);
    CHECK(rb_options_set(&o, "seed=12345678901") == RB_OK && o.seed == 12345678901ULL);

    expect_bad("sparcml_algo=ring", "sparcml_algo");
    expect_bad("sparcml_switch=-1", "sparcml_switch");
    expect_bad("sparcml_switch=abc", "sparcml_switch");
    expect_bad("parallax_servers=2", "parallax_servers");
    expect_bad("block_size=0", "block_size");
    expect_bad("block_size=12x", "block_size");
    expect_bad("seed=-3", "seed");
    expect_bad("no_such_option=1", "no_such_option");
    expect_bad("block_size=", "block_size");

    /* every option's formatted value parses back to the same value */
    rb_options a, b;
    rb_options_default(&a);
    CHECK(rb_options_set(&a, "sparcml_algo=rsag") == RB_OK);
    CHECK(rb_options_set(&a, "sparcml_switch=0.1") == RB_OK);
    CHECK(rb_options_set(&a, "block_size=1000") == RB_OK);
    rb_options_default(&b);
    for (size_t i = 0; i < rb_option_count(); i++) {
        char val[64], kv[160], back[64];
        CHECK(rb_option_format(&a, i, val, sizeof val) == RB_OK);
        snprintf(kv, sizeof kv, "%s=%s", rb_option_info_at(i)->key, val);
        CHECK(rb_options_set(&b, kv) == RB_OK);
        CHECK(rb_option_format(&b, i, back, sizeof back) == RB_OK && !strcmp(val, back));
    }
    CHECK(b.sparcml_algo == RB_SPARCML_RSAG && b.sparcml_switch == 0.1 && b.block_size == 1000);
    CHECK(rb_option_format(&a, rb_option_count(), (char[8]){0}, 8) == RB_ERR_ARG);

    size_t algo = option_index("sparcml_algo"), bs = option_index("block_size");
    size_t servers = option_index("parallax_servers"), seed = option_index("seed");
    CHECK(algo != (size_t)-1 && bs != (size_t)-1 && servers != (size_t)-1 && seed != (size_t)-1);
    CHECK(rb_option_applies(algo, "sparcml") && !rb_option_applies(algo, "agsparse"));
    CHECK(rb_option_applies(bs, "omnireduce") && !rb_option_applies(bs, "omni"));
    CHECK(rb_option_applies(servers, "parallax") && !rb_option_applies(servers, "dense"));
    CHECK(rb_option_applies(seed, "s2") && rb_option_applies(seed, "gossip"));
    CHECK(!rb_option_applies(rb_option_count(), "sparcml") && !rb_option_applies(algo, NULL));
}

/* The row-form helpers of rb_reduce_rows on a 6 x 3 matrix. */
static void test_rows_helpers(void)
{
    enum { ROWS = 6, COLS = 3 };
    int64_t ids[] = {1, 2, 4};
    float values[] = {0, 1.5f, 0, /* row 2 */ 2, 3, 0, /* row 4 */ 0, 0, -1};
    rb_rows in = {3, COLS, ids, values};
    float x[ROWS * COLS];
    memset(x, 0xa5, sizeof x);
    rb_rows_to_dense(&in, x, ROWS);
    const float want[ROWS * COLS] = {0, 0, 0, 0, 1.5f, 0, 2, 3, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0};
    CHECK(!memcmp(x, want, sizeof x));
    CHECK(rb_rows_count_nonzero(&in) == 4);
    rb_pair *p = NULL;
    size_t cap = 0, k = 0;
    CHECK(rb_rows_pack_grow(&in, &p, &cap, &k) == RB_OK && k == 4);
    CHECK(p[0].idx == 4 && p[1].idx == 6 && p[2].idx == 7 && p[3].idx == 14 && p[3].val == -1);
    rb_pair q[4];
    CHECK(rb_pack_nonzero(want, ROWS * COLS, 0, q, 4) == 4 && !memcmp(p, q, sizeof q));
    int64_t ones[] = {3, 9, 10};
    float vals1[] = {1, 0, 2};
    rb_rows col1 = {3, 1, ones, vals1};
    CHECK(rb_rows_pack_grow(&col1, &p, &cap, &k) == RB_OK && k == 2);
    CHECK(p[0].idx == 3 && p[1].idx == 10 && p[1].val == 2);

    /* one stream: the rows that hold a pair, values scaled, rest 0 */
    rb_rowset s = {0};
    rb_rows view;
    const rb_pair stream[] = {{4, 2}, {7, -4}, {8, 1}, {15, 8}};
    CHECK(rb_rowset_from_pairs(&s, COLS, stream, 4, 0.5f) == RB_OK);
    rb_rowset_view(&s, &view);
    CHECK(view.nrows == 3 && view.cols == COLS);
    CHECK(view.ids[0] == 1 && view.ids[1] == 2 && view.ids[2] == 5);
    const float w1[] = {0, 1, 0, 0, -2, 0.5f, 8 * 0.5f, 0, 0};
    CHECK(!memcmp(view.values, w1, sizeof w1));
    /* three streams, one empty: the rows of any, sums in stream order */
    const rb_pair streams[] = {{4, 2}, {16, 1}, /* empty */ {0, 1}, {4, 3}};
    size_t offs[] = {0, 2, 2, 4}, base[1];
    uint64_t rowbm[1] = {0};
    CHECK(rb_rowset_sum_streams(&s, COLS, streams, offs, 3, 0.25f, rowbm, base, 1) == RB_OK);
    rb_rowset_view(&s, &view);
    CHECK(view.nrows == 3 && view.ids[0] == 0 && view.ids[1] == 1 && view.ids[2] == 5);
    const float w2[] = {0.25f, 0, 0, 0, 0.5f + 0.75f, 0, 0, 0.25f, 0};
    CHECK(!memcmp(view.values, w2, sizeof w2));
    CHECK(rowbm[0] == 0 && offs[3] == 4);   /* left as found */
    CHECK(rb_rowset_sum_streams(&s, COLS, streams, offs, 0, 1.0f, rowbm, base, 1) == RB_OK &&
          s.nrows == 0);
    /* against zeroing + rb_scatter_add_scaled stream by stream, bit for bit,
     * over 5 streams whose values do not add exactly, rows of 3 and of 1 */
    enum { SN = 800, SM = 5 };
    static rb_pair many[SN * SM];
    static uint64_t mbm[SN / 64 + 1];
    static size_t mbase[SN / 64 + 1];
    size_t moffs[SM + 1] = {0};
    static float ref[SN], got[SN];
    unsigned seed = 3;
    for (size_t j = 0; j < SM; j++) {
        moffs[j + 1] = moffs[j];
        for (uint32_t i = 0; i < SN; i++) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 4 == 0)
                many[moffs[j + 1]++] = (rb_pair){i, (float)(seed >> 8) * 1e-7f - 0.3f};
        }
    }
    memset(ref, 0, sizeof ref);
    for (size_t j = 0; j < SM; j++)
        rb_scatter_add_scaled(ref, 0, many + moffs[j], moffs[j + 1] - moffs[j], 1.0f / 3);
    for (size_t cols = 1; cols <= 4; cols += 3) {
        size_t words = rb_bitmap_words((SN + cols - 1) / cols);
        CHECK(rb_rowset_sum_streams(&s, cols, many, moffs, SM, 1.0f / 3, mbm, mbase, words) ==
              RB_OK);
        rb_rowset_view(&s, &view);
        memset(got, 0xa5, sizeof got);
        rb_rows_to_dense(&view, got, SN / cols);
        CHECK(!memcmp(got, ref, sizeof ref));
        for (size_t w = 0; w < words; w++)
            CHECK(mbm[w] == 0);
    }
    /* from a dense matrix: rows with any bit set, -0.0 included */
    float d[ROWS * COLS] = {0};
    d[3 * COLS + 2] = -0.0f;
    d[5 * COLS] = 7;
    CHECK(rb_rowset_from_dense(&s, d, ROWS, COLS) == RB_OK);
    CHECK(s.nrows == 2 && s.ids[0] == 3 && s.ids[1] == 5 && s.values[3] == 7);
    rb_rowset_view(&s, &view);
    memset(x, 0xa5, sizeof x);
    rb_rows_to_dense(&view, x, ROWS);
    CHECK(!memcmp(x, d, sizeof x));
    rb_rowset_free(&s);
    free(p);
}

int main(void)
{
    test_merge();
    test_bitmap();
    test_rows_helpers();
    /* the scans in every version this build and CPU have */
    static const char *const versions[] = {"sse2", "avx2", "avx512", "plain"};
    int ran = 0;
    for (size_t v = 0; v < sizeof versions / sizeof *versions; v++) {
        if (rb_scan_use(versions[v]) != RB_OK)
            continue;
        ran++;
        test_scan_pack();
        test_bitmap();
        test_bitmap_against_definition();
        test_pack_against_definition();
    }
    CHECK(ran > 0);
    CHECK(rb_scan_use("no-such") == RB_ERR_UNSUPPORTED && rb_scan_use(NULL) == RB_OK);
    test_options();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("sparse and option unit tests passed\n");
    return failures ? 1 : 0;
}
