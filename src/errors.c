/* Error codes, their names, and the per-thread detail of the last failure. */
#include "rb_internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

const char *rb_strerror(int code)
{
    static const char *const names[RB_ERR_COUNT_] = {
        [RB_OK] = "success",
        [RB_ERR_ARG] = "invalid argument",
        [RB_ERR_NOMEM] = "out of memory",
        [RB_ERR_MPI] = "MPI error",
        [RB_ERR_MISMATCH] = "ranks disagree",
        [RB_ERR_UNKNOWN_REDUCER] = "unknown reducer",
        [RB_ERR_UNSUPPORTED] = "not supported",
        [RB_ERR_DEVICE] = "device error",
        [RB_ERR_STATE] = "call out of order",
    };
    if (code < 0 || code >= RB_ERR_COUNT_)
        return "unknown error code";
    return names[code];
}

const char *rb_last_error(void) { return last_error; }

int rb_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int rb_mpi_check(int mpi_rc, const char *what)
{
    if (mpi_rc == MPI_SUCCESS)
        return RB_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "code %d", mpi_rc);
    return rb_fail(RB_ERR_MPI, "%s: %s", what, msg);
}
