/* Model construction and the forward/backward passes (see models.h). */
#include "models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void (*backward_hook)(void *);
static void *backward_hook_ctx;

void nn_model_set_backward_hook(void (*fn)(void *), void *ctx)
{
    backward_hook = fn;
    backward_hook_ctx = ctx;
}

void nn_model_run_backward_hook(void)
{
    if (backward_hook)
        backward_hook(backward_hook_ctx);
}

uint64_t nn_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double nn_rng_uniform(uint64_t *s) { return (double)(nn_rng_next(s) >> 11) * 0x1.0p-53; }

static int add(model *m, int rc)
{
    m->n++;
    return rc;
}

static layer *next(model *m) { return m->n < MODEL_MAX_LAYERS ? &m->L[m->n] : NULL; }

static int build_mlp(model *m, const model_shape *s, int B)
{
    int in = s->c * s->h * s->w;
    return add(m, nn_layer_dense(next(m), in, 256, B)) || add(m, nn_layer_relu(next(m), 256, 1, 1, B)) ||
           add(m, nn_layer_dense(next(m), 256, 128, B)) || add(m, nn_layer_relu(next(m), 128, 1, 1, B)) ||
           add(m, nn_layer_dense(next(m), 128, s->classes, B));
}

/* LeNet-5: conv5x5-6, pool, conv5x5-16, pool, fc120, fc84, fc10.  A 28x28
 * input is padded by 2 so the second pool yields 5x5 as with 32x32.  ReLU
 * comes after each pool: max and ReLU commute (ReLU is monotonic) and the
 * gradients agree too (a window whose maximum is <= 0 passes none either
 * way), so this is the same function with ReLU on 4x fewer elements. */
static int build_lenet(model *m, const model_shape *s, int B)
{
    int pad = s->h < 32 ? (32 - s->h) / 2 : 0;
    if (nn_layer_conv(next(m), s->c, s->h, s->w, 6, 5, pad, B) < 0)
        return -1;
    m->n++;
    for (int stage = 0; stage < 2; stage++) {
        layer *p = &m->L[m->n - 1];
        if (add(m, nn_layer_maxpool(next(m), p->out_c, p->out_h, p->out_w, 2, B)))
            return -1;
        p = &m->L[m->n - 1];
        if (add(m, nn_layer_relu(next(m), p->out_c, p->out_h, p->out_w, B)))
            return -1;
        if (stage == 0) {
            p = &m->L[m->n - 1];
            if (add(m, nn_layer_conv(next(m), p->out_c, p->out_h, p->out_w, 16, 5, 0, B)))
                return -1;
        }
    }
    int flat = (int)nn_layer_out_size(&m->L[m->n - 1]);
    return add(m, nn_layer_dense(next(m), flat, 120, B)) || add(m, nn_layer_relu(next(m), 120, 1, 1, B)) ||
           add(m, nn_layer_dense(next(m), 120, 84, B)) || add(m, nn_layer_relu(next(m), 84, 1, 1, B)) ||
           add(m, nn_layer_dense(next(m), 84, s->classes, B));
}

/* Feed-forward n-gram language model (Bengio et al. 2003 without the
 * direct connections): embeddings (rows words) of the previous ctx words,
 * concatenated, a ReLU hidden layer, a softmax over the classes. */
static int build_ngram_lm(model *m, const model_shape *s, int rows, int B)
{
    int d = s->embed_dim, in = s->ctx * d;
    return add(m, nn_layer_embed(next(m), rows, d, s->ctx, B)) ||
           add(m, nn_layer_dense(next(m), in, s->hidden, B)) ||
           add(m, nn_layer_relu(next(m), s->hidden, 1, 1, B)) ||
           add(m, nn_layer_dense(next(m), s->hidden, s->classes, B));
}

/* wordlm: the softmax covers the whole vocabulary (it dominates the
 * parameters and the compute). */
static int build_wordlm(model *m, const model_shape *s, int B)
{
    return build_ngram_lm(m, s, s->classes, B);
}

/* embedlm: a large embedding (s->vocab rows) and a softmax over the
 * s->classes most frequent words only, so that the embedding holds most of
 * the parameters and its row-sparse gradient most of the gradient, as in
 * the S2 paper's models. */
static int build_embedlm(model *m, const model_shape *s, int B)
{
    return build_ngram_lm(m, s, s->vocab > 0 ? s->vocab : s->classes, B);
}

/* He-uniform weights, zero biases; embeddings uniform in +-0.1. */
static void init_params(model *m, uint64_t seed)
{
    uint64_t st = seed ^ 0x5EEDF00Dull;
    for (int i = 0; i < m->n; i++) {
        layer *l = &m->L[i];
        if (!l->n_w)
            continue;
        double a = 0.1;
        if (l->kind != LAYER_EMBED)
            a = sqrt(6.0 / (l->kind == LAYER_CONV ? (double)l->k * l->k * l->in_c : l->in_c));
        for (size_t j = 0; j < l->n_w; j++)
            l->w[j] = (float)((2.0 * nn_rng_uniform(&st) - 1.0) * a);
        if (l->b)
            memset(l->b, 0, l->n_b * sizeof(float));
    }
}

