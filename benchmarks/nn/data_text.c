/* Word-level text (see data.h, data_text.h): the interning and the
 * vocabulary every corpus loader shares, WikiText-2-style .tokens files,
 * writing a corpus back as .tokens, and a corpus's samples.  The fortune
 * files: data_fortunes.c; dictd dictionaries: data_dictd.c. */
#include "data_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- string interning */

static uint64_t fnv(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int intern_grow(intern *t)
{
    size_t ns = t->slots ? t->slots * 2 : 1024;
    int32_t *sl = malloc(ns * sizeof *sl);
    if (!sl)
        return -1;
    for (size_t i = 0; i < ns; i++)
        sl[i] = -1;
    for (size_t id = 0; id < t->n; id++) {
        size_t h = fnv(t->word[id], t->wlen[id]) & (ns - 1);
        while (sl[h] >= 0)
            h = (h + 1) & (ns - 1);
        sl[h] = (int32_t)id;
    }
    free(t->slot);
    t->slot = sl;
    t->slots = ns;
    return 0;
}

/* Id of word s[0..len), added when new; -1 on allocation failure. */
int32_t nn_text_intern_id(intern *t, const char *s, size_t len)
{
    if ((t->n + 1) * 2 > t->slots && intern_grow(t) < 0)
        return -1;
    size_t h = fnv(s, len) & (t->slots - 1);
    for (; t->slot[h] >= 0; h = (h + 1) & (t->slots - 1)) {
        int32_t id = t->slot[h];
        if (t->wlen[id] == len && !memcmp(t->word[id], s, len))
            return id;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 1024;
        char **nw = realloc(t->word, nc * sizeof *nw);
        if (!nw)
            return -1;
        t->word = nw;
        size_t *ncnt = realloc(t->count, nc * sizeof *ncnt);
        if (!ncnt)
            return -1;
        t->count = ncnt;
        size_t *nlen = realloc(t->wlen, nc * sizeof *nlen);
        if (!nlen)
            return -1;
        t->wlen = nlen;
        t->cap = nc;
    }
    char *w = malloc(len + 1);
    if (!w)
        return -1;
    memcpy(w, s, len);
    w[len] = 0;
    t->word[t->n] = w;
    t->wlen[t->n] = len;
    t->count[t->n] = 0;
    t->slot[h] = (int32_t)t->n;
    return (int32_t)t->n++;
}

void nn_text_intern_free(intern *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->word[i]);
    free(t->word);
    free(t->wlen);
    free(t->count);
    free(t->slot);
    memset(t, 0, sizeof *t);
}


int nn_text_ids_push(ids *a, int32_t x)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 4096;
        int32_t *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

/* ------------------------------------------------------------ vocabulary */
static const intern *sort_table;

static int by_count_then_bytes(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    size_t cx = sort_table->count[x], cy = sort_table->count[y];
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return strcmp(sort_table->word[x], sort_table->word[y]);
}

/* Pick the vocabulary and map every split from intern ids to word ids.
 * The interned ids ID_UNK/ID_EOS are reserved as "<unk>" and "<eos>". */
int nn_text_finish_corpus(intern *t, ids *sp, int max_vocab, corpus *c, const char *what,
                         char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (sp[SPLIT_TRAIN].n == 0) {
        snprintf(err, errlen, "%s: the training split holds no words", what);
        return -1;
    }
    size_t nwords = t->n - 2, kept = 0;
    int32_t *order = malloc((nwords + 1) * sizeof *order);
    int32_t *map = malloc(t->n * sizeof *map);
    if (!order || !map) {
        free(order), free(map);
        snprintf(err, errlen, "%s: out of memory", what);
        return -1;
    }
    for (size_t i = 0; i < nwords; i++)
        if (t->count[i + 2])
            order[kept++] = (int32_t)(i + 2);
    c->distinct = kept;
    sort_table = t;
    qsort(order, kept, sizeof *order, by_count_then_bytes);
    if (max_vocab > 2 && kept > (size_t)max_vocab - 2)
        kept = (size_t)max_vocab - 2;
    c->vocab = (int)kept + 2;
    c->words = calloc((size_t)c->vocab, sizeof *c->words);
    int rc = c->words ? 0 : -1;
    for (size_t i = 0; i < t->n; i++)
        map[i] = ID_UNK;
    map[ID_EOS] = ID_EOS;
    for (size_t i = 0; i < kept; i++)
        map[order[i]] = (int32_t)(i + 2);
    for (int i = 0; i < c->vocab && !rc; i++) {
        const char *w = i == ID_UNK ? "<unk>" : i == ID_EOS ? "<eos>" : t->word[order[i - 2]];
        if (!(c->words[i] = strdup(w)))
            rc = -1;
    }
    for (int s = 0; s < 3 && !rc; s++) {
        for (size_t i = 0; i < sp[s].n; i++)
            sp[s].v[i] = map[sp[s].v[i]];
        c->split[s] = sp[s].v;
        c->len[s] = sp[s].n;
        sp[s].v = NULL;
    }
    free(order);
    free(map);
    if (rc) {
        snprintf(err, errlen, "%s: out of memory", what);
        nn_corpus_free(c);
    }
    return rc;
}

