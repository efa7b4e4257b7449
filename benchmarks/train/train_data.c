/* rb_train's data selection: which format, this rank's shards of the
 * training and test sets, and the batches drawn from them. */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/sha256.h"

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

const char *train_detect_format(const train_opts *o)
{
    if (strcmp(o->format, "auto"))
        return o->format;
    const char *d = o->data;
    int tokens = exists(d, "train.tokens") || exists(d, "wiki.train.tokens");
    if (!strcmp(o->model, "wordlm"))
        return tokens ? "tokens" : "fortunes";
    if (!strcmp(o->model, "embedlm"))
        return tokens ? "tokens" : "dictd";
    if (exists(d, "data_batch_1.bin") || exists(d, "test_batch.bin"))
        return "cifar";
    return "idx";
}

/* The model is built for the training images: test images of another
 * size would be read past their end (larger) or score a model on
 * misaligned pixels (smaller). */
static int same_dims(const dataset *tr, const dataset *te, const char *test_path, char *err,
                     size_t len)
{
    if (tr->c == te->c && tr->h == te->h && tr->w == te->w)
        return 0;
    snprintf(err, len, "%s: test images are %dx%dx%d (channels x height x width) but the training "
             "images are %dx%dx%d; both sets must have one size", test_path, te->c, te->h, te->w,
             tr->c, tr->h, tr->w);
    return -1;
}

/* The image files of o->data in format fmt (idx: training images and
 * labels, test images and labels; cifar: five training batches, the test
 * batch) into paths; how many, 0 for a format that holds no images. */
static int image_files(const train_opts *o, const char *fmt, char paths[TRAIN_DATA_MAX_FILES][4096])
{
    if (!strcmp(fmt, "idx")) {
        static const char *const names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                            "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
        for (int i = 0; i < 4; i++)
            idx_path(o->data, names[i], paths[i], sizeof paths[i]);
        return 4;
    }
    if (!strcmp(fmt, "cifar")) {
        for (int i = 0; i < 5; i++)
            snprintf(paths[i], sizeof paths[i], "%s/data_batch_%d.bin", o->data, i + 1);
        snprintf(paths[5], sizeof paths[5], "%s/test_batch.bin", o->data);
        return 6;
    }
    return 0;
}

static int load_images(const train_opts *o, const char *fmt, const shard *s_tr, const shard *s_te,
                       dataset *tr, dataset *te, char *err, size_t len)
{
    char p[TRAIN_DATA_MAX_FILES][4096];
    int n = image_files(o, fmt, p);
    if (n == 4) {
        if (nn_idx_load(p[0], p[1], s_tr, tr, err, len) < 0 || nn_idx_load(p[2], p[3], s_te, te, err, len) < 0)
            return -1;
        return same_dims(tr, te, p[2], err, len);
    }
    if (n == 6) {
        const char *files[6];
        for (int i = 0; i < 6; i++)
            files[i] = p[i];
        if (nn_cifar_load(files, 5, s_tr, tr, err, len) < 0 || nn_cifar_load(files + 5, 1, s_te, te, err, len) < 0)
            return -1;
        return same_dims(tr, te, files[5], err, len);
    }
    snprintf(err, len, "--format %s does not hold images (model %s)", fmt, o->model);
    return -1;
}

/* wordlm, embedlm: the corpus (rank 0 writes it with --write-corpus),
 * then the training and validation samples (embedlm: labels capped to its
 * --out-vocab classes). */
