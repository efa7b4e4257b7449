/* benchmarks/train: rb_train, data-parallel SGD of real models on real data
 * over MPI, any libreducer reducer aggregating the gradients
 * (docs/training.md).
 *
 * The model and its data come from the neural-network library of
 * benchmarks/nn (libnn.a, every name nn_): layers, models, their GPU
 * mirror, the data loaders.
 * The program, one responsibility a file (this header declares them):
 *   train_options.c  the command line (a bench_cli table)
 *   train_data.c     data selection: format, loading, shards, batches
 *   train_ring.c     the ring shuffle (one batch one hop per step)
 *   train_device.c   where the model trains: host or GPU, GPU set-up
 *   train_sparsify.c top-k / threshold sparsification with error feedback
 *   train_reduce.c   one reducer per gradient buffer (dense, embedding)
 *   train_optim.c    momentum SGD and the learning-rate schedule
 *   train_eval.c     evaluation on the test / validation split
 *   train_sgemm.c    the SGEMM benchmark (--bench-sgemm)
 *   train_loop.c     the training loop: steps, progress lines, evaluations
 *   train_archive.c  the /train group of the archive
 *   train_record.c   --record-gradients: the embedding gradient into a trace
 *   train_checkpoint.c  --checkpoint, --resume: the run's state in a file
 *   train_main.c     main: set-up, the loop, the final report, exit
 * The room calls nn, the harness (benchmarks/harness) and the library
 * (src/); nothing below calls into it. */
#ifndef RB_TRAIN_TRAIN_H
#define RB_TRAIN_TRAIN_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "nn/data.h"
#include "nn/gpu_model.h"
#include "harness/bench_cli.h"
#include "harness/trace.h"
#include "nn/models.h"
#include "reducer.h"

#define TRAIN_PROG "rb_train"

/* ---------------------------------------------------------- options */

enum { SPARSIFY_NONE = 0, SPARSIFY_TOPK = 1, SPARSIFY_THRESHOLD = 2 };

typedef struct train_opts {
    const char *model, *data, *format, *reducer, *output, *shuffle, *sparsify, *schedule;
    const char *embed_input;   /* wordlm: dense | rows (rb_reduce_rows) */
    const char *dense_reducer; /* the dense parameters' reducer beside an embedding */
    const char *write_corpus;
    const char *device;     /* "host" | "cuda" */
    char device_desc[512];  /* GPU and libraries, for the archive ("" on host) */
    int force, batch, epochs, threads, ctx, embed_dim, hidden, vocab, error_feedback, bench_sgemm;
    int out_vocab;          /* embedlm: output classes */
    long eval_every, log_every, warmup, max_iters;
    double lr, momentum, weight_decay, target_accuracy, target_perplexity, time_limit;
    double stall_timeout;      /* --stall-timeout: seconds, 0 = off (bench_stall.h) */
    uint64_t seed, train_limit, test_limit;
    uint64_t mem_limit;     /* -M: bytes a rank may hold; 0: from the node */
    const char *record;     /* --record-gradients FILE.h5, or NULL */
    const char *checkpoint; /* --checkpoint FILE.h5, or NULL */
    long checkpoint_every;  /* steps, or 0: */
    double checkpoint_seconds;   /* wall seconds on rank 0's clock */
    int resume;
    long record_every;
    uint64_t record_max_bytes;
    int sparsify_kind;      /* SPARSIFY_* */
    double sparsify_value;
    rb_options ropts;
} train_opts;

/* rb_train's option table (for tests/harness/test_cli). */
extern const bench_cli train_cli;
/* Parse the command line into o, with the defaults that depend on the
 * model; exits 2 with a message naming the option on bad input, 0 after
 * --help or --list-reducers. */
void train_parse_options(int argc, char **argv, train_opts *o);

/* ---------------------------------------------------------- data */

/* The format of o->data: o->format, or found from the files (auto). */
const char *train_detect_format(const train_opts *o);
/* This rank's shards of the training and test (wordlm: validation) sets
 * (the corpus too for wordlm); 0, or -1 with err filled. */
int train_load_data(const train_opts *o, const char *fmt, int rank, int nranks, dataset *tr,
                    dataset *te, corpus *c, char *err, size_t len);
/* What the ranks compare so that all train on the same data (a relative
 * --data resolving to different directories, different files of one
 * shape): the SHA-256 of each image file, or of the corpus built (its
 * vocabulary and each split's token ids).  Fills d (at most
 * TRAIN_DATA_MAX_FILES); how many, or -1 when a file cannot be read. */
#define TRAIN_DATA_MAX_FILES 6
typedef struct train_data_digest {
    char what[4096];
    char sha256[65];
} train_data_digest;
int train_data_digests(const train_opts *o, const char *fmt, const corpus *c, train_data_digest *d);
/* The samples at slots[0..B) as model input x and labels y: images as
 * floats in [-1, 1], tokens as ids. */
