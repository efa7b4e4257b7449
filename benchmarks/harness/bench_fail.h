/* Naming failures and ending the process: the program's name, this
 * process's rank, printing on rank 0, the one stderr line every failure
 * gets, and the exit that checks a failure was named. */
#ifndef BENCH_FAIL_H
#define BENCH_FAIL_H

/* Exit codes shared by every benchmark (OSU / nccl-tests conventions;
 * STALL: no progress inside a call, bench_stall.h). */
enum { BENCH_EXIT_OK = 0, BENCH_EXIT_FAILED = 1, BENCH_EXIT_USAGE = 2, BENCH_EXIT_STALL = 3,
       BENCH_EXIT_TIMEOUT = 124 };

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
/* The status bench_exit is ending the process with (its failure named,
 * or none), -1 before: a signal from a launcher ending the job then, or a
 * hang in MPI_Finalize, needs no line of its own.  Async-signal-safe. */
int bench_exiting(void);

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

#endif
