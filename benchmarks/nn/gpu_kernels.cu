/* CUDA kernels of rb_train's GPU models; see gpu_kernels.h. */
#include "gpu_kernels.h"

#include <cuda_runtime.h>

/* Everything but the extern "C" entry points is static: nvcc gives the
 * host stubs of kernels in an anonymous namespace external linkage, and
 * libnn.a exports nothing but nn_ names (tests/arch/nn_exports.sh). */

static const int kThreads = 256;

static int launched() { return (int)cudaGetLastError(); }

static unsigned blocks_for(size_t n)
{
    size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

static __global__ void embed_forward_kernel(const int32_t *ids, size_t n, const float *table, int dim,
                                     float *out)
{
    size_t total = n * (size_t)dim;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t row = i / (size_t)dim, col = i % (size_t)dim;
        out[i] = table[(size_t)ids[row] * (size_t)dim + col];
    }
}

static __global__ void embed_backward_kernel(const int32_t *ids, size_t n, const float *dout, int dim,
                                      float *dtable)
{
    size_t total = n * (size_t)dim;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t row = i / (size_t)dim, col = i % (size_t)dim;
        atomicAdd(&dtable[(size_t)ids[row] * (size_t)dim + col], dout[i]);
    }
}

/* One block per sample: argmax (first index on ties), log-sum-exp in
 * double as on the CPU, then the gradient. */
static __global__ void softmax_xent_kernel(const float *logits, const int32_t *labels, int classes,
                                    float *dlogits, float scale, float *loss, int32_t *correct)
{
    __shared__ float best[kThreads];
    __shared__ int at[kThreads];
    __shared__ double part[kThreads];
    const float *z = logits + (size_t)blockIdx.x * classes;
    int t = threadIdx.x;
    float b = -INFINITY;
    int a = classes;
    for (int c = t; c < classes; c += blockDim.x)
        if (z[c] > b || (z[c] == b && c < a))
            b = z[c], a = c;
    best[t] = b, at[t] = a;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s && (best[t + s] > best[t] || (best[t + s] == best[t] && at[t + s] < at[t])))
            best[t] = best[t + s], at[t] = at[t + s];
        __syncthreads();
    }
    float zmax = best[0];
    int arg = at[0];
    double sum = 0.0;
    for (int c = t; c < classes; c += blockDim.x)
        sum += exp((double)z[c] - zmax);
    part[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            part[t] += part[t + s];
        __syncthreads();
    }
    double logsum = log(part[0]) + zmax;
    int label = labels[blockIdx.x];
    if (t == 0) {
        loss[blockIdx.x] = (float)(logsum - z[label]);
        correct[blockIdx.x] = arg == label;
    }
    if (dlogits) {
        float *g = dlogits + (size_t)blockIdx.x * classes;
        for (int c = t; c < classes; c += blockDim.x)
            g[c] = (float)((exp((double)z[c] - logsum) - (c == label)) / scale);
    }
}

static __global__ void sgd_kernel(float *w, const float *g, float *v, size_t n, float lr, float mu,
                           float wd)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float vi = mu * v[i] + g[i] + wd * w[i];
        v[i] = vi;
        w[i] -= lr * vi;
    }
}

static __global__ void broadcast_rows_kernel(const float *b, float *y, size_t total, int cols)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = b[i % (size_t)cols];
}

extern "C" int nn_gpu_embed_forward(const int32_t *ids, size_t n, const float *table, int dim,
                                float *out)
{
    embed_forward_kernel<<<blocks_for(n * (size_t)dim), kThreads>>>(ids, n, table, dim, out);
    return launched();
}

extern "C" int nn_gpu_embed_backward(const int32_t *ids, size_t n, const float *dout, int dim,
                                 float *dtable)
{
    embed_backward_kernel<<<blocks_for(n * (size_t)dim), kThreads>>>(ids, n, dout, dim, dtable);
    return launched();
}

extern "C" int nn_gpu_softmax_xent(const float *logits, const int32_t *labels, int batch, int classes,
                               float *dlogits, float scale, float *loss, int32_t *correct)
{
    if (batch <= 0)
        return 0;
    softmax_xent_kernel<<<batch, kThreads>>>(logits, labels, classes, dlogits, scale, loss,
                                             correct);
    return launched();
}

extern "C" int nn_gpu_sgd(float *w, const float *g, float *v, size_t n, float lr, float mu, float wd)
{
    sgd_kernel<<<blocks_for(n), kThreads>>>(w, g, v, n, lr, mu, wd);
    return launched();
}

extern "C" int nn_gpu_broadcast_rows(const float *b, float *y, int rows, int cols)
{
    size_t total = (size_t)rows * (size_t)cols;
    broadcast_rows_kernel<<<blocks_for(total), kThreads>>>(b, y, total, cols);
    return launched();
}
