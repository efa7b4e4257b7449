/* rb_train's models on a GPU with cuDNN and cuBLAS (see gpu_model.h).
 *
 * cuDNN's classic descriptor API (cudnnConvolutionForward & co.) is used,
 * not the graph API: it exists from cuDNN 7 to 9, so a P100 cluster with an
 * older toolkit builds the same file.  Descriptors are set for one batch
 * size and set again when it changes (the last evaluation batch).
 * Activations are NHWC like the CPU layers, the convolution filter is
 * KRSC (cuDNN's NHWC filter format), which is the CPU layout
 * W[out][ky][kx][in]; a dense weight W[out][in] row-major is column-major
 * W^T for cuBLAS. */
#include "gpu_model.h"
#include "gpu_kernels.h"
#include "reducer_cuda.h"   /* libreducer's threshold and top-k kernels */

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_layer {
    const layer *h;                       /* host layer: shapes */
    float *w, *b, *dw, *db;               /* device views */
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t filter;
    cudnnConvolutionDescriptor_t conv;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    int batch;                            /* descriptors set for this batch (0: none) */
} gpu_layer;

struct gpu_model {
    const model *host;
    int n, classes, max_batch;
    size_t n_dense, n_embed, in_size;
    gpu_layer L[MODEL_MAX_LAYERS];
    float *params, *grads, *velocity, *eparams, *egrads, *evelocity;
    float *act[MODEL_MAX_LAYERS], *dact[MODEL_MAX_LAYERS];
    void *x;                              /* input batch (floats or int32 ids) */
    int32_t *y, *correct;
    float *loss, *ones;
    float *host_loss;
    int32_t *host_correct;
    void *workspace;
    size_t workspace_bytes;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
};

int nn_gpu_model_available(void) { return 1; }

/* ------------------------------------------------------------- errors */
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return fail(err, errlen, "%s: %s", #call, cudaGetErrorString(e_));                 \
    } while (0)
