/* Finite-difference checks of every layer's backward pass and of the
 * softmax cross-entropy gradient.  The scalar probed is L = sum(out * R)
 * for a fixed random R, so dL/dout = R.  Also: the small-n AVX2 GEMMs
 * against OpenBLAS.  OpenBLAS runs one thread, as rb_train's default, so
 * the convolutions with few channels take the AVX2 kernels where the CPU
 * has them. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layers.h"
#include "nn/models.h"
#include "nn/conv_avx512.h"
#include "nn/dense_avx512.h"
#include "nn/small_gemm.h"

static uint64_t rng = 42;
static float urand(void) { return (float)(2.0 * nn_rng_uniform(&rng) - 1.0); }
static int failures;

static double probe(layer *l, const void *in, float *out, const float *R, int B)
{
    nn_layer_forward(l, in, out, B);
    double s = 0.0;
    for (size_t i = 0; i < (size_t)B * nn_layer_out_size(l); i++)
        s += (double)out[i] * R[i];
    return s;
}

/* Compare analytic g[i] with the central difference of probe() in v[i]. */
static void check_vector(const char *what, layer *l, const void *in, float *out, const float *R,
                         int B, float *v, const float *g, size_t n)
{
    const float h = 1e-2f;
    double worst = 0.0;
    size_t stride = n > 400 ? n / 397 : 1;   /* sample large vectors */
    for (size_t i = 0; i < n; i += stride) {
        float keep = v[i];
        v[i] = keep + h;
        double up = probe(l, in, out, R, B);
        v[i] = keep - h;
        double down = probe(l, in, out, R, B);
        v[i] = keep;
        double fd = (up - down) / (2.0 * h);
        double err = fabs(fd - g[i]) / fmax(1.0, fabs(fd));
        if (err > worst)
            worst = err;
    }
    int ok = worst < 2e-3;
    printf("%-28s max rel. error %.2e  %s\n", what, worst, ok ? "ok" : "FAIL");
    failures += !ok;
}

/* Run forward + backward once, then check dW, db and din. */
static void check_layer(const char *name, layer *l, int B, int has_din)
{
    size_t nin = (size_t)B * nn_layer_in_size(l), nout = (size_t)B * nn_layer_out_size(l);
    float *x = malloc(nin * sizeof *x), *dx = calloc(nin, sizeof *dx);
    float *y = malloc(nout * sizeof *y), *R = malloc(nout * sizeof *R);
    float *w = NULL, *dw = NULL;
    if (l->n_w + l->n_b) {
        w = malloc((l->n_w + l->n_b) * sizeof *w), dw = calloc(l->n_w + l->n_b, sizeof *dw);
        l->w = w, l->dw = dw;
        l->b = l->n_b ? w + l->n_w : NULL, l->db = l->n_b ? dw + l->n_w : NULL;
        for (size_t i = 0; i < l->n_w + l->n_b; i++)
            w[i] = urand();
    }
    for (size_t i = 0; i < nin; i++) {
        x[i] = urand();
        if (l->kind == LAYER_RELU && fabsf(x[i]) < 0.05f)   /* stay off the kink */
            x[i] += x[i] < 0 ? -0.05f : 0.05f;
    }
    if (l->kind == LAYER_MAXPOOL)   /* distinct values: no ties within a window */
        for (size_t i = 0; i < nin; i++)
            x[i] = (float)((i * 7919) % nin) * 0.05f;
    for (size_t i = 0; i < nout; i++)
        R[i] = urand();
    nn_layer_forward(l, x, y, B);
    nn_layer_backward(l, x, y, R, has_din ? dx : NULL, B);
    char what[64];
    if (l->n_w) {
        float *g = malloc(l->n_w * sizeof *g);
        memcpy(g, dw, l->n_w * sizeof *g);
        snprintf(what, sizeof what, "%s weights", name);
        check_vector(what, l, x, y, R, B, w, g, l->n_w);
        free(g);
    }
    if (l->n_b) {
        float *g = malloc(l->n_b * sizeof *g);
        memcpy(g, dw + l->n_w, l->n_b * sizeof *g);
        snprintf(what, sizeof what, "%s bias", name);
        check_vector(what, l, x, y, R, B, w + l->n_w, g, l->n_b);
        free(g);
    }
    if (has_din && l->kind != LAYER_MAXPOOL) {
        snprintf(what, sizeof what, "%s input", name);
        check_vector(what, l, x, y, R, B, x, dx, nin);
    } else if (has_din) {
        /* Max pooling is piecewise linear: compare with the exact routing. */
        float *ref = calloc(nin, sizeof *ref);
        for (size_t o = 0; o < nout; o++)
            ref[l->argmax[o]] += R[o];
        double worst = 0.0;
        for (size_t i = 0; i < nin; i++)
            worst = fmax(worst, fabs(ref[i] - dx[i]));
        /* and one finite difference per input (values spaced 0.05 apart) */
        snprintf(what, sizeof what, "%s input", name);
        check_vector(what, l, x, y, R, B, x, dx, nin);
        failures += worst > 0;
        free(ref);
    }
    free(x), free(dx), free(y), free(R), free(w), free(dw);
}

