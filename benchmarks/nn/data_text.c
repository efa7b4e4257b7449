/* Word-level text: WikiText-2-style .tokens files and a corpus built from
 * the Debian fortune files (see data.h). */
#include "data.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum { ID_UNK = 0, ID_EOS = 1 };

/* ------------------------------------------------------- string interning */
typedef struct intern {
    char **word;          /* by id */
    size_t *wlen;         /* strlen(word[id]): compared before the bytes */
    size_t *count;        /* training occurrences by id */
    size_t n, cap;        /* ids */
    int32_t *slot;        /* hash table of ids, -1 empty */
    size_t slots;
} intern;

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
static int32_t intern_id(intern *t, const char *s, size_t len)
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

static void intern_free(intern *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->word[i]);
    free(t->word);
    free(t->wlen);
    free(t->count);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* Growable id arrays, one per split, holding intern ids. */
typedef struct ids {
    int32_t *v;
    size_t n, cap;
} ids;

static int ids_push(ids *a, int32_t x)
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
static int finish_corpus(intern *t, ids *sp, int max_vocab, corpus *c, const char *what,
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

static int intern_reserved(intern *t)
{
    return intern_id(t, "<unk>", 5) == ID_UNK && intern_id(t, "<eos>", 5) == ID_EOS ? 0 : -1;
}

/* A NUL byte means the file is no text: -1 (buf freed, err set), else 0. */
static int refuse_binary(char *buf, size_t n, const char *path, char *err, size_t errlen)
{
    const char *nul = memchr(buf, 0, n);
    if (!nul)
        return 0;
    snprintf(err, errlen, "%s: not a text file: NUL byte at offset %zu", path, (size_t)(nul - buf));
    free(buf);
    return -1;
}

/* Read a whole file; NUL bytes mean it is not text. */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
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
    if (refuse_binary(buf, n, path, err, errlen))
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
    char *buf = slurp(path, &len, err, errlen);
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
                int32_t id = intern_id(t, buf + s, i - s);
                rc = id < 0 || ids_push(out, id) < 0 ? -1 : 0;
                if (!rc && count)
                    t->count[id]++;
                words++;
            }
        }
        i++;   /* the newline */
        if (words && !rc)
            rc = ids_push(out, ID_EOS);
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
    int rc = intern_reserved(&t);
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
        rc = finish_corpus(&t, sp, max_vocab, c, train_path, err, errlen);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    intern_free(&t);
    return rc;
}

/* ------------------------------------------------------------ fortunes */
static int is_punct_token(int ch) { return ch && strchr(".,;:!?", ch) != NULL; }
static int is_word_char(int ch) { return isalnum(ch) || ch == '\''; }

/* Tokenise one fortune entry text[0..len) into the split for entry e. */
static int add_entry(intern *t, ids *sp, size_t e, const char *text, size_t len)
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
        int32_t id = intern_id(t, word + a, wl - a);
        if (id < 0 || ids_push(&sp[s], id) < 0)
            return -1;
        if (s == SPLIT_TRAIN)
            t->count[id]++;
        words++;
    }
    return words ? ids_push(&sp[s], ID_EOS) : 0;
}

/* Entries end at lines holding only '%'. */
static int add_fortune_file(const char *path, intern *t, ids *sp, size_t *entry, char *err,
                            size_t errlen)
{
    size_t len;
    char *buf = slurp(path, &len, err, errlen);
    if (!buf)
        return -1;
    size_t start = 0;
    int rc = 0;
    for (size_t i = 0; i < len && !rc;) {
        size_t eol = i;
        while (eol < len && buf[eol] != '\n')
            eol++;
        if (eol - i == 1 && buf[i] == '%') {
            if (i > start)
                rc = add_entry(t, sp, (*entry)++, buf + start, i - start);
            start = eol + 1;
        }
        i = eol + 1;
    }
    if (!rc && start < len)
        rc = add_entry(t, sp, (*entry)++, buf + start, len - start);
    free(buf);
    if (rc)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files (not links, not .dat indexes) of dir, sorted. */
static int list_fortune_files(const char *dir, char ***out, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t cnt = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || (l > 4 && !strcmp(e->d_name + l - 4, ".dat")))
            continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
            continue;
        char **nn = realloc(names, (cnt + 1) * sizeof *nn);
        if (!nn || !(nn[cnt] = strdup(path))) {
            names = nn ? nn : names;
            break;
        }
        names = nn;
        cnt++;
    }
    closedir(d);
    if (cnt)   /* qsort(NULL, 0, ...) is undefined */
        qsort(names, cnt, sizeof *names, by_name);
    *out = names;
    *n = cnt;
    if (!cnt) {
        snprintf(err, errlen, "%s: no fortune files (regular text files) found", dir);
        free(names);
        return -1;
    }
    return 0;
}