static int assign_buffers(model *m)
{
    for (int i = 0; i < m->n; i++) {
        layer *l = &m->L[i];
        if (l->kind == LAYER_EMBED)
            m->n_embed += l->n_w;
        else
            m->n_dense += l->n_w + l->n_b;
    }
    m->params = calloc(m->n_dense + 1, sizeof(float));
    m->grads = calloc(m->n_dense + 1, sizeof(float));
    if (!m->params || !m->grads)
        return -1;
    if (m->n_embed) {
        m->eparams = calloc(m->n_embed, sizeof(float));
        m->egrads = calloc(m->n_embed, sizeof(float));
        if (!m->eparams || !m->egrads)
            return -1;
    }
    size_t off = 0;
    for (int i = 0; i < m->n; i++) {
        layer *l = &m->L[i];
        if (l->kind == LAYER_EMBED) {
            l->w = m->eparams, l->dw = m->egrads;
        } else if (l->n_w) {
            l->w = m->params + off, l->dw = m->grads + off;
            off += l->n_w;
            l->b = m->params + off, l->db = m->grads + off;
            off += l->n_b;
        }
        size_t na = (size_t)m->max_batch * nn_layer_out_size(l);
        m->act[i] = malloc(na * sizeof(float));
        m->dact[i] = malloc(na * sizeof(float));
        if (!m->act[i] || !m->dact[i])
            return -1;
    }
    return 0;
}

/* m's layers for max_batch samples (their scratch, no parameters or
 * activations yet); 0, or -1 with err filled. */
static int build_layers(model *m, const char *name, const model_shape *s, int max_batch, char *err,
                        size_t errlen)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->max_batch = max_batch;
    m->classes = s->classes;
    int rc;
    if (!strcmp(name, "mlp"))
        rc = build_mlp(m, s, max_batch);
    else if (!strcmp(name, "lenet")) {
        if (s->h < 12 || s->w < 12 || s->h > 32 || s->w > 32) {
            snprintf(err, errlen, "lenet needs 12..32 pixel images, got %dx%d", s->h, s->w);
            return -1;
        }
        rc = build_lenet(m, s, max_batch);
    } else if (!strcmp(name, "wordlm"))
        rc = build_wordlm(m, s, max_batch);
    else if (!strcmp(name, "embedlm"))
        rc = build_embedlm(m, s, max_batch);
    else {
        snprintf(err, errlen, "unknown model '%s' (mlp, lenet, wordlm, embedlm)", name);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen, "out of memory building %s", name);
        nn_model_free(m);
        return -1;
    }
    return 0;
}

int nn_model_build(model *m, const char *name, const model_shape *s, int max_batch, uint64_t seed,
                char *err, size_t errlen)
{
    if (build_layers(m, name, s, max_batch, err, errlen))
        return -1;
    if (assign_buffers(m)) {
        snprintf(err, errlen, "out of memory building %s", name);
        nn_model_free(m);
        return -1;
    }
    init_params(m, seed);
    return 0;
}

int nn_model_memory_need(const char *name, const model_shape *s, int max_batch, model_need *need,
                      char *err, size_t errlen)
{
    /* The layers at one sample: shapes and counts without the batch's
     * scratch; the scratch at max_batch is computed, not allocated. */
    model *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (build_layers(m, name, s, 1, err, errlen)) {
        free(m);
        return -1;
    }
    memset(need, 0, sizeof *need);
    need->in_floats = nn_model_in_size(m);
    double scratch = 0.0, acts = 0.0;
    for (int i = 0; i < m->n; i++) {
        const layer *l = &m->L[i];
        if (l->kind == LAYER_EMBED)
            need->n_embed += l->n_w;
        else
            need->n_dense += l->n_w + l->n_b;
        scratch += nn_layer_scratch_bytes(l, max_batch);
        acts += 2.0 * 4.0 * (double)max_batch * (double)nn_layer_out_size(l);   /* act, dact */
    }
    /* Parameters and gradients (assign_buffers), activations, scratch. */
    need->bytes = 8.0 * (double)(need->n_dense + 1 + need->n_embed) + acts + scratch;
    nn_model_free(m);
    free(m);
    return 0;
}

void nn_model_free(model *m)
{
    for (int i = 0; i < m->n; i++) {
        nn_layer_free(&m->L[i]);
        free(m->act[i]);
        free(m->dact[i]);
    }
    free(m->params);
    free(m->grads);
    free(m->eparams);
    free(m->egrads);
    memset(m, 0, sizeof *m);
}

size_t nn_model_in_size(const model *m) { return nn_layer_in_size(&m->L[0]); }

double nn_model_flops(const model *m)
{
    double f = 0.0;
    for (int i = 0; i < m->n; i++)
        f += nn_layer_flops(&m->L[i]);
    return f;
}

double nn_model_forward(model *m, const void *x, const int32_t *y, int batch, int *correct)
{
    const void *in = x;
    for (int i = 0; i < m->n; i++) {
        nn_layer_forward(&m->L[i], in, m->act[i], batch);
        in = m->act[i];
    }
    return nn_softmax_xent(m->act[m->n - 1], y, batch, m->classes, m->dact[m->n - 1], batch, correct);
}

void nn_model_backward(model *m, const void *x, const int32_t *y, int batch)
{
    (void)y;   /* the loss gradient was written by nn_model_forward */
    for (int i = m->n - 1; i >= 0; i--) {
        const void *in = i ? (const void *)m->act[i - 1] : x;
        float *din = i ? m->dact[i - 1] : NULL;
        nn_layer_backward(&m->L[i], in, m->act[i], m->dact[i], din, batch);
        if (i)
            nn_model_run_backward_hook();
    }
}
