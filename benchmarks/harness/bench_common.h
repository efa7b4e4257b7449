/* Helpers shared by the benchmark programs: usage errors, number parsing,
 * statistics, rank agreement on the command line, timeout watchdog. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes shared by every benchmark (OSU / nccl-tests conventions). */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAILED = 1, BENCH_EXIT_USAGE = 2, BENCH_EXIT_TIMEOUT = 124 };

/* Print "PROG: rank 0: message" on rank 0 (every rank parses the same
 * command line, so every rank finds the same error), finalize MPI, exit 2. */
_Noreturn void bench_usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* This process's rank in MPI_COMM_WORLD; 0 before MPI_Init or after
 * MPI_Finalize. */
int bench_world_rank(void);
/* Print on rank 0 only. */
void bench_printf0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Finalize MPI and exit with code (after flushing stdout).  A non-zero
 * code with no failure named in this process (bench_fail*, bench_all_ok,
 * a usage error; a timeout's line counts) first prints "PROG: rank R:
 * exiting with status N without naming the failure (a bug: ...)". */
_Noreturn void bench_exit(int code);

/* Naming failures: every non-zero exit prints, once per job,
 * one line on stderr
 *     PROG: rank R: WHAT: <rb_strerror(rc)>: <detail>
 * WHAT: the reducer and phase ("s2: create", "sparcml: reduce at 4096
 * bytes") or the program's phase ("data", "archive").  rc is an RB_* code,
 * or BENCH_NO_CODE for a failure outside the library (no rb_strerror part). */
enum { BENCH_NO_CODE = -1 };
/* The program's name in these lines (bench_mpi_init sets it). */
void bench_set_prog(const char *prog);
const char *bench_prog(void);
/* A failure only this rank knows: it prints the line. */
void bench_fail(int rc, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A failure every rank knows alike (after an agreement): the line is
 * printed where print is non-zero (one rank), and counts as named on all. */
void bench_fail_on(int print, int rc, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

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

/* Strict parsers: whole string, range checked; 0 on success, -1 otherwise. */
int bench_parse_u64(const char *s, uint64_t *out);
int bench_parse_int(const char *s, long min, long max, int *out);
int bench_parse_double(const char *s, double min, double max, double *out);
/* Sizes accept K/M/G suffixes (powers of 1024). */
int bench_parse_size(const char *s, uint64_t *out);

/* Collective: 0 when rc is RB_OK (0) on every rank; else one rank prints
 * the named line for its rc, what and detail (one message, not one per
 * rank), every rank counts it as named and gets -1.  The printer is the
 * lowest rank whose failure is its own: a library detail "another rank
 * failed..." only says that a peer had the reason. */
int bench_all_ok(MPI_Comm comm, int rc, const char *what, const char *detail);
/* Whether the library's detail says this rank failed only because a peer
 * did ("another rank failed...": core.c's rank agreement, rb_agree). */
int bench_peer_failure(int rc, const char *detail);

/* Ranks must run the same command line; returns 1 if all agree. */
int bench_argv_agree(MPI_Comm comm, int argc, char **argv);

/* q-quantile (0..1) of v[0..n) by sorting a copy; NaN if n == 0. */
double bench_quantile(const double *v, size_t n, double q);

/* Watchdog: after `seconds` (0 = off) the process exits 124 even if stuck
 * inside MPI; bench_deadline_passed() is the cooperative check. */
void bench_watchdog_start(double seconds);
int bench_deadline_passed(MPI_Comm comm);

#endif