static void check_embedding(void)
{
    layer l;
    int V = 23, D = 4, ctx = 3, B = 5;
    nn_layer_embed(&l, V, D, ctx, B);
    float *w = malloc(l.n_w * sizeof *w), *dw = calloc(l.n_w, sizeof *dw);
    l.w = w, l.dw = dw;
    for (size_t i = 0; i < l.n_w; i++)
        w[i] = urand();
    int32_t ids[15];
    for (int i = 0; i < B * ctx; i++)
        ids[i] = (int32_t)((i * 5) % V);   /* repeats: gradients must add up */
    size_t nout = (size_t)B * nn_layer_out_size(&l);
    float *y = malloc(nout * sizeof *y), *R = malloc(nout * sizeof *R);
    for (size_t i = 0; i < nout; i++)
        R[i] = urand();
    nn_layer_forward(&l, ids, y, B);
    nn_layer_backward(&l, ids, y, R, NULL, B);
    float *g = malloc(l.n_w * sizeof *g);
    memcpy(g, dw, l.n_w * sizeof *g);
    check_vector("embedding table", &l, ids, y, R, B, w, g, l.n_w);
    int rows_touched = 0;
    for (int r = 0; r < V; r++) {
        int nz = 0;
        for (int j = 0; j < D; j++)
            nz |= g[r * D + j] != 0.0f;
        rows_touched += nz;
    }
    printf("%-28s %d of %d rows non-zero  %s\n", "embedding row-sparsity", rows_touched, V,
           rows_touched < V ? "ok" : "FAIL");
    failures += rows_touched >= V;
    free(w), free(dw), free(y), free(R), free(g);
}

static void check_softmax(void)
{
    int B = 4, C = 7;
    float z[28], dz[28];
    int32_t lab[4] = {0, 3, 6, 2};
    for (int i = 0; i < B * C; i++)
        z[i] = 2.0f * urand();
    nn_softmax_xent(z, lab, B, C, dz, B, NULL);
    double worst = 0.0;
    const float h = 1e-2f;
    for (int i = 0; i < B * C; i++) {
        float keep = z[i];
        z[i] = keep + h;
        double up = nn_softmax_xent(z, lab, B, C, NULL, B, NULL) / B;
        z[i] = keep - h;
        double down = nn_softmax_xent(z, lab, B, C, NULL, B, NULL) / B;
        z[i] = keep;
        worst = fmax(worst, fabs((up - down) / (2 * h) - dz[i]));
    }
    printf("%-28s max abs. error %.2e  %s\n", "softmax cross-entropy", worst,
           worst < 1e-3 ? "ok" : "FAIL");
    failures += worst >= 1e-3;
}

/* Wide rows (the vectorised path, 16 logits at a time, and its tail)
 * against the loss and gradient computed in double with libm's exp:
 * logits spread over +-40 so that some terms underflow, a tie for the
 * largest logit (the first one is the prediction), and a label whose
 * probability is ~e^-80. */
