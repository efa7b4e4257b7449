/* rb_train: data-parallel SGD of real models on real data over MPI, with
 * any libreducer reducer aggregating the gradients.  See docs/training.md;
 * train.h maps the files.  This one sets the run up (data, model,
 * reducers, buffers), runs the loop, reports and archives. */
#include "train.h"

#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/archive.h"
#include "harness/bench_common.h"
#include "harness/bench_keep.h"
#include "harness/h5attr.h"
#include "harness/tmpfiles.h"

#define BAD(...) bench_usage_error(TRAIN_PROG, __VA_ARGS__)

/* ---------------------------------------------------------- set-up */

/* Every rank read the data itself (a relative --data resolves in each
 * rank's directory; a node-local copy): ranks training on different data
 * of one shape ran without a word.  Each compares its digests with rank
 * 0's; a rank that differs names the first that does, every rank exits 2. */
static void agree_on_data(train_run *r, bench_archive *arch)
{
    train_data_digest mine[TRAIN_DATA_MAX_FILES];
    char first[TRAIN_DATA_MAX_FILES][65] = {{0}}, err[4600] = "";
    int n = train_data_digests(&r->o, r->fmt, &r->cor, mine);
    if (n < 0)
        snprintf(err, sizeof err, "%s: cannot hash the data read", r->o.data);
    for (int i = 0; i < n; i++) {
        memcpy(first[i], mine[i].sha256, sizeof first[i]);
        /* for checkpoints: the data a run resumes on must be this data */
        snprintf(r->data_digest + 17 * i, sizeof r->data_digest - 17 * (size_t)i, "%.16s%s",
                 mine[i].sha256, i + 1 < n ? " " : "");
    }
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n && !err[0]; i++)
        if (strcmp(first[i], mine[i].sha256))
            snprintf(err, sizeof err, "--data %.1024s: %.2048s has SHA-256 %.16s... on this rank, %.16s... on "
                     "rank 0: every rank must train on the same data", r->o.data, mine[i].what,
                     mine[i].sha256, first[i]);
    if (bench_all_ok(MPI_COMM_WORLD, err[0] ? BENCH_NO_CODE : RB_OK, "data", err) < 0) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_USAGE);
    }
}

/* Every rank's shards; exits 2 (after one message) when any rank fails. */
static void load_data(train_run *r, bench_archive *arch)
{
    const train_opts *o = &r->o;
    char err[4600] = "";
    r->fmt = train_detect_format(o);
    int failed = train_load_data(o, r->fmt, r->rank, r->nranks, &r->tr, &r->te, &r->cor, err,
                                 sizeof err) != 0;
    if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "data", err) < 0) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_USAGE);
    }
    agree_on_data(r, arch);
    const corpus *c = &r->cor;
    if (r->wordlm)
        bench_printf0("corpus: %s (%s): %zu distinct training words, vocabulary %d; "
                      "tokens train %zu valid %zu test %zu\n",
                      o->data, r->fmt, c->distinct, c->vocab, c->len[0], c->len[1], c->len[2]);
    unsigned long long mine = r->tr.n;
    MPI_Allreduce(&mine, &r->n_local, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    r->steps_per_epoch = (long)(r->n_local / (unsigned long long)o->batch);
    if (r->steps_per_epoch < 1)
        BAD("--batch %d exceeds the smallest shard (%llu training samples per rank)", o->batch,
            r->n_local);
}

/* The model's shape from the data and the options. */
static model_shape shape_of(const train_run *r)
{
    const dataset *tr = &r->tr;
    const train_opts *o = &r->o;
    return (model_shape){tr->c, tr->h, tr->w, tr->classes, o->ctx, o->embed_dim, o->hidden,
                         r->cor.vocab};
}