#define DNN_OK(call)                                                                           \
    do {                                                                                       \
        cudnnStatus_t s_ = (call);                                                             \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                        \
            return fail(err, errlen, "%s: %s", #call, cudnnGetErrorString(s_));               \
    } while (0)
#define BLAS_OK(call)                                                                          \
    do {                                                                                       \
        cublasStatus_t s_ = (call);                                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return fail(err, errlen, "%s: cuBLAS status %d", #call, (int)s_);                  \
    } while (0)
#define KERNEL_OK(call)                                                                        \
    do {                                                                                       \
        int k_ = (call);                                                                       \
        if (k_ != 0)                                                                           \
            return fail(err, errlen, "%s: %s", #call, cudaGetErrorString((cudaError_t)k_));    \
    } while (0)

static const float one = 1.0f, zero = 0.0f;

/* -------------------------------------------------------- allocation */
static int dalloc(void *p, size_t bytes, char *err, size_t errlen)
{
    void **out = p;
    cudaError_t e = cudaMalloc(out, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *out = NULL;
        return fail(err, errlen, "cannot allocate %zu bytes on the GPU: %s", bytes,
                    cudaGetErrorString(e));
    }
    return 0;
}

static int ensure_workspace(gpu_model *g, size_t bytes, char *err, size_t errlen)
{
    if (bytes <= g->workspace_bytes)
        return 0;
    cudaFree(g->workspace);
    g->workspace = NULL, g->workspace_bytes = 0;
    if (dalloc(&g->workspace, bytes, err, errlen))
        return -1;
    g->workspace_bytes = bytes;
    return 0;
}

/* ----------------------------------------------------- descriptors */
static int nhwc(cudnnTensorDescriptor_t d, int n, int c, int h, int w, char *err, size_t errlen)
{
    DNN_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, w));
    return 0;
}

static int create_descriptors(gpu_layer *l, char *err, size_t errlen)
{
    DNN_OK(cudnnCreateTensorDescriptor(&l->x));
    DNN_OK(cudnnCreateTensorDescriptor(&l->y));
    const layer *h = l->h;
    switch (h->kind) {
    case LAYER_CONV:
        DNN_OK(cudnnCreateTensorDescriptor(&l->bias));
        DNN_OK(cudnnCreateFilterDescriptor(&l->filter));
        DNN_OK(cudnnCreateConvolutionDescriptor(&l->conv));
        DNN_OK(cudnnSetFilter4dDescriptor(l->filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, h->out_c,
                                          h->in_c, h->k, h->k));
        DNN_OK(cudnnSetConvolution2dDescriptor(l->conv, h->pad, h->pad, 1, 1, 1, 1,
                                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
#if CUDNN_MAJOR >= 8
        /* Plain FP32 FMA: no TF32 tensor cores (Ampere and later would use
         * them by default and lose ~3 decimal digits against the CPU). */
        DNN_OK(cudnnSetConvolutionMathType(l->conv, CUDNN_FMA_MATH));
#endif
        return nhwc(l->bias, 1, h->out_c, 1, 1, err, errlen);
    case LAYER_MAXPOOL:
        DNN_OK(cudnnCreatePoolingDescriptor(&l->pool));
        /* Deterministic: the gradient goes to one maximum per window (which
         * one of tied maxima is not documented; the CPU takes the first). */
        DNN_OK(cudnnSetPooling2dDescriptor(l->pool, CUDNN_POOLING_MAX_DETERMINISTIC,
                                           CUDNN_NOT_PROPAGATE_NAN, h->k, h->k, 0, 0, h->k, h->k));
        return 0;
    case LAYER_RELU:
        DNN_OK(cudnnCreateActivationDescriptor(&l->act));
        DNN_OK(cudnnSetActivationDescriptor(l->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN,
                                            0.0));
        return 0;
    default:
        return 0;
    }
}

static void destroy_descriptors(gpu_layer *l)
{
    if (l->x)
        cudnnDestroyTensorDescriptor(l->x);
    if (l->y)
        cudnnDestroyTensorDescriptor(l->y);
    if (l->bias)
        cudnnDestroyTensorDescriptor(l->bias);
    if (l->filter)
        cudnnDestroyFilterDescriptor(l->filter);
    if (l->conv)
        cudnnDestroyConvolutionDescriptor(l->conv);
    if (l->pool)
        cudnnDestroyPoolingDescriptor(l->pool);
    if (l->act)
        cudnnDestroyActivationDescriptor(l->act);
}

/* Plain FP32 math of a heuristics result (CUDNN_FMA_MATH is cuDNN 8's name). */
#if CUDNN_MAJOR >= 8
#define RB_PLAIN_FP32(perf) ((perf).mathType == CUDNN_FMA_MATH)
#else
#define RB_PLAIN_FP32(perf) ((perf).mathType == CUDNN_DEFAULT_MATH)
#endif

/* idx = the first result of cuDNN's heuristics (perf[0..got)) it can run
 * that is deterministic and in FMA math, else the first in FMA math, else
 * the first it can run at all, else got.  Backward ALGO_0 (filter, data)
 * and filter ALGO_3 add with atomics, so the same seed would not give the
 * same run; a math type other than FMA would be TF32 on Ampere and later,
 * off from the CPU by more than the agreement tests allow. */
#define PICK_ALGO(perf, got, idx) do {                                                   \
        (idx) = (got);                                                                   \
        for (int pass_ = 0; pass_ < 3 && (idx) == (got); pass_++)                        \
            for (int k_ = 0; k_ < (got) && (idx) == (got); k_++)                         \
                if ((perf)[k_].status == CUDNN_STATUS_SUCCESS &&                         \
                    (pass_ > 0 || (perf)[k_].determinism == CUDNN_DETERMINISTIC) &&      \
                    (pass_ > 1 || RB_PLAIN_FP32((perf)[k_])))                            \
                    (idx) = k_;                                                          \
    } while (0)

/* The first algorithms cuDNN's heuristics list for these shapes (PICK_ALGO);
 * backward data only when the layer passes a gradient down (not the first
 * layer: a 1-channel NHWC input is where cuDNN is likeliest to offer none). */
static int choose_conv_algos(gpu_model *g, gpu_layer *l, int need_dx, char *err, size_t errlen)
{
    int got = 0, i;
    size_t ws = 0, need;
    cudnnConvolutionFwdAlgoPerf_t f[8];
    DNN_OK(cudnnGetConvolutionForwardAlgorithm_v7(g->dnn, l->x, l->filter, l->conv, l->y, 8, &got,
                                                  f));
    PICK_ALGO(f, got, i);
    if (i == got)
        return fail(err, errlen, "cuDNN offers no forward convolution for %dx%dx%d NHWC", l->h->in_h,
                    l->h->in_w, l->h->in_c);
    l->fwd = f[i].algo;
    DNN_OK(cudnnGetConvolutionForwardWorkspaceSize(g->dnn, l->x, l->filter, l->conv, l->y, l->fwd,
                                                   &need));
    ws = need > ws ? need : ws;
    if (need_dx) {
        cudnnConvolutionBwdDataAlgoPerf_t d[8];
        DNN_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(g->dnn, l->filter, l->y, l->conv, l->x,
                                                           8, &got, d));
        PICK_ALGO(d, got, i);
        if (i == got)
            return fail(err, errlen, "cuDNN offers no backward-data convolution for this layer");
        l->bwd_data = d[i].algo;
        DNN_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(g->dnn, l->filter, l->y, l->conv, l->x,
                                                            l->bwd_data, &need));
        ws = need > ws ? need : ws;
    }
    cudnnConvolutionBwdFilterAlgoPerf_t w[8];
    DNN_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(g->dnn, l->x, l->y, l->conv, l->filter, 8,
                                                         &got, w));
    PICK_ALGO(w, got, i);
    if (i == got)
        return fail(err, errlen, "cuDNN offers no backward-filter convolution for this layer");
    l->bwd_filter = w[i].algo;
    DNN_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(g->dnn, l->x, l->y, l->conv, l->filter,
                                                          l->bwd_filter, &need));
    ws = need > ws ? need : ws;
    return ensure_workspace(g, ws, err, errlen);
}

