/* rb_train's checkpoints (--checkpoint FILE, --resume): everything the
 * steps after step N depend on, so that a run resumed from it ends bit for
 * bit as the run that never stopped (docs/training.md, "Checkpoints").
 *
 * The file (HDF5, written by rank 0, every dataset fletcher32-checksummed):
 *   attributes  format, version, iteration (steps done), ranks, identity
 *               (the options and data the trajectory depends on, a
 *               key=value line each)
 *   /run        rank 0's curve and phase rows so far, its last evaluation
 *               and the wall time so far
 *   /rank_K     each rank's parameters, momentum, sparsification residual,
 *               reducer states (rb_state_save), loss tallies and timers,
 *               and its training shard under --shuffle ring (the ring
 *               moves batches between ranks)
 * Rank 0 writes FILE.tmp.HOST.PID, syncs it and renames it onto FILE: a
 * crash while writing leaves the previous checkpoint whole. */
#include "train.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/bench_common.h"
#include "harness/h5attr.h"
#include "harness/tmpfiles.h"

#define CKPT_FORMAT "rb_train checkpoint"
#define CKPT_VERSION 1
#define TAG_CKPT 0x6b70
#define CHUNK_BYTES ((size_t)1 << 30)   /* MPI messages of at most 1 GiB */

typedef enum { K_F32, K_F64, K_U8, K_I32 } field_kind;

/* One array of a rank's state. */
typedef struct field {
    const char *name;
    void *p;
    size_t bytes;
    field_kind kind;
    int reducer_state;      /* load: bytes for rb_state_load, any length */
} field;

#define MAX_FIELDS 16

/* ---------------------------------------------------------- identity */