/* The model (on the GPU for -d cuda) and one reducer per gradient buffer. */
static void build_model(train_run *r, bench_archive *arch)
{
    train_opts *o = &r->o;
    char err[4600] = "";
    model_shape shape = shape_of(r);
    if (nn_model_build(&r->m, o->model, &shape, o->batch, o->seed, err, sizeof err) < 0)
        BAD("%s", err);
    r->trn = (trainer){&r->m, NULL, 0};
    if (!strcmp(o->device, "cuda") && train_setup_gpu(o, &r->m, &r->trn) < 0) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_FAILED);
    }
    gpu_model *g = r->trn.g;
    model *m = &r->m;
    int rc = train_group_create(&r->gd, o, m->n_embed ? o->dense_reducer : o->reducer, m->n_dense, 1,
                                g ? nn_gpu_model_grads(g) : m->grads,
                                g ? nn_gpu_model_params(g) : m->params, 1);
    if (rc == RB_OK && m->n_embed)
        rc = train_group_create(&r->ge, o, o->reducer, (size_t)r->cor.vocab, (size_t)o->embed_dim,
                                g ? nn_gpu_model_egrads(g) : m->egrads,
                                g ? nn_gpu_model_eparams(g) : m->eparams, 0);
    if (rc != RB_OK) {
        bench_archive_close(arch, 0);
        bench_exit(rc == RB_ERR_ARG || rc == RB_ERR_UNKNOWN_REDUCER ? BENCH_EXIT_USAGE : BENCH_EXIT_FAILED);
    }
    if (m->n_embed && !g && !strcmp(o->embed_input, "rows")) {
        size_t ids = (size_t)o->batch * (size_t)o->ctx;
        r->embed_ids = malloc(ids * sizeof *r->embed_ids);
        r->embed_rows = malloc(ids * (size_t)o->embed_dim * sizeof *r->embed_rows);
        int failed = !r->embed_ids || !r->embed_rows;
        if (bench_all_ok(MPI_COMM_WORLD, failed ? BENCH_NO_CODE : RB_OK, "--embed-input rows",
                         "out of memory for the embedding's rows") < 0) {
            bench_archive_close(arch, 0);
            bench_exit(BENCH_EXIT_FAILED);
        }
    }
    /* embedlm: the embedding's result stays in row form and updates by rows */
    r->ge.by_rows = r->trn.egrads_kept_zero = m->n_embed && !strcmp(o->model, "embedlm");
    unsigned traits = 0;
    rb_reducer_traits_with(o->reducer, &o->ropts, &traits);
    r->mix_params = (traits & RB_TRAIT_GOSSIP) && (o->ropts.gossip_mix & RB_GOSSIP_MIX_PARAMS);
    r->async = (traits & RB_TRAIT_GOSSIP) && o->ropts.gossip_async;
    if (r->async)
        train_progress_during_backward(r->gd.r);
}

/* Iterations, evaluation and log periods; the run's first line. */
static void plan(train_run *r)
{
    const train_opts *o = &r->o;
    long spe = r->steps_per_epoch;
    r->total_iters = spe * o->epochs;
    if (o->max_iters && o->max_iters < r->total_iters)
        r->total_iters = o->max_iters;
    r->eval_every = o->eval_every ? o->eval_every : spe;
    r->log_every = o->log_every ? o->log_every : (spe >= 10 ? spe / 10 : 1);
    r->checkpoint_every = o->checkpoint ? o->checkpoint_every : 0;
    r->checkpoint_seconds = o->checkpoint && !o->checkpoint_every ? o->checkpoint_seconds : 0.0;
    char dense_note[96] = "";
    if (strcmp(o->dense_reducer, o->reducer))
        snprintf(dense_note, sizeof dense_note, " (dense parameters: %s)", o->dense_reducer);
    bench_printf0("rb_train: model %s (%zu dense + %zu embedding parameters, %.3g MFLOP/sample "
                  "forward), data %s (%s), %llu train / %zu test samples, %d ranks x batch %d, "
                  "%ld steps/epoch, reducer %s%s, sparsify %s, shuffle %s\n",
                  o->model, r->m.n_dense, r->m.n_embed, nn_model_flops(&r->m) / 1e6, o->data, r->fmt,
                  (unsigned long long)r->tr.total, r->te.total, r->nranks, o->batch, spe,
                  o->reducer, dense_note, o->sparsify, o->shuffle);
}