int nn_corpus_build_fortunes(const char *dir, int max_vocab, corpus *c, char *err, size_t errlen)
{
    char **files;
    size_t nf, entry = 0;
    if (list_fortune_files(dir, &files, &nf, err, errlen) < 0)
        return -1;
    intern t = {0};
    ids sp[3] = {{0}};
    int rc = intern_reserved(&t);
    for (size_t i = 0; i < nf && !rc; i++)
        rc = add_fortune_file(files[i], &t, sp, &entry, err, errlen);
    if (!rc)
        rc = finish_corpus(&t, sp, max_vocab, c, dir, err, errlen);
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    intern_free(&t);
    return rc;
}

/* ------------------------------------------------------------ dictd */
/* A dictd dictionary: NAME.index lines "headword<TAB>offset<TAB>length"
 * (base64 numbers, dictd's digits A-Z a-z 0-9 + /) into NAME.dict, or
 * NAME.dict.dz (dictzip: gzip with a random-access table in its extra
 * field, read here as plain gzip).  Entries are the distinct (offset,
 * length) pairs of the index in offset order; headwords starting "00-"
 * are the database's own metadata (its URL, licence text) and are left
 * out. */

typedef struct dict_entry {
    size_t off, len;
} dict_entry;

/* The path ends in ".dict.dz" or ".dict": the index beside it. */
static int dictd_index_path(const char *dict, char *index, size_t len, char *err, size_t errlen)
{
    size_t n = strlen(dict);
    size_t stem = n > 8 && !strcmp(dict + n - 8, ".dict.dz") ? n - 8
                  : n > 5 && !strcmp(dict + n - 5, ".dict")  ? n - 5
                                                             : 0;
    if (!stem || stem + 7 > len) {
        snprintf(err, errlen, "%s: not a dictd dictionary: expected NAME.dict or NAME.dict.dz "
                 "(with NAME.index beside it)", dict);
        return -1;
    }
    snprintf(index, len, "%.*s.index", (int)stem, dict);
    return 0;
}

/* The whole (dictzip, gzip or plain) file, uncompressed, NUL-terminated. */
static char *gz_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    if (nn_data_regular_file(path, err, errlen) < 0)
        return NULL;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path,
                 errno ? strerror(errno) : "gzopen failed");
        return NULL;
    }
    gzbuffer(f, 1u << 18);
    size_t cap = 1u << 22, n = 0;
    char *buf = malloc(cap + 1);
    int r = 0;
    while (buf) {
        size_t room = cap - n;   /* gzread takes an unsigned count: 1 GiB at most */
        if ((r = gzread(f, buf + n, room > (1u << 30) ? 1u << 30 : (unsigned)room)) <= 0)
            break;
        n += (size_t)r;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb)
                free(buf);
            buf = nb, cap *= 2;
        }
    }
    int zerr = Z_OK;
    const char *msg = gzerror(f, &zerr);
    if (buf && (r < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)))
        snprintf(err, errlen, "%s: corrupt or truncated compressed data (%s)", path, msg);
    else if (!buf)
        snprintf(err, errlen, "%s: out of memory", path);
    else
        err[0] = 0;
    gzclose(f);
    if (err[0]) {
        free(buf);
        return NULL;
    }
    if (refuse_binary(buf, n, path, err, errlen))
        return NULL;
    buf[n] = 0;
    *len = n;
    return buf;
}

/* dictd's base64 number s[0..n); -1 for a character outside its digits. */
static int64_t dictd_b64(const char *s, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int64_t v = 0;
    if (!n || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *d = s[i] ? strchr(digits, s[i]) : NULL;
        if (!d)
            return -1;
        v = v * 64 + (d - digits);
    }
    return v;
}

/* The last tab of p[0..n), or NULL (headwords may hold spaces, not tabs). */
static char *last_tab(char *p, size_t n)
{
    while (n > 0 && p[n - 1] != '\t')
        n--;
    return n ? p + n - 1 : NULL;
}