/* (Re)set the tensor descriptors of every cuDNN layer for this batch. */
static int set_batch(gpu_model *g, int batch, char *err, size_t errlen)
{
    for (int i = 0; i < g->n; i++) {
        gpu_layer *l = &g->L[i];
        const layer *h = l->h;
        if (l->batch == batch || h->kind == LAYER_DENSE || h->kind == LAYER_EMBED)
            continue;
        if (nhwc(l->x, batch, h->in_c, h->in_h, h->in_w, err, errlen) ||
            nhwc(l->y, batch, h->out_c, h->out_h, h->out_w, err, errlen))
            return -1;
        /* nn_gpu_model_backward passes no input gradient to layer 0 */
        if (h->kind == LAYER_CONV && choose_conv_algos(g, l, i > 0, err, errlen))
            return -1;
        l->batch = batch;
    }
    return 0;
}

/* ------------------------------------------------------------ layers */
static int dense_forward(gpu_model *g, gpu_layer *l, const float *x, float *y, int batch,
                         char *err, size_t errlen)
{
    int in = l->h->in_c, out = l->h->out_c;
    KERNEL_OK(nn_gpu_broadcast_rows(l->b, y, batch, out));
    /* y^T[out x batch] += W^T^T x^T, column-major */
    BLAS_OK(cublasSgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, out, batch, in, &one, l->w, in, x, in,
                        &one, y, out));
    return 0;
}

