/* rb_train: data-parallel SGD of real models on real data over MPI, with
 * any libreducer reducer aggregating the gradients.  See docs/training.md. */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "bench_common.h"
#include "data.h"
#include "gpu_model.h"
#include "models.h"
#include "train.h"

static const char *prog = "rb_train";
#define DEFAULT_IMAGES "/usr/share/datasets/fashion-mnist"
#define DEFAULT_TEXT "/usr/share/games/fortunes"

static int rank, nranks;

/* ------------------------------------------------------------- options */
static void usage(void)
{
    if (rank)
        return;
    printf(
        "Usage: rb_train [options]   (run under mpirun; every rank the same options)\n"
        "Model and data:\n"
        "  --model NAME          mlp | lenet | wordlm (default mlp)\n"
        "  --data DIR            images: IDX or CIFAR-10 binary directory (default "
        DEFAULT_IMAGES ");\n"
        "                        wordlm: .tokens directory or fortune files (default " DEFAULT_TEXT ")\n"
        "  --format F            auto | idx | cifar | tokens | fortunes (default auto)\n"
        "  --train-limit N       use the first N training samples (default 0 = all)\n"
        "  --test-limit N        use the first N test samples (default 0 = all)\n"
        "  --vocab N             wordlm vocabulary incl. <unk>,<eos> (default 10000; 0 = all)\n"
        "  --context K           wordlm: previous words seen (default 3)\n"
        "  --embed-dim D         wordlm embedding width (default 64)\n"
        "  --hidden H            wordlm hidden units (default 256)\n"
        "  --write-corpus DIR    wordlm: also write the corpus as DIR/{train,valid,test}.tokens\n"
        "Optimisation:\n"
        "  --batch N             samples per rank per step; global batch = N x ranks (default 64)\n"
        "  --lr X                learning rate for the global batch (default: mlp 0.05, lenet 0.1,\n"
        "                        wordlm 0.1)\n"
        "  --momentum X          (default 0.9)\n"
        "  --weight-decay X      on dense parameters (default 5e-4)\n"
        "  --warmup N            linear warm-up iterations (default 100)\n"
        "  --schedule S          const | cosine | step (x0.1 at 50%% and 75%%) (default cosine)\n"
        "  --epochs N            (default 1)\n"
        "  --iterations N        stop after N steps (default 0 = epochs decide)\n"
        "  --seed N              parameters, shuffling (default 1)\n"
        "  --shuffle local|ring  ring: one batch moves one hop around the ranks each step (default local)\n"
        "Reduction:\n"
        "  --reducer NAME        one of libreducer's reducers (default dense):");
    for (size_t i = 0; i < rb_reducer_count(); i++)
        printf(" %s", rb_reducer_name_at(i));
    printf("\n"
        "  -O key=value          reducer option (repeatable); keys:");
    for (size_t i = 0; i < rb_option_count(); i++)
        printf(" %s", rb_option_info_at(i)->key);
    printf("\n"
        "  --sparsify S          none | topk:R (keep fraction R) | threshold:T (default none)\n"
        "  --error-feedback 0|1  keep what sparsification dropped for the next step (default 1)\n"
        "Run control and output:\n"
        "  --eval-every N        evaluate every N iterations (default 0 = every epoch)\n"
        "  --log-every N         progress line every N iterations (default 0 = 10 per epoch)\n"
        "  --target-accuracy A   stop when test accuracy (%%) >= A (default 0 = off)\n"
        "  --target-perplexity P stop when validation perplexity <= P (default 0 = off)\n"
        "  -T SECONDS            time limit; exit 124 when hit (default 0 = none)\n"
        "  --threads N           OpenBLAS threads per rank (default 1)\n"
        "  -d, --device host|cuda  where the model trains: host (OpenBLAS) or cuda (cuDNN +\n"
        "                        cuBLAS, one GPU per node-local rank; gradients reduced from\n"
        "                        device memory) (default host)\n"
        "  --bench-sgemm         measure OpenBLAS SGEMM GFLOP/s and the model's GFLOP/s\n"
        "  -o FILE               HDF5 archive (default: under results/; 'none' = no archive)\n"
        "  --force               overwrite an existing archive\n"
        "  --list-reducers       print each reducer with its traits and exit\n"
        "  -h, --help            this text\n"
        "\n" BENCH_MALLOC_HELP);
}

/* "name exact|lossy|gossip|nocomm" lines, for scripts and tests. */
static void list_reducers(void)
{
    static const char *names[] = {"exact", "lossy", "gossip", "nocomm"};
    for (size_t i = 0; rank == 0 && i < rb_reducer_count(); i++) {
        unsigned t = 0;
        rb_reducer_traits(rb_reducer_name_at(i), &t);
        printf("%s", rb_reducer_name_at(i));
        for (int b = 0; b < 4; b++)
            if (t & (1u << b))
                printf(" %s", names[b]);
        printf("\n");
    }
}

enum {
    OPT_MODEL = 256, OPT_DATA, OPT_FORMAT, OPT_TRAIN_LIMIT, OPT_TEST_LIMIT, OPT_VOCAB, OPT_CONTEXT,
    OPT_EMBED, OPT_HIDDEN, OPT_WRITE_CORPUS, OPT_BATCH, OPT_LR, OPT_MOMENTUM, OPT_WD, OPT_WARMUP,
    OPT_SCHEDULE, OPT_EPOCHS, OPT_ITERS, OPT_SEED, OPT_SHUFFLE, OPT_REDUCER, OPT_SPARSIFY,
    OPT_EF, OPT_EVAL, OPT_LOG, OPT_TACC, OPT_TPPL, OPT_THREADS, OPT_BENCH, OPT_FORCE, OPT_LIST
};

