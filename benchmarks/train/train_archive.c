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

#define C(member, kind) BENCH_H5_FIELD(train_curve_row, member, kind)
static const bench_h5_field curve_fields[] = {
    C(iteration, BENCH_H5_INT64), C(epoch, BENCH_H5_DOUBLE), C(wall_s, BENCH_H5_DOUBLE),
    C(train_loss, BENCH_H5_DOUBLE), C(train_accuracy, BENCH_H5_DOUBLE), C(test_loss, BENCH_H5_DOUBLE),
    C(test_accuracy, BENCH_H5_DOUBLE), C(val_perplexity, BENCH_H5_DOUBLE),
};
#undef C
#define P(member, kind) BENCH_H5_FIELD(train_phase_row, member, kind)
static const bench_h5_field phase_fields[] = {
    P(iteration, BENCH_H5_INT64), P(forward_s, BENCH_H5_DOUBLE), P(backward_s, BENCH_H5_DOUBLE),
    P(reduce_s, BENCH_H5_DOUBLE), P(update_s, BENCH_H5_DOUBLE), P(loss, BENCH_H5_DOUBLE),
    P(bytes_sent, BENCH_H5_UINT64), P(bytes_recv, BENCH_H5_UINT64), P(embed_nnz, BENCH_H5_UINT64),
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
    rc |= bench_h5_attr_str(g, "model", o->model);
    rc |= bench_h5_attr_str(g, "data_path", s->data_path);
    rc |= bench_h5_attr_str(g, "data_format", s->data_format);
    rc |= bench_h5_attr_str(g, "reducer", o->reducer);
    rc |= bench_h5_attr_str(g, "dense_reducer", o->dense_reducer);
    rc |= bench_h5_attr_str(g, "device", o->device);
    rc |= bench_h5_attr_str(g, "device_description", o->device_desc);
    rc |= bench_h5_attr_str(g, "sparsify", o->sparsify);
    rc |= bench_h5_attr_int(g, "error_feedback", o->error_feedback);
    rc |= bench_h5_attr_str(g, "shuffle", o->shuffle);
    rc |= bench_h5_attr_str(g, "embed_input", o->embed_input);
    rc |= bench_h5_attr_str(g, "schedule", o->schedule);
    rc |= bench_h5_attr_int(g, "ranks", s->ranks);
    rc |= bench_h5_attr_int(g, "batch_per_rank", o->batch);
    rc |= bench_h5_attr_int(g, "global_batch", (int64_t)o->batch * s->ranks);
    rc |= bench_h5_attr_double(g, "lr", o->lr);
    rc |= bench_h5_attr_double(g, "momentum", o->momentum);
    rc |= bench_h5_attr_double(g, "weight_decay", o->weight_decay);
    rc |= bench_h5_attr_int(g, "warmup", o->warmup);
    rc |= bench_h5_attr_int(g, "epochs", o->epochs);
    rc |= bench_h5_attr_u64(g, "seed", o->seed);
    rc |= bench_h5_attr_int(g, "threads", o->threads);
    rc |= bench_h5_attr_u64(g, "train_samples", s->train_samples);
    rc |= bench_h5_attr_u64(g, "test_samples", s->test_samples);
    rc |= bench_h5_attr_int(g, "classes", s->classes);
    rc |= bench_h5_attr_int(g, "input_c", s->in_c);
    rc |= bench_h5_attr_int(g, "input_h", s->in_h);
    rc |= bench_h5_attr_int(g, "input_w", s->in_w);
    rc |= bench_h5_attr_u64(g, "dense_parameters", s->n_dense);
    rc |= bench_h5_attr_u64(g, "embedding_parameters", s->n_embed);
    if (!strcmp(o->model, "wordlm") || !strcmp(o->model, "embedlm")) {
        rc |= bench_h5_attr_int(g, "context", o->ctx);
        rc |= bench_h5_attr_int(g, "embed_dim", o->embed_dim);
        rc |= bench_h5_attr_int(g, "hidden", o->hidden);
    }
    if (!strcmp(o->model, "embedlm")) {   /* classes = out_vocab */
        uint64_t rows = o->embed_dim ? s->n_embed / (uint64_t)o->embed_dim : 0;
        rc |= bench_h5_attr_u64(g, "embed_rows", rows);
        rc |= bench_h5_attr_double(g, "embed_share",
                                (double)s->n_embed / (double)(s->n_embed + s->n_dense));
        rc |= bench_h5_attr_double(g, "embed_row_density",
                                embed_row_density(phases, nphases, s->n_embed));
    }
    rc |= bench_h5_attr_double(g, "flops_per_sample_forward", s->flops_per_sample);
    rc |= bench_h5_attr_int(g, "iterations", s->iterations);
    rc |= bench_h5_attr_int(g, "steps_per_epoch", s->steps_per_epoch);
    rc |= bench_h5_attr_double(g, "wall_s", s->wall_s);
    rc |= bench_h5_attr_double(g, "model_gflops", s->model_gflops);
    rc |= bench_h5_attr_double(g, "sgemm_gflops", s->sgemm_gflops);
    rc |= bench_h5_attr_str(g, "blas_core", s->blas_core);
    rc |= bench_h5_attr_double(g, "final_train_loss", s->final_train_loss);
    rc |= bench_h5_attr_double(g, "final_test_accuracy", s->final_test_accuracy);
    rc |= bench_h5_attr_double(g, "final_val_perplexity", s->final_val_perplexity);
    rc |= bench_h5_attr_double(g, "target_accuracy", o->target_accuracy);
    rc |= bench_h5_attr_double(g, "target_perplexity", o->target_perplexity);
    rc |= bench_h5_attr_int(g, "reached_target", s->reached_target);
    rc |= bench_h5_attr_int(g, "timed_out", s->timed_out);
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
        rc |= bench_h5_attr_str(r, rb_option_info_at(i)->key, buf);
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
        bench_fail(BENCH_NO_CODE, "archive", "cannot create /train: %s", bench_h5_error_reason(why, sizeof why));
        return -1;
    }
    int rc = write_hyper(g, o, s, phases, nphases) | write_reducer_options(g, o) |
             bench_h5_table(g, "curves", curve_fields, sizeof curve_fields / sizeof *curve_fields,
                         sizeof *curve, curve, ncurve, NULL) |
             bench_h5_table(g, "phases", phase_fields, sizeof phase_fields / sizeof *phase_fields,
                         sizeof *phases, phases, nphases, NULL);
    if (rc)
        bench_h5_error_reason(why, sizeof why);
    H5Gclose(g);
    if (rc)
        bench_fail(BENCH_NO_CODE, "archive", "writing /train failed: %s", why);
    return rc ? -1 : 0;
}
