/* The cost model (rb_model, docs/cost-model.md) against real calls: for
 * every registered reducer and the variants of its options, one call per
 * step of a gossip cycle on generated inputs, the measured bytes_sent (mean
 * over ranks and calls) against the model's bytes_sent for the same
 * shape, non-zero counts and union.  Inputs: element layout at 1% (random,
 * all and no overlap), at 30% (sparcml's dense switch), rows and blocks
 * at 2%.  Tolerance: 10% + 64 bytes (most agree within 1%; the model
 * estimates what the data decide for the intermediate unions of sparcml's
 * recursive doubling and the union blocks of omnireduce: within 5%).
 * Also: rb_model's checks of its input, the time terms adding up, time
 * growing with alpha and beta.
 *
 * Usage: test_model.  RB_TEST_VERBOSE=1 prints every comparison. */
#include "harness/gradgen.h"
#include "reducer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failures, reported;

#define FAIL(...) do { failures++; if (reported++ < 20) { \
        fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)

#define TOL 0.10

typedef struct variant {
    const char *name, *opt;   /* opt: "key=value", several separated by spaces */
} variant;

/* Every "key=value" of opt (space separated) into o. */
static int set_options(rb_options *o, const char *opt)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", opt);
    for (char *save = NULL, *kv = strtok_r(buf, " ", &save); kv; kv = strtok_r(NULL, " ", &save))
        if (rb_options_set(o, kv) != RB_OK)
            return -1;
    return 0;
}

/* Every reducer with its defaults, then the variants. */
static int make_variants(variant *v, int max)
{
    int nv = 0;
    for (size_t i = 0; i < rb_reducer_count() && nv < max; i++)
        v[nv++] = (variant){rb_reducer_name_at(i), NULL};
    static const variant more[] = {
        {"sparcml", "sparcml_algo=recdbl"}, {"sparcml", "sparcml_algo=rsag"},
        {"parallax", "parallax_servers=1"},  {"omnireduce", "block_size=7"},
        {"oktopk", "oktopk_repartition=1"},  {"oktopk", "oktopk_balance=off"},
        /* every call re-estimates: the calls of one cycle are that kind */
        {"oktopk", "oktopk_select=topk oktopk_reestimate=1"},
        {"zen", "zen_bitmap=on"},            {"zen", "zen_bitmap=off"},
        {"s2", "sketch_rows=3"},             {"gossip", "gossip_schedule=dissemination"},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0] && nv < max; i++)
        v[nv++] = more[i];
    return nv;
}

/* What the model needs to know of an input, measured over all ranks. */
typedef struct facts {
    double nnz_max, nnz_mean, nnz_union;
} facts;

