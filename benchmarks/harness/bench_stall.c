/* The progress watchdog (bench_stall.h). */
#include "bench_stall.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_fail.h"
#include "bench_fault.h"
#include "bench_keep.h"

/* What the main thread tells the watchdog's thread: times in ns of
 * CLOCK_MONOTONIC; `where` in two buffers, the one `cur` names complete. */
static struct {
    atomic_int on, paused, cur;
    atomic_llong last, longest, expect;
    char where[2][192];
    double min_s;
    int rank;
} w;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void bench_stall_beat(void)
{
    if (!atomic_load_explicit(&w.on, memory_order_relaxed))
        return;
    long long t = now_ns();
    long long gap = t - atomic_load_explicit(&w.last, memory_order_relaxed);
    if (gap > atomic_load_explicit(&w.longest, memory_order_relaxed))
        atomic_store_explicit(&w.longest, gap, memory_order_relaxed);
    atomic_store_explicit(&w.last, t, memory_order_relaxed);
}

void bench_stall_step(void)
{
    atomic_store_explicit(&w.last, now_ns(), memory_order_relaxed);
}

void bench_stall_pause(int on)
{
    if (!on)
        bench_stall_step();
    atomic_store(&w.paused, on);
}

void bench_stall_where(const char *fmt, ...)
{
    int next = 1 - atomic_load(&w.cur);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w.where[next], sizeof w.where[next], fmt, ap);
    va_end(ap);
    atomic_store(&w.cur, next);
}

void bench_stall_expect(double seconds)
{
    atomic_store(&w.expect, seconds > 0 && isfinite(seconds) ? (long long)(seconds * 1e9) : 0LL);
}

#ifndef HAVE_SIMGRID
/* The watch thread: not under SMPI, whose simulated ranks are threads of
 * one process and whose time is simulated (bench_stall_start). */

/* The limit now, seconds (ranks other than 0 wait a grace longer). */
static double limit_s(void)
{
    double longest = (double)atomic_load(&w.longest) * 1e-9, expect = (double)atomic_load(&w.expect) * 1e-9;
    double s = w.min_s;
    s = BENCH_STALL_FACTOR * longest > s ? BENCH_STALL_FACTOR * longest : s;
    s = BENCH_STALL_FACTOR * expect > s ? BENCH_STALL_FACTOR * expect : s;
    return s + (w.rank ? BENCH_STALL_PEER_GRACE_S : 0.0);
}

/* No progress for idle seconds: keep the rows, one line, exit. */
static _Noreturn void fire(double idle, double limit)
{
    /* Stuck on the way out (MPI_Finalize with a peer gone): the status
     * and its line were decided already. */
    if (bench_exiting() >= 0)
        _exit(bench_exiting());
    char where[sizeof w.where[0]], why[320], line[2 * PATH_MAX + 1024];
    memcpy(where, w.where[atomic_load(&w.cur)], sizeof where);
    where[sizeof where - 1] = '\0';
    snprintf(why, sizeof why, "no progress for %.0f s inside %s: a network or peer fault?", idle,
             where[0] ? where : "the run");
    int how = bench_keep(why);
    size_t n = (size_t)snprintf(line, sizeof line, "%s: rank %d: %s (limit %.0f s: max(--stall-timeout "
                                "%g s, %g x the slowest call so far, %g x the expected call))",
                                bench_prog(), w.rank, why, limit, w.min_s, BENCH_STALL_FACTOR,
                                BENCH_STALL_FACTOR);
    n = n < sizeof line ? n : sizeof line - 1;
    n = bench_keep_text(line, sizeof line, n, how);
    n = bench_keep_put(line, sizeof line, n, "; exiting ");
    n = bench_keep_put_long(line, sizeof line, n, BENCH_EXIT_STALL);
    n = bench_keep_put(line, sizeof line, n, "\n");
    if (write(STDERR_FILENO, line, n) < 0) {
        /* the exit status still says it */
    }
    _exit(BENCH_EXIT_STALL);
}

static void *watch(void *arg)
{
    (void)arg;
    double period = w.min_s / 20.0;
    period = period < 0.05 ? 0.05 : period > 1.0 ? 1.0 : period;
    struct timespec ts = {(time_t)period, (long)((period - (double)(time_t)period) * 1e9)};
    for (;;) {
        while (nanosleep(&ts, NULL) != 0 && errno == EINTR)
            ;
        if (atomic_load(&w.paused))
            continue;
        double idle = (double)(now_ns() - atomic_load(&w.last)) * 1e-9, limit = limit_s();
        if (idle > limit)
            fire(idle, limit);
    }
    return NULL;
}
#endif

int bench_stall_start(double min_s)
{
#ifdef HAVE_SIMGRID
    (void)min_s;
    return 0;
#else
    if (min_s <= 0 || atomic_load(&w.on))
        return 0;
    w.min_s = min_s;
    w.rank = bench_world_rank();
    atomic_store(&w.last, now_ns());
    atomic_store(&w.on, 1);
    pthread_t t;
    pthread_attr_t attr;
    sigset_t saved;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bench_fault_block_for_thread(&saved);
    int rc = pthread_create(&t, &attr, watch, NULL);
    bench_fault_unblock(&saved);
    pthread_attr_destroy(&attr);
    if (rc)
        atomic_store(&w.on, 0);
    return rc ? -1 : 0;
#endif
}
