/* The --timeout watchdog (bench_watchdog.h). */
#include "bench_watchdog.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench_fail.h"
#include "bench_fault.h"
#include "bench_keep.h"

/* How long after rank 0's the other ranks' hard watchdogs fire: longer
 * than mpirun takes to kill a job's ranks once one has exited non-zero. */
#define WATCHDOG_PEER_GRACE_S 5.0

static double deadline = 0.0;
/* Made before the alarm: a signal handler may not format. */
static char watchdog_msg[160];

/* The rows checkpointed are kept (FILE.h5.interrupted, bench_keep.h),
 * then the line, then the exit. */
static void watchdog_fired(int sig)
{
    (void)sig;
    char line[PATH_MAX + 512];
    int how = bench_keep("time limit (--timeout) exceeded inside a call");
    size_t n = bench_keep_put(line, sizeof line, 0, watchdog_msg);
    n = bench_keep_text(line, sizeof line, n, how);
    n = bench_keep_put(line, sizeof line, n, "; exiting 124\n");
    if (write(STDERR_FILENO, line, n) < 0) {
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
             "%s: rank %d: time limit (--timeout) exceeded inside a call", bench_prog(),
             bench_world_rank());
    /* The hard watchdog leaves room for the cooperative check, which ends
     * the run cleanly between calls.  Rank 0's fires first: its exit ends
     * the job (mpirun kills the other ranks), so the line is printed once,
     * not once per rank; another rank fires, printing its own line, only
     * where it is still running WATCHDOG_PEER_GRACE_S later (rank 0 gone
     * already, or a launcher that lets a job run on after a rank's exit). */
    double hard = seconds * 1.25 + 10.0 + (bench_world_rank() == 0 ? 0.0 : WATCHDOG_PEER_GRACE_S);
    struct itimerval it = {0};
    it.it_value.tv_sec = (time_t)hard;
    it.it_value.tv_usec = (suseconds_t)((hard - (double)(time_t)hard) * 1e6);
    signal(SIGALRM, watchdog_fired);
    setitimer(ITIMER_REAL, &it, NULL);
}

static int stop_signal;

int bench_deadline_passed(MPI_Comm comm)
{
    /* One exchange for both: the time limit, and a deferred stop signal
     * (bench_fault_defer) that any rank got. */
    int mine[2] = {deadline > 0.0 && MPI_Wtime() > deadline, bench_fault_pending()}, any[2];
    MPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, comm);
    stop_signal = any[1];
    return any[0];
}

int bench_stop_signal(void) { return stop_signal; }
