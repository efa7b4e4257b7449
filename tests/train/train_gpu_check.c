/* CPU/GPU agreement of rb_train's models: for mlp, lenet (MNIST and CIFAR
 * shapes) and wordlm, the same parameters and batch go through the host
 * layers (OpenBLAS) and the GPU mirror (cuDNN, cuBLAS, gpu_kernels.cu);
 * the loss and correct count of a short batch and then of a full one
 * (descriptors reset between), every layer's gradients, and the change of
 * every layer in the second of two momentum-SGD steps (velocity non-zero,
 * weight decay 0.05) must agree, embeddings included.
 *
 * Tolerance: max |gpu - cpu| <= 1e-3 x max |cpu| per layer's weights or
 * biases (FP32 sums in another order over up to 50k terms: errors seen are
 * ~1e-6 relative), loss within 1e-5 relative.  Without a GPU: exit 77
 * with the reason. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gpu_model.h"
#include "nn/models.h"
#include "reducer.h"

#define REL_TOL 1e-3
#define LOSS_TOL 1e-5

static int failures;

static double max_abs(const float *v, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)v[i]));
    return m;
}

static void compare(const char *what, const char *name, const float *cpu, const float *gpu,
                    size_t n)
{
    double scale = max_abs(cpu, n), err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)cpu[i] - (double)gpu[i]);
        if (isnan(d) || d > err)   /* fmax would drop a NaN: keep it, so it fails */
            err = d;
    }
    int ok = err <= REL_TOL * scale && scale > 0.0;
    printf("%-7s %-14s max |cpu| %.3e  max abs. diff %.3e (%.1e relative)  %s\n", what, name,
           scale, err, scale > 0 ? err / scale : 0.0, ok ? "ok" : "FAIL");
    failures += !ok;
}

/* Random inputs: images in [0,1), ids in [0,vocab), labels in [0,classes). */
static void make_batch(const model *m, int batch, int vocab, uint64_t *st, float *x, int32_t *y)
{
    size_t in = nn_model_in_size(m) * (size_t)batch;
    int32_t *ids = (int32_t *)x;
    for (size_t i = 0; i < in; i++) {
        if (m->L[0].kind == LAYER_EMBED)
            ids[i] = (int32_t)(nn_rng_next(st) % (uint64_t)vocab);
        else
            x[i] = (float)nn_rng_uniform(st);
    }
    for (int s = 0; s < batch; s++)
        y[s] = (int32_t)(nn_rng_next(st) % (uint64_t)m->classes);
}

static void sgd_host(float *w, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = mu * v[i] + g[i] + wd * w[i];
        w[i] -= lr * v[i];
    }
}

/* Values of two buffers laid out as the model buffer `base` (params,
 * grads, eparams or egrads, n floats) compared layer by layer, weights and
 * biases apart: one bound for a whole buffer lets a small layer's error
 * hide under a large layer's values. */
static void compare_by_layer(const model *m, const char *name, const char *what,
                             const float *base, size_t n, const float *cpu, const float *gpu)
{
    for (int i = 0; i < m->n; i++) {
        const layer *l = &m->L[i];
        const float *views[4] = {l->w, l->b, l->dw, l->db};
        const size_t counts[4] = {l->n_w, l->n_b, l->n_w, l->n_b};
        for (int j = 0; j < 4; j++) {
            uintptr_t p = (uintptr_t)views[j], lo = (uintptr_t)base;
            if (!views[j] || counts[j] == 0 || p < lo || p >= lo + n * sizeof(float))
                continue;
            size_t off = (p - lo) / sizeof(float);
            char label[40];
            snprintf(label, sizeof label, "%s L%d.%c", what, i, j % 2 ? 'b' : 'w');
            compare(name, label, cpu + off, gpu + off, counts[j]);
        }
    }
}

static int gpu_failed(int rc, const char *name, const char *err)
{
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, err);
        failures++;
    }
    return rc;
}

/* Two momentum-SGD steps on the gradients of the last backward: the
 * velocity is not zero in the second, and the weight decay is large
 * enough to matter, so the second step's change of each layer shows a
 * wrong momentum or decay term (the parameters themselves hardly move). */