static void check_softmax_wide(void)
{
    enum { B = 3, C = 1003 };
    float *z = malloc(B * C * sizeof *z), *dz = malloc(B * C * sizeof *dz);
    int32_t lab[B] = {5, 1002, 17};
    for (int i = 0; i < B * C; i++)
        z[i] = 40.0f * urand();
    z[0 * C + 900] = z[0 * C + 901] = 45.0f;   /* tie: 900 is the prediction */
    lab[0] = 900;
    z[2 * C + 17] = -41.0f;
    int correct = -1;
    double loss = nn_softmax_xent(z, lab, B, C, dz, B, &correct), ref_loss = 0.0, worst = 0.0;
    int ref_correct = 0;
    for (int s = 0; s < B; s++) {
        const float *r = z + (size_t)s * C;
        int arg = 0;
        for (int c = 1; c < C; c++)
            if (r[c] > r[arg])
                arg = c;
        double sum = 0.0;
        for (int c = 0; c < C; c++)
            sum += exp((double)r[c] - r[arg]);
        double logsum = log(sum) + r[arg];
        ref_loss += logsum - r[lab[s]];
        ref_correct += arg == lab[s];
        for (int c = 0; c < C; c++) {
            double g = (exp((double)r[c] - logsum) - (c == lab[s])) / B;
            worst = fmax(worst, fabs(g - dz[(size_t)s * C + c]));
        }
    }
    double loss_err = fabs(loss - ref_loss) / ref_loss;
    int ok = loss_err < 1e-6 && worst < 1e-7 && correct == ref_correct && ref_correct == 1;
    printf("%-28s loss rel. error %.1e, gradient abs. error %.1e, %d correct  %s\n",
           "softmax, 1003 classes", loss_err, worst, correct, ok ? "ok" : "FAIL");
    failures += !ok;
    free(z), free(dz);
}

/* Central difference of the mean loss in the parameter *v, step h. */
static double model_difference(model *m, const float *x, const int32_t *y, int B, float *v, float h)
{
    float keep = *v;
    *v = keep + h;
    double up = nn_model_forward(m, x, y, B, NULL) / B;
    *v = keep - h;
    double down = nn_model_forward(m, x, y, B, NULL) / B;
    *v = keep;
    return (up - down) / (2.0 * h);
}

/* Whole models: gradient of the mean loss w.r.t. sampled parameters. */
static void check_model(const char *name, const model_shape *s, int B)
{
    model m;
    char err[256];
    if (nn_model_build(&m, name, s, B, 7, err, sizeof err) < 0) {
        printf("%s: %s\n", name, err);
        failures++;
        return;
    }
    size_t nin = (size_t)B * nn_model_in_size(&m);
    float *x = malloc(nin * sizeof *x);
    int32_t *ids = (int32_t *)(void *)x, y[8];
    for (size_t i = 0; i < nin; i++) {
        if (m.n_embed)
            ids[i] = (int32_t)((i * 11) % (size_t)s->classes);
        else
            x[i] = urand();
    }
    for (int i = 0; i < B; i++)
        y[i] = (int32_t)((i * 3) % s->classes);
    if (m.egrads)
        memset(m.egrads, 0, m.n_embed * sizeof(float));
    nn_model_forward(&m, x, y, B, NULL);
    nn_model_backward(&m, x, y, B);
    float *buf[2] = {m.params, m.eparams}, *grad[2] = {m.grads, m.egrads};
    size_t len[2] = {m.n_dense, m.n_embed};
    /* small step: fewer ReLU / max-pool switches; float noise ~1e-4.  A
     * step that crosses a switch is retried at h / 4 and h / 16, where the
     * crossing's error shrinks (a wrong gradient's does not; LeNet's first
     * weight needed h / 16 with the direct convolutions' rounding: 0.1541
     * analytic, 0.1400, 0.1507, 0.1552 at h, h/4, h/16). */
    double worst = 0.0;
    const float h = 2e-3f;
    for (int k = 0; k < 2; k++) {
        if (!len[k])
            continue;
        float *g = malloc(len[k] * sizeof *g);
        memcpy(g, grad[k], len[k] * sizeof *g);
        for (size_t i = 0; i < len[k]; i += len[k] / 61 + 1) {
            double err = fabs(model_difference(&m, x, y, B, &buf[k][i], h) - g[i]);
            for (float hs = h / 4; err >= 1e-3 && hs >= h / 16; hs /= 4)
                err = fmin(err, fabs(model_difference(&m, x, y, B, &buf[k][i], hs) - g[i]));
            worst = fmax(worst, err);
        }
        free(g);
    }
    char what[64];
    snprintf(what, sizeof what, "model %s", name);
    printf("%-28s max abs. error %.2e  %s\n", what, worst, worst < 3e-3 ? "ok" : "FAIL");
    failures += worst >= 3e-3;
    free(x);
    nn_model_free(&m);
}

