/* rb_train's command line: the option table, its custom values and the
 * defaults that depend on the model. */
#include "train.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "harness/bench_common.h"
#include "harness/memneed.h"
#include "harness/tmpfiles.h"

#define PROG "rb_train"
#define DEFAULT_IMAGES "/usr/share/datasets/fashion-mnist"
#define DEFAULT_TEXT "/usr/share/games/fortunes"
#define DEFAULT_DICT "/usr/share/dictd/gcide.dict.dz"

/* ---------------------------------------------------------- custom values */

static int parse_reducer(const char *v, void *opts, char *msg, size_t len)
{
    unsigned traits;
    int rc = rb_reducer_traits(v, &traits);
    if (rc != RB_OK) {
        snprintf(msg, len, "%s: '%s' is not a reducer (see --help for the list)", rb_strerror(rc), v);
        return -1;
    }
    ((train_opts *)opts)->reducer = v;
    return 0;
}

/* A reducer's name, or "same" (then the --reducer's). */
static int parse_dense_reducer(const char *v, void *opts, char *msg, size_t len)
{
    unsigned traits;
    if (strcmp(v, "same") && rb_reducer_traits(v, &traits) != RB_OK) {
        snprintf(msg, len, "'%s' is not a reducer or 'same' (see --help for the list)", v);
        return -1;
    }
    ((train_opts *)opts)->dense_reducer = v;
    return 0;
}

/* none | topk:R | threshold:T into sparsify, sparsify_kind, sparsify_value. */
static int parse_sparsify(const char *v, void *opts, char *msg, size_t len)
{
    train_opts *o = opts;
    o->sparsify = v;
    o->sparsify_kind = SPARSIFY_NONE;
    if (!strcmp(v, "none"))
        return 0;
    if (!strncmp(v, "topk:", 5)) {
        o->sparsify_kind = SPARSIFY_TOPK;
        if (bench_parse_double(v + 5, 1e-9, 1.0, &o->sparsify_value) == 0)
            return 0;
        snprintf(msg, len, "'%s': topk:R needs a fraction 0 < R <= 1", v);
    } else if (!strncmp(v, "threshold:", 10)) {
        o->sparsify_kind = SPARSIFY_THRESHOLD;
        if (bench_parse_double(v + 10, 0.0, 1e30, &o->sparsify_value) == 0)
            return 0;
        snprintf(msg, len, "'%s': threshold:T needs T >= 0", v);
    } else {
        snprintf(msg, len, "'%s' is not none, topk:R or threshold:T", v);
    }
    return -1;
}

/* --checkpoint-every N (steps) or Ns / Nm / Nh (wall time). */
static int parse_checkpoint_every(const char *v, void *opts, char *msg, size_t len)
{
    train_opts *o = opts;
    size_t n = strlen(v);
    char unit = n ? v[n - 1] : '\0';
    double scale = unit == 's' ? 1.0 : unit == 'm' ? 60.0 : unit == 'h' ? 3600.0 : 0.0;
    o->checkpoint_every = 0, o->checkpoint_seconds = 0.0;
    if (scale > 0.0) {
        char num[64];
        double x;
        snprintf(num, sizeof num, "%.*s", (int)(n - 1), v);
        if (n > 1 && n - 1 < sizeof num && bench_parse_double(num, 1e-3, 1e9, &x) == 0) {
            o->checkpoint_seconds = x * scale;
            return 0;
        }
    } else {
        uint64_t steps;
        if (bench_parse_u64(v, &steps) == 0 && steps >= 1 && steps <= (1u << 30)) {
            o->checkpoint_every = (long)steps;
            return 0;
        }
    }
    snprintf(msg, len, "'%s' is not a number of steps >= 1 or a time (30s, 10m, 2h)", v);
    return -1;
}