static const struct option long_opts[] = {
    {"model", 1, 0, OPT_MODEL}, {"data", 1, 0, OPT_DATA}, {"format", 1, 0, OPT_FORMAT},
    {"train-limit", 1, 0, OPT_TRAIN_LIMIT}, {"test-limit", 1, 0, OPT_TEST_LIMIT},
    {"vocab", 1, 0, OPT_VOCAB}, {"context", 1, 0, OPT_CONTEXT}, {"embed-dim", 1, 0, OPT_EMBED},
    {"hidden", 1, 0, OPT_HIDDEN}, {"write-corpus", 1, 0, OPT_WRITE_CORPUS},
    {"batch", 1, 0, OPT_BATCH}, {"lr", 1, 0, OPT_LR}, {"momentum", 1, 0, OPT_MOMENTUM},
    {"weight-decay", 1, 0, OPT_WD}, {"warmup", 1, 0, OPT_WARMUP}, {"schedule", 1, 0, OPT_SCHEDULE},
    {"epochs", 1, 0, OPT_EPOCHS}, {"iterations", 1, 0, OPT_ITERS}, {"seed", 1, 0, OPT_SEED},
    {"shuffle", 1, 0, OPT_SHUFFLE}, {"reducer", 1, 0, OPT_REDUCER},
    {"sparsify", 1, 0, OPT_SPARSIFY}, {"error-feedback", 1, 0, OPT_EF},
    {"eval-every", 1, 0, OPT_EVAL}, {"log-every", 1, 0, OPT_LOG},
    {"target-accuracy", 1, 0, OPT_TACC}, {"target-perplexity", 1, 0, OPT_TPPL},
    {"threads", 1, 0, OPT_THREADS}, {"bench-sgemm", 0, 0, OPT_BENCH}, {"force", 0, 0, OPT_FORCE},
    {"list-reducers", 0, 0, OPT_LIST},    {"device", 1, 0, 'd'}, {"help", 0, 0, 'h'},
    {0, 0, 0, 0}};

static void defaults(train_opts *o)
{
    memset(o, 0, sizeof *o);
    o->model = "mlp", o->format = "auto", o->reducer = "dense", o->shuffle = "local";
    o->sparsify = "none", o->schedule = "cosine";
    o->batch = 64, o->epochs = 1, o->threads = 1, o->ctx = 3, o->embed_dim = 64, o->hidden = 256;
    o->vocab = 10000, o->error_feedback = 1, o->warmup = 100;
    o->lr = -1.0, o->momentum = 0.9, o->weight_decay = 5e-4;
    o->seed = 1, o->device = "host";
    rb_options_default(&o->ropts);
}

static const char *optname(int c)
{
    for (const struct option *p = long_opts; p->name; p++)
        if (p->val == c)
            return p->name;
    return "?";
}

#define BAD(...) bench_usage_error(prog, __VA_ARGS__)

static int int_arg(int c, const char *s, long min, long max)
{
    int v;
    if (bench_parse_int(s, min, max, &v) < 0)
        BAD("--%s: '%s' is not an integer in %ld..%ld", optname(c), s, min, max);
    return v;
}

static double dbl_arg(int c, const char *s, double min, double max)
{
    double v;
    if (bench_parse_double(s, min, max, &v) < 0)
        BAD("--%s: '%s' is not a number in %g..%g", optname(c), s, min, max);
    return v;
}

static uint64_t u64_arg(int c, const char *s)
{
    uint64_t v;
    if (bench_parse_u64(s, &v) < 0)
        BAD("--%s: '%s' is not a non-negative integer", optname(c), s);
    return v;
}

static void parse_sparsify(train_opts *o)
{
    const char *s = o->sparsify;
    if (!strcmp(s, "none"))
        return;
    if (!strncmp(s, "topk:", 5)) {
        o->sparsify_kind = 1;
        if (bench_parse_double(s + 5, 1e-9, 1.0, &o->sparsify_value) < 0)
            BAD("--sparsify: '%s': topk:R needs a fraction 0 < R <= 1", s);
    } else if (!strncmp(s, "threshold:", 10)) {
        o->sparsify_kind = 2;
        if (bench_parse_double(s + 10, 0.0, 1e30, &o->sparsify_value) < 0)
            BAD("--sparsify: '%s': threshold:T needs T >= 0", s);
    } else
        BAD("--sparsify: '%s' is not none, topk:R or threshold:T", s);
}

