/* rb_train's part of the results archive: the /train group (layout in
 * docs/training.md).  Rank 0 only; the archive owns the file. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "harness/h5attr.h"
#include "train.h"

static int attr_num(hid_t loc, const char *name, hid_t type, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, type, v) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc;
}

static int attr_d(hid_t loc, const char *name, double v) { return attr_num(loc, name, H5T_NATIVE_DOUBLE, &v); }
static int attr_i(hid_t loc, const char *name, int64_t v) { return attr_num(loc, name, H5T_NATIVE_INT64, &v); }
static int attr_u(hid_t loc, const char *name, uint64_t v) { return attr_num(loc, name, H5T_NATIVE_UINT64, &v); }

static int write_table(hid_t loc, const char *name, hid_t type, const void *rows, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d < 0 || (n && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) ? -1 : 0;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    return rc;
}

#define FIELD(t, s, f, h) H5Tinsert(t, #f, HOFFSET(s, f), h)

static int write_curves(hid_t g, const train_curve_row *c, size_t n)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(train_curve_row));
    FIELD(t, train_curve_row, iteration, H5T_NATIVE_INT64);
    FIELD(t, train_curve_row, epoch, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, wall_s, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, train_loss, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, train_accuracy, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, test_loss, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, test_accuracy, H5T_NATIVE_DOUBLE);
    FIELD(t, train_curve_row, val_perplexity, H5T_NATIVE_DOUBLE);
    int rc = write_table(g, "curves", t, c, n);
    H5Tclose(t);
    return rc;
}

static int write_phases(hid_t g, const train_phase_row *p, size_t n)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(train_phase_row));
    FIELD(t, train_phase_row, iteration, H5T_NATIVE_INT64);
    FIELD(t, train_phase_row, forward_s, H5T_NATIVE_DOUBLE);
    FIELD(t, train_phase_row, backward_s, H5T_NATIVE_DOUBLE);
    FIELD(t, train_phase_row, reduce_s, H5T_NATIVE_DOUBLE);
    FIELD(t, train_phase_row, update_s, H5T_NATIVE_DOUBLE);
    FIELD(t, train_phase_row, loss, H5T_NATIVE_DOUBLE);
    FIELD(t, train_phase_row, bytes_sent, H5T_NATIVE_UINT64);
    FIELD(t, train_phase_row, bytes_recv, H5T_NATIVE_UINT64);
    FIELD(t, train_phase_row, embed_nnz, H5T_NATIVE_UINT64);
    int rc = write_table(g, "phases", t, p, n);
    H5Tclose(t);
    return rc;
}

static int write_hyper(hid_t g, const train_opts *o, const train_summary *s)
{
    int rc = 0;
    rc |= rb_h5_attr_str(g, "model", o->model);
    rc |= rb_h5_attr_str(g, "data_path", s->data_path);
    rc |= rb_h5_attr_str(g, "data_format", s->data_format);
    rc |= rb_h5_attr_str(g, "reducer", o->reducer);
    rc |= rb_h5_attr_str(g, "device", o->device);
    rc |= rb_h5_attr_str(g, "device_description", o->device_desc);
    rc |= rb_h5_attr_str(g, "sparsify", o->sparsify);
    rc |= attr_i(g, "error_feedback", o->error_feedback);
    rc |= rb_h5_attr_str(g, "shuffle", o->shuffle);
    rc |= rb_h5_attr_str(g, "schedule", o->schedule);
    rc |= attr_i(g, "ranks", s->ranks);
    rc |= attr_i(g, "batch_per_rank", o->batch);
    rc |= attr_i(g, "global_batch", (int64_t)o->batch * s->ranks);
    rc |= attr_d(g, "lr", o->lr);
    rc |= attr_d(g, "momentum", o->momentum);
    rc |= attr_d(g, "weight_decay", o->weight_decay);
    rc |= attr_i(g, "warmup", o->warmup);
    rc |= attr_i(g, "epochs", o->epochs);
    rc |= attr_u(g, "seed", o->seed);
    rc |= attr_i(g, "threads", o->threads);
    rc |= attr_u(g, "train_samples", s->train_samples);
    rc |= attr_u(g, "test_samples", s->test_samples);
    rc |= attr_i(g, "classes", s->classes);
    rc |= attr_i(g, "input_c", s->in_c);
    rc |= attr_i(g, "input_h", s->in_h);
    rc |= attr_i(g, "input_w", s->in_w);
    rc |= attr_u(g, "dense_parameters", s->n_dense);
    rc |= attr_u(g, "embedding_parameters", s->n_embed);
    if (!strcmp(o->model, "wordlm")) {
        rc |= attr_i(g, "context", o->ctx);
        rc |= attr_i(g, "embed_dim", o->embed_dim);
        rc |= attr_i(g, "hidden", o->hidden);
    }
    rc |= attr_d(g, "flops_per_sample_forward", s->flops_per_sample);
    rc |= attr_i(g, "iterations", s->iterations);
    rc |= attr_i(g, "steps_per_epoch", s->steps_per_epoch);
    rc |= attr_d(g, "wall_s", s->wall_s);
    rc |= attr_d(g, "model_gflops", s->model_gflops);
    rc |= attr_d(g, "sgemm_gflops", s->sgemm_gflops);
    rc |= rb_h5_attr_str(g, "blas_core", s->blas_core);
    rc |= attr_d(g, "final_train_loss", s->final_train_loss);
    rc |= attr_d(g, "final_test_accuracy", s->final_test_accuracy);
    rc |= attr_d(g, "final_val_perplexity", s->final_val_perplexity);
    rc |= attr_d(g, "target_accuracy", o->target_accuracy);
    rc |= attr_d(g, "target_perplexity", o->target_perplexity);
    rc |= attr_i(g, "reached_target", s->reached_target);
    rc |= attr_i(g, "timed_out", s->timed_out);
    return rc;
}

/* Every option that applies to the reducer, as text (as rb_micro records). */
static int write_reducer_options(hid_t g, const train_opts *o)
{
    hid_t r = H5Gcreate2(g, "reducer_options", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (r < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < rb_option_count(); i++) {
        if (!rb_option_applies(i, o->reducer))
            continue;
        char buf[128];
        if (rb_option_format(&o->ropts, i, buf, sizeof buf) != RB_OK)
            snprintf(buf, sizeof buf, "?");
        rc |= rb_h5_attr_str(r, rb_option_info_at(i)->key, buf);
    }
    H5Gclose(r);
    return rc;
}

int train_archive_write(hid_t file, const train_opts *o, const train_summary *s,
                        const train_curve_row *curve, size_t ncurve,
                        const train_phase_row *phases, size_t nphases)
{
    hid_t g = H5Gcreate2(file, "train", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) {
        fprintf(stderr, "rb_train: archive: cannot create /train\n");
        return -1;
    }
    int rc = write_hyper(g, o, s) | write_reducer_options(g, o) | write_curves(g, curve, ncurve) |
             write_phases(g, phases, nphases);
    H5Gclose(g);
    if (rc)
        fprintf(stderr, "rb_train: archive: writing /train failed\n");
    return rc ? -1 : 0;
}
