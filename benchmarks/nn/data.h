/* Data sets of rb_train: loaders for IDX (MNIST, Fashion-MNIST; gzip or
 * plain), CIFAR-10 binary, and word-level text (WikiText-2-style .tokens
 * files, or a corpus built from the Debian `fortunes` data files or from a
 * dictd dictionary such as Debian's dict-gcide).
 *
 * Every loader keeps only this rank's shard: the contiguous block
 * [rank*N/P, (rank+1)*N/P) of the first N = min(samples, limit) samples.
 * A sample is a fixed-size record (image pixels as bytes in HWC order, or
 * ctx int32 word ids) plus an int32 label, so samples can be moved between
 * ranks as plain bytes (--shuffle ring).  Loaders never exit: they return
 * -1 and write "FILE: what is wrong" into err. */
#ifndef NN_DATA_H
#define NN_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DATA_IMAGES = 0, DATA_TOKENS = 1 } data_kind;

typedef struct dataset {
    data_kind kind;
    size_t n;            /* samples held by this rank */
    size_t total;        /* samples in the (limited) whole set */
    size_t rec;          /* bytes per sample record */
    uint8_t *x;          /* n * rec bytes */
    int32_t *y;          /* n labels */
    int c, h, w;         /* images: shape (HWC storage) */
    int classes;         /* images: label range; tokens: vocabulary size */
    int ctx;             /* tokens: context words per sample */
} dataset;

typedef struct shard {
    int rank, nranks;
    size_t limit;        /* 0 = all samples */
} shard;

void nn_dataset_free(dataset *d);
/* 0 when path is a regular file (a symbolic link to one is followed),
 * else -1 with "PATH: ..." in err: opening a FIFO to read waits forever
 * for a writer, a device may never end. */
int nn_data_regular_file(const char *path, char *err, size_t errlen);
/* Bounds of this rank's shard of total samples. */
void nn_shard_bounds(const shard *s, size_t total, size_t *lo, size_t *hi);

/* IDX: images (magic 0x00000803, n x rows x cols ubyte) and labels (magic
 * 0x00000801, n ubyte), transparently gunzipped. */
int nn_idx_load(const char *images, const char *labels, const shard *s, dataset *d, char *err,
             size_t errlen);
/* CIFAR-10 binary: records of 1 label byte + 3072 pixel bytes (CHW, 32x32x3)
 * concatenated over files[0..nfiles). */
int nn_cifar_load(const char *const *files, int nfiles, const shard *s, dataset *d, char *err,
               size_t errlen);

/* Word-level corpus: vocabulary and the three splits as word ids. */
typedef struct corpus {
    int vocab;           /* words including <unk> (id 0) and <eos> (id 1) */
    char **words;        /* id -> word */
    int32_t *split[3];   /* train, valid, test */
    size_t len[3];
    size_t distinct;     /* distinct words in the training split */
} corpus;

enum { SPLIT_TRAIN = 0, SPLIT_VALID = 1, SPLIT_TEST = 2 };

/* dir holding train/valid/test .tokens files (also wiki.train.tokens ...):
 * whitespace-separated tokens, one sentence per line; <eos> ends each line.
 * The vocabulary is the max_vocab - 2 most frequent training words (ties by
 * byte order) plus <unk> and <eos>; 0 = every training word. */
int nn_corpus_load_tokens(const char *dir, int max_vocab, corpus *c, char *err, size_t errlen);
/* Build the corpus from fortune files in dir (every regular file that is
 * not a .dat index or a link, in name order; entries separated by lines
 * holding '%').  Tokens: lower-cased runs of letters, digits and
 * apostrophes, and each of . , ; : ! ? as its own token; one entry is one
 * line.  Entry i goes to valid when i % 20 == 18, test when 19, else train. */
int nn_corpus_build_fortunes(const char *dir, int max_vocab, corpus *c, char *err, size_t errlen);
/* Build the corpus from a dictd dictionary (e.g. Debian's dict-gcide,
 * /usr/share/dictd/gcide.dict.dz): dict is NAME.dict or NAME.dict.dz
 * (dictzip, read as gzip), NAME.index lists the entries.  Each entry (the
 * distinct offset/length pairs of the index in offset order, "00-"
 * metadata left out) is one line, with its pronunciations (\...\) and
 * bracketed spans ([...]: etymologies, source notes) removed and the rest
 * tokenised as the fortunes; entry i goes to valid when i % 20 == 18, test
 * when 19, else train.  Refuses (-1, err "FILE: what") a missing or
 * non-regular file, corrupt compressed data, a malformed index line, an
 * entry beyond the data and an empty split. */
int nn_corpus_build_dictd(const char *dict, int max_vocab, corpus *c, char *err, size_t errlen);
/* Next-word labels of ids >= classes become 0 (<unk>, which then stands
 * for every word outside the classes - 1 most frequent ones and <eos>);
 * d->classes = classes. */
void nn_dataset_cap_labels(dataset *d, int classes);
/* Write the corpus as train/valid/test.tokens into dir (mkdir -p). */
int nn_corpus_write_tokens(const corpus *c, const char *dir, char *err, size_t errlen);
void nn_corpus_free(corpus *c);
/* Samples (previous ctx ids -> next id) of one split, sharded.  Positions
 * before the first word are padded with <eos>. */
int nn_corpus_samples(const corpus *c, int split, int ctx, const shard *s, dataset *d, char *err,
                   size_t errlen);

#endif
