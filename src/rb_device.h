/* Device memory layer.  Without CUDA every function returns
 * RB_ERR_UNSUPPORTED (device_none.c); with CUDA see device_cuda.c. */
#ifndef RB_DEVICE_H
#define RB_DEVICE_H

#include "rb_internal.h"

/* Set up r->device_ctx for a RB_DEVICE_CUDA reducer (called by rb_create). */
int rb_device_init(rb_reducer *r);
void rb_device_fini(rb_reducer *r);
int rb_device_to_host(rb_reducer *r, float *host, const float *dev, size_t n);
int rb_device_from_host(rb_reducer *r, float *dev, const float *host, size_t n);

#endif
