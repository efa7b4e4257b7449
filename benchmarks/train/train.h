/* rb_train: what the training loop records and hands to the archive. */
#ifndef RB_TRAIN_TRAIN_H
#define RB_TRAIN_TRAIN_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/bench_cli.h"
#include "reducer.h"

enum { SPARSIFY_NONE = 0, SPARSIFY_TOPK = 1, SPARSIFY_THRESHOLD = 2 };

typedef struct train_opts {
    const char *model, *data, *format, *reducer, *output, *shuffle, *sparsify, *schedule;
    const char *write_corpus;
    const char *device;     /* "host" | "cuda" */
    char device_desc[512];  /* GPU and libraries, for the archive ("" on host) */
    int force, batch, epochs, threads, ctx, embed_dim, hidden, vocab, error_feedback, bench_sgemm;
    long eval_every, log_every, warmup, max_iters;
    double lr, momentum, weight_decay, target_accuracy, target_perplexity, time_limit;
    uint64_t seed, train_limit, test_limit;
    int sparsify_kind;      /* SPARSIFY_* */
    double sparsify_value;
    rb_options ropts;
} train_opts;

/* rb_train's option table (for tests/test_cli). */
extern const bench_cli train_cli;
/* Parse the command line into o, with the defaults that depend on the
 * model; exits 2 with a message naming the option on bad input, 0 after
 * --help or --list-reducers (train_options.c). */
void train_parse_options(int argc, char **argv, train_opts *o);

/* One evaluation. */
typedef struct train_curve_row {
    int64_t iteration;
    double epoch, wall_s, train_loss, train_accuracy;
    double test_loss, test_accuracy;   /* accuracy in percent; NaN for wordlm */
    double val_perplexity;             /* NaN for image models */
} train_curve_row;

/* Rank 0's phase times of one iteration; embed_nnz: non-zeros of its
 * embedding gradient before the reduction (0 without an embedding). */
typedef struct train_phase_row {
    int64_t iteration;
    double forward_s, backward_s, reduce_s, update_s, loss;
    uint64_t bytes_sent, bytes_recv, embed_nnz;
} train_phase_row;

/* Everything about the run that is not a curve. */
typedef struct train_summary {
    int ranks, classes, in_c, in_h, in_w;
    const char *data_format, *data_path;
    uint64_t train_samples, test_samples, n_dense, n_embed;
    int64_t iterations, steps_per_epoch;
    double flops_per_sample, model_gflops, sgemm_gflops, wall_s;
    double final_train_loss, final_test_accuracy, final_val_perplexity;
    int reached_target, timed_out;
    const char *blas_core;   /* OpenBLAS's kernel set (it picks one per CPU at load time) */
} train_summary;

/* Write /train into file (rank 0's archive file).  0 on success. */
int train_archive_write(hid_t file, const train_opts *o, const train_summary *s,
                        const train_curve_row *curve, size_t ncurve,
                        const train_phase_row *phases, size_t nphases);

#endif
