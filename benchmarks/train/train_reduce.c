/* rb_train's reduction: one libreducer reducer per gradient buffer (the
 * dense parameters, and wordlm's embedding table apart), with the buffers
 * the optimiser and the sparsification need beside it. */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/bench_common.h"

/* The reducer's name, for the lines naming a failed call. */
static const char *reducer_name = "";

int train_group_create(grad_group *g, const train_opts *o, const char *reducer, size_t rows,
                       size_t cols, float *grad, float *params, int sparsifiable)
{
    memset(g, 0, sizeof *g);
    g->n = rows * cols, g->rows = rows, g->cols = cols, g->grad = grad, g->params = params;
    g->on_gpu = !strcmp(o->device, "cuda");
    g->velocity = g->on_gpu ? NULL : calloc(g->n + 1, sizeof(float));
    g->sparsified = sparsifiable && o->sparsify_kind;
    if (g->sparsified && !g->on_gpu) {
        g->residual = calloc(g->n + 1, sizeof(float));
        g->scratch = calloc(g->n + 1, sizeof(float));
    }
    char err[512];
    if (g->sparsified && g->on_gpu &&
        nn_gpu_sparsifier_create(g->n, o->error_feedback, &g->gpu_sparse, err, sizeof err))
        train_gpu_die("sparsification on the GPU", err);
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = reducer, cfg.comm = MPI_COMM_WORLD, cfg.rows = rows, cfg.cols = cols;
    cfg.opts = o->ropts;
    cfg.device = g->on_gpu ? RB_DEVICE_CUDA : RB_DEVICE_HOST;
    int rc = rb_create(&cfg, &g->r);
    reducer_name = reducer;
    char what[256];
    snprintf(what, sizeof what, "%s: create for the %zu x %zu gradient", reducer, rows, cols);
    bench_all_ok(MPI_COMM_WORLD, rc, what, rb_last_error());   /* rb_create: every rank alike */
    return rc;
}

void train_group_free(grad_group *g)
{
    if (g->r)
        rb_destroy(g->r);
    free(g->velocity), free(g->residual), free(g->scratch);
    nn_gpu_sparsifier_free(g->gpu_sparse);
}

static rb_reducer *progress_target;

static void progress_hook(void *ctx)
{
    (void)ctx;
    if (progress_target)
        rb_progress(progress_target);
}

void train_progress_during_backward(rb_reducer *r)
{
    progress_target = r;
    nn_model_set_backward_hook(progress_hook, NULL);
}

void train_check_rb(int rc, const char *what)
{
    if (rc == RB_OK)
        return;
    char full[256];
    snprintf(full, sizeof full, "%s: %s", reducer_name, what);
    /* A rank that failed only because a peer did leaves the line to that
     * peer (whose MPI_Abort ends the job), unless it is slow to come. */
    if (bench_peer_failure(rc, rb_last_error()))
        sleep(2);
    bench_fail(rc, full, "%s", rb_last_error());
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED);
}