static void check_update(model *m, gpu_model *g, const char *name)
{
    const float lr = 0.05f, mu = 0.9f, wd = 0.05f;
    struct { float *cpu, *grad, *dev; size_t n; float wd; const char *what; } buf[2] = {
        {m->params, m->grads, nn_gpu_model_params(g), m->n_dense, wd, "SGD step 2"},
        {m->eparams, m->egrads, nn_gpu_model_eparams(g), m->n_embed, 0.0f, "embed SGD step 2"}};
    float *vel[2], *before_cpu[2], *before_gpu[2], *after_gpu[2];
    for (int b = 0; b < 2; b++) {
        size_t n = buf[b].n + 1;
        vel[b] = calloc(n, sizeof(float));
        before_cpu[b] = malloc(n * sizeof(float));
        before_gpu[b] = malloc(n * sizeof(float));
        after_gpu[b] = malloc(n * sizeof(float));
    }
    char err[512];
    for (int step = 0; step < 2; step++) {
        for (int b = 0; b < 2 && buf[b].n; b++) {
            memcpy(before_cpu[b], buf[b].cpu, buf[b].n * sizeof(float));
            nn_gpu_copy_to_host(before_gpu[b], buf[b].dev, buf[b].n);
            sgd_host(buf[b].cpu, buf[b].grad, vel[b], buf[b].n, lr, mu, buf[b].wd);
        }
        if (gpu_failed(nn_gpu_model_update(g, lr, mu, wd, err, sizeof err), name, err))
            break;
        for (int b = 0; b < 2 && buf[b].n && step == 1; b++) {
            nn_gpu_copy_to_host(after_gpu[b], buf[b].dev, buf[b].n);
            for (size_t i = 0; i < buf[b].n; i++) {   /* the changes */
                before_cpu[b][i] -= buf[b].cpu[i];
                before_gpu[b][i] -= after_gpu[b][i];
            }
            compare_by_layer(m, name, buf[b].what, buf[b].cpu, buf[b].n, before_cpu[b],
                             before_gpu[b]);
            compare(name, b ? "embed params" : "params", buf[b].cpu, after_gpu[b], buf[b].n);
        }
    }
    for (int b = 0; b < 2; b++)
        free(vel[b]), free(before_cpu[b]), free(before_gpu[b]), free(after_gpu[b]);
}

/* Loss and correct count of one forward on both sides. */
static void check_forward(model *m, gpu_model *g, const char *name, const float *x,
                          const int32_t *y, int batch)
{
    char err[512], label[32];
    int c_cpu = 0, c_gpu = 0;
    double l_cpu = nn_model_forward(m, x, y, batch, &c_cpu), l_gpu = 0.0;
    if (gpu_failed(nn_gpu_model_forward(g, x, y, batch, &l_gpu, &c_gpu, err, sizeof err), name, err))
        return;
    int ok = fabs(l_gpu - l_cpu) <= LOSS_TOL * fabs(l_cpu) && c_cpu == c_gpu;
    snprintf(label, sizeof label, "loss (%d)", batch);
    printf("%-7s %-14s cpu %.6f (%d correct)  gpu %.6f (%d correct)  %s\n", name, label, l_cpu,
           c_cpu, l_gpu, c_gpu, ok ? "ok" : "FAIL");
    failures += !ok;
}

