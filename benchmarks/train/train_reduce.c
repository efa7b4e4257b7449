/* rb_train's reduction: one libreducer reducer per gradient buffer (the
 * dense parameters, and wordlm's embedding table apart), with the buffers
 * the optimiser and the sparsification need beside it. */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"

int train_group_create(grad_group *g, const train_opts *o, size_t rows, size_t cols, float *grad,
                       float *params, int sparsifiable)
{
    memset(g, 0, sizeof *g);
    g->n = rows * cols, g->grad = grad, g->params = params;
    g->on_gpu = !strcmp(o->device, "cuda");
    g->velocity = g->on_gpu ? NULL : calloc(g->n + 1, sizeof(float));
    g->sparsified = sparsifiable && o->sparsify_kind;
    if (g->sparsified && !g->on_gpu) {
        g->residual = calloc(g->n + 1, sizeof(float));
        g->scratch = calloc(g->n + 1, sizeof(float));
    }
    char err[512];
    if (g->sparsified && g->on_gpu &&
        gpu_sparsifier_create(g->n, o->error_feedback, &g->gpu_sparse, err, sizeof err))
        train_gpu_die("sparsification on the GPU", err);
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = o->reducer, cfg.comm = MPI_COMM_WORLD, cfg.rows = rows, cfg.cols = cols;
    cfg.opts = o->ropts;
    cfg.device = g->on_gpu ? RB_DEVICE_CUDA : RB_DEVICE_HOST;
    int rc = rb_create(&cfg, &g->r);
    if (rc != RB_OK && bench_world_rank() == 0)
        fprintf(stderr, "%s: reducer %s (%zu x %zu gradient): %s: %s\n", TRAIN_PROG, o->reducer, rows,
                cols, rb_strerror(rc), rb_last_error());
    return rc;
}

void train_group_free(grad_group *g)
{
    if (g->r)
        rb_destroy(g->r);
    free(g->velocity), free(g->residual), free(g->scratch);
    gpu_sparsifier_free(g->gpu_sparse);
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
    model_set_backward_hook(progress_hook, NULL);
}

void train_check_rb(int rc, const char *what)
{
    if (rc == RB_OK)
        return;
    fprintf(stderr, "%s: rank %d: %s failed: %s: %s\n", TRAIN_PROG, bench_world_rank(), what,
            rb_strerror(rc), rb_last_error());
    MPI_Abort(MPI_COMM_WORLD, RB_EXIT_FAILED);
}