/* Largest |x - ref| / (1 + |ref|) over n floats. */
static double rel_diff(const float *x, const float *ref, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)x[i] - ref[i]) / (1.0 + fabs((double)ref[i])));
    return worst;
}

/* Both kernels against cblas_sgemm over every n they take and k, rows
 * that are and are not multiples of the kernels' blocks of 8.  The bytes
 * around y and dw must stay untouched (masked stores). */
static void check_small_gemm(void)
{
    static const int ks[] = {1, 3, 8, 9, 25, 150};
    static const size_t rows_list[] = {1, 7, 8, 13, 784};
    double worst = 0.0;
    int ran = 0, cases = 0, clobbered = 0;
    for (int n = 1; n <= SMALL_GEMM_MAX_N; n++)
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++)
            for (size_t ri = 0; ri < sizeof rows_list / sizeof *rows_list; ri++) {
                int k = ks[ki];
                size_t rows = rows_list[ri], ny = rows * n, nw = (size_t)n * k;
                float *a = malloc(rows * k * sizeof *a), *w = malloc(nw * sizeof *w);
                float *y = malloc((ny + 16) * sizeof *y), *ref = malloc(ny * sizeof *ref);
                float *dw = malloc((nw + 16) * sizeof *dw), *dwref = malloc(nw * sizeof *dwref);
                for (size_t i = 0; i < rows * k; i++)
                    a[i] = urand();
                for (size_t i = 0; i < nw; i++)
                    w[i] = urand();
                for (size_t i = 0; i < ny + 16; i++)
                    y[i] = urand();
                for (size_t i = 0; i < nw; i++)
                    dw[i] = dwref[i] = urand();
                for (size_t i = nw; i < nw + 16; i++)
                    dw[i] = 7.0f;
                memcpy(ref, y, ny * sizeof *ref);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, n, k, 1.0f, a, k,
                            w, k, 1.0f, ref, n);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, k, (int)rows, 1.0f, y, n,
                            a, k, 1.0f, dwref, k);
                float guard = y[ny];
                /* dy = y as it was before the first kernel adds into it */
                int rc = nn_small_gemm_atb(rows, n, k, y, a, dw);
                rc |= nn_small_gemm_add_abt(rows, n, k, a, w, y);
                cases++;
                if (rc == 0) {
                    ran++;
                    worst = fmax(worst, fmax(rel_diff(y, ref, ny), rel_diff(dw, dwref, nw)));
                    clobbered += y[ny] != guard || dw[nw] != 7.0f || dw[nw + 15] != 7.0f;
                }
                free(a), free(w), free(y), free(ref), free(dw), free(dwref);
            }
    if (!ran) {
        printf("small-n GEMMs                not used here (no AVX2/FMA): OpenBLAS does all\n");
        return;
    }
    int ok = ran == cases && worst < 1e-4 && !clobbered;
    printf("small-n GEMMs, %d shapes      max rel. error %.2e  %s\n", cases, worst, ok ? "ok" : "FAIL");
    failures += !ok;
}

static void check_conv(const char *name, int in_c, int h, int w, int out_c, int k, int pad, int B,
                       int has_din)
{
    layer l;
    nn_layer_conv(&l, in_c, h, w, out_c, k, pad, B);
    check_layer(name, &l, B, has_din);
    nn_layer_free(&l);
}

/* One shape through the direct kernels and through im2col + GEMM: the
 * output, weight, bias and input gradients must agree (summation order
 * differs) and nothing past the buffers may change. */
