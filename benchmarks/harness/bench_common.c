#include "bench_common.h"

/* smpicc includes SimGrid's helpers first, whose malloc/free macros would
 * mangle malloc.h; simulated time has no page faults to avoid anyway. */
#if defined(__GLIBC__) && !defined(SMPI_HELPERS_H)
#define HAVE_MALLOPT 1
#include <malloc.h>
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

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

_Noreturn void bench_exit(int code)
{
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

_Noreturn void bench_usage_error(const char *prog, const char *fmt, ...)
{
    if (bench_world_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: rank 0: ", prog);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\nTry '%s --help'.\n", prog);
        va_end(ap);
    }
    failure_named = 1;   /* every rank parsed the same line: rank 0 said it */
    bench_exit(BENCH_EXIT_USAGE);
}

void bench_printf0(const char *fmt, ...)
{
    if (bench_world_rank() != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

int bench_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int bench_parse_int(const char *s, long min, long max, int *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

int bench_parse_double(const char *s, double min, double max, double *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int bench_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int bench_peer_failure(int rc, const char *detail)
{
    static const char peer[] = "another rank failed";
    return rc > 0 && detail && !strncmp(detail, peer, sizeof peer - 1);
}

int bench_all_ok(MPI_Comm comm, int rc, const char *what, const char *detail)
{
    int rank, p, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    /* Own failures rank first (0..p-1), then a peer's (p..2p-1); 2p: none. */
    int me = rc == RB_OK ? 2 * p : bench_peer_failure(rc, detail) ? p + rank : rank;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == 2 * p)
        return 0;
    if (rank == first % p)
        print_failure(rc, what, detail);
    failure_named = 1;
    return -1;
}

int bench_argv_agree(MPI_Comm comm, int argc, char **argv)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 1; i < argc; i++) {
        for (const char *p = argv[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        h = (h ^ 0xff) * 0x100000001b3ULL;
    }
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    return lo == hi;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    /* Nearest-rank definition. */
    size_t k = (size_t)ceil(q * (double)n);
    double r = c[k == 0 ? 0 : k - 1];
    free(c);
    return r;
}

static double deadline = 0.0;
/* Made before the alarm: a signal handler may not format. */
static char watchdog_msg[160];

static void watchdog_fired(int sig)
{
    (void)sig;
    if (write(STDERR_FILENO, watchdog_msg, strlen(watchdog_msg)) < 0) {
        /* nothing more can be done from a signal handler */
    }
    _exit(BENCH_EXIT_TIMEOUT);
}

void bench_watchdog_start(double seconds)
{
    if (seconds <= 0)
        return;
    deadline = MPI_Wtime() + seconds;
    snprintf(watchdog_msg, sizeof watchdog_msg,
             "%s: rank %d: time limit (-T) exceeded inside a call; exiting 124\n", prog_name,
             bench_world_rank());
    /* The hard watchdog leaves room for the cooperative check, which ends
     * the run cleanly between calls. */
    double hard = seconds * 1.25 + 10.0;
    struct itimerval it = {0};
    it.it_value.tv_sec = (time_t)hard;
    it.it_value.tv_usec = (suseconds_t)((hard - (double)(time_t)hard) * 1e6);
    signal(SIGALRM, watchdog_fired);
    setitimer(ITIMER_REAL, &it, NULL);
}

int bench_deadline_passed(MPI_Comm comm)
{
    int mine = deadline > 0.0 && MPI_Wtime() > deadline, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}
