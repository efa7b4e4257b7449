/* Loader tests: good inputs load exactly; corrupt, truncated and
 * wrong-format inputs fail with a message naming the file, never crash.
 * The inputs are small real files: the first samples of Fashion-MNIST
 * (written as IDX plain and gzip, and as CIFAR-10 records) and a piece of
 * the fortunes corpus written as .tokens files, and a small dictd
 * dictionary written here (its .dict.dz and its .index fuzzed).
 * Usage: train_loader_fuzz FASHION_MNIST_DIR FORTUNES_DIR TMPDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "nn/data.h"
#include "nn/models.h"

enum { N = 40 };
static int failures;
static uint64_t rng = 2024;
static const shard all = {0, 1, 0};

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            failures++;                                    \
        }                                                  \
    } while (0)

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
        perror(path);
        exit(99);
    }
}

static void write_gz(const char *path, const void *buf, size_t len)
{
    gzFile f = gzopen(path, "wb");
    if (!f || gzwrite(f, buf, (unsigned)len) != (int)len || gzclose(f) != Z_OK) {
        fprintf(stderr, "%s: gzip write failed\n", path);
        exit(99);
    }
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(99);
    }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len + 1);
    if (fread(b, 1, *len, f) != *len)
        exit(99);
    fclose(f);
    return b;
}

/* Build IDX images/labels buffers from a loaded dataset. */
static size_t idx_images(const dataset *d, unsigned char **out)
{
    size_t len = 16 + d->n * d->rec;
    unsigned char *b = malloc(len);
    put_be32(b, 0x803), put_be32(b + 4, (uint32_t)d->n), put_be32(b + 8, (uint32_t)d->h),
        put_be32(b + 12, (uint32_t)d->w);
    memcpy(b + 16, d->x, d->n * d->rec);
    *out = b;
    return len;
}

static size_t idx_labels(const dataset *d, unsigned char **out)
{
    size_t len = 8 + d->n;
    unsigned char *b = malloc(len);
    put_be32(b, 0x801), put_be32(b + 4, (uint32_t)d->n);
    for (size_t i = 0; i < d->n; i++)
        b[8 + i] = (unsigned char)d->y[i];
    *out = b;
    return len;
}

static int same_data(const dataset *a, const dataset *b)
{
    return a->n == b->n && a->rec == b->rec && !memcmp(a->x, b->x, a->n * a->rec) &&
           !memcmp(a->y, b->y, a->n * sizeof(int32_t));
}

/* A failure must say which file and be non-empty. */
static void expect_error_names(int rc, const char *err, const char *path, const char *what)
{
    if (rc == 0)
        return;
    CHECK(err[0] && strstr(err, path), "%s: error does not name %s: '%s'", what, path, err);
}

/* Mutants of buf written to path: every truncation among the first bytes
 * and a spread of later ones, then random flips of 1..8 bytes. */
typedef int (*load_fn)(const char *path, char *err, size_t errlen);

static void fuzz(const char *label, const char *path, const unsigned char *buf, size_t len,
                 int gz, load_fn load, int flips, int prefix_valid)
{
    unsigned char *m = malloc(len + 1);
    int errors = 0, runs = 0;
    char err[8192];
    for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : len / 50 + 1) {
        (gz ? write_gz : write_file)(path, buf, cut);
        err[0] = 0;
        int rc = load(path, err, sizeof err);
        expect_error_names(rc, err, path, label);
        errors += rc != 0, runs++;
        if (!gz && !prefix_valid)
            CHECK(rc != 0, "%s truncated to %zu of %zu bytes loaded without error", label, cut, len);
    }
    for (int r = 0; r < flips; r++) {
        memcpy(m, buf, len);
        int k = 1 + (int)(nn_rng_next(&rng) % 8);
        for (int j = 0; j < k; j++)
            m[nn_rng_next(&rng) % len] ^= (unsigned char)(1 + nn_rng_next(&rng) % 255);
        /* gzip: flip the compressed stream itself */
        write_file(path, m, len);
        err[0] = 0;
        int rc = load(path, err, sizeof err);
        expect_error_names(rc, err, path, label);
        errors += rc != 0, runs++;
    }
    printf("%-34s %4d mutants, %4d rejected with a message, no crash\n", label, runs, errors);
    free(m);
}

