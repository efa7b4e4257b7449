/* Gradient traces (trace.h): the writer rb_train uses, the reader rb_micro
 * replays from. */
#include "trace.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5attr.h"
#include "sha256.h"
#include "tmpfiles.h"

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* HDF5 prints its error stack on every failed call unless told not to:
 * the messages here say what was wrong instead. */
typedef struct h5_quiet {
    H5E_auto2_t fn;
    void *data;
} h5_quiet;

static h5_quiet quiet_begin(void)
{
    h5_quiet q;
    H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static void quiet_end(h5_quiet q) { H5Eset_auto2(H5E_DEFAULT, q.fn, q.data); }

/* ---------------------------------------------------------- reading */

/* The dims of dataset name under g (at most 2), its class; -1 if absent. */
static int dataset_shape(hid_t g, const char *name, H5T_class_t cls, int ndims, hsize_t dims[2])
{
    if (H5Lexists(g, name, H5P_DEFAULT) <= 0)
        return -1;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t sp = H5Dget_space(d), ft = H5Dget_type(d);
    int ok = H5Tget_class(ft) == cls && H5Sget_simple_extent_ndims(sp) == ndims;
    if (ok)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Tclose(ft), H5Sclose(sp), H5Dclose(d);
    return ok ? 0 : -1;
}

static int read_dataset(hid_t g, const char *name, hid_t mem_type, void *buf)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    int rc = d >= 0 && H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 ? 0 : -1;
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static herr_t first_name(hid_t g, const char *name, const H5L_info_t *info, void *out)
{
    (void)g, (void)info;
    snprintf(out, 64, "%s", name);
    return 1;   /* stop at the first */
}

/* The root's promises: format, version, complete, ranks. */
static int check_root(hid_t f, bench_trace *t, char *err, size_t len)
{
    char fmt[64];
    int64_t version = 0, complete = 0, ranks = 0;
    if (bench_h5_read_attr_str(f, "format", fmt, sizeof fmt) || strcmp(fmt, BENCH_TRACE_FORMAT))
        return fail(err, len, "not a gradient trace (no format attribute \"" BENCH_TRACE_FORMAT "\")");
    if (bench_h5_read_attr_int(f, "format_version", &version) || version != BENCH_TRACE_VERSION)
        return fail(err, len, "trace format_version %lld: this build reads version %d",
                    (long long)version, BENCH_TRACE_VERSION);
    if (bench_h5_read_attr_int(f, "complete", &complete) || complete != 1)
        return fail(err, len, "incomplete trace (complete != 1: the recording did not finish)");
    if (bench_h5_read_attr_int(f, "ranks", &ranks) || ranks < 1 || ranks > 1 << 20)
        return fail(err, len, "trace without a valid ranks attribute");
    t->ranks = (int)ranks;
    bench_h5_read_attr_str(f, "model", t->model, sizeof t->model);
    bench_h5_read_attr_str(f, "source", t->source, sizeof t->source);
    return 0;
}

/* The layer's attributes and the shapes of its four datasets. */
static int check_layer_shapes(hid_t g, bench_trace *t, uint64_t *total, char *err, size_t len)
{
    int64_t rows = 0, cols = 0;
    if (bench_h5_read_attr_int(g, "rows", &rows) || bench_h5_read_attr_int(g, "cols", &cols) || rows < 1 || cols < 1)
        return fail(err, len, "layer %s: rows and cols attributes missing or not positive", t->layer);
    t->rows = (uint64_t)rows, t->cols = (uint64_t)cols;
    bench_h5_read_attr_str(g, "kind", t->kind, sizeof t->kind);
    hsize_t ds[2], dc[2], di[2], dv[2];
    if (dataset_shape(g, "steps", H5T_INTEGER, 1, ds) || dataset_shape(g, "counts", H5T_INTEGER, 2, dc) ||
        dataset_shape(g, "ids", H5T_INTEGER, 1, di) || dataset_shape(g, "values", H5T_FLOAT, 2, dv))
        return fail(err, len, "layer %s: steps, counts, ids or values missing or of the wrong type",
                    t->layer);
    if (ds[0] < 1 || dc[0] != ds[0] || dc[1] != (hsize_t)t->ranks)
        return fail(err, len, "layer %s: counts is %llux%llu, the trace has %llu steps of %d ranks",
                    t->layer, (unsigned long long)dc[0], (unsigned long long)dc[1],
                    (unsigned long long)ds[0], t->ranks);
    if (dv[0] != di[0] || dv[1] != t->cols)
        return fail(err, len, "layer %s: values is %llux%llu, ids has %llu rows of %llu columns",
                    t->layer, (unsigned long long)dv[0], (unsigned long long)dv[1],
                    (unsigned long long)di[0], (unsigned long long)t->cols);
    if ((double)di[0] * (8.0 + 4.0 * (double)t->cols) > (double)BENCH_TRACE_MAX_BYTES)
        return fail(err, len, "layer %s: %llu rows of %llu columns exceed the %llu bytes a trace may hold",
                    t->layer, (unsigned long long)di[0], (unsigned long long)t->cols,
                    (unsigned long long)BENCH_TRACE_MAX_BYTES);
    t->nsteps = (size_t)ds[0];
    *total = di[0];
    return 0;
}

/* counts -> offsets; ids in range and ascending within each (step, rank);
 * values finite.  The scale's power of two from the largest magnitude. */
static int check_contents(bench_trace *t, const int64_t *counts, uint64_t total, char *err, size_t len)
{
    size_t cells = t->nsteps * (size_t)t->ranks;
    t->offsets[0] = 0;
    for (size_t i = 0; i < cells; i++) {
        if (counts[i] < 0 || (uint64_t)counts[i] > t->rows)
            return fail(err, len, "layer %s: count %lld out of range", t->layer, (long long)counts[i]);
        t->offsets[i + 1] = t->offsets[i] + counts[i];
    }
    if ((uint64_t)t->offsets[cells] != total)
        return fail(err, len, "layer %s: counts sum to %lld rows, ids holds %llu", t->layer,
                    (long long)t->offsets[cells], (unsigned long long)total);
    for (size_t i = 0; i < cells; i++)
        for (int64_t k = t->offsets[i]; k < t->offsets[i + 1]; k++) {
            if (t->ids[k] < 0 || (uint64_t)t->ids[k] >= t->rows)
                return fail(err, len, "layer %s: row id %lld outside 0..%llu", t->layer,
                            (long long)t->ids[k], (unsigned long long)t->rows - 1);
            if (k > t->offsets[i] && t->ids[k] <= t->ids[k - 1])
                return fail(err, len, "layer %s: row ids of step %lld, rank %zu not ascending",
                            t->layer, (long long)t->steps[i / (size_t)t->ranks], i % (size_t)t->ranks);
        }
    double big = 0.0;
    for (uint64_t i = 0; i < total * t->cols; i++) {
        if (!isfinite(t->values[i]))
            return fail(err, len, "layer %s: a value is not finite", t->layer);
        if (fabs(t->values[i]) > big)
            big = fabs(t->values[i]);
    }
    /* A run rank sums up to ceil(p / q) trace ranks. */
    double fold = (double)((t->ranks + t->run_ranks - 1) / t->run_ranks);
    int e = 0;
    if (big > 0.0)
        frexp(big * fold, &e);   /* big * fold in [2^(e-1), 2^e) */
    t->scale = (float)ldexp(1.0, -e);
    for (uint64_t i = 0; i < total * t->cols; i++)
        t->values[i] *= t->scale;
    return 0;
}

static int load_layer(hid_t f, const char *layer, bench_trace *t, char *err, size_t len)
{
    if (H5Lexists(f, "layers", H5P_DEFAULT) <= 0)
        return fail(err, len, "trace without a /layers group");
    hid_t lg = H5Gopen2(f, "layers", H5P_DEFAULT);
    if (layer && layer[0])
        snprintf(t->layer, sizeof t->layer, "%s", layer);
    else
        H5Literate(lg, H5_INDEX_NAME, H5_ITER_INC, NULL, first_name, t->layer);
    int rc = -1;
    if (!t->layer[0] || H5Lexists(lg, t->layer, H5P_DEFAULT) <= 0) {
        rc = fail(err, len, "trace has no layer '%s'", t->layer);
        H5Gclose(lg);
        return rc;
    }
    hid_t g = H5Gopen2(lg, t->layer, H5P_DEFAULT);
    uint64_t total = 0;
    int64_t *counts = NULL;
    if (check_layer_shapes(g, t, &total, err, len))
        goto out;
    size_t cells = t->nsteps * (size_t)t->ranks;
    t->steps = malloc(t->nsteps * sizeof *t->steps);
    t->offsets = malloc((cells + 1) * sizeof *t->offsets);
    counts = malloc(cells * sizeof *counts);
    t->ids = malloc((total ? total : 1) * sizeof *t->ids);
    t->values = malloc((total ? total : 1) * t->cols * sizeof *t->values);
    if (!t->steps || !t->offsets || !counts || !t->ids || !t->values) {
        fail(err, len, "out of memory for layer %s", t->layer);
        goto out;
    }
    if (read_dataset(g, "steps", H5T_NATIVE_INT64, t->steps) ||
        read_dataset(g, "counts", H5T_NATIVE_INT64, counts) ||
        (total && (read_dataset(g, "ids", H5T_NATIVE_INT64, t->ids) ||
                   read_dataset(g, "values", H5T_NATIVE_FLOAT, t->values)))) {
        fail(err, len, "layer %s: cannot read its datasets (corrupt file?)", t->layer);
        goto out;
    }
    rc = check_contents(t, counts, total, err, len);
out:
    free(counts);
    H5Gclose(g), H5Gclose(lg);
    return rc;
}

int bench_trace_load(const char *path, const char *layer, int run_ranks, bench_trace *t, char *err,
                  size_t len)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->run_ranks = run_ranks;
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return fail(err, len, "%s: no such regular file", path);
    h5_quiet q = quiet_begin();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc;
    if (f < 0) {
        rc = fail(err, len, "%s: not an HDF5 file (corrupt or truncated?)", path);
    } else {
        char why[900] = "";
        rc = check_root(f, t, why, sizeof why);
        if (!rc && run_ranks > t->ranks)
            rc = fail(why, sizeof why, "recorded on %d ranks, cannot replay on %d (a trace replays on "
                      "its own rank count or fewer, run rank r summing trace ranks r, r+q, ...)",
                      t->ranks, run_ranks);
        if (!rc)
            rc = load_layer(f, layer, t, why, sizeof why);
        if (rc)
            fail(err, len, "%s: %s", path, why);
        H5Fclose(f);
    }
    quiet_end(q);
    if (!rc && bench_sha256_file(path, t->sha256))
        rc = fail(err, len, "%s: cannot read it to hash it", path);
    if (rc)
        bench_trace_free(t);
    return rc;
}

