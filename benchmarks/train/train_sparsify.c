/* rb_train's gradient sparsification (--sparsify topk:R | threshold:T),
 * with error feedback: what is dropped is added to the next step's
 * gradient.  On the host here; on the GPU by nn_gpu_sparsify, with the same
 * selection (the k-th largest |g| is exact either way). */
#include "train.h"

#include <math.h>

#include "reducer_sparse.h"

/* g += residual; keep entries selected by top-k / threshold; residual =
 * what was dropped (error feedback) or 0. */
static void sparsify(const train_opts *o, float *g, float *residual, float *scratch, size_t n)
{
    if (!o->sparsify_kind || n == 0)
        return;
    if (o->error_feedback)
        for (size_t i = 0; i < n; i++)
            g[i] += residual[i];
    float thr = (float)o->sparsify_value;
    if (o->sparsify_kind == SPARSIFY_TOPK) {
        size_t k = (size_t)ceil(o->sparsify_value * (double)n);
        if (k < 1)
            k = 1;
        for (size_t i = 0; i < n; i++)
            scratch[i] = fabsf(g[i]);
        thr = rb_kth_largest(scratch, n, k);
        if (thr == 0.0f)
            thr = 1e-38f;   /* never send zeros as selected entries */
    }
    for (size_t i = 0; i < n; i++) {
        int keep = fabsf(g[i]) >= thr;
        residual[i] = keep || !o->error_feedback ? 0.0f : g[i];
        if (!keep)
            g[i] = 0.0f;
    }
}

void train_sparsify_group(const train_opts *o, grad_group *g)
{
    char err[512];
    if (!g->sparsified)
        return;
    if (!g->on_gpu)
        sparsify(o, g->grad, g->residual, g->scratch, g->n);
    else if (nn_gpu_sparsify(g->gpu_sparse, g->grad, o->sparsify_kind == SPARSIFY_TOPK,
                          o->sparsify_value, err, sizeof err))
        train_gpu_die("sparsify", err);
}