void train_make_batch(const dataset *d, const size_t *slots, int B, float *x, int32_t *y);
/* p = a random permutation of 0..n-1 from seed. */
void train_permute(size_t *p, size_t n, uint64_t seed);

/* ---------------------------------------------------------- ring shuffle */

/* GossipGraD-style: this step's batch goes to rank+1 while the previous
 * rank's arrives, overlapped with the step's compute. */
typedef struct train_ring {
    int rank, nranks;
    uint8_t *sx, *rx;
    int32_t *sy, *ry;
    MPI_Request req[4];
    int active;
} train_ring;

/* Buffers for batches of B records of d; 0 or -1 (out of memory). */
int train_ring_alloc(train_ring *g, const dataset *d, int B, int rank, int nranks);
void train_ring_free(train_ring *g);
/* Send the batch at slots, receive the previous rank's (no-op on 1 rank). */
void train_ring_start(train_ring *g, const dataset *d, const size_t *slots, int B);
/* Wait, and put the received batch where this rank's was. */
void train_ring_finish(train_ring *g, dataset *d, const size_t *slots, int B);

/* ---------------------------------------------------------- device */

/* The model where it trains: the host layers (OpenBLAS), or their GPU
 * mirror (cuDNN, cuBLAS) whose device buffers the reducers then see. */
typedef struct trainer {
    model *m;
    gpu_model *g;   /* NULL on the host */
    int egrads_kept_zero;   /* the loop zeroes the rows it took out of the
                               embedding gradient, so backward need not
                               clear the whole table */
} trainer;

/* -d cuda: pick this rank's GPU, mirror the model there, describe it into
 * o->device_desc.  Collective; -1 on every rank (after one message) if
 * any rank failed. */
int train_setup_gpu(train_opts *o, model *m, trainer *t);
/* Returns the summed loss over the batch (and the loss gradient is kept). */
double train_forward(trainer *t, const void *x, const int32_t *y, int b, int *correct);
void train_backward(trainer *t, const void *x, const int32_t *y, int b);
/* A GPU call failed: message, MPI_Abort. */
_Noreturn void train_gpu_die(const char *what, const char *err);

/* ---------------------------------------------------------- reduction */

/* One reducer and the buffers it works on: grad and params are device
 * memory under -d cuda, where velocity lives with the model and the
 * sparsification (residual included) runs on the GPU too. */
typedef struct grad_group {
    rb_reducer *r;
    float *grad, *params, *velocity, *residual, *scratch;
    gpu_sparsifier *gpu_sparse;
    size_t n, rows, cols;
    int on_gpu, sparsified;
    /* embedlm's embedding: updated by rows (train_update), from the
     * reducer's row-form result of this step (library memory) */
    int by_rows;
    rb_rows result;
} grad_group;

/* A rows x cols gradient group (sparsified when sparsifiable and asked
 * for).  Collective (rb_create); the RB_* code, rank 0 printing why. */
int train_group_create(grad_group *g, const train_opts *o, const char *reducer, size_t rows,
                       size_t cols, float *grad, float *params, int sparsifiable);
void train_group_free(grad_group *g);
/* rc != RB_OK: message naming what failed, MPI_Abort. */
void train_check_rb(int rc, const char *what);
/* Progress r's asynchronous exchange between the layers of every backward
 * pass (gossip_async). */
void train_progress_during_backward(rb_reducer *r);
/* Top-k / threshold where the gradient is (train_sparsify.c). */
void train_sparsify_group(const train_opts *o, grad_group *g);

/* ---------------------------------------------------------- optimiser */

/* Learning rate of iteration t of total: warm-up, then the schedule. */
double train_lr_at(const train_opts *o, long t, long total);
/* Momentum SGD of the dense group (weight decay) and the embedding group
 * (ge->r NULL: none), on the host or the GPU.  An embedding group updated
 * by rows (ge->by_rows) moves only the rows of ge->result whose gradient
 * is not zero, velocity included, as TensorFlow's momentum optimiser
 * applies an IndexedSlices gradient (sparse_apply_momentum). */
void train_update(trainer *t, grad_group *gd, grad_group *ge, const train_opts *o, double lr);

/* ---------------------------------------------------------- evaluation */

typedef struct eval_result {
    double loss, accuracy, perplexity;
} eval_result;

/* Collective: mean loss, accuracy (%) and perplexity over every rank's
 * share of te, in batches of B (x, y, slots: batch buffers). */
eval_result train_evaluate(trainer *t, const dataset *te, int B, float *x, int32_t *y,
                           size_t *slots);
/* OpenBLAS SGEMM 512^3 GFLOP/s over about a second (NaN: no memory). */
double train_sgemm_gflops(void);

/* ---------------------------------------------------------- the archive */

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

/* ---------------------------------------------------------- the loop */

/* A table that grows by one row at a time. */
typedef struct growable {
    void *v;
    size_t n, cap, size;
} growable;