void bench_trace_free(bench_trace *t)
{
    free(t->steps), free(t->offsets), free(t->ids), free(t->values);
    t->steps = t->offsets = t->ids = NULL;
    t->values = NULL;
}

size_t bench_trace_fill(const void *step, int rank, int nranks, float *x)
{
    const bench_trace_step *s = step;
    const bench_trace *t = s->t;
    size_t n = t->rows * t->cols, nnz = 0;
    memset(x, 0, n * sizeof *x);
    for (int tr = rank; tr < t->ranks; tr += nranks) {
        size_t cell = s->step * (size_t)t->ranks + (size_t)tr;
        for (int64_t k = t->offsets[cell]; k < t->offsets[cell + 1]; k++) {
            float *row = x + (size_t)t->ids[k] * t->cols;
            const float *v = t->values + (size_t)k * t->cols;
            for (size_t c = 0; c < t->cols; c++)
                row[c] += v[c];
        }
    }
    for (size_t i = 0; i < n; i++)
        nnz += x[i] != 0.0f;
    return nnz;
}

/* ---------------------------------------------------------- writing */

#define TRACE_MAX_LAYERS 8

typedef struct trace_layer {
    hid_t steps, counts, ids, values;
    uint64_t cols;
    hsize_t nsteps, nrows;
} trace_layer;