static int dense_backward(gpu_model *g, gpu_layer *l, const float *x, const float *dy, float *dx,
                          int batch, char *err, size_t errlen)
{
    int in = l->h->in_c, out = l->h->out_c;
    BLAS_OK(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, batch, &one, x, in, dy, out,
                        &zero, l->dw, in));
    BLAS_OK(cublasSgemv(g->blas, CUBLAS_OP_N, out, batch, &one, dy, out, g->ones, 1, &zero, l->db,
                        1));
    if (dx)
        BLAS_OK(cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, in, batch, out, &one, l->w, in, dy,
                            out, &zero, dx, in));
    return 0;
}

static int conv_forward(gpu_model *g, gpu_layer *l, const float *x, float *y, char *err,
                        size_t errlen)
{
    DNN_OK(cudnnConvolutionForward(g->dnn, &one, l->x, x, l->filter, l->w, l->conv, l->fwd,
                                   g->workspace, g->workspace_bytes, &zero, l->y, y));
    DNN_OK(cudnnAddTensor(g->dnn, &one, l->bias, l->b, &one, l->y, y));
    return 0;
}

static int conv_backward(gpu_model *g, gpu_layer *l, const float *x, const float *dy, float *dx,
                         char *err, size_t errlen)
{
    DNN_OK(cudnnConvolutionBackwardBias(g->dnn, &one, l->y, dy, &zero, l->bias, l->db));
    DNN_OK(cudnnConvolutionBackwardFilter(g->dnn, &one, l->x, x, l->y, dy, l->conv, l->bwd_filter,
                                          g->workspace, g->workspace_bytes, &zero, l->filter,
                                          l->dw));
    if (dx)
        DNN_OK(cudnnConvolutionBackwardData(g->dnn, &one, l->filter, l->w, l->y, dy, l->conv,
                                            l->bwd_data, g->workspace, g->workspace_bytes, &zero,
                                            l->x, dx));
    return 0;
}

static int layer_fwd(gpu_model *g, gpu_layer *l, const void *in, float *out, int batch, char *err,
                     size_t errlen)
{
    const layer *h = l->h;
    switch (h->kind) {
    case LAYER_DENSE: return dense_forward(g, l, in, out, batch, err, errlen);
    case LAYER_CONV: return conv_forward(g, l, in, out, err, errlen);
    case LAYER_MAXPOOL:
        DNN_OK(cudnnPoolingForward(g->dnn, l->pool, &one, l->x, in, &zero, l->y, out));
        return 0;
    case LAYER_RELU:
        DNN_OK(cudnnActivationForward(g->dnn, l->act, &one, l->x, in, &zero, l->y, out));
        return 0;
    case LAYER_EMBED:
        KERNEL_OK(nn_gpu_embed_forward(in, (size_t)batch * (size_t)h->ctx, l->w, h->out_c / h->ctx, out));
        return 0;
    }
    return fail(err, errlen, "unknown layer kind %d", (int)h->kind);
}

static int layer_bwd(gpu_model *g, gpu_layer *l, const void *in, const float *out,
                     const float *dout, float *din, int batch, char *err, size_t errlen)
{
    const layer *h = l->h;
    switch (h->kind) {
    case LAYER_DENSE: return dense_backward(g, l, in, dout, din, batch, err, errlen);
    case LAYER_CONV: return conv_backward(g, l, in, dout, din, err, errlen);
    case LAYER_MAXPOOL:
        if (din)
            DNN_OK(cudnnPoolingBackward(g->dnn, l->pool, &one, l->y, out, l->y, dout, l->x, in,
                                        &zero, l->x, din));
        return 0;
    case LAYER_RELU:
        if (din)
            DNN_OK(cudnnActivationBackward(g->dnn, l->act, &one, l->y, out, l->y, dout, l->x, in,
                                           &zero, l->x, din));
        return 0;
    case LAYER_EMBED:
        KERNEL_OK(nn_gpu_embed_backward(in, (size_t)batch * (size_t)h->ctx, dout, h->out_c / h->ctx,
                                    l->dw));
        return 0;
    }
    return fail(err, errlen, "unknown layer kind %d", (int)h->kind);
}