static double direct_vs_reference(int c, int h, int w, int oc, int k, int pad, int B, int din,
                                  int *clobbered)
{
    layer l;
    if (nn_layer_conv(&l, c, h, w, oc, k, pad, B) < 0) {
        (*clobbered)++;
        return INFINITY;
    }
    size_t nin = (size_t)B * nn_layer_in_size(&l), nout = (size_t)B * nn_layer_out_size(&l);
    size_t np = l.n_w + l.n_b, guard = 16;
    float *x = malloc(nin * sizeof *x), *dy = malloc(nout * sizeof *dy);
    float *p = malloc(np * sizeof *p), *y[2], *dx[2], *g[2];
    for (int r = 0; r < 2; r++) {
        y[r] = malloc((nout + guard) * sizeof(float));
        dx[r] = malloc((nin + guard) * sizeof(float));
        g[r] = malloc((np + guard) * sizeof(float));
        for (size_t i = 0; i < nout + guard; i++)
            y[r][i] = 3.0f;
        for (size_t i = 0; i < nin + guard; i++)
            dx[r][i] = 3.0f;
        for (size_t i = 0; i < np + guard; i++)
            g[r][i] = 3.0f;
    }
    for (size_t i = 0; i < nin; i++)
        x[i] = urand();
    for (size_t i = 0; i < nout; i++)
        dy[i] = urand();
    for (size_t i = 0; i < np; i++)
        p[i] = urand();
    l.w = p, l.b = p + l.n_w;
    double worst = 0.0;
    for (int r = 0; r < 2; r++) {   /* r = 0: reference, 1: direct */
        nn_layer_set_reference_kernels(r == 0);
        l.dw = g[r], l.db = g[r] + l.n_w;
        nn_layer_forward(&l, x, y[r], B);
        nn_layer_backward(&l, x, y[r], dy, din ? dx[r] : NULL, B);
        *clobbered += y[r][nout] != 3.0f || y[r][nout + guard - 1] != 3.0f;
        *clobbered += dx[r][nin] != 3.0f || g[r][np] != 3.0f || g[r][np + guard - 1] != 3.0f;
    }
    nn_layer_set_reference_kernels(0);
    worst = fmax(rel_diff(y[1], y[0], nout), rel_diff(g[1], g[0], np));
    if (din)
        worst = fmax(worst, rel_diff(dx[1], dx[0], nin));
    for (int r = 0; r < 2; r++)
        free(y[r]), free(dx[r]), free(g[r]);
    free(x), free(dy), free(p);
    nn_layer_free(&l);
    return worst;
}

/* The direct AVX-512 convolutions (small_gemm.h) against im2col + GEMM:
 * LeNet's shapes, the channel counts with their own code (1, 3, 6) and
 * others, more than 16 output channels (several vector groups, a partial
 * one), one input channel (pixel pairs), odd sizes (rows of pixels that split into uneven blocks, a last
 * odd pixel), padding, and input gradients of 1 to 20 vectors per pixel
 * (and one too wide for them, which takes the GEMM path). */
static void check_conv_direct(void)
{
    static const int shapes[][8] = {
        /* c, h, w, oc, k, pad, batch, input gradient */
        {1, 28, 28, 6, 5, 2, 3, 0},  {6, 14, 14, 16, 5, 0, 3, 1}, {3, 32, 32, 6, 5, 0, 2, 1},
        {1, 9, 13, 1, 3, 1, 2, 1},   {2, 7, 11, 17, 3, 1, 2, 1},  {5, 8, 9, 33, 1, 0, 2, 1},
        {6, 13, 31, 7, 5, 2, 1, 1},  {12, 9, 9, 16, 5, 2, 2, 1},  {3, 10, 17, 20, 7, 3, 1, 1},
        {16, 6, 6, 5, 5, 0, 2, 1},   {20, 5, 30, 9, 3, 1, 1, 1},  {4, 3, 3, 40, 3, 0, 5, 1},
        /* one input channel, <= 8 outputs, k <= 5: pixel pairs (odd rows
         * end with a single pixel); k = 7 does not take them */
        {1, 10, 11, 8, 5, 0, 2, 1},  {1, 7, 8, 3, 2, 1, 2, 0},    {1, 12, 12, 4, 7, 1, 2, 1},
    };
    conv_geom g0 = {1, 5, 6, 28, 28, 32};
    if (!nn_conv_direct_usable(&g0, 0)) {
        printf("direct convolutions         not used here (no AVX-512F): im2col + GEMM does all\n");
        return;
    }
    double worst = 0.0;
    int clobbered = 0, n = (int)(sizeof shapes / sizeof *shapes);
    for (int i = 0; i < n; i++) {
        const int *s = shapes[i];
        worst = fmax(worst, direct_vs_reference(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
                                                &clobbered));
    }
    /* float sums of up to 2,352 terms in another order: ~1e-5; a term
     * lost or added moves a sum by ~1/50 of its size */
    int ok = worst < 1e-4 && !clobbered;
    printf("direct conv vs im2col, %d shapes max rel. error %.2e  %s\n", n, worst,
           ok ? "ok" : "FAIL");
    failures += !ok;
}

