/* IDX loader (MNIST / Fashion-MNIST), gzip or plain, plus the helpers
 * every loader shares. */
#include "data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

void nn_dataset_free(dataset *d)
{
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

int nn_data_regular_file(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (a FIFO, device or directory); give the "
                 "data itself", path);
        return -1;
    }
    return 0;
}

void nn_shard_bounds(const shard *s, size_t total, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)s->rank / (size_t)s->nranks;
    *hi = total * (size_t)(s->rank + 1) / (size_t)s->nranks;
}

static size_t limited(const shard *s, size_t n) { return s->limit && s->limit < n ? s->limit : n; }

/* Read exactly len bytes; 0, or -1 with err naming the file. */
static int gz_read_exact(gzFile f, const char *path, void *buf, size_t len, const char *what,
                         char *err, size_t errlen)
{
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            snprintf(err, errlen, "%s: corrupt compressed data while reading %s (%s)", path, what,
                     msg);
            return -1;
        }
        if (r == 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            snprintf(err, errlen, "%s: truncated: file ends while reading %s%s%s", path, what,
                     zerr ? ": " : "", zerr ? msg : "");
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Open and check the header: magic, dimension count, sizes. */
static gzFile idx_open(const char *path, uint32_t magic, uint32_t *dims, int ndims, char *err,
                       size_t errlen)
{
    if (nn_data_regular_file(path, err, errlen) < 0)
        return NULL;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, errno ? strerror(errno) : "gzopen failed");
        return NULL;
    }
    unsigned char h[16];
    size_t hl = 4 * (size_t)(1 + ndims);
    if (gz_read_exact(f, path, h, hl, "the IDX header", err, errlen) < 0) {
        gzclose(f);
        return NULL;
    }
    uint32_t m = be32(h);
    if (m != magic) {
        snprintf(err, errlen,
                 "%s: not an IDX %s file: magic 0x%08x, expected 0x%08x", path,
                 ndims == 3 ? "image (ubyte, 3 dimensions)" : "label (ubyte, 1 dimension)",
                 (unsigned)m, (unsigned)magic);
        gzclose(f);
        return NULL;
    }
    for (int i = 0; i < ndims; i++)
        dims[i] = be32(h + 4 * (i + 1));
    return f;
}

/* Read records [lo, hi) of size rec, growing the buffer as data arrives so a
 * header claiming more samples than the file holds costs no memory. */
static int read_records(gzFile f, const char *path, size_t header, size_t rec, size_t lo,
                        size_t hi, uint8_t **out, const char *what, char *err, size_t errlen)
{
    if (lo && gzseek(f, (z_off_t)(header + lo * rec), SEEK_SET) < 0) {
        snprintf(err, errlen, "%s: truncated or corrupt: cannot reach %s %zu", path, what, lo);
        return -1;
    }
    size_t cap = 0, n = hi - lo;
    uint8_t *buf = NULL;
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < 4096 ? n - done : 4096;
        if (done + chunk > cap) {
            cap = cap ? cap * 2 : 4096;
            if (cap > n)
                cap = n;
            uint8_t *nb = realloc(buf, cap * rec);
            if (!nb) {
                free(buf);
                snprintf(err, errlen, "%s: out of memory for %zu %ss", path, n, what);
                return -1;
            }
            buf = nb;
        }
        char desc[96];
        snprintf(desc, sizeof desc, "%s %zu of %zu", what, lo + done, hi);
        if (gz_read_exact(f, path, buf + done * rec, chunk * rec, desc, err, errlen) < 0) {
            free(buf);
            return -1;
        }
        done += chunk;
    }
    *out = buf;
    return 0;
}

int nn_idx_load(const char *images, const char *labels, const shard *s, dataset *d, char *err,
             size_t errlen)
{
    memset(d, 0, sizeof *d);
    uint32_t di[3], dl[1];
    gzFile fi = idx_open(images, 0x00000803u, di, 3, err, errlen);
    if (!fi)
        return -1;
    gzFile fl = idx_open(labels, 0x00000801u, dl, 1, err, errlen);
    if (!fl) {
        gzclose(fi);
        return -1;
    }
    int rc = -1;
    uint8_t *lab = NULL;
    if (di[1] < 1 || di[1] > 1024 || di[2] < 1 || di[2] > 1024) {
        snprintf(err, errlen, "%s: implausible image size %ux%u (1..1024 expected)", images,
                 (unsigned)di[1], (unsigned)di[2]);
        goto out;
    }
    if (di[0] != dl[0]) {
        snprintf(err, errlen, "%s: holds %u labels but %s holds %u images", labels,
                 (unsigned)dl[0], images, (unsigned)di[0]);
        goto out;
    }
    if (di[0] == 0) {
        snprintf(err, errlen, "%s: holds no images", images);
        goto out;
    }
    d->kind = DATA_IMAGES;
    d->c = 1, d->h = (int)di[1], d->w = (int)di[2];
    d->classes = 10;
    d->rec = (size_t)di[1] * di[2];
    d->total = limited(s, di[0]);
    size_t lo, hi;
    nn_shard_bounds(s, d->total, &lo, &hi);
    if (read_records(fi, images, 16, d->rec, lo, hi, &d->x, "image", err, errlen) < 0 ||
        read_records(fl, labels, 8, 1, lo, hi, &lab, "label", err, errlen) < 0)
        goto out;
    d->n = hi - lo;
    d->y = malloc((d->n + 1) * sizeof(int32_t));
    if (!d->y) {
        snprintf(err, errlen, "%s: out of memory", labels);
        goto out;
    }
    for (size_t i = 0; i < d->n; i++) {
        if (lab[i] >= 10) {
            snprintf(err, errlen, "%s: label %u of sample %zu is outside 0..9", labels,
                     (unsigned)lab[i], lo + i);
            goto out;
        }
        d->y[i] = lab[i];
    }
    rc = 0;
out:
    free(lab);
    gzclose(fi);
    gzclose(fl);
    if (rc)
        nn_dataset_free(d);
    return rc;
}
