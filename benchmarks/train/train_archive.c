/* rb_train's part of the results archive: the /train group (layout in
 * docs/training.md).  Rank 0 only; the archive owns the file. */
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"
#include "harness/h5attr.h"
#include "train.h"

#define C(member, kind) RB_H5_FIELD(train_curve_row, member, kind)
static const rb_h5_field curve_fields[] = {
    C(iteration, RB_H5_INT64), C(epoch, RB_H5_DOUBLE), C(wall_s, RB_H5_DOUBLE),
    C(train_loss, RB_H5_DOUBLE), C(train_accuracy, RB_H5_DOUBLE), C(test_loss, RB_H5_DOUBLE),
    C(test_accuracy, RB_H5_DOUBLE), C(val_perplexity, RB_H5_DOUBLE),
};
#undef C
#define P(member, kind) RB_H5_FIELD(train_phase_row, member, kind)
static const rb_h5_field phase_fields[] = {
    P(iteration, RB_H5_INT64), P(forward_s, RB_H5_DOUBLE), P(backward_s, RB_H5_DOUBLE),
    P(reduce_s, RB_H5_DOUBLE), P(update_s, RB_H5_DOUBLE), P(loss, RB_H5_DOUBLE),
    P(bytes_sent, RB_H5_UINT64), P(bytes_recv, RB_H5_UINT64), P(embed_nnz, RB_H5_UINT64),
};
#undef P

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Median over iterations of rank 0's embedding non-zeros over the table's
 * size, as analysis/rbanalysis/training.py's _embed_density computes it
 * (rows are touched whole, so it is the row density); NaN without rows. */
static double embed_row_density(const train_phase_row *p, size_t n, uint64_t n_embed)
{
    uint64_t *v = n && n_embed ? malloc(n * sizeof *v) : NULL;
    if (!v)
        return NAN;
    for (size_t i = 0; i < n; i++)
        v[i] = p[i].embed_nnz;
    qsort(v, n, sizeof *v, by_u64);
    double med = n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
    free(v);
    return med / (double)n_embed;
}

static int write_hyper(hid_t g, const train_opts *o, const train_summary *s,
                       const train_phase_row *phases, size_t nphases)
{
    int rc = 0;
    rc |= rb_h5_attr_str(g, "model", o->model);
    rc |= rb_h5_attr_str(g, "data_path", s->data_path);
    rc |= rb_h5_attr_str(g, "data_format", s->data_format);
    rc |= rb_h5_attr_str(g, "reducer", o->reducer);
    rc |= rb_h5_attr_str(g, "device", o->device);
    rc |= rb_h5_attr_str(g, "device_description", o->device_desc);
    rc |= rb_h5_attr_str(g, "sparsify", o->sparsify);
    rc |= rb_h5_attr_int(g, "error_feedback", o->error_feedback);
    rc |= rb_h5_attr_str(g, "shuffle", o->shuffle);
    rc |= rb_h5_attr_str(g, "embed_input", o->embed_input);
    rc |= rb_h5_attr_str(g, "schedule", o->schedule);
    rc |= rb_h5_attr_int(g, "ranks", s->ranks);
    rc |= rb_h5_attr_int(g, "batch_per_rank", o->batch);
    rc |= rb_h5_attr_int(g, "global_batch", (int64_t)o->batch * s->ranks);
    rc |= rb_h5_attr_double(g, "lr", o->lr);
    rc |= rb_h5_attr_double(g, "momentum", o->momentum);
    rc |= rb_h5_attr_double(g, "weight_decay", o->weight_decay);
    rc |= rb_h5_attr_int(g, "warmup", o->warmup);
    rc |= rb_h5_attr_int(g, "epochs", o->epochs);
    rc |= rb_h5_attr_u64(g, "seed", o->seed);
    rc |= rb_h5_attr_int(g, "threads", o->threads);
    rc |= rb_h5_attr_u64(g, "train_samples", s->train_samples);
    rc |= rb_h5_attr_u64(g, "test_samples", s->test_samples);
    rc |= rb_h5_attr_int(g, "classes", s->classes);
    rc |= rb_h5_attr_int(g, "input_c", s->in_c);
    rc |= rb_h5_attr_int(g, "input_h", s->in_h);
    rc |= rb_h5_attr_int(g, "input_w", s->in_w);
    rc |= rb_h5_attr_u64(g, "dense_parameters", s->n_dense);
    rc |= rb_h5_attr_u64(g, "embedding_parameters", s->n_embed);
    if (!strcmp(o->model, "wordlm") || !strcmp(o->model, "embedlm")) {
        rc |= rb_h5_attr_int(g, "context", o->ctx);
        rc |= rb_h5_attr_int(g, "embed_dim", o->embed_dim);
        rc |= rb_h5_attr_int(g, "hidden", o->hidden);
    }
    if (!strcmp(o->model, "embedlm")) {   /* classes = out_vocab */
        uint64_t rows = o->embed_dim ? s->n_embed / (uint64_t)o->embed_dim : 0;
        rc |= rb_h5_attr_u64(g, "embed_rows", rows);
        rc |= rb_h5_attr_double(g, "embed_share",
                                (double)s->n_embed / (double)(s->n_embed + s->n_dense));
        rc |= rb_h5_attr_double(g, "embed_row_density",
                                embed_row_density(phases, nphases, s->n_embed));
    }
    rc |= rb_h5_attr_double(g, "flops_per_sample_forward", s->flops_per_sample);
    rc |= rb_h5_attr_int(g, "iterations", s->iterations);
    rc |= rb_h5_attr_int(g, "steps_per_epoch", s->steps_per_epoch);
    rc |= rb_h5_attr_double(g, "wall_s", s->wall_s);
    rc |= rb_h5_attr_double(g, "model_gflops", s->model_gflops);
    rc |= rb_h5_attr_double(g, "sgemm_gflops", s->sgemm_gflops);
    rc |= rb_h5_attr_str(g, "blas_core", s->blas_core);
    rc |= rb_h5_attr_double(g, "final_train_loss", s->final_train_loss);
    rc |= rb_h5_attr_double(g, "final_test_accuracy", s->final_test_accuracy);
    rc |= rb_h5_attr_double(g, "final_val_perplexity", s->final_val_perplexity);
    rc |= rb_h5_attr_double(g, "target_accuracy", o->target_accuracy);
    rc |= rb_h5_attr_double(g, "target_perplexity", o->target_perplexity);
    rc |= rb_h5_attr_int(g, "reached_target", s->reached_target);
    rc |= rb_h5_attr_int(g, "timed_out", s->timed_out);
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
    char why[256];
    if (g < 0) {
        bench_fail(BENCH_NO_CODE, "archive", "cannot create /train: %s", rb_h5_error_reason(why, sizeof why));
        return -1;
    }
    int rc = write_hyper(g, o, s, phases, nphases) | write_reducer_options(g, o) |
             rb_h5_table(g, "curves", curve_fields, sizeof curve_fields / sizeof *curve_fields,
                         sizeof *curve, curve, ncurve, NULL) |
             rb_h5_table(g, "phases", phase_fields, sizeof phase_fields / sizeof *phase_fields,
                         sizeof *phases, phases, nphases, NULL);
    if (rc)
        rb_h5_error_reason(why, sizeof why);
    H5Gclose(g);
    if (rc)
        bench_fail(BENCH_NO_CODE, "archive", "writing /train failed: %s", why);
    return rc ? -1 : 0;
}