/* The AVX-512 dense kernels against OpenBLAS on whole and partial ranges
 * (as the layers' parts use them): batches below, at and above the
 * 64-column panel, widths that leave partial vectors, output counts that
 * leave partial row blocks and span two depth blocks of the input
 * gradient (300 > 256); guard floats around every range. */
static void check_dense512(void)
{
    static const int shapes[][3] = {
        /* batch, in, out */
        {64, 256, 300}, {64, 400, 120}, {1, 1, 1}, {13, 7, 5}, {70, 65, 13}, {3, 63, 257},
        {64, 84, 10}, {65, 17, 6},
    };
    if (!nn_dense512_usable()) {
        printf("AVX-512 dense kernels        not used here (no AVX-512F): OpenBLAS does all\n");
        return;
    }
    double worst = 0.0;
    int clobbered = 0, n = (int)(sizeof shapes / sizeof *shapes);
    for (int c = 0; c < n; c++) {
        int B = shapes[c][0], in = shapes[c][1], out = shapes[c][2];
        size_t nx = (size_t)B * in, nw = (size_t)out * in, ny = (size_t)B * out;
        float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *dy = malloc(ny * sizeof *dy);
        float *bias = malloc((size_t)out * sizeof *bias);
        float *xt = aligned_alloc(64, (nn_dense512_packed_size(B, in) * sizeof(float) + 63) / 64 * 64);
        float *got[3], *ref[3];
        size_t len[3] = {ny, nw, nx};
        for (int k = 0; k < 3; k++) {
            got[k] = malloc((len[k] + 2) * sizeof(float));
            ref[k] = malloc(len[k] * sizeof(float));
            for (size_t i = 0; i < len[k] + 2; i++)
                got[k][i] = 5.0f;
        }
        for (size_t i = 0; i < nx; i++)
            x[i] = urand();
        for (size_t i = 0; i < nw; i++)
            w[i] = urand();
        for (size_t i = 0; i < ny; i++)
            dy[i] = urand();
        for (int o = 0; o < out; o++)
            bias[o] = urand();
        for (int b = 0; b < B; b++)
            memcpy(ref[0] + (size_t)b * out, bias, (size_t)out * sizeof(float));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, x, in, w, in, 1.0f,
                    ref[0], out);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, B, 1.0f, dy, out, x, in, 0.0f,
                    ref[1], in);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, out, 1.0f, dy, out, w, in,
                    0.0f, ref[2], in);
        nn_dense512_pack_input(x, B, in, xt);
        /* two ranges each, as two parts would: [0, m) and [m, n) */
        int om = out / 3, im = in / 2;
        float *y = got[0] + 1, *dw = got[1] + 1, *dx = got[2] + 1;
        nn_dense512_forward(xt, B, in, w, bias, out, 0, om, y);
        nn_dense512_forward(xt, B, in, w, bias, out, om, out, y);
        nn_dense512_grad_w(dy, x, B, in, out, 0, om, dw);
        nn_dense512_grad_w(dy, x, B, in, out, om, out, dw);
        nn_dense512_grad_x(dy, w, B, in, out, 0, im, dx);
        nn_dense512_grad_x(dy, w, B, in, out, im, in, dx);
        for (int k = 0; k < 3; k++) {
            worst = fmax(worst, rel_diff(got[k] + 1, ref[k], len[k]));
            clobbered += got[k][0] != 5.0f || got[k][len[k] + 1] != 5.0f;
            free(got[k]), free(ref[k]);
        }
        free(x), free(w), free(dy), free(bias), free(xt);
    }
    int ok = worst < 1e-5 && !clobbered;
    printf("AVX-512 dense, %d shapes      max rel. error %.2e  %s\n", n, worst, ok ? "ok" : "FAIL");
    failures += !ok;
}

static void check_pool(const char *name, int c, int h, int w, int k)
{
    layer l;
    nn_layer_maxpool(&l, c, h, w, k, 2);
    check_layer(name, &l, 2, 1);
    nn_layer_free(&l);
}

