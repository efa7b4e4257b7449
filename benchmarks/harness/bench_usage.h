/* Usage errors: a bad command line or environment ends the job with
 * exit 2 and one message. */
#ifndef BENCH_USAGE_H
#define BENCH_USAGE_H

/* Print "PROG: rank 0: message" on rank 0 (every rank parses the same
 * command line, so every rank finds the same error), finalize MPI, exit 2. */
_Noreturn void bench_usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