static void parse_args(int argc, char **argv, train_opts *o)
{
    defaults(o);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":hO:o:T:d:", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_MODEL: o->model = optarg; break;
        case OPT_DATA: o->data = optarg; break;
        case OPT_FORMAT: o->format = optarg; break;
        case OPT_TRAIN_LIMIT: o->train_limit = u64_arg(c, optarg); break;
        case OPT_TEST_LIMIT: o->test_limit = u64_arg(c, optarg); break;
        case OPT_VOCAB: o->vocab = int_arg(c, optarg, 0, 10000000); break;
        case OPT_CONTEXT: o->ctx = int_arg(c, optarg, 1, 64); break;
        case OPT_EMBED: o->embed_dim = int_arg(c, optarg, 1, 4096); break;
        case OPT_HIDDEN: o->hidden = int_arg(c, optarg, 1, 65536); break;
        case OPT_WRITE_CORPUS: o->write_corpus = optarg; break;
        case OPT_BATCH: o->batch = int_arg(c, optarg, 1, 65536); break;
        case OPT_LR: o->lr = dbl_arg(c, optarg, 0.0, 1e6); break;
        case OPT_MOMENTUM: o->momentum = dbl_arg(c, optarg, 0.0, 0.999999); break;
        case OPT_WD: o->weight_decay = dbl_arg(c, optarg, 0.0, 1.0); break;
        case OPT_WARMUP: o->warmup = int_arg(c, optarg, 0, 1L << 30); break;
        case OPT_SCHEDULE: o->schedule = optarg; break;
        case OPT_EPOCHS: o->epochs = int_arg(c, optarg, 1, 1000000); break;
        case OPT_ITERS: o->max_iters = int_arg(c, optarg, 0, 1L << 30); break;
        case OPT_SEED: o->seed = u64_arg(c, optarg); break;
        case OPT_SHUFFLE: o->shuffle = optarg; break;
        case OPT_REDUCER: o->reducer = optarg; break;
        case OPT_SPARSIFY: o->sparsify = optarg; break;
        case OPT_EF: o->error_feedback = int_arg(c, optarg, 0, 1); break;
        case OPT_EVAL: o->eval_every = int_arg(c, optarg, 0, 1L << 30); break;
        case OPT_LOG: o->log_every = int_arg(c, optarg, 0, 1L << 30); break;
        case OPT_TACC: o->target_accuracy = dbl_arg(c, optarg, 0.0, 100.0); break;
        case OPT_TPPL: o->target_perplexity = dbl_arg(c, optarg, 0.0, 1e30); break;
        case OPT_THREADS: o->threads = int_arg(c, optarg, 1, 1024); break;
        case OPT_BENCH: o->bench_sgemm = 1; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_LIST: list_reducers(); bench_exit(RB_EXIT_OK);
        case 'O':
            if (rb_options_set(&o->ropts, optarg) != RB_OK)
                BAD("-O %s: %s", optarg, rb_last_error());
            break;
        case 'o': o->output = optarg; break;
        case 'd': o->device = optarg; break;
        case 'T':
            if (bench_parse_double(optarg, 0.0, 1e9, &o->time_limit) < 0)
                BAD("-T: '%s' is not a number of seconds >= 0", optarg);
            break;
        case 'h': usage(); bench_exit(RB_EXIT_OK);
        case ':': BAD("option '%s' needs a value (see --help)", argv[optind - 1]);
        default: BAD("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        BAD("unexpected argument '%s' (see --help)", argv[optind]);
    if (strcmp(o->model, "mlp") && strcmp(o->model, "lenet") && strcmp(o->model, "wordlm"))
        BAD("--model: '%s' is not mlp, lenet or wordlm", o->model);
    if (strcmp(o->device, "host") && strcmp(o->device, "cuda"))
        BAD("--device: '%s' is not host or cuda", o->device);
    if (!strcmp(o->device, "cuda") && !gpu_model_available())
        BAD("--device cuda: %s", gpu_model_libraries());
    if (strcmp(o->shuffle, "local") && strcmp(o->shuffle, "ring"))
        BAD("--shuffle: '%s' is not local or ring", o->shuffle);
    if (strcmp(o->schedule, "const") && strcmp(o->schedule, "cosine") && strcmp(o->schedule, "step"))
        BAD("--schedule: '%s' is not const, cosine or step", o->schedule);
    const char *fmts[] = {"auto", "idx", "cifar", "tokens", "fortunes"};
    int fok = 0;
    for (size_t i = 0; i < 5; i++)
        fok |= !strcmp(o->format, fmts[i]);
    if (!fok)
        BAD("--format: '%s' is not auto, idx, cifar, tokens or fortunes", o->format);
    unsigned traits;
    if (rb_reducer_traits(o->reducer, &traits) != RB_OK)
        BAD("--reducer: '%s' is not a reducer (see --help for the list)", o->reducer);
    if (o->vocab == 1 || o->vocab == 2)
        BAD("--vocab: %d leaves no room for words besides <unk> and <eos>", o->vocab);
    parse_sparsify(o);
    if (o->lr < 0)
        o->lr = strcmp(o->model, "mlp") ? 0.1 : 0.05;
    if (!o->data)
        o->data = strcmp(o->model, "wordlm") ? DEFAULT_IMAGES : DEFAULT_TEXT;
}

/* ----------------------------------------------------------------- data */
static int exists(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, R_OK) == 0;
}

/* First of name / name.gz present in dir, into path. */
static void idx_path(const char *dir, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.gz", dir, name);
    if (access(path, R_OK) != 0)
        snprintf(path, len, "%s/%s", dir, name);
}

static const char *detect_format(const train_opts *o)
{
    if (strcmp(o->format, "auto"))
        return o->format;
    const char *d = o->data;
    if (!strcmp(o->model, "wordlm"))
        return exists(d, "train.tokens") || exists(d, "wiki.train.tokens") ? "tokens" : "fortunes";
    if (exists(d, "data_batch_1.bin") || exists(d, "test_batch.bin"))
        return "cifar";
    return "idx";
}

static int load_images(const train_opts *o, const char *fmt, dataset *tr, dataset *te, char *err,
                       size_t len)
{
    shard s_tr = {rank, nranks, o->train_limit}, s_te = {rank, nranks, o->test_limit};
    if (!strcmp(fmt, "idx")) {
        char im[4096], lb[4096];
        idx_path(o->data, "train-images-idx3-ubyte", im, sizeof im);
        idx_path(o->data, "train-labels-idx1-ubyte", lb, sizeof lb);
        if (idx_load(im, lb, &s_tr, tr, err, len) < 0)
            return -1;
        idx_path(o->data, "t10k-images-idx3-ubyte", im, sizeof im);
        idx_path(o->data, "t10k-labels-idx1-ubyte", lb, sizeof lb);
        return idx_load(im, lb, &s_te, te, err, len);
    }
    if (!strcmp(fmt, "cifar")) {
        char p[6][4096];
        const char *files[6];
        for (int i = 0; i < 6; i++) {
            if (i < 5)
                snprintf(p[i], sizeof p[i], "%s/data_batch_%d.bin", o->data, i + 1);
            else
                snprintf(p[i], sizeof p[i], "%s/test_batch.bin", o->data);
            files[i] = p[i];
        }
        if (cifar_load(files, 5, &s_tr, tr, err, len) < 0)
            return -1;
        return cifar_load(files + 5, 1, &s_te, te, err, len);
    }
    snprintf(err, len, "--format %s does not hold images (model %s)", fmt, o->model);
    return -1;
}