static void add_line(char *buf, size_t len, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_line(char *buf, size_t len, const char *key, const char *fmt, ...)
{
    size_t at = strlen(buf);
    if (at >= len)
        return;
    at += (size_t)snprintf(buf + at, len - at, "%s=", key);
    if (at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    at += (size_t)vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    if (at < len)
        snprintf(buf + at, len - at, "\n");
}

void train_checkpoint_identity(const train_run *r, char *buf, size_t len)
{
    const train_opts *o = &r->o;
    buf[0] = '\0';
    add_line(buf, len, "ranks", "%d", r->nranks);
    add_line(buf, len, "model", "%s", o->model);
    add_line(buf, len, "data", "%s", r->data_digest);
    add_line(buf, len, "format", "%s", r->fmt);
    add_line(buf, len, "train_limit", "%llu", (unsigned long long)o->train_limit);
    add_line(buf, len, "test_limit", "%llu", (unsigned long long)o->test_limit);
    add_line(buf, len, "shape", "vocab %d out_vocab %d context %d embed_dim %d hidden %d", o->vocab,
             o->out_vocab, o->ctx, o->embed_dim, o->hidden);
    add_line(buf, len, "batch", "%d", o->batch);
    add_line(buf, len, "lr", "%.17g", o->lr);
    add_line(buf, len, "momentum", "%.17g", o->momentum);
    add_line(buf, len, "weight_decay", "%.17g", o->weight_decay);
    add_line(buf, len, "lr_warmup", "%ld", o->warmup);
    add_line(buf, len, "schedule", "%s", o->schedule);
    add_line(buf, len, "iterations", "%ld", r->total_iters);
    add_line(buf, len, "eval_every", "%ld", r->eval_every);
    add_line(buf, len, "seed", "%llu", (unsigned long long)o->seed);
    add_line(buf, len, "shuffle", "%s", o->shuffle);
    add_line(buf, len, "reducer", "%s", o->reducer);
    add_line(buf, len, "dense_reducer", "%s", o->dense_reducer);
    for (size_t i = 0; i < rb_option_count(); i++) {
        char v[256];
        if (rb_option_format(&o->ropts, i, v, sizeof v) == RB_OK)
            add_line(buf, len, rb_option_info_at(i)->key, "%s", v);
    }
    add_line(buf, len, "sparsify", "%s", o->sparsify);
    add_line(buf, len, "error_feedback", "%d", o->error_feedback);
    add_line(buf, len, "embed_input", "%s", o->embed_input);
    add_line(buf, len, "threads", "%d", o->threads);   /* OpenBLAS's sums follow its threads */
    add_line(buf, len, "device", "%s", o->device);
}

/* The first line of `saved` that `here` lacks, as "KEY: A there, B here". */
static void first_difference(const char *saved, const char *here, char *out, size_t len)
{
    const char *line = saved;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *eq = memchr(line, '=', n);
        size_t key = eq ? (size_t)(eq - line) + 1 : n;
        const char *mine = here;
        const char *found = NULL;
        while (*mine && !found) {   /* the same key here */
            const char *me = strchr(mine, '\n');
            size_t mn = me ? (size_t)(me - mine) : strlen(mine);
            if (mn >= key && !strncmp(mine, line, key))
                found = mine;
            mine = me ? me + 1 : mine + mn;
        }
        const char *fe = found ? strchr(found, '\n') : NULL;
        size_t fn = found ? (fe ? (size_t)(fe - found) : strlen(found)) : 0;
        if (!found || fn != n || strncmp(found, line, n)) {
            snprintf(out, len, "%.*s: %.*s in the checkpoint, %.*s here", (int)(key ? key - 1 : 0), line,
                     (int)(n - key), line + key, found ? (int)(fn - key) : 6,
                     found ? found + key : "absent");
            return;
        }
        line = end ? end + 1 : line + n;
    }
    snprintf(out, len, "options that the checkpoint does not name");
}

/* ---------------------------------------------------------- the fields */

/* This rank's arrays in a fixed order; reducer states from the caller. */
static size_t rank_fields(train_run *r, field *f, double *tallies, unsigned char *state[2],
                          size_t state_len[2])
{
    size_t k = 0;
    model *m = &r->m;
    f[k++] = (field){"params", m->params, m->n_dense * sizeof(float), K_F32, 0};
    f[k++] = (field){"embedding", m->eparams, m->n_embed * sizeof(float), K_F32, 0};
    f[k++] = (field){"velocity", r->gd.velocity, r->gd.velocity ? r->gd.n * sizeof(float) : 0, K_F32, 0};
    f[k++] = (field){"embedding_velocity", r->ge.velocity,
                     r->ge.r && r->ge.velocity ? r->ge.n * sizeof(float) : 0, K_F32, 0};
    f[k++] = (field){"residual", r->gd.residual, r->gd.residual ? r->gd.n * sizeof(float) : 0, K_F32, 0};
    f[k++] = (field){"embedding_residual", r->ge.residual,
                     r->ge.r && r->ge.residual ? r->ge.n * sizeof(float) : 0, K_F32, 0};
    f[k++] = (field){"reducer_state", state[0], state_len[0], K_U8, 1};
    f[k++] = (field){"embedding_reducer_state", state[1], state_len[1], K_U8, 1};
    f[k++] = (field){"tallies", tallies, TRAIN_CKPT_TALLIES * sizeof(double), K_F64, 0};
    if (r->use_ring) {   /* the ring moved batches between the ranks' shards */
        f[k++] = (field){"shard_records", r->tr.x, r->tr.n * r->tr.rec, K_U8, 0};
        f[k++] = (field){"shard_labels", r->tr.y, r->tr.n * sizeof(int32_t), K_I32, 0};
    }
    return k;
}

static hid_t h5_type(field_kind k)
{
    switch (k) {
    case K_F32: return H5T_NATIVE_FLOAT;
    case K_F64: return H5T_NATIVE_DOUBLE;
    case K_I32: return H5T_NATIVE_INT32;
    default: return H5T_NATIVE_UINT8;
    }
}

static size_t kind_size(field_kind k)
{
    return k == K_F64 ? 8 : k == K_U8 ? 1 : 4;
}

/* ---------------------------------------------------------- HDF5 */

/* A 1-D dataset of the field, chunked and fletcher32-checksummed (an empty
 * one contiguous: a chunk cannot be empty). */
static int write_array(hid_t loc, const char *name, const void *p, size_t bytes, field_kind kind)
{
    hsize_t n = bytes / kind_size(kind);
    hsize_t chunk = n < ((hsize_t)1 << 20) ? n : ((hsize_t)1 << 20);
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = n > 0 ? bench_h5_checked_dcpl(1, &chunk) : H5Pcreate(H5P_DATASET_CREATE);
    int rc = -1;
    if (space < 0 || dcpl < 0)
        goto out;
    hid_t d = H5Dcreate2(loc, name, h5_type(kind), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0)
        goto out;
    rc = n == 0 || H5Dwrite(d, h5_type(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, p) >= 0 ? 0 : -1;
    rc |= H5Dclose(d) < 0 ? -1 : 0;
out:
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

/* The dataset's bytes in a new buffer (*bytes); NULL with why on failure
 * (a checksum that does not match is HDF5's read error). */
static void *read_array(hid_t loc, const char *name, field_kind kind, size_t *bytes, char *why, size_t wl)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0) {
        snprintf(why, wl, "no dataset %s", name);
        return NULL;
    }
    hid_t space = H5Dget_space(d);
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    void *buf = n >= 0 ? malloc((size_t)n * kind_size(kind) + 1) : NULL;
    if (!buf)
        snprintf(why, wl, "%s: %s", name, n < 0 ? "unreadable" : "out of memory");
    else if (n > 0 && H5Dread(d, h5_type(kind), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char reason[256];
        snprintf(why, wl, "%s cannot be read (%s): damaged?", name,
                 bench_h5_error_reason(reason, sizeof reason));
        free(buf);
        buf = NULL;
    }
    *bytes = buf ? (size_t)n * kind_size(kind) : 0;
    if (space >= 0)
        H5Sclose(space);
    H5Dclose(d);
    return buf;
}

/* ---------------------------------------------------------- MPI */

static void send_bytes(const void *p, size_t bytes, int to)
{
    uint64_t n = bytes;
    MPI_Send(&n, 1, MPI_UINT64_T, to, TAG_CKPT, MPI_COMM_WORLD);
    for (size_t at = 0; at < bytes; at += CHUNK_BYTES) {
        size_t c = bytes - at < CHUNK_BYTES ? bytes - at : CHUNK_BYTES;
        MPI_Send((const char *)p + at, (int)c, MPI_BYTE, to, TAG_CKPT, MPI_COMM_WORLD);
    }
}

/* Bytes from `from` into a new buffer (*bytes). */
static void *recv_bytes(int from, size_t *bytes)
{
    uint64_t n = 0;
    MPI_Recv(&n, 1, MPI_UINT64_T, from, TAG_CKPT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *buf = malloc((size_t)n + 1);
    if (!buf) {   /* the sender is already sending: nothing to do but stop */
        bench_fail(BENCH_NO_CODE, "checkpoint", "out of memory for %llu bytes", (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED);
    }
    for (size_t at = 0; at < n; at += CHUNK_BYTES) {
        size_t c = n - at < CHUNK_BYTES ? n - at : CHUNK_BYTES;
        MPI_Recv(buf + at, (int)c, MPI_BYTE, from, TAG_CKPT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    *bytes = n;
    return buf;
}

/* ---------------------------------------------------------- save */

/* Each reducer's state as bytes (a group without a reducer: none); 0 or
 * -1 with why. */
static int save_reducer_states(train_run *r, unsigned char *state[2], size_t len[2], char *why, size_t wl)
{
    rb_reducer *red[2] = {r->gd.r, r->ge.r};
    for (int i = 0; i < 2; i++) {
        state[i] = NULL, len[i] = 0;
        if (!red[i])
            continue;
        int rc = rb_state_size(red[i], &len[i]);
        state[i] = rc == RB_OK ? malloc(len[i]) : NULL;
        if (rc == RB_OK && !state[i])
            rc = RB_ERR_NOMEM;
        if (rc == RB_OK)
            rc = rb_state_save(red[i], state[i], len[i]);
        if (rc != RB_OK) {
            snprintf(why, wl, "the reducer's state: %s", rb_last_error());
            return -1;
        }
    }
    return 0;
}

/* Rank 0: /run, its curve and phases, the wall time so far. */
static int write_run(hid_t file, const train_run *r)
{
    hid_t g = H5Gcreate2(file, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return -1;
    double last[5] = {r->last.loss, r->last.accuracy, r->last.perplexity, r->last_train_loss,
                      MPI_Wtime() - r->t_start};
    int rc = write_array(g, "curve", r->curve.v, r->curve.n * sizeof(train_curve_row), K_U8) |
             write_array(g, "phases", r->phases.v, r->phases.n * sizeof(train_phase_row), K_U8) |
             write_array(g, "last", last, sizeof last, K_F64);
    rc |= bench_h5_attr_int(g, "curve_row_bytes", (long long)sizeof(train_curve_row)) |
          bench_h5_attr_int(g, "phase_row_bytes", (long long)sizeof(train_phase_row));
    H5Gclose(g);
    return rc;
}

static int write_rank(hid_t file, int k, const field *f, size_t nf, void *const *bufs)
{
    char name[32];
    snprintf(name, sizeof name, "rank_%d", k);
    hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < nf; i++)
        rc |= write_array(g, f[i].name, bufs ? bufs[i] : f[i].p, f[i].bytes, f[i].kind);
    H5Gclose(g);
    return rc;
}

/* Rank 0: the other ranks' fields, as they send them, into the file. */
static int gather_ranks(hid_t file, train_run *r, const field *mine, size_t nf)
{
    int rc = 0;
    for (int k = 1; k < r->nranks; k++) {
        field f[MAX_FIELDS];
        void *bufs[MAX_FIELDS];
        for (size_t i = 0; i < nf; i++) {
            f[i] = mine[i];
            bufs[i] = recv_bytes(k, &f[i].bytes);
        }
        if (file >= 0)
            rc |= write_rank(file, k, f, nf, bufs);
        for (size_t i = 0; i < nf; i++)
            free(bufs[i]);
    }
    return rc;
}

static int write_header(hid_t file, const train_run *r, long steps)
{
    char id[16384];
    train_checkpoint_identity(r, id, sizeof id);
    return bench_h5_attr_str(file, "format", CKPT_FORMAT) | bench_h5_attr_int(file, "version", CKPT_VERSION) |
           bench_h5_attr_int(file, "iteration", steps) | bench_h5_attr_int(file, "ranks", r->nranks) |
           bench_h5_attr_str(file, "identity", id) |
           bench_h5_attr_str(file, "written_by", "rb_train (reducerbench " PACKAGE_VERSION ")");
}

/* Rank 0: sync the temporary and rename it onto the checkpoint. */
static int commit(const char *tmp, const char *path, char *why, size_t wl)
{
    int fd = open(tmp, O_RDONLY);
    int rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && bench_tmp_commit(tmp, path, 1) != 0)
        rc = -1;
    if (rc)
        snprintf(why, wl, "cannot sync or rename %s onto %s: %s", tmp, path, strerror(errno));
    return rc;
}

int train_checkpoint_write(train_run *r, long steps, double *tallies)
{
    char why[PATH_MAX + 512] = "", tmp[PATH_MAX + 64] = "";
    unsigned char *state[2];
    size_t state_len[2];
    int failed = save_reducer_states(r, state, state_len, why, sizeof why);
    field f[MAX_FIELDS];
    size_t nf = rank_fields(r, f, tallies, state, state_len);
    if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "--checkpoint", why) < 0) {
        free(state[0]), free(state[1]);
        return -1;
    }
    hid_t file = H5I_INVALID_HID;
    if (r->rank == 0) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);   /* the failures are named here */
        bench_tmp_name(r->o.checkpoint, tmp, sizeof tmp);
        file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        failed = file < 0 || write_header(file, r, steps) || write_run(file, r) ||
                 write_rank(file, 0, f, nf, NULL);
        if (failed)
            snprintf(why, sizeof why, "cannot write %s (%s)", tmp, bench_h5_error_reason((char[256]){0}, 256));
        failed |= gather_ranks(failed ? H5I_INVALID_HID : file, r, f, nf) != 0;
        if (file >= 0 && H5Fclose(file) < 0)
            failed = 1;
        if (!failed)
            failed = commit(tmp, r->o.checkpoint, why, sizeof why);
        else if (!why[0])
            snprintf(why, sizeof why, "cannot write %s", tmp);
        if (failed)
            unlink(tmp);
    } else {
        for (size_t i = 0; i < nf; i++)
            send_bytes(f[i].p, f[i].bytes, 0);
    }
    free(state[0]), free(state[1]);
    if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "--checkpoint", why) < 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------- load */

/* Rank 0: open and check the checkpoint; the file, or -1 with why. */
static hid_t open_checkpoint(const train_run *r, long *steps, char *why, size_t wl)
{
    const char *path = r->o.checkpoint;
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        snprintf(why, wl, "not a readable HDF5 file (%s)", bench_h5_error_reason((char[256]){0}, 256));
        return -1;
    }
    static char id[16384], here[16384];
    char format[64];
    int64_t version = 0, iteration = -1;
    int rc = bench_h5_read_attr_str(file, "format", format, sizeof format) |
             bench_h5_read_attr_int(file, "version", &version) |
             bench_h5_read_attr_int(file, "iteration", &iteration) |
             bench_h5_read_attr_str(file, "identity", id, sizeof id);
    train_checkpoint_identity(r, here, sizeof here);
    if (rc || strcmp(format, CKPT_FORMAT))
        snprintf(why, wl, "not an rb_train checkpoint");
    else if (version != CKPT_VERSION)
        snprintf(why, wl, "a checkpoint of version %lld; this rb_train reads %d", (long long)version,
                 CKPT_VERSION);
    else if (strcmp(id, here)) {
        char d[1024];
        first_difference(id, here, d, sizeof d);
        snprintf(why, wl, "written by another run (%s); give the same options and data, or another "
                 "--checkpoint", d);
    } else if (iteration < 0 || iteration > r->total_iters)
        snprintf(why, wl, "says %lld steps done, outside 0..%ld", (long long)iteration, r->total_iters);
    *steps = (long)iteration;
    if (why[0]) {
        H5Fclose(file);
        return -1;
    }
    return file;
}

