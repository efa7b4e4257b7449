/* The word-level corpus loaders' shared machinery (internal to
 * benchmarks/nn): words interned to ids, the splits as id arrays, the
 * vocabulary chosen at the end, prose split into words.  data_text.c holds
 * it and the .tokens loader; data_fortunes.c and data_dictd.c the other
 * sources (data.h declares what rb_train calls). */
#ifndef NN_DATA_TEXT_H
#define NN_DATA_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"

enum { ID_UNK = 0, ID_EOS = 1 };

typedef struct intern {
    char **word;          /* by id */
    size_t *wlen;         /* strlen(word[id]): compared before the bytes */
    size_t *count;        /* training occurrences by id */
    size_t n, cap;        /* ids */
    int32_t *slot;        /* hash table of ids, -1 empty */
    size_t slots;
} intern;

/* Growable id arrays, one per split, holding intern ids. */
typedef struct ids {
    int32_t *v;
    size_t n, cap;
} ids;

/* The id of the word s[0..len), interned if new; -1 out of memory. */
int32_t nn_text_intern_id(intern *t, const char *s, size_t len);
void nn_text_intern_free(intern *t);
/* Append x; 0 or -1 (out of memory). */
int nn_text_ids_push(ids *a, int32_t x);
/* "<unk>" and "<eos>" interned first, as ID_UNK and ID_EOS; 0 or -1. */
int nn_text_intern_reserved(intern *t);
/* Pick the vocabulary (max_vocab words, by training count) and map the
 * three splits into c; 0, or -1 with err naming what (a file or dir). */
int nn_text_finish_corpus(intern *t, ids *sp, int max_vocab, corpus *c, const char *what,
                          char *err, size_t errlen);
/* -1 with err when buf[0..n) holds a NUL byte: not text. */
int nn_text_refuse_binary(char *buf, size_t n, const char *path, char *err, size_t errlen);
/* The whole regular file at path (NUL-terminated, *len bytes), or NULL
 * with err. */
char *nn_text_slurp(const char *path, size_t *len, char *err, size_t errlen);
/* Prose text[0..len), the e-th entry of a source, split into words (and
 * punctuation) into one of the splits by e (18 of 20 to training); 0 or
 * -1 (out of memory). */
int nn_text_add_entry(intern *t, ids *sp, size_t e, const char *text, size_t len);

#endif