static int load_text(const train_opts *o, const char *fmt, dataset *tr, dataset *te, corpus *c,
                     char *err, size_t len)
{
    int rc;
    if (!strcmp(fmt, "tokens"))
        rc = corpus_load_tokens(o->data, o->vocab, c, err, len);
    else if (!strcmp(fmt, "fortunes"))
        rc = corpus_build_fortunes(o->data, o->vocab, c, err, len);
    else {
        snprintf(err, len, "--format %s does not hold text (model wordlm)", fmt);
        return -1;
    }
    if (rc < 0)
        return -1;
    if (o->write_corpus && rank == 0 && corpus_write_tokens(c, o->write_corpus, err, len) < 0)
        return -1;
    shard s_tr = {rank, nranks, o->train_limit}, s_te = {rank, nranks, o->test_limit};
    if (corpus_samples(c, SPLIT_TRAIN, o->ctx, &s_tr, tr, err, len) < 0)
        return -1;
    return corpus_samples(c, SPLIT_VALID, o->ctx, &s_te, te, err, len);
}

/* 0 when every rank succeeded; otherwise the lowest failing rank prints. */
static int agree_ok(int failed, const char *err)
{
    int me = failed ? rank : nranks, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < nranks && rank == first)
        fprintf(stderr, "%s: %s\n", prog, err);
    return first < nranks ? -1 : 0;
}

/* ------------------------------------------------------------- batches */
/* Images: bytes -> floats in [-1, 1]; tokens: copy the ids. */
static void make_batch(const dataset *d, const size_t *slots, int B, float *x, int32_t *y)
{
    for (int s = 0; s < B; s++) {
        const uint8_t *r = d->x + slots[s] * d->rec;
        if (d->kind == DATA_IMAGES) {
            float *xs = x + (size_t)s * d->rec;
            for (size_t i = 0; i < d->rec; i++)
                xs[i] = (float)r[i] * (2.0f / 255.0f) - 1.0f;
        } else
            memcpy((int32_t *)(void *)x + (size_t)s * d->ctx, r, d->rec);
        y[s] = d->y[slots[s]];
    }
}

static void permute(size_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(train_rng_next(&seed) % i);
        size_t t = p[i - 1];
        p[i - 1] = p[j], p[j] = t;
    }
}

/* GossipGraD-style ring shuffle: this step's batch goes to rank+1 while the
 * previous rank's arrives, overlapped with the step's compute. */
typedef struct ring {
    uint8_t *sx, *rx;
    int32_t *sy, *ry;
    MPI_Request req[4];
    int active;
} ring;

static void ring_start(ring *g, const dataset *d, const size_t *slots, int B)
{
    if (nranks < 2)
        return;
    for (int s = 0; s < B; s++) {
        memcpy(g->sx + (size_t)s * d->rec, d->x + slots[s] * d->rec, d->rec);
        g->sy[s] = d->y[slots[s]];
    }
    int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
    int bytes = (int)((size_t)B * d->rec);
    MPI_Irecv(g->rx, bytes, MPI_BYTE, from, 71, MPI_COMM_WORLD, &g->req[0]);
    MPI_Irecv(g->ry, B, MPI_INT32_T, from, 72, MPI_COMM_WORLD, &g->req[1]);
    MPI_Isend(g->sx, bytes, MPI_BYTE, to, 71, MPI_COMM_WORLD, &g->req[2]);
    MPI_Isend(g->sy, B, MPI_INT32_T, to, 72, MPI_COMM_WORLD, &g->req[3]);
    g->active = 1;
}

static void ring_finish(ring *g, dataset *d, const size_t *slots, int B)
{
    if (!g->active)
        return;
    MPI_Waitall(4, g->req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < B; s++) {
        memcpy(d->x + slots[s] * d->rec, g->rx + (size_t)s * d->rec, d->rec);
        d->y[slots[s]] = g->ry[s];
    }
    g->active = 0;
}