/* Loaders wrapped to take the mutated file. */
static char good_images[4096], good_labels[4096];
static int load_idx_images(const char *p, char *e, size_t l)
{
    dataset d;
    int rc = nn_idx_load(p, good_labels, &all, &d, e, l);
    if (!rc)
        nn_dataset_free(&d);
    return rc;
}
static int load_idx_labels(const char *p, char *e, size_t l)
{
    dataset d;
    int rc = nn_idx_load(good_images, p, &all, &d, e, l);
    if (!rc)
        nn_dataset_free(&d);
    return rc;
}
static int load_cifar(const char *p, char *e, size_t l)
{
    dataset d;
    const char *files[1] = {p};
    int rc = nn_cifar_load(files, 1, &all, &d, e, l);
    if (!rc)
        nn_dataset_free(&d);
    return rc;
}
static char token_dir[4096];
static int load_tokens(const char *p, char *e, size_t l)
{
    (void)p;
    corpus c;
    int rc = nn_corpus_load_tokens(token_dir, 100, &c, e, l);
    if (!rc)
        nn_corpus_free(&c);
    return rc;
}

static void test_idx(const char *src, const char *tmp, dataset *ref)
{
    char im[4096], lb[4096];
    snprintf(im, sizeof im, "%s/train-images-idx3-ubyte.gz", src);
    snprintf(lb, sizeof lb, "%s/train-labels-idx1-ubyte.gz", src);
    shard first = {0, 1, N};
    char err[8192];
    CHECK(nn_idx_load(im, lb, &first, ref, err, sizeof err) == 0, "real data: %s", err);
    CHECK(ref->n == N && ref->h == 28 && ref->w == 28, "shape %zu x %dx%d", ref->n, ref->h, ref->w);

    /* Shards of 3 ranks put together are the whole. */
    size_t at = 0;
    for (int r = 0; r < 3; r++) {
        shard s = {r, 3, N};
        dataset d;
        CHECK(nn_idx_load(im, lb, &s, &d, err, sizeof err) == 0, "shard %d: %s", r, err);
        CHECK(!memcmp(d.x, ref->x + at * ref->rec, d.n * d.rec) &&
                  !memcmp(d.y, ref->y + at, d.n * sizeof(int32_t)),
              "shard %d differs from the whole", r);
        at += d.n;
        nn_dataset_free(&d);
    }
    CHECK(at == N, "shards hold %zu samples, expected %d", at, N);

    unsigned char *ib, *lbuf;
    size_t il = idx_images(ref, &ib), ll = idx_labels(ref, &lbuf);
    for (int gz = 0; gz < 2; gz++) {
        snprintf(good_images, sizeof good_images, "%s/img%s", tmp, gz ? ".gz" : "");
        snprintf(good_labels, sizeof good_labels, "%s/lab%s", tmp, gz ? ".gz" : "");
        (gz ? write_gz : write_file)(good_images, ib, il);
        (gz ? write_gz : write_file)(good_labels, lbuf, ll);
        dataset d;
        CHECK(nn_idx_load(good_images, good_labels, &all, &d, err, sizeof err) == 0, "%s", err);
        CHECK(same_data(&d, ref), "%s round trip differs", gz ? "gzip" : "plain");
        nn_dataset_free(&d);
    }
    /* plain files: clear messages for the classic mistakes */
    snprintf(good_images, sizeof good_images, "%s/img", tmp);
    snprintf(good_labels, sizeof good_labels, "%s/lab", tmp);
    dataset d;
    int rc = nn_idx_load(good_labels, good_images, &all, &d, err, sizeof err);
    CHECK(rc && strstr(err, "magic"), "swapped files: '%s'", err);
    unsigned char *lb2 = malloc(ll);
    memcpy(lb2, lbuf, ll);
    put_be32(lb2 + 4, N - 1);
    char bad[4096];
    snprintf(bad, sizeof bad, "%s/lab-count", tmp);
    write_file(bad, lb2, ll - 1);
    rc = nn_idx_load(good_images, bad, &all, &d, err, sizeof err);
    CHECK(rc && strstr(err, "labels") && strstr(err, bad), "count mismatch: '%s'", err);
    memcpy(lb2, lbuf, ll);
    lb2[8 + 5] = 10;
    write_file(bad, lb2, ll);
    rc = nn_idx_load(good_images, bad, &all, &d, err, sizeof err);
    CHECK(rc && strstr(err, "outside 0..9"), "bad label: '%s'", err);
    rc = nn_idx_load("/nonexistent/x", good_labels, &all, &d, err, sizeof err);
    CHECK(rc && strstr(err, "/nonexistent/x"), "missing file: '%s'", err);
    free(lb2);

    char mut[4096];
    snprintf(mut, sizeof mut, "%s/mutant", tmp);
    fuzz("IDX images (plain)", mut, ib, il, 0, load_idx_images, 300, 0);
    fuzz("IDX labels (plain)", mut, lbuf, ll, 0, load_idx_labels, 300, 0);
    /* gzip mutants: truncated streams, and flips of the compressed bytes */
    snprintf(good_images, sizeof good_images, "%s/img.gz", tmp);
    snprintf(good_labels, sizeof good_labels, "%s/lab.gz", tmp);
    size_t gl;
    unsigned char *gzb = read_all(good_images, &gl);
    fuzz("IDX images (gzip, flipped)", mut, gzb, gl, 0, load_idx_images, 300, 0);
    free(gzb);
    snprintf(good_labels, sizeof good_labels, "%s/lab", tmp);
    fuzz("IDX images (gzip, truncated)", mut, ib, il, 1, load_idx_images, 0, 0);
    free(ib), free(lbuf);
}