/* ------------------------------------------------------------- model */
static int copy_in(void *dev, const void *host, size_t bytes, char *err, size_t errlen)
{
    CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    return 0;
}

/* Device views at the host model's offsets. */
static void map_layer(gpu_model *g, gpu_layer *l, const layer *h)
{
    const model *m = g->host;
    l->h = h;
    if (h->kind == LAYER_EMBED) {
        l->w = g->eparams, l->dw = g->egrads;
    } else if (h->n_w) {
        l->w = g->params + (h->w - m->params), l->dw = g->grads + (h->w - m->params);
        l->b = g->params + (h->b - m->params), l->db = g->grads + (h->b - m->params);
    }
}

static int alloc_buffers(gpu_model *g, const model *m, char *err, size_t errlen)
{
    size_t B = (size_t)m->max_batch;
    if (dalloc(&g->params, g->n_dense * sizeof(float), err, errlen) ||
        dalloc(&g->grads, g->n_dense * sizeof(float), err, errlen) ||
        dalloc(&g->velocity, g->n_dense * sizeof(float), err, errlen) ||
        dalloc(&g->x, B * g->in_size * sizeof(float), err, errlen) ||
        dalloc(&g->y, B * sizeof(int32_t), err, errlen) ||
        dalloc(&g->correct, B * sizeof(int32_t), err, errlen) ||
        dalloc(&g->loss, B * sizeof(float), err, errlen) ||
        dalloc(&g->ones, B * sizeof(float), err, errlen))
        return -1;
    if (g->n_embed && (dalloc(&g->eparams, g->n_embed * sizeof(float), err, errlen) ||
                       dalloc(&g->egrads, g->n_embed * sizeof(float), err, errlen) ||
                       dalloc(&g->evelocity, g->n_embed * sizeof(float), err, errlen)))
        return -1;
    for (int i = 0; i < g->n; i++) {
        size_t na = B * nn_layer_out_size(&m->L[i]) * sizeof(float);
        if (dalloc(&g->act[i], na, err, errlen) || dalloc(&g->dact[i], na, err, errlen))
            return -1;
    }
    g->host_loss = malloc(B * sizeof(float));
    g->host_correct = malloc(B * sizeof(int32_t));
    if (!g->host_loss || !g->host_correct)
        return fail(err, errlen, "out of host memory");
    return 0;
}

static int upload(gpu_model *g, const model *m, char *err, size_t errlen)
{
    size_t B = (size_t)m->max_batch;
    float *ones = malloc(B * sizeof(float));
    if (!ones)
        return fail(err, errlen, "out of host memory");
    for (size_t i = 0; i < B; i++)
        ones[i] = 1.0f;
    int rc = copy_in(g->ones, ones, B * sizeof(float), err, errlen);
    free(ones);
    if (rc || copy_in(g->params, m->params, g->n_dense * sizeof(float), err, errlen) ||
        (g->n_embed && copy_in(g->eparams, m->eparams, g->n_embed * sizeof(float), err, errlen)))
        return -1;
    CUDA_OK(cudaMemset(g->velocity, 0, g->n_dense * sizeof(float)));
    if (g->n_embed)
        CUDA_OK(cudaMemset(g->evelocity, 0, g->n_embed * sizeof(float)));
    return 0;
}

static int create_handles(gpu_model *g, char *err, size_t errlen)
{
    DNN_OK(cudnnCreate(&g->dnn));
    /* cuBLAS's default math is plain FP32 (TF32 only when asked for). */
    BLAS_OK(cublasCreate(&g->blas));
    return 0;
}