struct bench_trace_writer {
    hid_t file;
    char path[4096], tmp[4096 + 320];   /* written to tmp, renamed onto path */
    int force, ranks, nlayers, capped;
    h5_quiet quiet;                     /* HDF5's error printing, restored at close */
    uint64_t max_bytes, bytes;
    trace_layer L[TRACE_MAX_LAYERS];
};

/* An empty extendible dataset of dims {0, width} (width 0: 1-D). */
static hid_t extendible(hid_t g, const char *name, hid_t type, hsize_t width, hsize_t chunk_rows)
{
    int nd = width ? 2 : 1;
    hsize_t dims[2] = {0, width}, maxd[2] = {H5S_UNLIMITED, width}, chunk[2] = {chunk_rows, width};
    hid_t sp = H5Screate_simple(nd, dims, maxd), pl = bench_h5_checked_dcpl(nd, chunk);
    hid_t d = pl < 0 ? H5I_INVALID_HID : H5Dcreate2(g, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (pl >= 0)
        H5Pclose(pl);
    H5Sclose(sp);
    return d;
}

/* Append n rows (of width, 0: 1-D) to d, which holds have rows. */
static int append_rows(hid_t d, hid_t mem_type, hsize_t have, hsize_t n, hsize_t width, const void *buf)
{
    if (!n)
        return 0;
    int nd = width ? 2 : 1;
    hsize_t size[2] = {have + n, width}, start[2] = {have, 0}, count[2] = {n, width};
    if (H5Dset_extent(d, size) < 0)
        return -1;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(nd, count, NULL);
    int rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
             H5Dwrite(d, mem_type, ms, fs, H5P_DEFAULT, buf) < 0 ? -1 : 0;
    H5Sclose(ms), H5Sclose(fs);
    return rc;
}

int bench_trace_create(const char *path, int force, const bench_trace_info *info, bench_trace_writer **w,
                    char *err, size_t len)
{
    struct stat st;
    *w = NULL;
    /* worded as bench_output_ok and rb-archive word these refusals */
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return fail(err, len, "%s exists and is not a regular file", path);
        if (!force)
            return fail(err, len, "refusing to overwrite existing %s (use --force)", path);
    }
    if (info->max_bytes > BENCH_TRACE_MAX_BYTES)
        return fail(err, len, "a trace holds at most %llu bytes", (unsigned long long)BENCH_TRACE_MAX_BYTES);
    bench_trace_writer *t = calloc(1, sizeof *t);
    if (!t)
        return fail(err, len, "out of memory");
    /* Written as PATH.tmp.HOST.PID and renamed when complete: a recording
     * that fails (a full disk) or is killed leaves no file at path.  HDF5
     * quiet throughout (its error stack was printed on every failed write,
     * the failure is named here instead), and its exit handler off: it
     * crashed (SIGSEGV) closing a file whose close had failed. */
    snprintf(t->path, sizeof t->path, "%s", path);
    bench_tmp_name(path, t->tmp, sizeof t->tmp);
    t->force = force;
    H5dont_atexit();
    t->quiet = quiet_begin();
    t->file = H5Fcreate(t->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (t->file < 0) {
        quiet_end(t->quiet);
        free(t);
        return fail(err, len, "%s: cannot create it", path);
    }
    t->ranks = info->ranks, t->max_bytes = info->max_bytes;
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int rc = bench_h5_attr_str(t->file, "format", BENCH_TRACE_FORMAT) |
             bench_h5_attr_int(t->file, "format_version", BENCH_TRACE_VERSION) |
             bench_h5_attr_str(t->file, "model", info->model) |
             bench_h5_attr_str(t->file, "source", info->source) |
             bench_h5_attr_int(t->file, "ranks", info->ranks) |
             bench_h5_attr_int(t->file, "record_every", info->record_every) |
             bench_h5_attr_u64(t->file, "max_bytes", info->max_bytes) |
             bench_h5_attr_int(t->file, "complete", 0) | bench_h5_attr_int(t->file, "capped", 0) |
             bench_h5_attr_str(t->file, "created_utc", when);
    *w = t;
    return rc ? fail(err, len, "%s: cannot write its attributes", path) : 0;
}

int bench_trace_add_layer(bench_trace_writer *w, const char *name, const char *kind, uint64_t rows,
                       uint64_t cols, char *err, size_t len)
{
    if (w->nlayers == TRACE_MAX_LAYERS)
        return fail(err, len, "more than %d layers", TRACE_MAX_LAYERS);
    char path[128];
    snprintf(path, sizeof path, "layers/%s", name);
    hid_t g = bench_h5_group(w->file, path);   /* quiet: it tries to open it first */
    if (g == H5I_INVALID_HID)
        return fail(err, len, "cannot create layer %s", name);
    trace_layer *l = &w->L[w->nlayers];
    l->cols = cols;
    hsize_t row_chunk = cols < 4096 ? 4096 / cols : 1;
    l->steps = extendible(g, "steps", H5T_STD_I64LE, 0, 64);
    l->counts = extendible(g, "counts", H5T_STD_I64LE, (hsize_t)w->ranks, 64);
    l->ids = extendible(g, "ids", H5T_STD_I64LE, 0, 4096);
    l->values = extendible(g, "values", H5T_IEEE_F32LE, cols, row_chunk);
    int rc = bench_h5_attr_u64(g, "rows", rows) | bench_h5_attr_u64(g, "cols", cols) |
             bench_h5_attr_str(g, "kind", kind);
    H5Gclose(g);
    if (rc || l->steps < 0 || l->counts < 0 || l->ids < 0 || l->values < 0)
        return fail(err, len, "cannot create the datasets of layer %s", name);
    return w->nlayers++;
}

int bench_trace_append(bench_trace_writer *w, int layer, int64_t step, const int64_t *counts,
                    const int64_t *ids, const float *values, char *err, size_t len)
{
    trace_layer *l = &w->L[layer];
    hsize_t n = 0;
    for (int r = 0; r < w->ranks; r++)
        n += (hsize_t)counts[r];
    uint64_t bytes = (uint64_t)n * (8 + 4 * l->cols);
    if (w->capped || w->bytes + bytes > w->max_bytes) {
        w->capped = 1;
        return 0;
    }
    if (append_rows(l->steps, H5T_NATIVE_INT64, l->nsteps, 1, 0, &step) ||
        append_rows(l->counts, H5T_NATIVE_INT64, l->nsteps, 1, (hsize_t)w->ranks, counts) ||
        append_rows(l->ids, H5T_NATIVE_INT64, l->nrows, n, 0, ids) ||
        append_rows(l->values, H5T_NATIVE_FLOAT, l->nrows, n, l->cols, values))
        return fail(err, len, "cannot append step %lld", (long long)step);
    l->nsteps++, l->nrows += n;
    w->bytes += bytes;
    return 1;
}

int bench_trace_close(bench_trace_writer *w, int complete, char *err, size_t len)
{
    if (!w)
        return 0;
    int rc = bench_h5_attr_int(w->file, "complete", complete) |
             bench_h5_attr_int(w->file, "capped", w->capped);
    for (int i = 0; i < w->nlayers; i++) {
        trace_layer *l = &w->L[i];
        rc |= (H5Dclose(l->steps) < 0) | (H5Dclose(l->counts) < 0) | (H5Dclose(l->ids) < 0) |
              (H5Dclose(l->values) < 0);
    }
    rc |= H5Fclose(w->file) < 0;
    quiet_end(w->quiet);
    if (rc)
        fail(err, len, "%s: cannot finish the trace file (a full disk?); nothing is left at that path",
             w->path);
    else if (complete && bench_tmp_commit(w->tmp, w->path, w->force) != 0)
        rc = fail(err, len, "%s: %s", w->path, errno == EEXIST ? "appeared during the run "
                  "(another run writing it?); this trace is discarded (--force replaces it)"
                  : strerror(errno));
    if (rc || !complete)
        unlink(w->tmp);
    free(w);
    return rc ? -1 : 0;
}