/* Largest |x - ref| over n floats, relative to the largest |ref|. */
static double rel_to_max(const float *x, const float *ref, size_t n)
{
    double err = 0.0, top = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - ref[i]);
        if (isnan(d) || d > err)   /* fmax would drop a NaN */
            err = d;
        top = fmax(top, fabs((double)ref[i]));
    }
    return top > 0.0 ? err / top : err;
}

/* A model's loss, correct count and gradients with `threads` threads
 * (OpenBLAS's count, which the layers split their work by). */
static double threaded_pass(model *m, const float *x, const int32_t *y, int B, int threads,
                            int *correct, float *grads, float *egrads)
{
    /* NaN in everything the pass should write: what a part leaves
     * unwritten shows (a previous pass's values would hide it) */
    for (int i = 0; i < m->n; i++)
        for (size_t k = 0; k < (size_t)B * nn_layer_out_size(&m->L[i]); k++)
            m->act[i][k] = m->dact[i][k] = NAN;
    for (size_t k = 0; k < m->n_dense; k++)
        m->grads[k] = NAN;
    openblas_set_num_threads(threads);
    if (m->egrads)
        memset(m->egrads, 0, m->n_embed * sizeof(float));
    double loss = nn_model_forward(m, x, y, B, correct);
    nn_model_backward(m, x, y, B);
    openblas_set_num_threads(1);
    memcpy(grads, m->grads, m->n_dense * sizeof(float));
    if (m->egrads)
        memcpy(egrads, m->egrads, m->n_embed * sizeof(float));
    return loss;
}

/* Whole LeNet and wordlm passes at rb_train's sizes split over 3 threads
 * (every layer big enough splits: samples, weight rows, batch rows)
 * against one thread: the same loss and predictions, gradients equal up
 * to the order of the per-part sums; LeNet with the direct and with the
 * im2col + GEMM convolutions. */
static void check_threads(void)
{
    static const struct {
        const char *name;
        model_shape s;
        int reference;
    } cases[] = {{"lenet", {1, 28, 28, 10, 0, 0, 0, 0}, 0},
                 {"lenet", {1, 28, 28, 10, 0, 0, 0, 0}, 1},
                 {"wordlm", {0, 0, 0, 2000, 3, 64, 256, 0}, 0}};
    enum { B = 64 };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        model m;
        char err[256];
        openblas_set_num_threads(3);   /* scratch for 3 parts */
        int rc = nn_model_build(&m, cases[c].name, &cases[c].s, B, 11, err, sizeof err);
        openblas_set_num_threads(1);
        if (rc < 0) {
            printf("%s: %s\n", cases[c].name, err);
            failures++;
            continue;
        }
        nn_layer_set_reference_kernels(cases[c].reference);
        size_t nin = (size_t)B * nn_model_in_size(&m);
        float *x = malloc(nin * sizeof *x);
        int32_t *ids = (int32_t *)(void *)x, y[B];
        for (size_t i = 0; i < nin; i++) {
            if (m.n_embed)
                ids[i] = (int32_t)(nn_rng_next(&rng) % (uint64_t)cases[c].s.classes);
            else
                x[i] = urand();
        }
        for (int i = 0; i < B; i++)
            y[i] = (int32_t)(nn_rng_next(&rng) % (uint64_t)cases[c].s.classes);
        float *g[2], *e[2];
        int correct[2];
        double loss[2];
        for (int r = 0; r < 2; r++) {
            g[r] = malloc(m.n_dense * sizeof(float));
            e[r] = malloc((m.n_embed + 1) * sizeof(float));
            loss[r] = threaded_pass(&m, x, y, B, r ? 3 : 1, &correct[r], g[r], e[r]);
        }
        nn_layer_set_reference_kernels(0);
        double gerr = rel_to_max(g[1], g[0], m.n_dense), eerr = rel_to_max(e[1], e[0], m.n_embed);
        if (isnan(eerr) || eerr > gerr)
            gerr = eerr;
        double lerr = fabs(loss[1] - loss[0]) / loss[0];
        int ok = gerr < 1e-5 && lerr < 1e-6 && correct[0] == correct[1];   /* NaN fails */
        char what[64];
        snprintf(what, sizeof what, "%s, 3 threads%s", cases[c].name,
                 cases[c].reference ? " (im2col)" : "");
        printf("%-28s loss rel. error %.1e, gradients %.1e  %s\n", what, lerr, gerr,
               ok ? "ok" : "FAIL");
        failures += !ok;
        for (int r = 0; r < 2; r++)
            free(g[r]), free(e[r]);
        free(x);
        nn_model_free(&m);
    }
}

