/* Naming failures and ending the process (bench_fail.h). */
#include "bench_fail.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reducer.h"

int bench_world_rank(void)
{
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void bench_printf0(const char *fmt, ...)
{
    if (bench_world_rank() != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    /* A batch job's stdout is a file, buffered by blocks: the progress a
     * user follows with tail -f (and a script waits for) came at the end. */
    fflush(stdout);
}

static const char *prog_name = "rb";
/* Whether this process's failure has been named (by it or, in a
 * collective report, by a peer). */
static int failure_named;

void bench_set_prog(const char *prog) { prog_name = prog; }
const char *bench_prog(void) { return prog_name; }

/* The named line: "PROG: rank R: WHAT: strerror: detail", parts omitted
 * when empty. */
static void print_failure(int rc, const char *what, const char *detail)
{
    /* Room for three long paths: a message is never cut before its reason. */
    char line[16384];
    int n = snprintf(line, sizeof line, "%s: rank %d: ", prog_name, bench_world_rank());
    if (what && *what)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s: ", what);
    if (rc > 0)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s: ", rb_strerror(rc));
    snprintf(line + n, sizeof line - (size_t)n, "%s", detail && *detail ? detail : "(no detail)");
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static void vfail_on(int print, int rc, const char *what, const char *fmt, va_list ap)
{
    char detail[15360];
    vsnprintf(detail, sizeof detail, fmt, ap);
    if (print)
        print_failure(rc, what, detail);
    failure_named = 1;
}

void bench_fail(int rc, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_on(1, rc, what, fmt, ap);
    va_end(ap);
}

void bench_fail_on(int print, int rc, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_on(print, rc, what, fmt, ap);
    va_end(ap);
}

static volatile sig_atomic_t exiting_with = -1;

int bench_exiting(void)
{
    return (int)exiting_with;
}

/* stdout's table is the run's only output under -o none: a write that
 * failed (a full disk, a closed descriptor, /dev/full) is a failed run,
 * named, never exit 0.  Returns the exit code to use. */
static int check_stdout(int code)
{
    int flush_failed = fflush(stdout) != 0;
    int err = errno;
    if (!flush_failed && !ferror(stdout))
        return code;
    fprintf(stderr, "%s: rank %d: cannot write the results to standard output: %s\n",
            prog_name, bench_world_rank(),
            flush_failed ? strerror(err) : "an earlier write failed (a full disk or a closed descriptor)");
    failure_named = 1;
    return code == BENCH_EXIT_OK ? BENCH_EXIT_FAILED : code;
}

_Noreturn void bench_exit(int code)
{
    code = check_stdout(code);
    exiting_with = code;
    /* Timeouts are named by the programs' "time limit ... reached" lines
     * (the watchdog's own line, then _exit, never comes here). */
    if (code != BENCH_EXIT_OK && code != BENCH_EXIT_TIMEOUT && !failure_named)
        fprintf(stderr, "%s: rank %d: exiting with status %d without naming the failure "
                "(a bug: please report it)\n", prog_name, bench_world_rank(), code);
    fflush(stdout);
    fflush(stderr);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Finalize();
    exit(code);
}
