#include "bench_device.h"

#include <stdio.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>

static int cuda_ok(cudaError_t e, const char *what, char *msg, size_t len)
{
    if (e == cudaSuccess)
        return 0;
    snprintf(msg, len, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

int bench_dev_alloc(float **dev, size_t n, char *msg, size_t len)
{
    *dev = NULL;
    return cuda_ok(cudaMalloc((void **)dev, (n ? n : 1) * sizeof(float)), "cudaMalloc", msg, len);
}

int bench_dev_upload(float *dev, const float *host, size_t n, char *msg, size_t len)
{
    return cuda_ok(cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice),
                   "cudaMemcpy to device", msg, len);
}

int bench_dev_download(float *host, const float *dev, size_t n, char *msg, size_t len)
{
    return cuda_ok(cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost),
                   "cudaMemcpy to host", msg, len);
}

void bench_dev_free(float *dev)
{
    if (dev)
        cudaFree(dev);
}
#else
static int no_cuda(char *msg, size_t len)
{
    snprintf(msg, len, "this build has no CUDA support (configure --with-cuda)");
    return -1;
}

int bench_dev_alloc(float **dev, size_t n, char *msg, size_t len)
{
    (void)n;
    *dev = NULL;
    return no_cuda(msg, len);
}

int bench_dev_upload(float *dev, const float *host, size_t n, char *msg, size_t len)
{
    (void)dev, (void)host, (void)n;
    return no_cuda(msg, len);
}

int bench_dev_download(float *host, const float *dev, size_t n, char *msg, size_t len)
{
    (void)host, (void)dev, (void)n;
    return no_cuda(msg, len);
}

void bench_dev_free(float *dev) { (void)dev; }
#endif