/* Rank 0: the curve, phases and last evaluation; 0 or -1 with why. */
static int read_run(hid_t file, train_run *r, double *elapsed, char *why, size_t wl)
{
    hid_t g = H5Gopen2(file, "run", H5P_DEFAULT);
    if (g < 0) {
        snprintf(why, wl, "no /run group");
        return -1;
    }
    size_t nc = 0, np = 0, nl = 0;
    void *curve = read_array(g, "curve", K_U8, &nc, why, wl);
    void *phases = curve ? read_array(g, "phases", K_U8, &np, why, wl) : NULL;
    double *last = phases ? read_array(g, "last", K_F64, &nl, why, wl) : NULL;
    H5Gclose(g);
    int ok = last && nl == 5 * sizeof(double) && nc % sizeof(train_curve_row) == 0 &&
             np % sizeof(train_phase_row) == 0;
    if (ok) {
        r->curve = (growable){curve, nc / sizeof(train_curve_row), nc / sizeof(train_curve_row),
                              sizeof(train_curve_row)};
        r->phases = (growable){phases, np / sizeof(train_phase_row), np / sizeof(train_phase_row),
                               sizeof(train_phase_row)};
        r->last = (eval_result){last[0], last[1], last[2]};
        r->last_train_loss = last[3];
        *elapsed = last[4];
    } else {
        if (!why[0])
            snprintf(why, wl, "/run has rows of another size (written by another build)");
        free(curve), free(phases);
    }
    free(last);
    return ok ? 0 : -1;
}

