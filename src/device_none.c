/* Device layer of a build without CUDA. */
#include "rb_device.h"

int rb_device_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no CUDA support (configure --with-cuda)");
}

void rb_device_fini(rb_reducer *r) { (void)r; }

int rb_device_to_host(rb_reducer *r, float *host, const float *dev, size_t n)
{
    (void)r, (void)host, (void)dev, (void)n;
    return RB_ERR_UNSUPPORTED;
}

int rb_device_from_host(rb_reducer *r, float *dev, const float *host, size_t n)
{
    (void)r, (void)dev, (void)host, (void)n;
    return RB_ERR_UNSUPPORTED;
}

int rb_device_direct(const rb_reducer *r) { (void)r; return 0; }

int rb_device_check_buffer(rb_reducer *r, const void *dbuf)
{
    (void)r, (void)dbuf;
    return RB_ERR_UNSUPPORTED;
}

int rb_device_select(MPI_Comm comm, int *device)
{
    (void)comm;
    if (device)
        *device = -1;
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no CUDA support (configure --with-cuda)");
}

int rb_device_describe(char *buf, size_t len)
{
    if (buf && len)
        buf[0] = '\0';
    return rb_fail(RB_ERR_UNSUPPORTED, "this build has no CUDA support (configure --with-cuda)");
}