int nn_gpu_model_create(const model *m, gpu_model **out, char *err, size_t errlen)
{
    *out = NULL;
    gpu_model *g = calloc(1, sizeof *g);
    if (!g)
        return fail(err, errlen, "out of host memory");
    g->host = m, g->n = m->n, g->classes = m->classes, g->max_batch = m->max_batch;
    g->n_dense = m->n_dense, g->n_embed = m->n_embed, g->in_size = nn_model_in_size(m);
    int rc = create_handles(g, err, errlen) || alloc_buffers(g, m, err, errlen) ||
             upload(g, m, err, errlen);
    for (int i = 0; !rc && i < g->n; i++) {
        map_layer(g, &g->L[i], &m->L[i]);
        rc = create_descriptors(&g->L[i], err, errlen);
    }
    if (!rc)
        rc = set_batch(g, m->max_batch, err, errlen);
    if (rc) {
        nn_gpu_model_free(g);
        return -1;
    }
    *out = g;
    return 0;
}

void nn_gpu_model_free(gpu_model *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++) {
        destroy_descriptors(&g->L[i]);
        cudaFree(g->act[i]);
        cudaFree(g->dact[i]);
    }
    void *bufs[] = {g->params, g->grads,   g->velocity, g->eparams, g->egrads, g->evelocity,
                    g->x,      g->y,       g->correct,  g->loss,    g->ones,   g->workspace};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cudaFree(bufs[i]);
    if (g->dnn)
        cudnnDestroy(g->dnn);
    if (g->blas)
        cublasDestroy(g->blas);
    free(g->host_loss);
    free(g->host_correct);
    free(g);
}

