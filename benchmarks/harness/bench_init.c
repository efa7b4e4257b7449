/* Start-up: the allocator's policy and MPI_Init (bench_init.h). */
#include "bench_init.h"

/* Any C library header defines __GLIBC__ (tested below). */
#include <stdlib.h>

/* smpicc includes SimGrid's helpers first, whose malloc/free macros would
 * mangle malloc.h; simulated time has no page faults to avoid anyway. */
#if defined(__GLIBC__) && !defined(SMPI_HELPERS_H)
#define HAVE_MALLOPT 1
#include <malloc.h>
#endif

#include <mpi.h>
#include <signal.h>
#include <string.h>

#include "bench_fail.h"
#include "bench_usage.h"

static const char *const malloc_policies[] = {
    "C library default",   /* tools that communicate little (rb_sketch, rb_gpubench) */
    "C library default (RB_MALLOC=default)",
    "keep freed memory (mallopt M_MMAP_MAX=0, M_TRIM_THRESHOLD=-1)",
    "allocator default (mallopt refused, e.g. under a sanitizer)",
    "not set (SimGrid SMPI: simulated time)",
};
static int malloc_policy;

/* An index into malloc_policies; -1 when RB_MALLOC is neither unset,
 * "keep" nor "default". */
static int set_malloc_policy(void)
{
    const char *v = getenv("RB_MALLOC");
    if (v && !strcmp(v, "default"))
        return 1;
    if (v && *v && strcmp(v, "keep"))
        return -1;
#if defined(HAVE_MALLOPT)
    return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1 ? 2 : 3;
#elif defined(SMPI_HELPERS_H)
    return 4;
#else
    return 0;
#endif
}

void bench_mpi_init(int *argc, char ***argv, const char *prog)
{
    bench_set_prog(prog);
    /* A file size limit (ulimit -f, a site's RLIMIT_FSIZE) killed the
     * writer by SIGXFSZ without a word: ignored, the write fails with EFBIG
     * instead, and the archive names it ("File too large") where it
     * happens, as it names a full disk. */
    signal(SIGXFSZ, SIG_IGN);
    int policy = set_malloc_policy(), lo, hi;
    MPI_Init(argc, argv);
    /* Agreed before anyone stops: a rank that stopped alone would leave
     * the others waiting in their first collective. */
    MPI_Allreduce(&policy, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&policy, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo < 0) {
        const char *v = getenv("RB_MALLOC");
        bench_usage_error(prog, "RB_MALLOC must be unset, 'keep' or 'default' on every rank%s%s%s",
                          policy < 0 ? " (rank 0 has '" : "", policy < 0 ? v : "",
                          policy < 0 ? "')" : "");
    }
    if (lo != hi)
        bench_usage_error(prog, "ranks were started with different RB_MALLOC settings");
    malloc_policy = policy;
}

const char *bench_malloc_policy(void) { return malloc_policies[malloc_policy]; }