static void test_cifar(const char *tmp, const dataset *ref)
{
    /* CIFAR records from the real images: R = pixel, G = 255 - pixel, B = 0
     * (28x28 placed in the corner of 32x32). */
    size_t len = (size_t)N * 3073;
    unsigned char *b = calloc(len, 1);
    for (size_t s = 0; s < N; s++) {
        unsigned char *r = b + s * 3073;
        r[0] = (unsigned char)ref->y[s];
        for (int y = 0; y < 28; y++)
            for (int x = 0; x < 28; x++) {
                unsigned char p = ref->x[s * ref->rec + (size_t)y * 28 + x];
                r[1 + y * 32 + x] = p;
                r[1 + 1024 + y * 32 + x] = (unsigned char)(255 - p);
            }
    }
    char path[4096], err[8192];
    snprintf(path, sizeof path, "%s/data_batch_1.bin", tmp);
    write_file(path, b, len);
    const char *files[2] = {path, path};
    dataset d;
    shard s = {1, 2, 0};
    CHECK(nn_cifar_load(files, 2, &s, &d, err, sizeof err) == 0, "%s", err);
    CHECK(d.n == N && d.total == 2 * N && d.c == 3 && d.h == 32, "cifar shape");
    /* rank 1 of 2 over two copies holds the second copy: sample 0 again */
    int ok = d.n == N;
    for (size_t i = 0; ok && i < N; i++) {
        ok &= d.y[i] == ref->y[i];
        unsigned char p = ref->x[i * ref->rec + 3 * 28 + 4];
        const uint8_t *px = d.x + i * d.rec + ((size_t)3 * 32 + 4) * 3;
        ok &= px[0] == p && px[1] == (unsigned char)(255 - p) && px[2] == 0;
    }
    CHECK(ok, "cifar pixels or labels differ from what was written (CHW -> HWC)");
    nn_dataset_free(&d);
    char mut[4096];
    snprintf(mut, sizeof mut, "%s/cifar-mutant", tmp);
    fuzz("CIFAR-10 binary", mut, b, len, 0, load_cifar, 200, 0);
    write_file(mut, b, 3000);
    CHECK(load_cifar(mut, err, sizeof err) && strstr(err, "not CIFAR-10"), "short file: '%s'", err);
    free(b);
}

