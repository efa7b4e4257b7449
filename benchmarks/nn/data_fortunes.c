/* A corpus built from the Debian fortune files (fortunes-min,
 * fortune-mod's data: FILE entries separated by lines of '%'), see data.h. */
#include "data_text.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Entries end at lines holding only '%'. */
static int add_fortune_file(const char *path, intern *t, ids *sp, size_t *entry, char *err,
                            size_t errlen)
{
    size_t len;
    char *buf = nn_text_slurp(path, &len, err, errlen);
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
                rc = nn_text_add_entry(t, sp, (*entry)++, buf + start, i - start);
            start = eol + 1;
        }
        i = eol + 1;
    }
    if (!rc && start < len)
        rc = nn_text_add_entry(t, sp, (*entry)++, buf + start, len - start);
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
    int rc = nn_text_intern_reserved(&t);
    for (size_t i = 0; i < nf && !rc; i++)
        rc = add_fortune_file(files[i], &t, sp, &entry, err, errlen);
    if (!rc)
        rc = nn_text_finish_corpus(&t, sp, max_vocab, c, dir, err, errlen);
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    for (int s = 0; s < 3; s++)
        free(sp[s].v);
    nn_text_intern_free(&t);
    return rc;
}