static int load_text(const train_opts *o, const char *fmt, const shard *s_tr, const shard *s_te,
                     dataset *tr, dataset *te, corpus *c, char *err, size_t len)
{
    int rc;
    if (!strcmp(fmt, "tokens"))
        rc = nn_corpus_load_tokens(o->data, o->vocab, c, err, len);
    else if (!strcmp(fmt, "fortunes"))
        rc = nn_corpus_build_fortunes(o->data, o->vocab, c, err, len);
    else if (!strcmp(fmt, "dictd"))
        rc = nn_corpus_build_dictd(o->data, o->vocab, c, err, len);
    else {
        snprintf(err, len, "--format %s does not hold text (model %s)", fmt, o->model);
        return -1;
    }
    if (rc < 0)
        return -1;
    if (o->write_corpus && s_tr->rank == 0 && nn_corpus_write_tokens(c, o->write_corpus, err, len) < 0)
        return -1;
    /* An empty split trains on nothing or evaluates nothing: the run would
     * end with a perplexity of NaN that looks like a result. */
    static const char *const names[] = {"training (train.tokens)", "validation (valid.tokens)"};
    for (int sp = SPLIT_TRAIN; sp <= SPLIT_VALID; sp++)
        if (c->len[sp] == 0) {
            snprintf(err, len, "%s: the %s split holds no words; every split needs text", o->data,
                     names[sp - SPLIT_TRAIN]);
            return -1;
        }
    if (nn_corpus_samples(c, SPLIT_TRAIN, o->ctx, s_tr, tr, err, len) < 0 ||
        nn_corpus_samples(c, SPLIT_VALID, o->ctx, s_te, te, err, len) < 0)
        return -1;
    if (!strcmp(o->model, "embedlm")) {
        if (o->out_vocab > c->vocab) {
            snprintf(err, len, "%s: --out-vocab %d exceeds the corpus's vocabulary of %d words",
                     o->data, o->out_vocab, c->vocab);
            return -1;
        }
        nn_dataset_cap_labels(tr, o->out_vocab);
        nn_dataset_cap_labels(te, o->out_vocab);
    }
    return 0;
}

int train_load_data(const train_opts *o, const char *fmt, int rank, int nranks, dataset *tr,
                    dataset *te, corpus *c, char *err, size_t len)
{
    shard s_tr = {rank, nranks, o->train_limit}, s_te = {rank, nranks, o->test_limit};
    if (!strcmp(o->model, "wordlm") || !strcmp(o->model, "embedlm"))
        return load_text(o, fmt, &s_tr, &s_te, tr, te, c, err, len);
    return load_images(o, fmt, &s_tr, &s_te, tr, te, err, len);
}

/* The corpus as the model sees it: its words (id order) and the token
 * ids of each split, hashed apart (no copy of the splits). */
static int corpus_digests(const corpus *c, train_data_digest *d)
{
    size_t bytes = 0;
    for (int i = 0; i < c->vocab; i++)
        bytes += strlen(c->words[i]) + 1;
    unsigned char *words = malloc(bytes ? bytes : 1), *w = words;
    if (!words)
        return -1;
    for (int i = 0; i < c->vocab; i++) {
        size_t n = strlen(c->words[i]) + 1;
        memcpy(w, c->words[i], n);
        w += n;
    }
    snprintf(d[0].what, sizeof d[0].what, "the corpus's vocabulary");
    bench_sha256_hex(words, bytes, d[0].sha256);
    free(words);
    static const char *const names[] = {"training", "validation", "test"};
    for (int sp = SPLIT_TRAIN; sp <= SPLIT_TEST; sp++) {
        snprintf(d[1 + sp].what, sizeof d[1 + sp].what, "the corpus's %s split", names[sp]);
        bench_sha256_hex((const unsigned char *)c->split[sp], c->len[sp] * sizeof *c->split[sp],
                         d[1 + sp].sha256);
    }
    return 4;
}

int train_data_digests(const train_opts *o, const char *fmt, const corpus *c, train_data_digest *d)
{
    if (!strcmp(o->model, "wordlm") || !strcmp(o->model, "embedlm"))
        return corpus_digests(c, d);
    char p[TRAIN_DATA_MAX_FILES][4096];
    int n = image_files(o, fmt, p);
    for (int i = 0; i < n; i++) {
        memcpy(d[i].what, p[i], sizeof d[i].what);   /* both 4096 bytes */
        if (bench_sha256_file(p[i], d[i].sha256) != 0)
            return -1;
    }
    return n;
}

void train_make_batch(const dataset *d, const size_t *slots, int B, float *x, int32_t *y)
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

void train_permute(size_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(nn_rng_next(&seed) % i);
        size_t t = p[i - 1];
        p[i - 1] = p[j], p[j] = t;
    }
}