void nn_corpus_free(corpus *c)
{
    if (c->words)
        for (int i = 0; i < c->vocab; i++)
            free(c->words[i]);
    free(c->words);
    for (int s = 0; s < 3; s++)
        free(c->split[s]);
    memset(c, 0, sizeof *c);
}

int nn_text_intern_reserved(intern *t)
{
    return nn_text_intern_id(t, "<unk>", 5) == ID_UNK && nn_text_intern_id(t, "<eos>", 5) == ID_EOS ? 0 : -1;
}

/* A NUL byte means the file is no text: -1 (buf freed, err set), else 0. */
int nn_text_refuse_binary(char *buf, size_t n, const char *path, char *err, size_t errlen)
{
    const char *nul = memchr(buf, 0, n);
    if (!nul)
        return 0;
    snprintf(err, errlen, "%s: not a text file: NUL byte at offset %zu", path, (size_t)(nul - buf));
    free(buf);
    return -1;
}

/* Read a whole file; NUL bytes mean it is not text. */
char *nn_text_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    if (nn_data_regular_file(path, err, errlen) < 0)
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path, bad ? "read error" : "out of memory");
        return NULL;
    }
    if (nn_text_refuse_binary(buf, n, path, err, errlen))
        return NULL;
    buf[n < cap ? n : cap - 1] = 0;
    *len = n;
    return buf;
}

/* ------------------------------------------------------------ .tokens */
static int load_token_file(const char *path, intern *t, ids *out, int count, char *err,
                           size_t errlen)
{
    size_t len;
    char *buf = nn_text_slurp(path, &len, err, errlen);
    if (!buf)
        return -1;
    int rc = 0;
    size_t i = 0;
    while (i < len && !rc) {
        int words = 0;
        while (i < len && buf[i] != '\n' && !rc) {
            while (i < len && buf[i] != '\n' && isspace((unsigned char)buf[i]))
                i++;
            size_t s = i;
            while (i < len && !isspace((unsigned char)buf[i]))
                i++;
            if (i > s) {
                int32_t id = nn_text_intern_id(t, buf + s, i - s);
                rc = id < 0 || nn_text_ids_push(out, id) < 0 ? -1 : 0;
                if (!rc && count)
                    t->count[id]++;
                words++;
            }
        }
        i++;   /* the newline */
        if (words && !rc)
            rc = nn_text_ids_push(out, ID_EOS);
    }
    free(buf);
    if (rc)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}

static int find_split_file(const char *dir, const char *split, char *path, size_t len)
{
    const char *pat[] = {"%s/%s.tokens", "%s/wiki.%s.tokens", "%s/%s.txt"};
    for (size_t i = 0; i < sizeof pat / sizeof *pat; i++) {
        snprintf(path, len, pat[i], dir, split);
        if (access(path, R_OK) == 0)
            return 0;
    }
    snprintf(path, len, pat[0], dir, split);
    return -1;
}

int nn_corpus_load_tokens(const char *dir, int max_vocab, corpus *c, char *err, size_t errlen)
{
    static const char *names[3] = {"train", "valid", "test"};
    intern t = {0};
    ids sp[3] = {{0}};
    char path[4096], train_path[4096] = "";
    int rc = nn_text_intern_reserved(&t);
    for (int s = 0; s < 3 && !rc; s++) {
        if (find_split_file(dir, names[s], path, sizeof path) < 0) {
            snprintf(err, errlen, "%s: missing (expected %s.tokens or wiki.%s.tokens in %s)", path,
                     names[s], names[s], dir);
            rc = -1;
        } else
            rc = load_token_file(path, &t, &sp[s], s == SPLIT_TRAIN, err, errlen);
        if (s == SPLIT_TRAIN)
            snprintf(train_path, sizeof train_path, "%s", path);
    }
    t.count[ID_UNK] = t.count[ID_EOS] = 0;
    if (!rc)
        rc = nn_text_finish_corpus(&t, sp, max_vocab, c, train_path, err, errlen);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    nn_text_intern_free(&t);
    return rc;
}