/* Rank 0: send rank k its fields from the file (a field that cannot be
 * read goes as an empty one, which the rank refuses). */
static void send_rank(hid_t file, int k, const field *f, size_t nf, char *why, size_t wl)
{
    char name[32];
    snprintf(name, sizeof name, "rank_%d", k);
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    for (size_t i = 0; i < nf; i++) {
        size_t bytes = 0;
        char w[512] = "";
        void *buf = g >= 0 ? read_array(g, f[i].name, f[i].kind, &bytes, w, sizeof w) : NULL;
        if (!buf && !why[0])
            snprintf(why, wl, "%s/%s", name, g >= 0 ? w : "missing");
        send_bytes(buf ? buf : "", buf ? bytes : 0, k);
        free(buf);
    }
    if (g >= 0)
        H5Gclose(g);
}

/* One field's bytes from the checkpoint into this rank's run: a reducer's
 * state through rb_state_load (red: the group's reducer, NULL for none),
 * an array only when its size is this run's.  0, or -1 with why. */
static int take_field(const train_run *r, const field *f, rb_reducer *red, const void *buf,
                      size_t bytes, char *why, size_t wl)
{
    if (f->reducer_state && red && rb_state_load(red, buf, bytes) != RB_OK)
        snprintf(why, wl, "rank_%d/%s: %s", r->rank, f->name, rb_last_error());
    else if (f->reducer_state && !red && bytes)
        snprintf(why, wl, "rank_%d/%s: a reducer's state where this run has none", r->rank, f->name);
    else if (!f->reducer_state && bytes != f->bytes)
        snprintf(why, wl, "rank_%d/%s: %zu bytes in the checkpoint, %zu here", r->rank, f->name, bytes,
                 f->bytes);
    else {
        if (!f->reducer_state && bytes)
            memcpy(f->p, buf, bytes);
        return 0;
    }
    return -1;
}