static void test_text(const char *fortunes, const char *tmp)
{
    corpus c;
    char err[8192];
    CHECK(nn_corpus_build_fortunes(fortunes, 10000, &c, err, sizeof err) == 0, "%s", err);
    printf("fortunes corpus: %zu distinct training words, vocabulary %d, tokens %zu/%zu/%zu\n",
           c.distinct, c.vocab, c.len[0], c.len[1], c.len[2]);
    CHECK(c.vocab == 10000 && c.distinct >= 10000, "vocabulary %d of %zu words", c.vocab, c.distinct);
    CHECK(c.len[1] > 1000 && c.len[2] > 1000 && c.len[0] > 10 * c.len[1], "split sizes");
    /* Round trip through .tokens files gives the same ids. */
    snprintf(token_dir, sizeof token_dir, "%s/tokens", tmp);
    CHECK(nn_corpus_write_tokens(&c, token_dir, err, sizeof err) == 0, "%s", err);
    corpus t;
    CHECK(nn_corpus_load_tokens(token_dir, 10000, &t, err, sizeof err) == 0, "%s", err);
    int same = t.vocab == c.vocab;
    for (int s = 0; same && s < 3; s++)
        same &= t.len[s] == c.len[s] && !memcmp(t.split[s], c.split[s], c.len[s] * sizeof(int32_t));
    CHECK(same, "tokens round trip changed the corpus");
    /* Samples: context of position i is the ctx previous ids. */
    dataset d;
    shard sh = {0, 1, 500};
    CHECK(nn_corpus_samples(&c, SPLIT_TRAIN, 3, &sh, &d, err, sizeof err) == 0, "%s", err);
    const int32_t *x = (const int32_t *)(void *)(d.x + 100 * d.rec);
    CHECK(d.n == 500 && x[0] == c.split[0][97] && x[2] == c.split[0][99] && d.y[100] == c.split[0][100],
          "n-gram samples");
    nn_dataset_free(&d);
    nn_corpus_free(&t);

    /* Small token files for the fuzzer: the first lines of each split. */
    size_t len;
    char path[8192];
    for (int s = 2; s >= 0; s--) {
        static const char *nm[3] = {"train", "valid", "test"};
        snprintf(path, sizeof path, "%s/%s.tokens", token_dir, nm[s]);
        unsigned char *b = read_all(path, &len);
        write_file(path, b, len > 3000 ? 3000 : len);
        free(b);
    }
    unsigned char *b = read_all(path, &len);   /* train.tokens */
    fuzz("tokens (train)", path, b, len, 0, load_tokens, 200, 1);
    write_file(path, "", 0);
    CHECK(load_tokens(path, err, sizeof err) && strstr(err, "no words"), "empty train: '%s'", err);
    b[10] = 0;
    write_file(path, b, len);
    CHECK(load_tokens(path, err, sizeof err) && strstr(err, "NUL") && strstr(err, path),
          "binary train: '%s'", err);
    remove(path);
    CHECK(load_tokens(path, err, sizeof err) && strstr(err, "missing"), "no train: '%s'", err);
    free(b);
    CHECK(nn_corpus_build_fortunes(tmp, 0, &t, err, sizeof err) != 0 || (nn_corpus_free(&t), 0),
          "a directory of binary files is not a fortune corpus");
    nn_corpus_free(&c);
}