/* ------------------------------------------------------------ words of prose */
static int is_punct_token(int ch) { return ch && strchr(".,;:!?", ch) != NULL; }
static int is_word_char(int ch) { return isalnum(ch) || ch == '\''; }

/* Tokenise one fortune entry text[0..len) into the split for entry e. */
int nn_text_add_entry(intern *t, ids *sp, size_t e, const char *text, size_t len)
{
    int s = e % 20 == 18 ? SPLIT_VALID : e % 20 == 19 ? SPLIT_TEST : SPLIT_TRAIN;
    char word[256];
    size_t i = 0, words = 0;
    while (i < len) {
        unsigned char ch = (unsigned char)text[i];
        size_t wl = 0;
        if (is_word_char(ch)) {
            while (i < len && is_word_char((unsigned char)text[i])) {
                if (wl < sizeof word)
                    word[wl++] = (char)tolower((unsigned char)text[i]);
                i++;
            }
        } else {
            i++;
            if (!is_punct_token(ch))
                continue;
            word[wl++] = (char)ch;
        }
        size_t a = 0;   /* strip quoting apostrophes */
        while (a < wl && word[a] == '\'')
            a++;
        while (wl > a && word[wl - 1] == '\'')
            wl--;
        if (wl == a)
            continue;
        int32_t id = nn_text_intern_id(t, word + a, wl - a);
        if (id < 0 || nn_text_ids_push(&sp[s], id) < 0)
            return -1;
        if (s == SPLIT_TRAIN)
            t->count[id]++;
        words++;
    }
    return words ? nn_text_ids_push(&sp[s], ID_EOS) : 0;
}

void nn_dataset_cap_labels(dataset *d, int classes)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->y[i] >= classes)
            d->y[i] = ID_UNK;
    d->classes = classes;
}

int nn_corpus_write_tokens(const corpus *c, const char *dir, char *err, size_t errlen)
{
    static const char *names[3] = {"train", "valid", "test"};
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
        return -1;
    }
    for (int s = 0; s < 3; s++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.tokens", dir, names[s]);
        FILE *f = fopen(path, "w");
        if (!f) {
            snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
            return -1;
        }
        int first = 1;
        for (size_t i = 0; i < c->len[s]; i++) {
            int32_t id = c->split[s][i];
            if (id == ID_EOS) {
                fputc('\n', f);
                first = 1;
            } else {
                fprintf(f, "%s%s", first ? "" : " ", c->words[id]);
                first = 0;
            }
        }
        if (fclose(f) != 0) {
            snprintf(err, errlen, "%s: write failed", path);
            return -1;
        }
    }
    return 0;
}

int nn_corpus_samples(const corpus *c, int split, int ctx, const shard *s, dataset *d, char *err,
                   size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->kind = DATA_TOKENS;
    d->ctx = ctx;
    d->classes = c->vocab;
    d->rec = (size_t)ctx * sizeof(int32_t);
    d->total = s->limit && s->limit < c->len[split] ? s->limit : c->len[split];
    size_t lo, hi;
    nn_shard_bounds(s, d->total, &lo, &hi);
    d->n = hi - lo;
    d->x = malloc(d->n * d->rec + 1);
    d->y = malloc((d->n + 1) * sizeof(int32_t));
    if (!d->x || !d->y) {
        nn_dataset_free(d);
        snprintf(err, errlen, "out of memory for %zu text samples", hi - lo);
        return -1;
    }
    const int32_t *t = c->split[split];
    for (size_t i = lo; i < hi; i++) {
        int32_t *x = (int32_t *)(void *)(d->x + (i - lo) * d->rec);
        for (int j = 0; j < ctx; j++) {
            size_t back = (size_t)(ctx - j);
            x[j] = i >= back ? t[i - back] : ID_EOS;
        }
        d->y[i - lo] = t[i];
    }
    return 0;
}