/* This rank's fields, as rank 0 sends them (other ranks) or reads them
 * from the file's rank_0 (rank 0); 0 or -1 with why. */
static int take_fields(train_run *r, hid_t file, const field *f, size_t nf, char *why, size_t wl)
{
    rb_reducer *red[2] = {r->gd.r, r->ge.r};
    hid_t g = r->rank == 0 ? H5Gopen2(file, "rank_0", H5P_DEFAULT) : H5I_INVALID_HID;
    int red_at = 0, rc = r->rank == 0 && g < 0 ? (snprintf(why, wl, "rank_0: missing"), -1) : 0;
    for (size_t i = 0; i < nf; i++) {
        size_t bytes = 0;
        char w[512] = "";
        void *buf = r->rank != 0 ? recv_bytes(0, &bytes)
                  : rc == 0 ? read_array(g, f[i].name, f[i].kind, &bytes, w, sizeof w) : NULL;
        if (rc == 0 && !buf)
            rc = -1, snprintf(why, wl, "rank_0/%s", w);
        else if (rc == 0)
            rc = take_field(r, &f[i], red[red_at], buf, bytes, why, wl);
        red_at += f[i].reducer_state;
        free(buf);
    }
    if (g >= 0)
        H5Gclose(g);
    return rc;
}

