/* Start-up: the allocator's policy, set before MPI_Init and agreed by
 * every rank. */
#ifndef BENCH_INIT_H
#define BENCH_INIT_H

/* MPI_Init, after setting the allocator's policy: glibc gives large freed
 * blocks back to the kernel and page-faults them in again when the next
 * call allocates them, and MPI libraries allocate collective scratch per
 * call.  On a VM where a page fault costs ~15 us that made a 64 MiB
 * MPI_Allreduce (the dense reference) 12x slower.  So freed memory stays
 * in the process (mallopt M_MMAP_MAX=0, M_TRIM_THRESHOLD=-1, the settings
 * HPC sites use); RB_MALLOC=default keeps the C library's policy.  Any
 * other RB_MALLOC value is a usage error (exit 2). */
void bench_mpi_init(int *argc, char ***argv, const char *prog);
/* The policy in effect, for the run's metadata. */
const char *bench_malloc_policy(void);
/* Its paragraph in --help. */
#define BENCH_MALLOC_HELP                                                                   \
    "Environment:\n"                                                                         \
    "  RB_MALLOC=keep|default  keep (the default): freed memory stays in the process, so\n" \
    "                        MPI's per-call scratch is not page-faulted in on every call;\n" \
    "                        default: the C library's policy.  Recorded as malloc_policy.\n"

#endif
