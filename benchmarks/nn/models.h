/* rb_train's models: a stack of layers over flat parameter / gradient
 * buffers.  Every dense parameter lives in one buffer (params, grads: n_dense
 * floats) so one reducer call aggregates them all; the embedding table of
 * wordlm has its own buffers (vocab x dim), whose gradient is row-sparse. */
#ifndef NN_MODELS_H
#define NN_MODELS_H

#include "layers.h"

#define MODEL_MAX_LAYERS 16

typedef struct model_shape {
    int c, h, w;        /* image input (HWC); ignored by wordlm */
    int classes;        /* outputs (wordlm: vocabulary size) */
    int ctx, embed_dim, hidden;   /* wordlm, embedlm */
    int vocab;          /* embedlm: embedding rows (its outputs are the classes) */
} model_shape;

typedef struct model {
    char name[16];
    int n;                       /* layers */
    layer L[MODEL_MAX_LAYERS];
    int classes, max_batch;
    size_t n_dense, n_embed;
    float *params, *grads;       /* dense parameters / gradients */
    float *eparams, *egrads;     /* embedding table / gradient (NULL unless wordlm, embedlm) */
    float *act[MODEL_MAX_LAYERS];  /* output of layer i */
    float *dact[MODEL_MAX_LAYERS]; /* gradient w.r.t. output of layer i */
} model;

/* What a model of a shape holds, known before it is built. */
typedef struct model_need {
    size_t n_dense, n_embed;   /* parameters */
    size_t in_floats;          /* input floats per sample */
    double bytes;              /* parameters, gradients, activations, layer scratch */
} model_need;

/* The need of nn_model_build(name, s, max_batch) without allocating it (only
 * its layers at one sample, freed again); 0, or -1 with err filled where
 * nn_model_build would refuse the shape. */
int nn_model_memory_need(const char *name, const model_shape *s, int max_batch, model_need *need,
                      char *err, size_t errlen);

/* name: mlp | lenet | wordlm | embedlm.  Parameters initialised from seed (the same
 * on every rank).  0 on success, -1 with err filled. */
int nn_model_build(model *m, const char *name, const model_shape *s, int max_batch, uint64_t seed,
                char *err, size_t errlen);
void nn_model_free(model *m);
size_t nn_model_in_size(const model *m);   /* floats (or int32 ids) per sample */
double nn_model_flops(const model *m);     /* forward flops per sample */

/* Forward pass; returns the summed loss over the batch and counts correct. */
double nn_model_forward(model *m, const void *x, const int32_t *y, int batch, int *correct);
/* Backward of the last forward: fills grads (and egrads, accumulated:
 * the caller zeroes it) with the gradient of the mean loss. */
void nn_model_backward(model *m, const void *x, const int32_t *y, int batch);
/* Called between layers during backward (e.g. rb_progress); may be NULL. */
void nn_model_set_backward_hook(void (*fn)(void *), void *ctx);
/* Call that hook (the GPU models run it between their layers too). */
void nn_model_run_backward_hook(void);

/* Deterministic random numbers (splitmix64). */
uint64_t nn_rng_next(uint64_t *state);
double nn_rng_uniform(uint64_t *state);   /* [0, 1) */

#endif