static int check_model(const char *name, const model_shape *shape, int batch)
{
    char err[1024];
    model m;
    if (nn_model_build(&m, name, shape, batch, 7, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", name, err);
        return 1;
    }
    gpu_model *g;
    if (nn_gpu_model_create(&m, &g, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", name, err);
        nn_model_free(&m);
        return 1;
    }
    uint64_t st = 12345;
    float *x = malloc(nn_model_in_size(&m) * (size_t)batch * sizeof(float));
    int32_t *y = malloc((size_t)batch * sizeof(int32_t));
    float *buf = malloc((m.n_dense + m.n_embed + 1) * sizeof(float));
    make_batch(&m, batch, shape->classes, &st, x, y);

    /* A short batch first (an evaluation's last one), so the full batch
     * below runs on descriptors and algorithms chosen anew. */
    check_forward(&m, g, name, x, y, batch - 5);
    check_forward(&m, g, name, x, y, batch);
    if (m.egrads)
        memset(m.egrads, 0, m.n_embed * sizeof(float));
    nn_model_backward(&m, x, y, batch);
    if (!gpu_failed(nn_gpu_model_backward(g, batch, err, sizeof err), name, err)) {
        nn_gpu_copy_to_host(buf, nn_gpu_model_grads(g), m.n_dense);
        compare_by_layer(&m, name, "grad", m.grads, m.n_dense, m.grads, buf);
        if (m.n_embed) {
            nn_gpu_copy_to_host(buf, nn_gpu_model_egrads(g), m.n_embed);
            compare_by_layer(&m, name, "grad", m.egrads, m.n_embed, m.egrads, buf);
        }
        check_update(&m, g, name);
    }
    free(x), free(y), free(buf);
    nn_gpu_model_free(g);
    nn_model_free(&m);
    return 0;
}

/* nn_gpu_sparsify against a plain reference of rb_train's host rule, bit for
 * bit over three steps (the residual carries over): top-k keeps |g| >= the
 * k-th largest |g| (ties kept), threshold keeps |g| >= t. */
static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

static void sparsify_reference(float *g, float *res, float *tmp, size_t n, int topk,
                               double value)
{
    float t = (float)value;
    if (res)
        for (size_t i = 0; i < n; i++)
            g[i] += res[i];
    if (topk) {
        size_t k = (size_t)ceil(value * (double)n);
        for (size_t i = 0; i < n; i++)
            tmp[i] = fabsf(g[i]);
        qsort(tmp, n, sizeof *tmp, cmp_desc);
        t = tmp[(k < 1 ? 1 : k) - 1];
        if (t == 0.0f)
            t = 1e-38f;
    }
    for (size_t i = 0; i < n; i++) {
        int keep = fabsf(g[i]) >= t;
        if (res)
            res[i] = keep ? 0.0f : g[i];
        if (!keep)
            g[i] = 0.0f;
    }
}

static void check_sparsify(int topk, double value, int ef)
{
    enum { N = 100003 };
    float *g = malloc(N * sizeof *g), *res = calloc(N, sizeof *res), *tmp = malloc(N * sizeof *tmp);
    float *back = malloc(N * sizeof *back), *dg = NULL;
    gpu_sparsifier *sp = NULL;
    char err[512];
    uint64_t st = 12345;
    int bad = 0;
    if (nn_gpu_sparsifier_create(N, ef, &sp, err, sizeof err) || cudaMalloc((void **)&dg, N * 4)) {
        printf("sparsify: setup: %s\n", err);
        failures++;
        goto out;
    }
    for (int step = 0; step < 3 && !bad; step++) {
        for (size_t i = 0; i < N; i++) {   /* ties and zeros on purpose */
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            g[i] = (st >> 60) < 3 ? 0.0f : (float)((int)(st >> 52) % 512 - 256) / 64.0f;
        }
        nn_gpu_copy_to_device(dg, g, N);
        sparsify_reference(g, ef ? res : NULL, tmp, N, topk, value);
        if (nn_gpu_sparsify(sp, dg, topk, value, err, sizeof err)) {
            printf("sparsify: %s\n", err);
            bad = 1;
            break;
        }
        nn_gpu_copy_to_host(back, dg, N);
        bad = memcmp(back, g, N * sizeof *g) != 0;
    }
    printf("sparsify %s %g error feedback %d: %s\n", topk ? "topk" : "threshold", value, ef,
           bad ? "DIFFERS from the host rule" : "same bits as the host rule");
    failures += bad;
out:
    nn_gpu_sparsifier_free(sp);
    cudaFree(dg);
    free(g), free(res), free(tmp), free(back);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int dev;
    int rc = rb_device_select(MPI_COMM_WORLD, &dev);
    if (rc != RB_OK || !nn_gpu_model_available()) {
        fprintf(stderr, "SKIP: CPU/GPU model agreement needs a GPU: %s\n",
                nn_gpu_model_available() ? rb_last_error() : nn_gpu_model_libraries());
        MPI_Finalize();
        return 77;
    }
    char desc[400] = "";
    rb_device_describe(desc, sizeof desc);
    printf("GPU %d: %s; %s\n", dev, desc, nn_gpu_model_libraries());
    model_shape mnist = {1, 28, 28, 10, 0, 0, 0, 0};
    model_shape cifar = {3, 32, 32, 10, 0, 0, 0, 0};
    model_shape lm = {0, 0, 0, 2000, 3, 32, 64, 0};
    int bad = check_model("mlp", &mnist, 64) || check_model("lenet", &mnist, 64) ||
              check_model("lenet", &cifar, 32) || check_model("wordlm", &lm, 48) ||
              check_model("lenet", &mnist, 17);   /* a batch that is not a multiple of 32 */
    check_sparsify(1, 0.01, 1);
    check_sparsify(1, 0.3, 0);
    check_sparsify(0, 1.5, 1);
    MPI_Finalize();
    if (bad || failures) {
        fprintf(stderr, "%d check(s) failed\n", failures + bad);
        return 1;
    }
    return 0;
}
