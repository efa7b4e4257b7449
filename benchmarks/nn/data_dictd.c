/* A corpus built from a dictd dictionary (Debian's dict-gcide and the
 * like), see data.h. */
#include "data_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
    if (nn_text_refuse_binary(buf, n, path, err, errlen))
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
        buf = nn_text_slurp(path, &len, err, errlen);
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
    int rc = prose ? nn_text_intern_reserved(&t) : -1;
    for (size_t i = 0; i < ne && !rc; i++) {
        dictd_prose(data + e[i].off, e[i].len, prose);
        rc = nn_text_add_entry(&t, sp, entry++, prose, e[i].len);
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
        rc = nn_text_finish_corpus(&t, sp, max_vocab, c, dict, err, errlen);
    free(prose);
    free(e);
    free(data);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    nn_text_intern_free(&t);
    return rc;
}