/* ------------------------------------------------------- sparsification */
/* k-th largest of v[0..n) (0-based), partially reordering v. */
static float kth_largest(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* g += residual; keep entries selected by top-k / threshold; residual =
 * what was dropped (error feedback) or 0. */
static void sparsify(const train_opts *o, float *g, float *residual, float *scratch, size_t n)
{
    if (!o->sparsify_kind || n == 0)
        return;
    if (o->error_feedback)
        for (size_t i = 0; i < n; i++)
            g[i] += residual[i];
    float thr = (float)o->sparsify_value;
    if (o->sparsify_kind == 1) {
        size_t k = (size_t)ceil(o->sparsify_value * (double)n);
        if (k < 1)
            k = 1;
        for (size_t i = 0; i < n; i++)
            scratch[i] = fabsf(g[i]);
        thr = kth_largest(scratch, n, k - 1);
        if (thr == 0.0f)
            thr = 1e-38f;   /* never send zeros as selected entries */
    }
    for (size_t i = 0; i < n; i++) {
        int keep = fabsf(g[i]) >= thr;
        residual[i] = keep || !o->error_feedback ? 0.0f : g[i];
        if (!keep)
            g[i] = 0.0f;
    }
}

/* --------------------------------------------------------------- update */
static double lr_at(const train_opts *o, long t, long total)
{
    double lr = o->lr;
    if (o->warmup > 0 && t < o->warmup)
        lr *= (double)(t + 1) / (double)o->warmup;
    double f = total > 0 ? (double)t / (double)total : 0.0;
    if (!strcmp(o->schedule, "cosine"))
        lr *= 0.5 * (1.0 + cos(M_PI * f));
    else if (!strcmp(o->schedule, "step"))
        lr *= f >= 0.75 ? 0.01 : f >= 0.5 ? 0.1 : 1.0;
    return lr;
}

/* Momentum SGD (PyTorch form): v = mu v + (g + wd w); w -= lr v. */
static void sgd(float *w, const float *g, float *v, size_t n, double lr, double mu, double wd)
{
    float flr = (float)lr, fmu = (float)mu, fwd = (float)wd;
    for (size_t i = 0; i < n; i++) {
        v[i] = fmu * v[i] + g[i] + fwd * w[i];
        w[i] -= flr * v[i];
    }
}

/* -------------------------------------------------------------- trainer */
/* The model where it trains: the host layers (OpenBLAS), or their GPU
 * mirror (cuDNN, cuBLAS) whose device buffers the reducers then see. */
typedef struct trainer {
    model *m;
    gpu_model *g;   /* NULL on the host */
} trainer;

static void gpu_die(const char *what, const char *err)
{
    fprintf(stderr, "%s: rank %d: %s: %s\n", prog, rank, what, err);
    MPI_Abort(MPI_COMM_WORLD, RB_EXIT_FAILED);
}

/* Returns the summed loss over the batch (and the loss gradient is kept). */
static double train_forward(trainer *t, const void *x, const int32_t *y, int b, int *correct)
{
    if (!t->g)
        return model_forward(t->m, x, y, b, correct);
    double loss = 0.0;
    char err[512];
    if (gpu_model_forward(t->g, x, y, b, &loss, correct, err, sizeof err))
        gpu_die("GPU forward", err);
    return loss;
}

static void train_backward(trainer *t, const void *x, const int32_t *y, int b)
{
    char err[512];
    if (t->g) {
        if (gpu_model_backward(t->g, b, err, sizeof err))
            gpu_die("GPU backward", err);
        return;
    }
    if (t->m->egrads)
        memset(t->m->egrads, 0, t->m->n_embed * sizeof(float));
    model_backward(t->m, x, y, b);
}

/* ------------------------------------------------------------ evaluation */
typedef struct eval_result {
    double loss, accuracy, perplexity;
} eval_result;

static eval_result evaluate(trainer *t, const dataset *te, int B, float *x, int32_t *y,
                            size_t *slots)
{
    double sums[3] = {0, 0, 0}, tot[3];   /* loss, correct, count */
    for (size_t at = 0; at < te->n; at += (size_t)B) {
        int b = te->n - at < (size_t)B ? (int)(te->n - at) : B, correct;
        for (int s = 0; s < b; s++)
            slots[s] = at + (size_t)s;
        make_batch(te, slots, b, x, y);
        sums[0] += train_forward(t, x, y, b, &correct);
        sums[1] += correct;
        sums[2] += b;
    }
    MPI_Allreduce(sums, tot, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    eval_result r;
    r.loss = tot[2] > 0 ? tot[0] / tot[2] : NAN;
    r.accuracy = tot[2] > 0 ? 100.0 * tot[1] / tot[2] : NAN;
    r.perplexity = exp(r.loss);
    return r;
}

/* -------------------------------------------------------- SGEMM bench */
static double sgemm_gflops(void)
{
    const int n = 512;
    float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
          *c = malloc((size_t)n * n * sizeof *c);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.1f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    int reps = 0;
    double t0 = MPI_Wtime(), t;
    do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        reps++;
    } while ((t = MPI_Wtime() - t0) < 1.0);
    free(a), free(b), free(c);
    return 2.0 * n * n * (double)n * reps / t / 1e9;
}

/* ------------------------------------------------------------ reducers */
/* One reducer and the buffers it works on: grad and params are device
 * memory under -d cuda, where velocity lives with the model and the
 * sparsification (residual included) runs on the GPU too. */
typedef struct grad_group {
    rb_reducer *r;
    float *grad, *params, *velocity, *residual, *scratch;
    gpu_sparsifier *gpu_sparse;
    size_t n;
    int on_gpu, sparsified;
} grad_group;

static int make_group(grad_group *g, const train_opts *o, size_t rows, size_t cols, float *grad,
                      float *params, int sparsifiable)
{
    memset(g, 0, sizeof *g);
    g->n = rows * cols, g->grad = grad, g->params = params;
    g->on_gpu = !strcmp(o->device, "cuda");
    g->velocity = g->on_gpu ? NULL : calloc(g->n + 1, sizeof(float));
    g->sparsified = sparsifiable && o->sparsify_kind;
    if (g->sparsified && !g->on_gpu) {
        g->residual = calloc(g->n + 1, sizeof(float));
        g->scratch = calloc(g->n + 1, sizeof(float));
    }
    char err[512];
    if (g->sparsified && g->on_gpu &&
        gpu_sparsifier_create(g->n, o->error_feedback, &g->gpu_sparse, err, sizeof err))
        gpu_die("sparsification on the GPU", err);
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = o->reducer, cfg.comm = MPI_COMM_WORLD, cfg.rows = rows, cfg.cols = cols;
    cfg.opts = o->ropts;
    cfg.device = g->on_gpu ? RB_DEVICE_CUDA : RB_DEVICE_HOST;
    int rc = rb_create(&cfg, &g->r);
    if (rc != RB_OK && rank == 0)
        fprintf(stderr, "%s: reducer %s (%zu x %zu gradient): %s: %s\n", prog, o->reducer, rows,
                cols, rb_strerror(rc), rb_last_error());
    return rc;
}

static void free_group(grad_group *g)
{
    if (g->r)
        rb_destroy(g->r);
    free(g->velocity), free(g->residual), free(g->scratch);
    gpu_sparsifier_free(g->gpu_sparse);
}

static void check_rb(int rc, const char *what)
{
    if (rc == RB_OK)
        return;
    fprintf(stderr, "%s: rank %d: %s failed: %s: %s\n", prog, rank, what, rb_strerror(rc),
            rb_last_error());
    MPI_Abort(MPI_COMM_WORLD, RB_EXIT_FAILED);
}

/* Top-k / threshold where the gradient is: the host, or the GPU (same
 * selection: the k-th largest |g| is exact either way). */
static void sparsify_group(const train_opts *o, grad_group *g)
{
    char err[512];
    if (!g->sparsified)
        return;
    if (!g->on_gpu)
        sparsify(o, g->grad, g->residual, g->scratch, g->n);
    else if (gpu_sparsify(g->gpu_sparse, g->grad, o->sparsify_kind == 1, o->sparsify_value, err,
                          sizeof err))
        gpu_die("sparsify", err);
}

static void train_update(trainer *t, grad_group *gd, grad_group *ge, const train_opts *o,
                         double lr)
{
    char err[512];
    if (t->g) {
        if (gpu_model_update(t->g, lr, o->momentum, o->weight_decay, err, sizeof err))
            gpu_die("GPU update", err);
        return;
    }
    sgd(gd->params, gd->grad, gd->velocity, gd->n, lr, o->momentum, o->weight_decay);
    if (ge->r)
        sgd(ge->params, ge->grad, ge->velocity, ge->n, lr, o->momentum, 0.0);
}

/* -d cuda: pick this rank's GPU, mirror the model there, describe it.
 * Every rank learns whether all succeeded; -1 (after a message) if not. */
static int setup_gpu(train_opts *o, model *m, trainer *t)
{
    char err[1024] = "";
    int dev = -1, failed = 0;
    int rc = rb_device_select(MPI_COMM_WORLD, &dev);
    if (rc != RB_OK) {
        snprintf(err, sizeof err, "--device cuda: %s: %s", rb_strerror(rc), rb_last_error());
        failed = 1;
    } else if (gpu_model_create(m, &t->g, err, sizeof err)) {
        failed = 1;
    }
    if (agree_ok(failed, err) < 0)
        return -1;
    char desc[400] = "";
    rb_device_describe(desc, sizeof desc);
    snprintf(o->device_desc, sizeof o->device_desc, "GPU %d: %s; %s", dev, desc,
             gpu_model_libraries());
    bench_printf0("device: rank 0 on %s; phases timed with host clocks after the GPU "
                  "synchronises (the batch upload counts as forward)\n", o->device_desc);
    return 0;
}

static rb_reducer *progress_target;
static void progress_hook(void *ctx)
{
    (void)ctx;
    if (progress_target)
        rb_progress(progress_target);
}

/* ------------------------------------------------------------ main loop */
typedef struct growable {
    void *v;
    size_t n, cap, size;
} growable;

static void *grow(growable *g)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 256;
        void *nv = realloc(g->v, nc * g->size);
        if (!nv) {
            fprintf(stderr, "%s: out of memory\n", prog);
            MPI_Abort(MPI_COMM_WORLD, RB_EXIT_FAILED);
        }
        g->v = nv, g->cap = nc;
    }
    return (char *)g->v + g->size * g->n++;
}