static int by_offset(const void *a, const void *b)
{
    const dict_entry *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The index's entries (sorted, distinct, metadata left out), each checked
 * to lie inside the data's dlen bytes. */
static int dictd_read_index(const char *path, size_t dlen, const char *dict, dict_entry **out,
                            size_t *count, char *err, size_t errlen)
{
    size_t len;
    char *buf = NULL;
    if (nn_data_regular_file(path, err, errlen) == 0)
        buf = slurp(path, &len, err, errlen);
    if (!buf)
        return -1;
    dict_entry *e = NULL;
    size_t n = 0, cap = 0, line = 0;
    int rc = 0;
    for (char *p = buf; *p && !rc; line++) {
        char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        char *t2 = last_tab(p, ll);
        char *t1 = t2 ? last_tab(p, (size_t)(t2 - p)) : NULL;
        int64_t off = t1 ? dictd_b64(t1 + 1, (size_t)(t2 - t1 - 1)) : -1;
        int64_t el = t2 ? dictd_b64(t2 + 1, ll - (size_t)(t2 - p) - 1) : -1;
        if (off < 0 || el < 0) {
            snprintf(err, errlen, "%s: line %zu: not \"headword<TAB>offset<TAB>length\" with "
                     "base64 numbers", path, line + 1);
            rc = -1;
        } else if ((uint64_t)off + (uint64_t)el > dlen) {
            snprintf(err, errlen, "%s: line %zu: entry at bytes %lld..%lld lies beyond the end of "
                     "%s (%zu bytes uncompressed)", path, line + 1, (long long)off,
                     (long long)(off + el), dict, dlen);
            rc = -1;
        } else if (strncmp(p, "00-", 3) != 0 && el > 0) {
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 4096;
                dict_entry *ne = realloc(e, nc * sizeof *ne);
                if (!ne) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    rc = -1;
                    break;
                }
                e = ne, cap = nc;
            }
            e[n++] = (dict_entry){(size_t)off, (size_t)el};
        }
        p = eol ? eol + 1 : p + ll;
    }
    free(buf);
    if (rc) {
        free(e);
        return -1;
    }
    if (n)
        qsort(e, n, sizeof *e, by_offset);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || e[i].off != e[k - 1].off || e[i].len != e[k - 1].len)
            e[k++] = e[i];
    if (!k) {
        snprintf(err, errlen,
                 "%s: no dictionary entries (every line is dictd metadata, \"00-...\")", path);
        free(e);
        return -1;
    }
    *out = e, *count = k;
    return 0;
}

/* The text of an entry with what is not running prose blanked out: the
 * pronunciations and forms between backslashes (\Ab*do"men\) and every
 * bracketed span, nested ones included (etymologies, "[1913 Webster]"
 * source notes, "[R.]" usage labels). */
static void dictd_prose(const char *text, size_t len, char *out)
{
    int depth = 0, forms = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        out[i] = ' ';
        if (ch == '\\')
            forms = !forms;
        else if (ch == '[')
            depth++;
        else if (ch == ']')
            depth -= depth > 0;
        else if (!forms && !depth)
            out[i] = ch;
    }
}

static const char *split_name(int s)
{
    return s == SPLIT_TRAIN ? "training" : s == SPLIT_VALID ? "validation" : "test";
}

int nn_corpus_build_dictd(const char *dict, int max_vocab, corpus *c, char *err, size_t errlen)
{
    char index[4096];
    size_t dlen, ne = 0, entry = 0, longest = 0;
    dict_entry *e = NULL;
    memset(c, 0, sizeof *c);
    if (dictd_index_path(dict, index, sizeof index, err, errlen) < 0)
        return -1;
    char *data = gz_slurp(dict, &dlen, err, errlen);
    if (!data)
        return -1;
    if (dictd_read_index(index, dlen, dict, &e, &ne, err, errlen) < 0) {
        free(data);
        return -1;
    }
    for (size_t i = 0; i < ne; i++)
        longest = e[i].len > longest ? e[i].len : longest;
    char *prose = malloc(longest + 1);
    intern t = {0};
    ids sp[3] = {{0}};
    int rc = prose ? intern_reserved(&t) : -1;
    for (size_t i = 0; i < ne && !rc; i++) {
        dictd_prose(data + e[i].off, e[i].len, prose);
        rc = add_entry(&t, sp, entry++, prose, e[i].len);
    }
    if (rc)
        snprintf(err, errlen, "%s: out of memory", dict);
    for (int s = 0; s < 3 && !rc; s++)
        if (!sp[s].n) {
            snprintf(err, errlen, "%s: the %s split holds no words (%zu entries in %s; entry i "
                     "goes to validation when i %% 20 == 18, test when 19)",
                     dict, split_name(s), ne, index);
            rc = -1;
        }
    if (!rc)
        rc = finish_corpus(&t, sp, max_vocab, c, dict, err, errlen);
    free(prose);
    free(e);
    free(data);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    intern_free(&t);
    return rc;
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