long train_checkpoint_resume(train_run *r, double *tallies, double *elapsed)
{
    char why[PATH_MAX + 2048] = "";
    long steps = 0;
    int exists = 0;
    if (r->rank == 0)
        exists = access(r->o.checkpoint, F_OK) == 0;
    MPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!exists) {
        bench_printf0("resume: no checkpoint at %s: starting at step 0\n", r->o.checkpoint);
        return 0;
    }
    hid_t file = H5I_INVALID_HID;
    int failed = 0;
    if (r->rank == 0) {
        char detail[sizeof why - PATH_MAX - 64] = "";
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);   /* the failures are named here */
        file = open_checkpoint(r, &steps, detail, sizeof detail);
        failed = file < 0 || read_run(file, r, elapsed, detail, sizeof detail) != 0;
        if (failed)
            snprintf(why, sizeof why, "%s: %s", r->o.checkpoint, detail);
    }
    if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "--resume", why) < 0) {
        if (file >= 0)
            H5Fclose(file);
        return -1;
    }
    MPI_Bcast(&steps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    unsigned char *no_state[2] = {NULL, NULL};
    size_t no_len[2] = {0, 0};
    field f[MAX_FIELDS];
    size_t nf = rank_fields(r, f, tallies, no_state, no_len);
    if (r->rank == 0)
        for (int k = 1; k < r->nranks; k++)
            send_rank(file, k, f, nf, why, sizeof why);
    /* rank 0 named a field it could not send (the others then take every
     * field they were sent, and refuse the empty one) */
    failed = why[0] != 0;
    if (!failed)
        failed = take_fields(r, file, f, nf, why, sizeof why) != 0;
    if (r->rank == 0)
        H5Fclose(file);
    char msg[sizeof why + PATH_MAX + 4];
    snprintf(msg, sizeof msg, "%s: %s", r->o.checkpoint, why);
    if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "--resume", msg) < 0)
        return -1;
    MPI_Bcast(elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    bench_printf0("resume: %s: %ld of %ld steps done, %zu evaluation(s) kept\n", r->o.checkpoint, steps,
                  r->total_iters, r->curve.n);
    return steps;
}