/* Everything the loop reads and writes (train_main.c sets it up). */
typedef struct train_run {
    train_opts o;
    int rank, nranks, wordlm;   /* wordlm: a language model (wordlm, embedlm) */
    const char *fmt;            /* data format (train_detect_format) */
    dataset tr, te;
    corpus cor;                 /* the language models' */
    model m;
    trainer trn;
    grad_group gd, ge;          /* dense parameters; embedding (ge.r NULL: none) */
    int mix_params;             /* gossip mixes parameters (rb_mix_params) */
    int async;                  /* gossip_async: flushed when the loop ends */
    long steps_per_epoch, total_iters, eval_every, log_every;
    unsigned long long n_local; /* training samples of the smallest shard */
    float *xb;                  /* batch buffers */
    int32_t *yb;
    size_t *perm, *slots;
    train_ring ring;
    int use_ring;
    /* --embed-input rows: the touched rows of the embedding gradient */
    int64_t *embed_ids;
    float *embed_rows;
    /* What the loop records. */
    growable curve, phases;     /* train_curve_row, train_phase_row (rank 0) */
    double t_start, compute_s, steps_s;
    long it;                    /* iterations done */
    int timed_out, reached;
    /* A stop signal (SIGTERM, SIGUSR1, ...: Slurm's time limit, scancel,
     * sbatch --signal) every rank agreed on at a step's start: the loop
     * ended there, and what it measured is kept, marked. */
    int stop_signal;
    /* The loss became NaN or infinite: the run stopped (diverged_what says
     * which loss, diverged_at the iteration). */
    int diverged;
    long diverged_at;
    const char *diverged_what;
    eval_result last;
    double last_train_loss;
    double mem_need, mem_limit;  /* bytes per rank (train_memory.c); limit 0: unknown */
    /* --checkpoint (train_checkpoint.c) */
    char data_digest[TRAIN_DATA_MAX_FILES * 17 + 1];   /* the data's SHA-256s, 16 hex each */
    long checkpoint_every;      /* steps; 0: by time, or none without --checkpoint */
    double checkpoint_seconds;  /* by time: rank 0's wall seconds between them */
    double last_checkpoint_t;   /* rank 0's clock at the last one (or the start) */
    long resumed_at;            /* steps done when this process started */
    double resume_tallies[8];   /* the loop's tallies and timers, from the checkpoint */
    double elapsed_before;      /* wall seconds of the run before the resume */
    long checkpoints;           /* written by this process */
    double checkpoint_s;        /* their seconds */
    /* --record-gradients (train_record.c) */
    bench_trace_writer *rec;        /* rank 0's */
    int rec_capped;
    long rec_steps;
    size_t rec_cap;              /* rows rec_ids / rec_vals hold */
    int64_t *rec_ids;
    float *rec_vals;
} train_run;

/* After the data is loaded, before anything else is allocated: print the
 * bytes a rank will hold and the limit; exit 2 with both when it does not
 * fit (collective). */
void train_check_memory(train_run *r, const model_shape *shape);

/* The curve and phase tables, empty, before a resume fills them. */
void train_loop_prepare(train_run *r);
/* Train until the iterations, the target or the time limit end it (the
 * time limit starts here), from step r->resumed_at, with a checkpoint
 * every r->checkpoint_every steps or r->checkpoint_seconds, and when a
 * stop signal or the time limit ends it; then flush an asynchronous
 * reducer. */
void train_loop(train_run *r);

/* ---------------------------------------------------------- checkpoints */

/* The loop's tallies and timers a checkpoint carries, per rank: loss,
 * correct and count since the last evaluation and since the last progress
 * line, compute_s, steps_s. */
#define TRAIN_CKPT_TALLIES 8
/* What the trajectory depends on (options, data, ranks) as key=value
 * lines: a checkpoint is resumed only by a run that says the same. */
void train_checkpoint_identity(const train_run *r, char *buf, size_t len);
/* Collective: the run's state after `steps` steps into --checkpoint.
 * 0, or -1 on every rank after one message (the previous checkpoint is
 * left whole). */
int train_checkpoint_write(train_run *r, long steps, double *tallies);
/* Collective, before the loop: the state from --checkpoint into r and
 * tallies, elapsed the wall seconds so far; the steps done (0 when there
 * is no checkpoint yet), or -1 on every rank after one message naming why
 * (another run's checkpoint, a damaged one). */
long train_checkpoint_resume(train_run *r, double *tallies, double *elapsed);

/* ---------------------------------------------------------- recording */

/* --record-gradients: create the trace (rank 0) with the embedding's
 * layer; collective; 0, or -1 on every rank after one message. */
int train_record_open(train_run *r);
/* Collective on the steps it records: every rank's embedding gradient
 * (before the reduction) into the trace; the seconds it took. */
double train_record_step(train_run *r);
/* Close the trace: complete, renamed onto its path; not (a diverged run),
 * removed.  Collective; 0 or -1. */
int train_record_close(train_run *r, int complete);

#endif