/* Ties in max pooling go to the first position of the window in row-major
 * order (the GPU models rely on the CPU's choice being fixed): flat
 * windows (every position ties) and windows where the maximum appears at
 * (0, 1) and (1, 0), on rows long enough for the vector path and its
 * tail. */
static void check_pool_ties(void)
{
    enum { C = 3, H = 4, W = 13, K = 2, B = 2 };
    layer l;
    nn_layer_maxpool(&l, C, H, W, K, B);
    size_t nin = (size_t)B * nn_layer_in_size(&l), nout = (size_t)B * nn_layer_out_size(&l);
    float *x = calloc(nin, sizeof *x), *y = malloc(nout * sizeof *y);
    size_t row = (size_t)W * C;
    for (int s = 0; s < B; s++)   /* window (oy 1, ox 2), channel 1, of each sample */
        for (int w = 1; w <= 2; w++) {
            size_t ky = (size_t)(w == 2), kx = (size_t)(w == 1);
            x[(size_t)s * H * row + (2 + ky) * row + (4 + kx) * C + 1] = 1.0f;
        }
    nn_layer_forward(&l, x, y, B);
    int bad = 0;
    for (size_t o = 0; o < nout; o++) {
        size_t s = o / nn_layer_out_size(&l), r = o % nn_layer_out_size(&l);
        size_t oy = r / ((size_t)l.out_w * C), ox = r / C % l.out_w, c = r % C;
        size_t first = s * H * row + oy * K * row + ox * K * C + c;
        size_t want = oy == 1 && ox == 2 && c == 1 ? first + C : first;   /* (0, 1) */
        bad += (size_t)l.argmax[o] != want;
    }
    printf("%-28s %d of %zu windows wrong  %s\n", "maxpool ties", bad, nout, bad ? "FAIL" : "ok");
    failures += bad != 0;
    free(x), free(y);
    nn_layer_free(&l);
}

int main(void)
{
    openblas_set_num_threads(1);
    check_small_gemm();
    check_conv_direct();
    check_dense512();
    layer l;
    nn_layer_dense(&l, 7, 5, 3);
    check_layer("dense 7->5", &l, 3, 1);
    nn_layer_free(&l);
    nn_layer_relu(&l, 4, 3, 3, 2);
    check_layer("relu", &l, 2, 1);
    /* name, in_c, h, w, out_c, k, pad, batch, input gradient */
    check_conv("conv 3x3 pad 1, 2->3 ch", 2, 6, 5, 3, 3, 1, 2, 1);
    check_conv("conv 5x5, 1->2 ch", 1, 8, 8, 2, 5, 0, 2, 0);
    /* 147 KB of patch rows per sample: one sample per chunk, three chunks */
    check_conv("conv 3x3 pad 1, chunked", 4, 32, 32, 3, 3, 1, 3, 1);
    check_conv("conv 5x5, chunked", 3, 30, 31, 2, 5, 0, 3, 1);
    /* > 8 channels: OpenBLAS, two chunks */
    check_conv("conv 3x3 pad 1, 12 ch", 3, 32, 32, 12, 3, 1, 3, 1);
    /* name, c, h, w, window; odd sizes leave the last row and column unused */
    check_pool("maxpool 2x2", 3, 4, 6, 2);
    check_pool("maxpool 2x2, 5x7 input", 3, 5, 7, 2);
    check_pool("maxpool 3x3", 2, 7, 6, 3);
    check_pool_ties();
    check_embedding();
    check_softmax();
    check_softmax_wide();
    model_shape img = {1, 12, 12, 5, 0, 0, 0, 0}, txt = {0, 0, 0, 30, 3, 4, 8, 0};
    check_model("mlp", &img, 4);
    check_model("lenet", &img, 4);
    check_model("wordlm", &txt, 4);
    check_threads();
    if (failures)
        printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
