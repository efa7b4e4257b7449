/* Device buffers for the benchmarks (-d cuda).  Without CUDA every call
 * fails with a message saying so. */
#ifndef BENCH_DEVICE_H
#define BENCH_DEVICE_H

#include <stddef.h>

/* 0 on success; on failure a message in msg. */
int bench_dev_alloc(float **dev, size_t n, char *msg, size_t len);
int bench_dev_upload(float *dev, const float *host, size_t n, char *msg, size_t len);
int bench_dev_download(float *host, const float *dev, size_t n, char *msg, size_t len);
void bench_dev_free(float *dev);

#endif