static double checksum(const model *m, int squares)
{
    double s = 0.0;
    for (size_t i = 0; i < m->n_dense; i++)
        s += squares ? (double)m->params[i] * m->params[i] : m->params[i];
    for (size_t i = 0; i < m->n_embed; i++)
        s += squares ? (double)m->eparams[i] * m->eparams[i] : m->eparams[i];
    return s;
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv, "rb_train");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* Before parsing: a bad option on some ranks only must stop every rank. */
    if (!bench_argv_agree(MPI_COMM_WORLD, argc, argv))
        BAD("ranks were started with different command lines");
    train_opts o;
    parse_args(argc, argv, &o);
    openblas_set_num_threads(o.threads);
    int wordlm = !strcmp(o.model, "wordlm");

    rb_archive *arch = NULL;
    if (rb_archive_open(MPI_COMM_WORLD, "rb_train", o.output, o.force, argc, argv, &arch) != 0)
        bench_exit(RB_EXIT_USAGE);

    /* Data. */
    const char *fmt = detect_format(&o);
    dataset tr, te;
    corpus cor = {0};
    char err[4600] = "";
    int failed = wordlm ? load_text(&o, fmt, &tr, &te, &cor, err, sizeof err)
                        : load_images(&o, fmt, &tr, &te, err, sizeof err);
    if (agree_ok(failed, err) < 0) {
        rb_archive_close(arch, 0);
        bench_exit(RB_EXIT_USAGE);
    }
    if (wordlm)
        bench_printf0("corpus: %s (%s): %zu distinct training words, vocabulary %d; "
                      "tokens train %zu valid %zu test %zu\n",
                      o.data, fmt, cor.distinct, cor.vocab, cor.len[0], cor.len[1], cor.len[2]);
    unsigned long long mine = tr.n, n_local;
    MPI_Allreduce(&mine, &n_local, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    long steps_per_epoch = (long)(n_local / (unsigned long long)o.batch);
    if (steps_per_epoch < 1)
        BAD("--batch %d exceeds the smallest shard (%llu training samples per rank)", o.batch,
            n_local);

    /* Model and reducers. */
    model m;
    model_shape shape = {tr.c, tr.h, tr.w, tr.classes, o.ctx, o.embed_dim, o.hidden};
    if (model_build(&m, o.model, &shape, o.batch, o.seed, err, sizeof err) < 0)
        BAD("%s", err);
    trainer trn = {&m, NULL};
    if (!strcmp(o.device, "cuda") && setup_gpu(&o, &m, &trn) < 0) {
        rb_archive_close(arch, 0);
        bench_exit(RB_EXIT_FAILED);
    }
    float *grads = trn.g ? gpu_model_grads(trn.g) : m.grads;
    float *params = trn.g ? gpu_model_params(trn.g) : m.params;
    float *egrads = trn.g ? gpu_model_egrads(trn.g) : m.egrads;
    float *eparams = trn.g ? gpu_model_eparams(trn.g) : m.eparams;
    grad_group gd, ge = {0};
    int rc = make_group(&gd, &o, m.n_dense, 1, grads, params, 1);
    if (rc == RB_OK && m.n_embed)
        rc = make_group(&ge, &o, (size_t)cor.vocab, (size_t)o.embed_dim, egrads, eparams, 0);
    if (rc != RB_OK) {
        rb_archive_close(arch, 0);
        bench_exit(rc == RB_ERR_ARG || rc == RB_ERR_UNKNOWN_REDUCER ? RB_EXIT_USAGE : RB_EXIT_FAILED);
    }
    const rb_options *ro = &o.ropts;
    unsigned traits = 0;
    rb_reducer_traits(o.reducer, &traits);
    int mix_params = (traits & RB_TRAIT_GOSSIP) && (ro->gossip_mix & RB_GOSSIP_MIX_PARAMS);
    int async = (traits & RB_TRAIT_GOSSIP) && ro->gossip_async;
    if (async) {
        progress_target = gd.r;
        model_set_backward_hook(progress_hook, NULL);
    }

    long total_iters = steps_per_epoch * o.epochs;
    if (o.max_iters && o.max_iters < total_iters)
        total_iters = o.max_iters;
    long eval_every = o.eval_every ? o.eval_every : steps_per_epoch;
    long log_every = o.log_every ? o.log_every : (steps_per_epoch >= 10 ? steps_per_epoch / 10 : 1);
    bench_printf0("rb_train: model %s (%zu dense + %zu embedding parameters, %.3g MFLOP/sample "
                  "forward), data %s (%s), %llu train / %zu test samples, %d ranks x batch %d, "
                  "%ld steps/epoch, reducer %s, sparsify %s, shuffle %s\n",
                  o.model, m.n_dense, m.n_embed, model_flops(&m) / 1e6, o.data, fmt,
                  (unsigned long long)tr.total, te.total, nranks, o.batch, steps_per_epoch,
                  o.reducer, o.sparsify, o.shuffle);
    double sgemm = NAN;
    if (o.bench_sgemm) {
        sgemm = sgemm_gflops();
        bench_printf0("sgemm: OpenBLAS SGEMM 512^3, %s kernels, %d thread(s): %.2f GFLOP/s "
                      "(rank 0)\n", openblas_get_corename(), o.threads, sgemm);
    }

    /* Buffers. */
    size_t insz = model_in_size(&m);
    float *xb = malloc((size_t)o.batch * insz * sizeof(float) + 64);
    int32_t *yb = malloc((size_t)o.batch * sizeof(int32_t) + 64);
    size_t *perm = malloc((n_local + 1) * sizeof *perm), *slots = malloc((size_t)o.batch * sizeof *slots);
    ring rg = {0};
    int use_ring = !strcmp(o.shuffle, "ring") && nranks > 1;
    if (use_ring) {
        rg.sx = malloc((size_t)o.batch * tr.rec), rg.rx = malloc((size_t)o.batch * tr.rec);
        rg.sy = malloc((size_t)o.batch * sizeof(int32_t)), rg.ry = malloc((size_t)o.batch * sizeof(int32_t));
    }
    if (!xb || !yb || !perm || !slots || (use_ring && (!rg.sx || !rg.rx || !rg.sy || !rg.ry)))
        BAD("out of memory for batch buffers");

    growable curve = {.size = sizeof(train_curve_row)}, phases = {.size = sizeof(train_phase_row)};
    bench_watchdog_start(o.time_limit);
    double t_start = MPI_Wtime(), t_log = t_start, compute_s = 0.0, steps_s = 0.0;
    double acc_loss = 0.0, acc_correct = 0.0, acc_count = 0.0;      /* since the last eval */
    double log_loss = 0.0, log_correct = 0.0, log_count = 0.0;      /* since the last log line */
    long it = 0;
    int stop = 0, timed_out = 0, reached = 0;
    eval_result last = {NAN, NAN, NAN};
    double last_train_loss = NAN;

    for (int epoch = 0; !stop && it < total_iters; epoch++) {
        permute(perm, n_local, o.seed * 1000003u + (uint64_t)epoch * 7919u + (uint64_t)rank);
        for (long step = 0; step < steps_per_epoch && it < total_iters; step++, it++) {
            if (bench_deadline_passed(MPI_COMM_WORLD)) {
                stop = timed_out = 1;
                break;
            }
            const size_t *bslots = perm + (size_t)step * (size_t)o.batch;
            double t0 = MPI_Wtime();
            make_batch(&tr, bslots, o.batch, xb, yb);
            if (use_ring)
                ring_start(&rg, &tr, bslots, o.batch);
            int correct;
            double loss = train_forward(&trn, xb, yb, o.batch, &correct);
            double t1 = MPI_Wtime();
            train_backward(&trn, xb, yb, o.batch);
            double t2 = MPI_Wtime();
            rb_stats st, st2;
            /* Statistics, counted before the reduction replaces the
             * gradient (the reducers count only what they need) and left
             * out of the step's times (t_stats). */
            uint64_t embed_nnz = 0;
            if (ge.r)
                check_rb(rb_count_nonzeros(ge.r, ge.grad, &embed_nnz), "rb_count_nonzeros");
            double t_stats = MPI_Wtime() - t2;
            sparsify_group(&o, &gd);
            check_rb(rb_reduce(gd.r, gd.grad, &st), "rb_reduce (dense parameters)");
            if (ge.r)
                check_rb(rb_reduce(ge.r, ge.grad, &st2), "rb_reduce (embedding)");
            double t3 = MPI_Wtime();
            double lr = lr_at(&o, it, total_iters);
            train_update(&trn, &gd, &ge, &o, lr);
            if (mix_params) {
                check_rb(rb_mix_params(gd.r, gd.params, &st), "rb_mix_params");
                if (ge.r)
                    check_rb(rb_mix_params(ge.r, ge.params, &st2), "rb_mix_params (embedding)");
            }
            double t4 = MPI_Wtime();
            steps_s += t4 - t0 - t_stats;
            if (use_ring)
                ring_finish(&rg, &tr, bslots, o.batch);
            compute_s += (t2 - t0);
            acc_loss += loss, acc_correct += correct, acc_count += o.batch;
            log_loss += loss, log_correct += correct, log_count += o.batch;
            if (rank == 0) {
                train_phase_row *p = grow(&phases);
                *p = (train_phase_row){it + 1, t1 - t0, t2 - t1, t3 - t2 - t_stats, t4 - t3,
                                       loss / o.batch,
                                       st.bytes_sent + (ge.r ? st2.bytes_sent : 0),
                                       st.bytes_recv + (ge.r ? st2.bytes_recv : 0),
                                       embed_nnz};
            }
            if ((it + 1) % log_every == 0) {
                double v[3] = {log_loss, log_correct, log_count}, s[3];
                MPI_Allreduce(v, s, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                double now = MPI_Wtime();
                bench_printf0("epoch %d iter %ld loss %.4f acc %.2f%% lr %.4g samples/s %.0f\n",
                              epoch + 1, it + 1, s[0] / s[2], 100.0 * s[1] / s[2], lr,
                              s[2] / (now - t_log));
                t_log = now;
                log_loss = log_correct = log_count = 0.0;
            }
            if ((it + 1) % eval_every == 0 || it + 1 == total_iters) {
                double v[3] = {acc_loss, acc_correct, acc_count}, s[3];
                MPI_Allreduce(v, s, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                last = evaluate(&trn, &te, o.batch, xb, yb, slots);
                last_train_loss = s[0] / s[2];
                train_curve_row *c = grow(&curve);
                *c = (train_curve_row){it + 1, (double)(it + 1) / steps_per_epoch,
                                       MPI_Wtime() - t_start, last_train_loss, 100.0 * s[1] / s[2],
                                       last.loss, wordlm ? NAN : last.accuracy,
                                       wordlm ? last.perplexity : NAN};
                if (wordlm)
                    bench_printf0("eval epoch %.2f iter %ld wall %.1f s train_loss %.4f "
                                  "val_loss %.4f val_perplexity %.2f\n",
                                  c->epoch, it + 1, c->wall_s, c->train_loss, last.loss,
                                  last.perplexity);
                else
                    bench_printf0("eval epoch %.2f iter %ld wall %.1f s train_loss %.4f "
                                  "test_loss %.4f test_accuracy %.2f%%\n",
                                  c->epoch, it + 1, c->wall_s, c->train_loss, last.loss,
                                  last.accuracy);
                acc_loss = acc_correct = acc_count = 0.0;
                if ((o.target_accuracy > 0 && !wordlm && last.accuracy >= o.target_accuracy) ||
                    (o.target_perplexity > 0 && wordlm && last.perplexity <= o.target_perplexity)) {
                    reached = stop = 1;
                    bench_printf0("target reached at iteration %ld (%.1f s)\n", it + 1, c->wall_s);
                    it++;
                    break;
                }
            }
        }
    }
    if (async) {
        rb_stats st;
        check_rb(rb_flush(gd.r, gd.grad, gd.params, &st), "rb_flush");
        if (ge.r)
            check_rb(rb_flush(ge.r, ge.grad, ge.params, &st), "rb_flush (embedding)");
    }
    double wall = MPI_Wtime() - t_start;

    /* Model GFLOP/s: forward + backward ~ 3x forward flops, over compute time. */
    double cs_max;
    MPI_Allreduce(&compute_s, &cs_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double gflops = 3.0 * model_flops(&m) * (double)it * o.batch / compute_s / 1e9;
    if (trn.g && gpu_model_download(trn.g, &m))
        gpu_die("download", "cannot copy the parameters from the GPU");
    if (o.bench_sgemm && !trn.g)
        bench_printf0("model: %s forward+backward %.2f GFLOP/s on rank 0 (%.1f%% of SGEMM)\n",
                      o.model, gflops, 100.0 * gflops / sgemm);
    else if (trn.g)
        bench_printf0("model: %s forward+backward %.2f GFLOP/s on rank 0's GPU\n", o.model, gflops);
    bench_printf0("timing: rank 0 forward+backward %.3f s, whole iterations %.3f s "
                  "(%.3f s per epoch of %ld steps)\n",
                  compute_s, steps_s, it ? steps_s / (double)it * (double)steps_per_epoch : 0.0,
                  steps_per_epoch);
    bench_printf0("final: iterations %ld wall_s %.2f train_loss %.9g %s %.9g param_sum %.9g "
                  "param_sq %.9g%s\n",
                  it, wall, last_train_loss, wordlm ? "val_perplexity" : "test_accuracy",
                  wordlm ? last.perplexity : last.accuracy, checksum(&m, 0), checksum(&m, 1),
                  timed_out ? " (time limit)" : reached ? " (target reached)" : "");

    train_summary sum = {nranks, tr.classes, tr.c, tr.h, tr.w, fmt, o.data, tr.total, te.total,
                         m.n_dense, m.n_embed, it, steps_per_epoch, model_flops(&m), gflops, sgemm,
                         wall, last_train_loss, wordlm ? NAN : last.accuracy,
                         wordlm ? last.perplexity : NAN, reached, timed_out, openblas_get_corename()};
    int aok = 0;
    hid_t file = rb_archive_file(arch);
    if (rank == 0 && file != H5I_INVALID_HID)
        aok = train_archive_write(file, &o, &sum, curve.v, curve.n, phases.v, phases.n);
    MPI_Bcast(&aok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char apath[4096] = "";
    if (rb_archive_path(arch))
        snprintf(apath, sizeof apath, "%s", rb_archive_path(arch));
    int cok = rb_archive_close(arch, aok == 0);
    if (rank == 0 && apath[0] && !cok && !aok)
        printf("archive: %s\n", apath);

    free(curve.v), free(phases.v), free(xb), free(yb), free(perm), free(slots);
    free(rg.sx), free(rg.rx), free(rg.sy), free(rg.ry);
    free_group(&gd), free_group(&ge);
    gpu_model_free(trn.g);
    model_free(&m);
    dataset_free(&tr), dataset_free(&te);
    corpus_free(&cor);
    bench_exit(timed_out ? RB_EXIT_TIMEOUT : aok || cok ? RB_EXIT_FAILED : RB_EXIT_OK);
}
