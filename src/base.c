/* The bottom of the library: allocation and the agreement of the ranks on
 * a status.  Every other file may call these; they call nothing of the
 * library but errors.c, so no call goes back up into core.c. */
#include "rb_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *rb_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t bytes = count * size;
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes == 0)
        bytes = 64;
#ifdef HAVE_SIMGRID
    /* SMPI's smpi/auto-shared-malloc-thresh only sees malloc: the
     * 128-rank training model's exchange buffers must be shareable. */
    void *p = malloc(bytes);
#else
    void *p = aligned_alloc(64, bytes);
#endif
    if (p)
        memset(p, 0, bytes);
    return p;
}

int rb_reserve(void **buf, size_t *cap, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return rb_fail(RB_ERR_NOMEM, "buffer of %zu x %zu bytes overflows", count, size);
    size_t need = count * size;
    if (*buf && *cap >= need)
        return RB_OK;
    void *p = rb_calloc(need, 1);
    if (!p)
        return rb_fail(RB_ERR_NOMEM, "cannot allocate %zu bytes", need);
    free(*buf);
    *buf = p;
    *cap = need;
    return RB_OK;
}

/* Every rank learns the worst of the ranks' statuses, so a step that can
 * fail on one rank alone (an allocation) fails on all of them together and
 * no rank is left waiting in the next collective. */
int rb_agree(MPI_Comm comm, int local_status)
{
    int worst = 0;
    RB_MPI(MPI_Allreduce(&local_status, &worst, 1, MPI_INT, MPI_MAX, comm));
    if (worst != RB_OK && local_status == RB_OK)
        return rb_fail(worst, "another rank failed: %s", rb_strerror(worst));
    return local_status;
}