static facts measure(const float *x, size_t n, size_t k)
{
    facts f;
    double mine = (double)k, sum = 0;
    MPI_Allreduce(&mine, &f.nnz_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    f.nnz_mean = sum / nranks;
    size_t words = (n + 63) / 64;
    uint64_t *bm = calloc(words ? words : 1, sizeof *bm);
    for (size_t i = 0; i < n; i++)
        if (x[i] != 0.0f)
            bm[i / 64] |= (uint64_t)1 << (i % 64);
    MPI_Allreduce(MPI_IN_PLACE, bm, (int)words, MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD);
    double u = 0;
    for (size_t w = 0; w < words; w++)
        u += __builtin_popcountll(bm[w]);
    f.nnz_union = u;
    free(bm);
    return f;
}

typedef struct input {
    const char *what;
    bench_gradgen g;
    double run;
} input;

/* Calls in one gossip cycle (its partners change with the step). */
static int cycle(void)
{
    int l = 0;
    while ((1 << l) < nranks)
        l++;
    return l > 1 ? l : 1;
}

static void compare(const variant *v, const input *in, const float *x, float *work,
                    const facts *f)
{
    size_t n = in->g.rows * in->g.cols;
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = v->name;
    cfg.rows = in->g.rows;
    cfg.cols = in->g.cols;
    if (v->opt && set_options(&cfg.opts, v->opt) != 0) {
        FAIL("%s: %s", v->opt, rb_last_error());
        return;
    }
    rb_reducer *r = NULL;
    if (rb_create(&cfg, &r) != RB_OK) {
        FAIL("%s %s: rb_create: %s", v->name, v->opt ? v->opt : "", rb_last_error());
        return;
    }
    double sent = 0;
    int calls = cycle();
    for (int c = 0; c < calls; c++) {
        memcpy(work, x, n * sizeof *x);
        rb_stats st;
        if (rb_reduce(r, work, &st) != RB_OK) {
            FAIL("%s %s: rb_reduce: %s", v->name, v->opt ? v->opt : "", rb_last_error());
            rb_destroy(r);
            return;
        }
        sent += (double)st.bytes_sent;
    }
    rb_destroy(r);
    double measured = 0;
    MPI_Allreduce(&sent, &measured, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    measured /= (double)nranks * calls;

    rb_model_input mi;
    rb_model_input_default(&mi);
    mi.ranks = nranks;
    mi.rows = in->g.rows;
    mi.cols = in->g.cols;
    mi.nnz_max = f->nnz_max;
    mi.nnz_mean = f->nnz_mean;
    mi.nnz_union = f->nnz_union;
    mi.run = in->run;
    mi.opts = cfg.opts;
    rb_model_result m;
    if (rb_model(v->name, &mi, &m) != RB_OK) {
        FAIL("%s %s: rb_model: %s", v->name, v->opt ? v->opt : "", rb_last_error());
        return;
    }
    int ok = fabs(m.bytes_sent - measured) <= TOL * measured + 64;
    if (!ok)
        FAIL("%s %s, %s: model sends %.0f B per rank, measured %.0f (%.2fx; k %.0f, U %.0f)",
             v->name, v->opt ? v->opt : "", in->what, m.bytes_sent, measured,
             measured > 0 ? m.bytes_sent / measured : 0, f->nnz_mean, f->nnz_union);
    else if (rank == 0 && getenv("RB_TEST_VERBOSE"))
        printf("  %-10s %-30s %-22s model %10.0f measured %10.0f  %.3f\n", v->name,
               v->opt ? v->opt : "", in->what, m.bytes_sent, measured,
               measured > 0 ? m.bytes_sent / measured : 0);
}

static void check_bytes(void)
{
    variant v[64];
    int nv = make_variants(v, 64);
    const size_t n = 100000;
    input inputs[] = {
        {"element 1% random", {.rows = n, .cols = 1, .density = 0.01, .layout = BENCH_LAYOUT_ELEMENT, .block = 16, .overlap = BENCH_OVERLAP_RANDOM, .seed = 11}, 1},
        {"element 1% all", {.rows = n, .cols = 1, .density = 0.01, .layout = BENCH_LAYOUT_ELEMENT, .block = 16, .overlap = BENCH_OVERLAP_ALL, .seed = 12}, 1},
        {"element 1% none", {.rows = n, .cols = 1, .density = 0.01, .layout = BENCH_LAYOUT_ELEMENT, .block = 16, .overlap = BENCH_OVERLAP_NONE, .seed = 13}, 1},
        {"element 30% random", {.rows = n, .cols = 1, .density = 0.3, .layout = BENCH_LAYOUT_ELEMENT, .block = 16, .overlap = BENCH_OVERLAP_RANDOM, .seed = 14}, 1},
        /* a few hundred rows and blocks per rank: how many land in each
         * range is random, 1/sqrt(count) of the reduce phase */
        {"rows 2% random", {.rows = 10000, .cols = 10, .density = 0.02, .layout = BENCH_LAYOUT_ROW, .block = 16, .overlap = BENCH_OVERLAP_RANDOM, .seed = 15}, 10},
        {"blocks 2% random", {.rows = n, .cols = 1, .density = 0.02, .layout = BENCH_LAYOUT_BLOCK, .block = 16, .overlap = BENCH_OVERLAP_RANDOM, .seed = 16}, 16},
    };
    float *x = malloc(n * sizeof *x), *work = malloc(n * sizeof *work);
    if (!x || !work) {
        FAIL("no memory");
        free(x);
        free(work);
        return;
    }
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        input *in = &inputs[i];
        in->g.nranks = nranks;
        if (in->g.overlap == BENCH_OVERLAP_NONE && in->g.density * nranks > 1)
            continue;
        size_t k = bench_gradgen_fill(&in->g, rank, x);
        facts f = measure(x, in->g.rows * in->g.cols, k);
        for (int j = 0; j < nv; j++)
            compare(&v[j], in, x, work, &f);
    }
    free(x);
    free(work);
}

/* Input checks, the time terms, and time against alpha and beta. */
static void check_api(void)
{
    rb_model_input in;
    rb_model_input_default(&in);
    in.ranks = 8;
    in.rows = 1 << 20;
    in.nnz_max = 12000;
    in.nnz_mean = 10000;
    in.nnz_union = 70000;
    rb_model_result m;
    double t;
    if (rb_model("no-such", &in, &m) != RB_ERR_UNKNOWN_REDUCER)
        FAIL("rb_model of an unknown reducer: want RB_ERR_UNKNOWN_REDUCER");
    struct { const char *what; rb_model_input bad; } bad[7];
    for (int i = 0; i < 7; i++)
        bad[i].bad = in;
    bad[0].what = "ranks", bad[0].bad.ranks = 0;
    bad[1].what = "nnz_mean", bad[1].bad.nnz_mean = 20000;   /* above nnz_max */
    bad[2].what = "nnz_union", bad[2].bad.nnz_union = 5000;  /* below nnz_max */
    bad[3].what = "alpha", bad[3].bad.alpha = -1;
    bad[4].what = "beta", bad[4].bad.beta = NAN;
    bad[5].what = "block_size", bad[5].bad.opts.block_size = 0;
    bad[6].what = "coll_bw", bad[6].bad.coll_bw = INFINITY;
    for (int i = 0; i < 7; i++)
        if (rb_model("dense", &bad[i].bad, &m) != RB_ERR_ARG || !strstr(rb_last_error(), bad[i].what))
            FAIL("rb_model with a bad %s: want RB_ERR_ARG naming it, got '%s'", bad[i].what,
                 rb_last_error());
    for (size_t i = 0; i < rb_reducer_count(); i++) {
        const char *name = rb_reducer_name_at(i);
        rb_model_input a = in;
        if (rb_model_time(name, &a, &t) != RB_OK || t != 0)
            FAIL("%s: with alpha = beta = mem_bw = coll_bw = 0 the time is %g, want 0 (%s)", name, t,
                 rb_last_error());
        a.alpha = 2e-6, a.beta = 1e-10, a.mem_bw = 5e9, a.coll_bw = 8e9;
        if (rb_model(name, &a, &m) != RB_OK) {
            FAIL("%s: rb_model: %s", name, rb_last_error());
            continue;
        }
        double sum = m.t_latency + m.t_bandwidth + m.t_local;
        double local = m.bytes_local / a.mem_bw + m.bytes_coll / a.coll_bw;
        if (fabs(m.seconds - sum) > 1e-12 * sum || m.t_latency != a.alpha * m.messages ||
            m.t_bandwidth != a.beta * m.bytes_critical || fabs(m.t_local - local) > 1e-12 * local)
            FAIL("%s: seconds %g is not latency %g + bandwidth %g + local %g", name, m.seconds,
                 m.t_latency, m.t_bandwidth, m.t_local);
        rb_model_input slower = a;
        slower.alpha *= 2, slower.beta *= 2;
        double t2;
        rb_model_time(name, &slower, &t2);
        if (t2 < m.seconds || (strcmp(name, "none") && !(t2 > m.seconds)))
            FAIL("%s: doubling alpha and beta took the time from %g to %g s", name, m.seconds, t2);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    check_api();
    check_bytes();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_model: %d ranks: %d failure(s)\n", nranks, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