static void alloc_buffers(train_run *r)
{
    int B = r->o.batch;
    r->xb = malloc((size_t)B * nn_model_in_size(&r->m) * sizeof(float) + 64);
    r->yb = malloc((size_t)B * sizeof(int32_t) + 64);
    r->perm = malloc((r->n_local + 1) * sizeof *r->perm);
    r->slots = malloc((size_t)B * sizeof *r->slots);
    r->use_ring = !strcmp(r->o.shuffle, "ring") && r->nranks > 1;
    int ring_ok = !r->use_ring || train_ring_alloc(&r->ring, &r->tr, B, r->rank, r->nranks) == 0;
    if (!r->xb || !r->yb || !r->perm || !r->slots || !ring_ok)
        BAD("out of memory for batch buffers");
}

/* ---------------------------------------------------------- the end */

static double checksum(const model *m, int squares)
{
    double s = 0.0;
    for (size_t i = 0; i < m->n_dense; i++)
        s += squares ? (double)m->params[i] * m->params[i] : m->params[i];
    for (size_t i = 0; i < m->n_embed; i++)
        s += squares ? (double)m->eparams[i] * m->eparams[i] : m->eparams[i];
    return s;
}

/* The model's speed, the timing and the final line; the model's GFLOP/s
 * (forward + backward ~ 3x forward flops, over rank 0's compute time). */