/* --list-reducers: "name exact|lossy|gossip|nocomm" lines, for scripts. */
static void list_reducers(const bench_cli *cli, void *opts)
{
    (void)cli, (void)opts;
    static const char *names[] = {"exact", "lossy", "gossip", "nocomm"};
    for (size_t i = 0; bench_world_rank() == 0 && i < rb_reducer_count(); i++) {
        unsigned t = 0;
        rb_reducer_traits(rb_reducer_name_at(i), &t);
        printf("%s", rb_reducer_name_at(i));
        for (int b = 0; b < 4; b++)
            if (t & (1u << b))
                printf(" %s", names[b]);
        printf("\n");
    }
}

/* ---------------------------------------------------------- --help */

static const char *reducer_help(void)
{
    static char buf[512];
    return bench_cli_reducer_names("one of libreducer's reducers:", buf, sizeof buf);
}

static const char *reducer_option_help(void)
{
    static char buf[1024];
    size_t off = (size_t)snprintf(buf, sizeof buf, "reducer option (repeatable); keys:");
    for (size_t i = 0; i < rb_option_count() && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", rb_option_info_at(i)->key);
    return buf;
}

static void epilogue(FILE *out)
{
    fprintf(out, "\n" BENCH_MALLOC_HELP);
    fprintf(out, "\nExit status: 0 ok, 1 error or divergence, 2 usage error, 3 no progress\n"
                 "(--stall-timeout: a network or peer fault), 124 timeout.  SIGTERM, SIGINT, SIGHUP,\n"
                 "SIGUSR1 or SIGUSR2 to any rank stops every rank at the next step: the curve and\n"
                 "the steps so far are kept in FILE.h5.interrupted, one line names the signal, and\n"
                 "the ranks die by it (another signal, or SIGPIPE, ends a rank at once).  With\n"
                 "--checkpoint the run's state is written first: the same command with --resume\n"
                 "continues it (a Slurm job requeued by jobscripts/*/train.sbatch does).\n");
}

/* ---------------------------------------------------------- the table */

#define F(field) offsetof(train_opts, field)
#define SECTION(text) {.type = BENCH_OPT_SECTION, .help = text}
#define ITERS (1L << 30)
static const bench_opt options[] = {
    SECTION("Model and data:"),
    {BENCH_OPT_CHOICE, "model", 0, "NAME", F(model), .def = "mlp",
     .choices = "mlp|lenet|wordlm|embedlm", .help = "mlp | lenet | wordlm | embedlm"},
    {BENCH_OPT_STRING, "data", 0, "DIR", F(data),
     .help = "images: IDX or CIFAR-10 binary directory; wordlm, embedlm: .tokens directory, fortune "
     "files or a dictd NAME.dict[.dz] (NAME.index beside it)",
     .def_text = "images " DEFAULT_IMAGES ", wordlm " DEFAULT_TEXT ", embedlm " DEFAULT_DICT},
    {BENCH_OPT_CHOICE, "format", 0, "F", F(format), .def = "auto",
     .choices = "auto|idx|cifar|tokens|fortunes|dictd",
     .help = "auto | idx | cifar | tokens | fortunes | dictd"},
    {BENCH_OPT_U64, "train-limit", 0, "N", F(train_limit), .def = "0", .def_text = "0 = all",
     .help = "use the first N training samples"},
    {BENCH_OPT_U64, "test-limit", 0, "N", F(test_limit), .def_text = "0 = all; embedlm 20000",
     .help = "use the first N test samples"},
    {BENCH_OPT_INT, "vocab", 0, "N", F(vocab), 0, 10000000, NULL,
     .help = "wordlm, embedlm vocabulary (embedding rows) incl. <unk>,<eos>",
     .def_text = "wordlm 10000, embedlm 32768; 0 = all"},
    {BENCH_OPT_INT, "out-vocab", 0, "N", F(out_vocab), 3, 10000000, "1024",
     .help = "embedlm: words predicted: <eos> and the N-2 most frequent, <unk> for every other"},
    {BENCH_OPT_INT, "context", 0, "K", F(ctx), 1, 64, NULL, .help = "wordlm, embedlm: previous words seen",
     .def_text = "wordlm 3, embedlm 8"},
    {BENCH_OPT_INT, "embed-dim", 0, "D", F(embed_dim), 1, 4096, "64",
     .help = "wordlm, embedlm embedding width"},
    {BENCH_OPT_INT, "hidden", 0, "H", F(hidden), 1, 65536, NULL, .help = "wordlm, embedlm hidden units",
     .def_text = "wordlm 256, embedlm 128"},
    {BENCH_OPT_STRING, "write-corpus", 0, "DIR", F(write_corpus),
     .help = "wordlm, embedlm: also write the corpus as DIR/{train,valid,test}.tokens"},
    SECTION("Optimisation:"),
    {BENCH_OPT_INT, "batch", 0, "N", F(batch), 1, 65536, NULL,
     .help = "samples per rank per step; global batch = N x ranks", .def_text = "64, embedlm 128"},
    {BENCH_OPT_DOUBLE, "lr", 0, "X", F(lr), 0.0, 1e6, NULL, .help = "learning rate for the global batch",
     .def_text = "mlp 0.05, lenet 0.1, wordlm 0.1, embedlm 1.0"},
    {BENCH_OPT_DOUBLE, "momentum", 0, "X", F(momentum), 0.0, 0.999999, "0.9", .help = "SGD momentum"},
    {BENCH_OPT_DOUBLE, "weight-decay", 0, "X", F(weight_decay), 0.0, 1.0, "5e-4",
     .help = "on dense parameters"},
    {BENCH_OPT_LONG, "lr-warmup", 0, "N", F(warmup), 0, ITERS, "100",
     .help = "iterations of linear learning-rate warm-up (was --warmup, which in rb_micro and OSU "
             "is untimed calls)"},
    {BENCH_OPT_MOVED, "warmup", 0, .help = "the learning-rate warm-up is --lr-warmup N (--warmup is "
     "rb_micro's and OSU's untimed calls)"},
    {BENCH_OPT_CHOICE, "schedule", 0, "S", F(schedule), .def = "cosine", .choices = "const|cosine|step",
     .help = "const | cosine | step (x0.1 at 50% and 75%)"},
    {BENCH_OPT_INT, "epochs", 0, "N", F(epochs), 1, 1000000, "1", .help = "passes over the training set"},
    {BENCH_OPT_LONG, "iterations", 0, "N", F(max_iters), 0, ITERS, NULL, .help = "stop after N steps",
     .def_text = "0 = epochs decide; embedlm 400"},
    {BENCH_OPT_U64, "seed", 0, "N", F(seed), .def = "1", .help = "parameters, shuffling"},
    {BENCH_OPT_CHOICE, "shuffle", 0, "local|ring", F(shuffle), .def = "local", .choices = "local|ring",
     .help = "ring: one batch moves one hop around the ranks each step"},
    SECTION("Reduction:"),
    {BENCH_OPT_CUSTOM, "reducer", 0, "NAME", .def = "dense", .parse = parse_reducer,
     .help_fn = reducer_help},
    {BENCH_OPT_REDUCER_OPTION, "option", 'O', "KEY=VALUE", F(ropts),
     .help_fn = reducer_option_help},
    {BENCH_OPT_CUSTOM, "dense-reducer", 0, "NAME", .def = "same", .parse = parse_dense_reducer,
     .help = "wordlm, embedlm: the reducer of the dense parameters beside the embedding (same = "
     "--reducer's; the S2 authors sketch the embedding only and allreduce the rest: "
     "--reducer s2 --dense-reducer dense); the -O options go to both"},
    {BENCH_OPT_CUSTOM, "sparsify", 0, "S", .def = "none", .parse = parse_sparsify,
     .help = "none | topk:R (keep fraction R) | threshold:T"},
    {BENCH_OPT_INT, "error-feedback", 0, "0|1", F(error_feedback), 0, 1, "1",
     .help = "keep what sparsification dropped for the next step"},
    {BENCH_OPT_CHOICE, "embed-input", 0, "dense|rows", F(embed_input), .def = "rows",
     .choices = "dense|rows",
     .help = "wordlm: hand the embedding gradient to the reducer as the rows the batch touched "
     "(rb_reduce_rows, as PyTorch's sparse embedding gradient) or as the dense table (rb_reduce); "
     "the same result bit for bit; rows on host buffers only (-d cuda: dense); embedlm takes rows "
     "only"},
    SECTION("Run control and output:"),
    {BENCH_OPT_LONG, "eval-every", 0, "N", F(eval_every), 0, ITERS, NULL,
     .help = "evaluate every N iterations", .def_text = "0 = every epoch; embedlm 100"},
    {BENCH_OPT_LONG, "log-every", 0, "N", F(log_every), 0, ITERS, "0",
     .help = "progress line every N iterations", .def_text = "0 = 10 per epoch"},
    {BENCH_OPT_DOUBLE, "target-accuracy", 0, "A", F(target_accuracy), 0.0, 100.0, "0",
     .help = "stop when test accuracy (%) >= A", .def_text = "0 = off"},
    {BENCH_OPT_DOUBLE, "target-perplexity", 0, "P", F(target_perplexity), 0.0, 1e30, "0",
     .help = "stop when validation perplexity <= P", .def_text = "0 = off"},
    {BENCH_OPT_DOUBLE, "timeout", 0, "SEC", F(time_limit), 0.0, 1e9, "0",
     .help = "time limit; exit 124 when hit (was -T)",
     .def_text = "0 = none", .expect = "a number of seconds >= 0"},
    {BENCH_OPT_DOUBLE, "stall-timeout", 0, "SEC", F(stall_timeout), 0.0, 1e9, BENCH_STALL_DEFAULT,
     .help = "a rank that made no progress in training (no step finished) for max(SEC, 10 x the "
             "slowest step so far) names where it is stuck and exits 3: a link down or a peer gone "
             "(evaluations are not watched)",
     .def_text = BENCH_STALL_DEFAULT " s; 0 = off", .expect = "a number of seconds >= 0"},
    {BENCH_OPT_MOVED, NULL, 'T', .help = "the time limit is --timeout SEC (as in rb_micro, whose -T is "
     "OSU's data type)"},
    {BENCH_OPT_INT, "threads", 0, "N", F(threads), 1, 1024, "1", .help = "OpenBLAS threads per rank"},
    {BENCH_OPT_CHOICE, "device", 'd', "host|cuda", F(device), .def = "host", .choices = "host|cuda",
     .help = "where the model trains: host (OpenBLAS) or cuda (cuDNN + cuBLAS, one GPU per "
             "node-local rank; gradients reduced from device memory)"},
    {BENCH_OPT_SIZE, "mem-limit", 'M', "BYTES", F(mem_limit),
     .help = "bytes a rank may hold (K/M/G suffixes, as OSU's -M): the run is refused, once the "
     "data is loaded and before the model is built, when its need (printed) is larger",
     .def_text = BENCH_MEM_LIMIT_DEFAULT " divided by the ranks on the node", .min = 1,
     .expect = BENCH_MEM_LIMIT_EXPECT},
    {BENCH_OPT_FLAG, "bench-sgemm", 0, NULL, F(bench_sgemm), .flag_value = 1,
     .help = "measure OpenBLAS SGEMM GFLOP/s and the model's GFLOP/s"},
    {BENCH_OPT_STRING, "output", 'o', "FILE.h5", F(output), .help = "HDF5 archive ('none' = no archive)",
     .def_text = "under results/"},
    {BENCH_OPT_FLAG, "force", 0, NULL, F(force), .flag_value = 1,
     .help = "overwrite an existing archive (and --record-gradients file, --write-corpus files)"},
    {BENCH_OPT_STRING, "record-gradients", 0, "FILE.h5", F(record),
     .help = "record each rank's embedding gradient (its non-zero rows, before the reduction) into "
     "a gradient trace for rb_micro --input trace:FILE.h5 (results/README.md); models with an "
     "embedding, host only; dense layers are not recorded"},
    {BENCH_OPT_LONG, "record-every", 0, "N", F(record_every), 1, ITERS, "1",
     .help = "record every N-th step"},
    {BENCH_OPT_SIZE, "record-max-bytes", 0, "BYTES", F(record_max_bytes), .def = "64M",
     .help = "the trace's bound (ids and values; at most 1G): steps past it are not recorded and the "
     "trace says capped", .expect = "a size"},
    {BENCH_OPT_STRING, "checkpoint", 0, "FILE.h5", F(checkpoint),
     .help = "write a checkpoint (parameters, momentum, residuals, the reducers' state, the data "
     "position, the curve so far) to FILE every --checkpoint-every steps, on a stop signal and at "
     "--timeout; removed when the run ends complete"},
    {BENCH_OPT_CUSTOM, "checkpoint-every", 0, "N|T", .def = "10m", .parse = parse_checkpoint_every,
     .help = "between checkpoints: N steps, or T of wall time on rank 0's clock (Ns, Nm, Nh; "
     "looked at every 10 steps)"},
    {BENCH_OPT_FLAG, "resume", 0, NULL, F(resume), .flag_value = 1,
     .help = "continue from the --checkpoint FILE when it exists (else start at step 0): the same "
     "run, bit for bit; a checkpoint of other options, data or ranks is refused, naming the "
     "difference"},
    {BENCH_OPT_ACTION, "list-reducers", 0, .action = list_reducers,
     .help = "print each reducer with its traits and exit"},
    {BENCH_OPT_ACTION, "help", 'h', .action = bench_cli_help_action, .help = "this text"},
    {.type = BENCH_OPT_END},
};
#undef ITERS
#undef SECTION
#undef F

const bench_cli train_cli = {
    .prog = PROG,
    .usage = "Usage: " PROG " [options]   (run under mpirun; every rank the same options)\n"
             "Data-parallel SGD of real models on real data; any libreducer reducer\n"
             "aggregates the gradients (docs/training.md).\n",
    .opts = options,
    .help_col = 30,
    .epilogue = epilogue,
};

/* ---------------------------------------------------------- parse */

/* The defaults that depend on the model, for what the command line left
 * unset.  embedlm's make one run short (400 steps of 128 samples a rank,
 * evaluated on 20,000 validation words every 100): it is meant to be run
 * for every reducer and several seeds (docs/training.md). */
static void model_defaults(train_opts *o)
{
    int emb = !strcmp(o->model, "embedlm"), lm = emb || !strcmp(o->model, "wordlm");
    if (o->lr < 0)
        o->lr = emb ? 1.0 : strcmp(o->model, "mlp") ? 0.1 : 0.05;
    if (o->vocab < 0)
        o->vocab = emb ? 32768 : 10000;
    if (o->ctx < 0)
        o->ctx = emb ? 8 : 3;
    if (o->hidden < 0)
        o->hidden = emb ? 128 : 256;
    if (o->batch < 0)
        o->batch = emb ? 128 : 64;
    if (o->max_iters < 0)
        o->max_iters = emb ? 400 : 0;
    if (o->eval_every < 0)
        o->eval_every = emb ? 100 : 0;
    if (o->test_limit == UINT64_MAX)
        o->test_limit = emb ? 20000 : 0;
    if (!o->data)
        o->data = emb ? DEFAULT_DICT : lm ? DEFAULT_TEXT : DEFAULT_IMAGES;
}

/* A reducer of its own for the dense parameters needs a model that has
 * other parameters, and gossip mixes every parameter with one partner. */
static void check_dense_reducer(const train_opts *o)
{
    if (!strcmp(o->dense_reducer, o->reducer))
        return;
    if (strcmp(o->model, "embedlm") && strcmp(o->model, "wordlm"))
        bench_usage_error(PROG, "--dense-reducer %s: %s has no embedding; every parameter is "
                          "reduced by --reducer %s", o->dense_reducer, o->model, o->reducer);
    unsigned a = 0, b = 0;
    rb_reducer_traits_with(o->reducer, &o->ropts, &a);
    rb_reducer_traits_with(o->dense_reducer, &o->ropts, &b);
    if ((a | b) & RB_TRAIT_GOSSIP)
        bench_usage_error(PROG, "--dense-reducer %s with --reducer %s: gossip mixes all the "
                          "parameters with one partner a step, so both groups must use it",
                          o->dense_reducer, o->reducer);
}

/* Checkpoints hold host memory and state between steps that bytes can
 * hold: not the GPU's buffers, not a gossip exchange in flight, not a
 * gradient trace being written. */
static void check_checkpoint(const train_opts *o)
{
    if (o->resume && !o->checkpoint)
        bench_usage_error(PROG, "--resume needs --checkpoint FILE.h5 (the checkpoint to continue from)");
    if (!o->checkpoint)
        return;
    if (!o->checkpoint[0] || !strcmp(o->checkpoint, "none"))
        bench_usage_error(PROG, "--checkpoint: give a file name");
    if (strcmp(o->device, "host"))
        bench_usage_error(PROG, "--checkpoint: host training only for now (under -d %s the model, "
                          "momentum and residuals live on the GPU)", o->device);
    if (o->ropts.gossip_async)
        bench_usage_error(PROG, "--checkpoint with gossip_async=on: between steps an exchange is in "
                          "flight, which a checkpoint cannot hold (gossip_async=off can be resumed)");
    if (o->record)
        bench_usage_error(PROG, "--checkpoint with --record-gradients: a resumed run cannot continue "
                          "the trace; record in a run of its own");
    if (o->output && bench_same_file(o->checkpoint, o->output))
        bench_usage_error(PROG, "--checkpoint %s is the archive -o %s; give it another name",
                          o->checkpoint, o->output);
}

void train_parse_options(int argc, char **argv, train_opts *o)
{
    memset(o, 0, sizeof *o);
    /* set from the model (model_defaults) unless given */
    o->lr = -1.0;
    o->vocab = o->ctx = o->hidden = o->batch = -1;
    o->max_iters = o->eval_every = -1;
    o->test_limit = UINT64_MAX;
    rb_options_default(&o->ropts);
    bench_cli_parse_or_exit(&train_cli, argc, argv, o);
    if (o->vocab == 1 || o->vocab == 2)
        bench_usage_error(PROG, "--vocab: %d leaves no room for words besides <unk> and <eos>", o->vocab);
    model_defaults(o);
    /* embedlm's embedding is updated by the rows of the reduction's result
     * (train_update), which rb_reduce_rows gives on host buffers only */
    if (!strcmp(o->model, "embedlm") && strcmp(o->embed_input, "rows"))
        bench_usage_error(PROG, "--embed-input %s: embedlm hands its embedding gradient to the "
                          "reducer as rows and updates it by rows (--embed-input rows)",
                          o->embed_input);
    if (!strcmp(o->model, "embedlm") && strcmp(o->device, "host"))
        bench_usage_error(PROG, "--device %s: embedlm trains on the host only (its embedding is "
                          "reduced and updated by rows, in host memory)", o->device);
    if (!strcmp(o->model, "embedlm") && o->vocab > 0 && o->out_vocab > o->vocab)
        bench_usage_error(PROG, "--out-vocab %d: more words predicted than the --vocab %d words "
                          "embedded", o->out_vocab, o->vocab);
    if (!strcmp(o->dense_reducer, "same"))
        o->dense_reducer = o->reducer;
    check_dense_reducer(o);
    if (o->record && !strcmp(o->device, "cuda"))
        bench_usage_error(PROG, "--record-gradients: host only (the gradient lives on the GPU under -d cuda)");
    check_checkpoint(o);
    if (o->record && o->record_max_bytes > BENCH_TRACE_MAX_BYTES)
        bench_usage_error(PROG, "--record-max-bytes: at most %llu bytes",
                          (unsigned long long)BENCH_TRACE_MAX_BYTES);
}
