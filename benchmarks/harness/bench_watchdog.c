/* The --timeout watchdog (bench_watchdog.h). */
#include "bench_watchdog.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench_fail.h"

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
             "%s: rank %d: time limit (--timeout) exceeded inside a call; exiting 124\n", bench_prog(),
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