int nn_gpu_model_forward(gpu_model *g, const void *x, const int32_t *y, int batch, double *loss,
                      int *correct, char *err, size_t errlen)
{
    if (batch < 1 || batch > g->max_batch)
        return fail(err, errlen, "batch %d outside 1..%d", batch, g->max_batch);
    if (set_batch(g, batch, err, errlen) ||
        copy_in(g->x, x, (size_t)batch * g->in_size * sizeof(float), err, errlen) ||
        copy_in(g->y, y, (size_t)batch * sizeof(int32_t), err, errlen))
        return -1;
    const void *in = g->x;
    for (int i = 0; i < g->n; i++) {
        if (layer_fwd(g, &g->L[i], in, g->act[i], batch, err, errlen))
            return -1;
        in = g->act[i];
    }
    KERNEL_OK(nn_gpu_softmax_xent(g->act[g->n - 1], g->y, batch, g->classes, g->dact[g->n - 1],
                              (float)batch, g->loss, g->correct));
    CUDA_OK(cudaMemcpy(g->host_loss, g->loss, (size_t)batch * sizeof(float),
                       cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(g->host_correct, g->correct, (size_t)batch * sizeof(int32_t),
                       cudaMemcpyDeviceToHost));
    double sum = 0.0;
    int ok = 0;
    for (int s = 0; s < batch; s++)
        sum += g->host_loss[s], ok += g->host_correct[s];
    *loss = sum, *correct = ok;
    return 0;
}

int nn_gpu_model_backward(gpu_model *g, int batch, char *err, size_t errlen)
{
    if (g->egrads)
        CUDA_OK(cudaMemsetAsync(g->egrads, 0, g->n_embed * sizeof(float), 0));
    for (int i = g->n - 1; i >= 0; i--) {
        const void *in = i ? (const void *)g->act[i - 1] : g->x;
        float *din = i ? g->dact[i - 1] : NULL;
        if (layer_bwd(g, &g->L[i], in, g->act[i], g->dact[i], din, batch, err, errlen))
            return -1;
        if (i)
            nn_model_run_backward_hook();
    }
    CUDA_OK(cudaDeviceSynchronize());
    return 0;
}

int nn_gpu_model_update(gpu_model *g, double lr, double mu, double wd, char *err, size_t errlen)
{
    KERNEL_OK(nn_gpu_sgd(g->params, g->grads, g->velocity, g->n_dense, (float)lr, (float)mu,
                     (float)wd));
    if (g->n_embed)
        KERNEL_OK(nn_gpu_sgd(g->eparams, g->egrads, g->evelocity, g->n_embed, (float)lr, (float)mu,
                         0.0f));
    CUDA_OK(cudaDeviceSynchronize());
    return 0;
}

float *nn_gpu_model_params(gpu_model *g) { return g->params; }
float *nn_gpu_model_grads(gpu_model *g) { return g->grads; }
float *nn_gpu_model_eparams(gpu_model *g) { return g->eparams; }
float *nn_gpu_model_egrads(gpu_model *g) { return g->egrads; }

/* ------------------------------------------------------ sparsification */
struct gpu_sparsifier {
    size_t n;
    float *residual;        /* NULL without error feedback */
    unsigned int *hist;     /* 256 bins for rbk_topk_threshold */
};

int nn_gpu_sparsifier_create(size_t n, int error_feedback, gpu_sparsifier **out, char *err,
                          size_t errlen)
{
    gpu_sparsifier *s = *out = calloc(1, sizeof *s);
    if (!s)
        return fail(err, errlen, "no memory");
    s->n = n;
    if (dalloc(&s->hist, 256 * sizeof *s->hist, err, errlen))
        return -1;
    if (error_feedback) {
        if (dalloc(&s->residual, n * sizeof(float), err, errlen))
            return -1;
        CUDA_OK(cudaMemset(s->residual, 0, n * sizeof(float)));
    }
    return 0;
}

int nn_gpu_sparsify(gpu_sparsifier *s, float *dgrad, int topk, double value, char *err,
                 size_t errlen)
{
    if (s->n == 0)
        return 0;
    float t = (float)value;
    if (s->residual)   /* threshold 0 keeps everything: g += residual, residual = 0 */
        KERNEL_OK(rbk_threshold(dgrad, s->residual, s->n, 0.0f, 0));
    if (topk) {
        size_t k = (size_t)ceil(value * (double)s->n);
        KERNEL_OK(rbk_topk_threshold(dgrad, s->n, k < 1 ? 1 : k > s->n ? s->n : k, &t,
                                     s->hist, 0));
        if (t == 0.0f)
            t = 1e-38f;   /* as the host code: never send zeros as selected entries */
    }
    KERNEL_OK(rbk_threshold(dgrad, s->residual, s->n, t, 0));
    CUDA_OK(cudaDeviceSynchronize());
    return 0;
}

void nn_gpu_sparsifier_free(gpu_sparsifier *s)
{
    if (!s)
        return;
    cudaFree(s->residual);
    cudaFree(s->hist);
    free(s);
}

int nn_gpu_copy_to_host(float *host, const float *dev, size_t n)
{
    return cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

int nn_gpu_copy_to_device(float *dev, const float *host, size_t n)
{
    return cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

int nn_gpu_model_download(gpu_model *g, model *m)
{
    if (nn_gpu_copy_to_host(m->params, g->params, g->n_dense))
        return -1;
    return g->n_embed ? nn_gpu_copy_to_host(m->eparams, g->eparams, g->n_embed) : 0;
}

const char *nn_gpu_model_libraries(void)
{
    static char buf[96];
    size_t v = cudnnGetVersion();
    size_t major = v >= 90000 ? v / 10000 : v / 1000;   /* cuDNN 9 went to 5 digits */
    size_t minor = v >= 90000 ? v / 100 % 100 : v / 100 % 10;
    int b[3] = {0, 0, 0};
    cublasGetProperty(MAJOR_VERSION, &b[0]);
    cublasGetProperty(MINOR_VERSION, &b[1]);
    cublasGetProperty(PATCH_LEVEL, &b[2]);
    snprintf(buf, sizeof buf, "cuDNN %zu.%zu.%zu, cuBLAS %d.%d.%d", major, minor, v % 100, b[0],
             b[1], b[2]);
    return buf;
}