/* A dictd dictionary of n entries (index in dictd's base64) under
 * tmp/small.{dict.dz,index}; its path into dict. */
static void b64(size_t v, char *out)
{
    static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char rev[16];
    int k = 0;
    do
        rev[k++] = d[v % 64], v /= 64;
    while (v);
    while (k)
        *out++ = rev[--k];
    *out = 0;
}

static char dict_path[4096], dict_index[4096];
static int load_dictd(const char *p, char *e, size_t l)
{
    (void)p;
    corpus c;
    int rc = nn_corpus_build_dictd(dict_path, 0, &c, e, l);
    if (!rc)
        nn_corpus_free(&c);
    return rc;
}

static void test_dictd(const char *tmp)
{
    enum { ENTRIES = 60 };
    static char data[ENTRIES * 128 + 64], index[ENTRIES * 64 + 64];
    size_t dl = 0, il = 0;
    char o[16], n[16];
    dl += (size_t)sprintf(data, "00-database-url\n   nowhere\n");
    b64(dl, n);
    il += (size_t)sprintf(index, "00-database-url\tA\t%s\n", n);
    for (int i = 0; i < ENTRIES; i++) {
        size_t at = dl;
        dl += (size_t)sprintf(data + dl, "Word%d \\Wor\"d%d\\, n. [L. verbum%d [R.]]\n"
                              "   The text of entry %d, in words.\n   [1913 Webster]\n\n", i, i, i, i);
        b64(at, o), b64(dl - at, n);
        il += (size_t)sprintf(index + il, "word%d\t%s\t%s\n", i, o, n);
    }
    snprintf(dict_path, sizeof dict_path, "%s/small.dict.dz", tmp);
    snprintf(dict_index, sizeof dict_index, "%s/small.index", tmp);
    write_gz(dict_path, data, dl);
    write_file(dict_index, index, il);
    corpus c;
    char err[8192];
    CHECK(nn_corpus_build_dictd(dict_path, 0, &c, err, sizeof err) == 0, "%s", err);
    /* entry i: word<i> , n . the text of entry <i> , in words . <eos> (14);
     * the pronunciation, the etymology and the source note are gone */
    CHECK(c.len[0] == 54 * 14 && c.len[1] == 3 * 14 && c.len[2] == 3 * 14,
          "dictd split sizes %zu/%zu/%zu", c.len[0], c.len[1], c.len[2]);
    int gone = 1;
    for (int w = 0; w < c.vocab; w++)
        gone &= strcmp(c.words[w], "webster") && strncmp(c.words[w], "verbum", 6) &&
                strcmp(c.words[w], "wor") && strcmp(c.words[w], "1913");
    CHECK(gone, "dictd: pronunciations or bracketed spans were tokenised");
    printf("dictd corpus: %d words, tokens %zu/%zu/%zu\n", c.vocab, c.len[0], c.len[1], c.len[2]);
    nn_corpus_free(&c);
    fuzz("dictd (.dict.dz)", dict_path, (const unsigned char *)data, dl, 1, load_dictd, 0, 1);
    write_gz(dict_path, data, dl);
    unsigned char *z = read_all(dict_path, &dl);
    fuzz("dictd (.dict.dz, flipped)", dict_path, z, dl, 0, load_dictd, 200, 1);
    free(z);
    write_gz(dict_path, data, strlen(data));
    fuzz("dictd (.index)", dict_index, (const unsigned char *)index, il, 0, load_dictd, 200, 1);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FASHION_MNIST_DIR FORTUNES_DIR TMPDIR\n", argv[0]);
        return 99;
    }
    dataset ref;
    test_idx(argv[1], argv[3], &ref);
    test_cifar(argv[3], &ref);
    nn_dataset_free(&ref);
    test_text(argv[2], argv[3]);
    test_dictd(argv[3]);
    if (failures)
        printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
