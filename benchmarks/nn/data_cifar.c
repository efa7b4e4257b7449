/* CIFAR-10 binary loader: data_batch_*.bin / test_batch.bin, each a
 * sequence of 3073-byte records (label, 1024 R, 1024 G, 1024 B). */
#include "data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { CIFAR_SIDE = 32, CIFAR_PIXELS = 32 * 32 * 3, CIFAR_REC = 1 + 32 * 32 * 3 };

static int file_records(const char *path, size_t *n, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    if (st.st_size == 0 || st.st_size % CIFAR_REC) {
        snprintf(err, errlen,
                 "%s: not CIFAR-10 binary: size %lld is not a positive multiple of %d bytes "
                 "(1 label + 3072 pixels)",
                 path, (long long)st.st_size, CIFAR_REC);
        return -1;
    }
    *n = (size_t)st.st_size / CIFAR_REC;
    return 0;
}

/* CHW planes -> HWC pixels. */
static void chw_to_hwc(const unsigned char *src, uint8_t *dst)
{
    for (int p = 0; p < CIFAR_SIDE * CIFAR_SIDE; p++)
        for (int c = 0; c < 3; c++)
            dst[p * 3 + c] = src[c * CIFAR_SIDE * CIFAR_SIDE + p];
}

static int read_file_part(const char *path, size_t first, size_t count, dataset *d, size_t at,
                          char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char rec[CIFAR_REC];
    int rc = 0;
    if (fseek(f, (long)(first * CIFAR_REC), SEEK_SET) < 0)
        rc = -1;
    for (size_t i = 0; i < count && !rc; i++) {
        if (fread(rec, 1, CIFAR_REC, f) != CIFAR_REC) {
            snprintf(err, errlen, "%s: truncated: record %zu cannot be read", path, first + i);
            rc = -1;
        } else if (rec[0] >= 10) {
            snprintf(err, errlen, "%s: label %u of record %zu is outside 0..9", path,
                     (unsigned)rec[0], first + i);
            rc = -1;
        } else {
            d->y[at + i] = rec[0];
            chw_to_hwc(rec + 1, d->x + (at + i) * CIFAR_PIXELS);
        }
    }
    if (rc && !err[0])
        snprintf(err, errlen, "%s: cannot seek", path);
    fclose(f);
    return rc;
}

int nn_cifar_load(const char *const *files, int nfiles, const shard *s, dataset *d, char *err,
               size_t errlen)
{
    memset(d, 0, sizeof *d);
    err[0] = 0;
    size_t *counts = calloc((size_t)nfiles + 1, sizeof *counts), total = 0;
    if (!counts) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < nfiles; i++) {
        if (file_records(files[i], &counts[i], err, errlen) < 0) {
            free(counts);
            return -1;
        }
        total += counts[i];
    }
    d->kind = DATA_IMAGES;
    d->c = 3, d->h = d->w = CIFAR_SIDE;
    d->classes = 10;
    d->rec = CIFAR_PIXELS;
    d->total = s->limit && s->limit < total ? s->limit : total;
    size_t lo, hi;
    nn_shard_bounds(s, d->total, &lo, &hi);
    d->n = hi - lo;
    d->x = malloc(d->n * d->rec + 1);
    d->y = malloc((d->n + 1) * sizeof(int32_t));
    int rc = d->x && d->y ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "%s: out of memory", files[0]);
    size_t start = 0, at = 0;   /* global index of each file's first record */
    for (int i = 0; i < nfiles && !rc; start += counts[i], i++) {
        if (hi <= start || lo >= start + counts[i])
            continue;
        size_t a = lo > start ? lo - start : 0;
        size_t b = hi < start + counts[i] ? hi - start : counts[i];
        rc = read_file_part(files[i], a, b - a, d, at, err, errlen);
        at += b - a;
    }
    free(counts);
    if (rc)
        nn_dataset_free(d);
    return rc;
}