static double report(train_run *r, double sgemm, double wall)
{
    const train_opts *o = &r->o;
    double cs_max;
    MPI_Allreduce(&r->compute_s, &cs_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double gflops = 3.0 * nn_model_flops(&r->m) * (double)r->it * o->batch / r->compute_s / 1e9;
    if (r->trn.g && nn_gpu_model_download(r->trn.g, &r->m))
        train_gpu_die("download", "cannot copy the parameters from the GPU");
    if (o->bench_sgemm && !r->trn.g)
        bench_printf0("model: %s forward+backward %.2f GFLOP/s on rank 0 (%.1f%% of SGEMM)\n",
                      o->model, gflops, 100.0 * gflops / sgemm);
    else if (r->trn.g)
        bench_printf0("model: %s forward+backward %.2f GFLOP/s on rank 0's GPU\n", o->model, gflops);
    long it = r->it, spe = r->steps_per_epoch;
    bench_printf0("timing: rank 0 forward+backward %.3f s, whole iterations %.3f s "
                  "(%.3f s per epoch of %ld steps)\n",
                  r->compute_s, r->steps_s, it ? r->steps_s / (double)it * (double)spe : 0.0, spe);
    if (r->checkpoints)
        bench_printf0("checkpoints: %ld written to %s, %.3f s in all (%.2f%% of the steps' time)\n",
                      r->checkpoints, o->checkpoint, r->checkpoint_s,
                      r->steps_s > 0 ? 100.0 * r->checkpoint_s / r->steps_s : 0.0);
    bench_printf0("final: iterations %ld wall_s %.2f train_loss %.9g %s %.9g param_sum %.9g "
                  "param_sq %.9g%s\n",
                  it, wall, r->last_train_loss, r->wordlm ? "val_perplexity" : "test_accuracy",
                  r->wordlm ? r->last.perplexity : r->last.accuracy, checksum(&r->m, 0),
                  checksum(&r->m, 1),
                  r->timed_out ? " (time limit)" : r->reached ? " (target reached)" : "");
    return gflops;
}

/* /train on rank 0, then close the archive; the exit code. */
/* A stop signal ended the loop: rank 0 writes /train (the curve and the
 * phases so far) and flushes it, then every rank ends as the signal
 * would have ended it, rank 0 keeping the file as FILE.h5.interrupted
 * (complete = 0, the signal in its first bytes).  Does not return. */
static _Noreturn void stopped_by_signal(train_run *r, bench_archive *arch, const train_summary *sum)
{
    hid_t file = bench_archive_file(arch);   /* rank 0's; none under -o none */
    long steps = 0;                           /* the steps flushed; -1: the write failed */
    bench_archive_writing(arch);
    if (file != H5I_INVALID_HID)
        steps = train_archive_write(file, &r->o, sum, r->curve.v, r->curve.n, r->phases.v,
                                    r->phases.n) ? -1 : (long)r->phases.n;
    MPI_Bcast(&steps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (bench_archive_path(arch))
        bench_archive_checkpoint(arch, steps);
    char detail[160];   /* rank 0's line */
    snprintf(detail, sizeof detail, ", at iteration %ld after %zu evaluation(s)", r->it, r->curve.n);
    bench_fault_stop(MPI_COMM_WORLD, r->stop_signal, detail);
}

static int archive_run(train_run *r, bench_archive *arch, double gflops, double sgemm, double wall)
{
    const dataset *tr = &r->tr;
    int lm = r->wordlm;
    train_summary sum = {r->nranks, tr->classes, tr->c, tr->h, tr->w, r->fmt, r->o.data, tr->total,
                         r->te.total, r->m.n_dense, r->m.n_embed, r->it, r->steps_per_epoch,
                         nn_model_flops(&r->m), gflops, sgemm, wall, r->last_train_loss,
                         lm ? NAN : r->last.accuracy, lm ? r->last.perplexity : NAN, r->reached,
                         r->timed_out, openblas_get_corename()};
    if (r->stop_signal)
        stopped_by_signal(r, arch, &sum);
    int aok = 0;
    hid_t file = bench_archive_file(arch);
    if (r->rank == 0 && file != H5I_INVALID_HID)
        aok = train_archive_write(file, &r->o, &sum, r->curve.v, r->curve.n, r->phases.v, r->phases.n) |
              bench_h5_attr_double(file, "mem_need_bytes", r->mem_need) |
              bench_h5_attr_double(file, "mem_limit_bytes", r->mem_limit) |
              bench_h5_attr_int(file, "resumed_at_iteration", r->resumed_at) |
              (r->timed_out ? bench_archive_mark(arch, "timed_out") : 0) |
              (r->diverged ? bench_archive_mark(arch, "diverged") : 0);
    MPI_Bcast(&aok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (aok)   /* rank 0's train_archive_write said what */
        bench_fail_on(0, BENCH_NO_CODE, "archive", "writing /train failed");
    char apath[4096] = "";
    if (bench_archive_path(arch))
        snprintf(apath, sizeof apath, "%s", bench_archive_path(arch));
    int cok = bench_archive_close(arch, aok == 0);
    if (r->rank == 0 && apath[0] && !cok && !aok)
        printf("archive: %s\n", apath);
    const char *kept = apath[0] && !cok && !aok ? "; the archive keeps the curve so far, marked " : "";
    if (r->diverged)
        bench_fail_on(r->rank == 0, BENCH_NO_CODE, "training",
                      "diverged: the %s is not finite at iteration %ld (--lr %g too large?); "
                      "stopped%s%s", r->diverged_what, r->diverged_at, r->o.lr, kept,
                      kept[0] ? "diverged=1" : "");
    else if (r->timed_out)
        bench_fail_on(r->rank == 0, BENCH_NO_CODE, "time limit",
                      "--timeout %g s reached after %ld iterations%s%s", r->o.time_limit, r->it, kept,
                      kept[0] ? "timed_out=1 (a partial curve)" : "");
    if (r->diverged)
        return BENCH_EXIT_FAILED;
    return r->timed_out ? BENCH_EXIT_TIMEOUT : aok || cok ? BENCH_EXIT_FAILED : BENCH_EXIT_OK;
}

/* --resume: the state of the checkpoint, if there is one; exits 2 (after
 * one message) when it belongs to another run or cannot be read. */
static void resume(train_run *r, bench_archive *arch)
{
    long steps = train_checkpoint_resume(r, r->resume_tallies, &r->elapsed_before);
    if (steps < 0) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_USAGE);
    }
    r->resumed_at = steps;
}

/* A run that ended complete needs its checkpoint no more (rank 0), nor,
 * resumed, the partial archive its stopped chunk kept at the same path
 * (FILE.h5.interrupted): the complete archive holds its curve. */
static void remove_checkpoint(const train_run *r, const char *archive)
{
    if (r->rank != 0 || !r->o.checkpoint)
        return;
    if (access(r->o.checkpoint, F_OK) == 0) {
        if (unlink(r->o.checkpoint) == 0)
            printf("checkpoint: %s removed (the run is complete)\n", r->o.checkpoint);
        else
            fprintf(stderr, "%s: warning: cannot remove the checkpoint %s: %s\n", TRAIN_PROG,
                    r->o.checkpoint, strerror(errno));
    }
    char kept[PATH_MAX + 16];
    snprintf(kept, sizeof kept, "%s.interrupted", archive);
    if (r->resumed_at > 0 && archive[0] && access(kept, F_OK) == 0 && unlink(kept) == 0)
        printf("checkpoint: %s removed (a stopped chunk of this run; %s holds all of it)\n", kept,
               archive);
}

/* --bench-sgemm: OpenBLAS's SGEMM rate, printed (NaN when not asked). */
static double measure_sgemm(const train_run *r)
{
    if (!r->o.bench_sgemm)
        return NAN;
    double sgemm = train_sgemm_gflops();
    bench_printf0("sgemm: OpenBLAS SGEMM 512^3, %s kernels, %d thread(s): %.2f GFLOP/s "
                  "(rank 0)\n", openblas_get_corename(), r->o.threads, sgemm);
    return sgemm;
}

/* The archive (archive_run), then, the run complete, its checkpoint
 * removed; the exit code. */
static int archive_and_tidy(train_run *r, bench_archive *arch, double gflops, double sgemm, double wall)
{
    char archive[PATH_MAX] = "";   /* bench_archive_close frees the path */
    if (bench_archive_path(arch))
        snprintf(archive, sizeof archive, "%s", bench_archive_path(arch));
    int code = archive_run(r, arch, gflops, sgemm, wall);
    if (code == BENCH_EXIT_OK)
        remove_checkpoint(r, archive);
    return code;
}

static void free_run(train_run *r)
{
    free(r->curve.v), free(r->phases.v), free(r->xb), free(r->yb), free(r->perm), free(r->slots);
    train_ring_free(&r->ring);
    train_group_free(&r->gd), train_group_free(&r->ge);
    free(r->embed_ids), free(r->embed_rows);
    nn_gpu_model_free(r->trn.g);
    nn_model_free(&r->m);
    nn_dataset_free(&r->tr), nn_dataset_free(&r->te);
    nn_corpus_free(&r->cor);
}

/* --record-gradients naming the archive: the trace, written as the run
 * goes, and the archive, renamed onto its path at the end, are one file;
 * without --force the archive was refused after the whole training, with
 * it the trace replaced.  Refused before the data is loaded (exit 2). */
static void check_record_not_archive(const train_run *r, bench_archive *arch)
{
    const char *h5 = bench_archive_path(arch);
    int clash = r->rank == 0 && r->o.record && h5 && bench_same_file(r->o.record, h5);
    MPI_Bcast(&clash, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!clash)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", h5);   /* bench_archive_close frees it */
    bench_archive_close(arch, 0);
    BAD("--record-gradients %s and the archive %s are the same file: the archive would replace "
        "the trace; give --record-gradients another name", r->o.record, path);
}

/* --write-corpus DIR: rank 0 writes DIR/{train,valid,test}.tokens.  One
 * that exists is refused without --force (it was replaced silently), and
 * DIR being --data (or --data one of those files) always: the corpus read
 * would be replaced by its --vocab-limited copy, words beyond the
 * vocabulary gone to <unk>.  Refused before the data is read (exit 2). */
static void check_corpus_target(const train_run *r)
{
    const train_opts *o = &r->o;
    char msg[2 * PATH_MAX + 256] = "", why[PATH_MAX + 256];
    static const char *const names[3] = {"train.tokens", "valid.tokens", "test.tokens"};
    struct stat st;
    int bad = 0;
    if (r->rank == 0 && o->write_corpus && bench_same_file(o->write_corpus, o->data)) {
        bad = 1;
        snprintf(msg, sizeof msg, "--write-corpus %s is the --data directory: the corpus would be "
                 "replaced by its --vocab-limited copy; give another directory", o->write_corpus);
    }
    for (int i = 0; r->rank == 0 && o->write_corpus && !bad && i < 3; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", o->write_corpus, names[i]);
        if (bench_same_file(path, o->data))
            bad = 1, snprintf(msg, sizeof msg, "--write-corpus would replace %s, the --data read; "
                              "give another directory", path);
        /* a directory not made yet is made when the corpus is written */
        else if (stat(o->write_corpus, &st) == 0 && bench_output_ok(path, o->force, why, sizeof why))
            bad = 1, snprintf(msg, sizeof msg, "--write-corpus: %s", why);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad)
        BAD("%s", msg);
}

int main(int argc, char **argv)
{
    static train_run run;   /* zero-initialised */
    train_run *r = &run;
    bench_mpi_init(&argc, &argv, TRAIN_PROG);
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->nranks);
    /* Before parsing: a bad option on some ranks only must stop every rank. */
    if (!bench_argv_agree(MPI_COMM_WORLD, argc, argv))
        BAD("ranks were started with different command lines");
    train_parse_options(argc, argv, &r->o);
    bench_fault_signals();   /* rank 0 names a signal that ends the job */
    /* ... at the next step, with the curve so far kept (a signal during
     * the set-up or an evaluation is acted on at the next step). */
    bench_fault_defer();
    bench_keep_unit("step(s)");
    check_corpus_target(r);
    if (!strcmp(r->o.device, "cuda") && !nn_gpu_model_available())
        BAD("--device cuda: %s", nn_gpu_model_libraries());
    openblas_set_num_threads(r->o.threads);
    r->wordlm = !strcmp(r->o.model, "wordlm") || !strcmp(r->o.model, "embedlm");
    bench_archive *arch = NULL;
    if (bench_archive_open(MPI_COMM_WORLD, TRAIN_PROG, r->o.output, r->o.force, argc, argv, &arch) != 0)
        bench_exit(BENCH_EXIT_USAGE);
    check_record_not_archive(r, arch);
    load_data(r, arch);
    model_shape shape = shape_of(r);
    train_check_memory(r, &shape);
    build_model(r, arch);
    plan(r);
    double sgemm = measure_sgemm(r);
    alloc_buffers(r);
    if (r->o.record && !r->m.n_embed)
        BAD("--record-gradients: model %s has no embedding (dense layers are not recorded)", r->o.model);
    if (train_record_open(r)) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_USAGE);
    }
    train_loop_prepare(r);
    if (r->o.resume)
        resume(r, arch);
    train_loop(r);
    /* A diverged run's trace ends in non-finite gradients: not kept (it
     * was kept, marked complete, and rb_micro refused it); nor one a stop
     * signal cut short (it looked whole). */
    if (train_record_close(r, !r->diverged && !r->stop_signal)) {
        bench_archive_close(arch, 0);
        bench_exit(BENCH_EXIT_FAILED);
    }
    double wall = MPI_Wtime() - r->t_start;
    double gflops = report(r, sgemm, wall);
    int code = archive_and_tidy(r, arch, gflops, sgemm, wall);
    free_run(r);
    bench_exit(code);
}
