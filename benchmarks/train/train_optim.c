/* rb_train's optimiser: momentum SGD (PyTorch's form) and the learning-rate
 * schedule (linear warm-up, then const, cosine or step). */
#include "train.h"

#include <math.h>
#include <string.h>

double train_lr_at(const train_opts *o, long t, long total)
{
    double lr = o->lr;
    if (o->warmup > 0 && t < o->warmup)
        lr *= (double)(t + 1) / (double)o->warmup;
    double f = total > 0 ? (double)t / (double)total : 0.0;
    if (!strcmp(o->schedule, "cosine"))
        lr *= 0.5 * (1.0 + cos(M_PI * f));
    else if (!strcmp(o->schedule, "step"))
        lr *= f >= 0.75 ? 0.01 : f >= 0.5 ? 0.1 : 1.0;
    return lr;
}

/* v = mu v + (g + wd w); w -= lr v. */
static void sgd(float *w, const float *g, float *v, size_t n, double lr, double mu, double wd)
{
    float flr = (float)lr, fmu = (float)mu, fwd = (float)wd;
    for (size_t i = 0; i < n; i++) {
        v[i] = fmu * v[i] + g[i] + fwd * w[i];
        w[i] -= flr * v[i];
    }
}

/* The rows of in that are not all zero, as sgd with weight decay 0 (the
 * rows left out have a zero gradient: only their velocity would move).
 * Skipping all-zero rows makes the rows updated the same for every exact
 * reducer, whichever rows it lists (omnireduce lists whole blocks). */
static void sgd_rows(float *w, float *v, const rb_rows *in, double lr, double mu)
{
    float flr = (float)lr, fmu = (float)mu;
    size_t d = in->cols;
    for (size_t i = 0; i < in->nrows; i++) {
        const float *g = in->values + i * d;
        size_t j = 0;
        while (j < d && g[j] == 0.0f)
            j++;
        if (j == d)
            continue;
        float *wr = w + (size_t)in->ids[i] * d, *vr = v + (size_t)in->ids[i] * d;
        for (j = 0; j < d; j++) {
            vr[j] = fmu * vr[j] + g[j];
            wr[j] -= flr * vr[j];
        }
    }
}

void train_update(trainer *t, grad_group *gd, grad_group *ge, const train_opts *o, double lr)
{
    char err[512];
    if (t->g) {
        if (nn_gpu_model_update(t->g, lr, o->momentum, o->weight_decay, err, sizeof err))
            train_gpu_die("GPU update", err);
        return;
    }
    sgd(gd->params, gd->grad, gd->velocity, gd->n, lr, o->momentum, o->weight_decay);
    if (ge->r && ge->by_rows)
        sgd_rows(ge->params, ge->velocity, &ge->result, lr, o->momentum);
    else if (ge->r)
        sgd(ge->params, ge->grad, ge->velocity, ge->n, lr, o->momentum, 0.0);
}
