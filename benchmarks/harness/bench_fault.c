/* The signals that end a job (bench_fault.h). */
#include "bench_fault.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_fail.h"
#include "bench_keep.h"

static const int fault_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE};
#define NSIGNALS (sizeof fault_signals / sizeof *fault_signals)
/* The rank that names a signal (0: the others die by it in silence, so
 * that a job the launcher ends prints one line, not one per rank). */
static int fault_rank = -1;
/* The thread that installed the handlers (main), and whether it holds the
 * signals now (bench_fault_hold).  Threads the MPI library started before
 * the handlers existed do not block them, so the kernel may hand a
 * process-directed signal to one of those: while main holds, the handler
 * there passes it on to main, where it waits for the release (a SIGTERM
 * during -J's export ended the process from Open MPI's thread and left
 * the .jsonl temporary). */
static pthread_t main_thread;
static volatile sig_atomic_t main_holds;

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "SIGPIPE";
    }
}

/* Who sends it on a cluster. */
static const char *signal_cause(int sig)
{
    switch (sig) {
    case SIGTERM: return "scancel, Slurm's time limit or preemption, or the launcher ending the job "
                         "after another rank failed";
    case SIGINT: return "an interrupt: Ctrl-C, or srun/mpirun passing one on";
    case SIGHUP: return "the terminal or the launcher hung up";
    case SIGPIPE: return "a connection closed under a write: a peer or its node gone, or "
                         "the reader of the output";
    default: return "a warning signal: sbatch --signal, a preemption notice";
    }
}

/* bench_fault_defer: the first stop signal is only recorded here. */
static volatile sig_atomic_t deferring, pending_signal;

/* "signal SIGTERM (who sends it)" into why. */
static size_t signal_reason(char *why, size_t cap, int sig)
{
    size_t n = bench_keep_put(why, cap, 0, "signal ");
    n = bench_keep_put(why, cap, n, signal_name(sig));
    n = bench_keep_put(why, cap, n, " (");
    n = bench_keep_put(why, cap, n, signal_cause(sig));
    return bench_keep_put(why, cap, n, ")");
}

/* Keep what was checkpointed, and rank 0's line: why, detail, what was
 * kept.  Async-signal-safe. */
static void keep_and_name(const char *why, const char *detail)
{
    char line[2 * PATH_MAX + 1024];
    int how = bench_keep(why);
    /* Not once the process ends by its own decision, named already (the
     * launcher's TERM to a job whose rank 0 failed finds it exiting). */
    if (fault_rank == 0 && bench_exiting() < 0) {
        size_t n = bench_keep_put(line, sizeof line, 0, bench_prog());
        n = bench_keep_put(line, sizeof line, n, ": rank 0: ");
        n = bench_keep_put(line, sizeof line, n, why);
        n = bench_keep_put(line, sizeof line, n, detail);
        n = bench_keep_text(line, sizeof line, n, how);
        n = bench_keep_put(line, sizeof line, n, "\n");
        if (write(STDERR_FILENO, line, n) < 0) {
            /* nothing more can be done from a signal handler */
        }
    }
}

/* Die by the signal, as without the handler: the launcher, the shell and
 * Slurm's accounting see what ended the process. */
static void die_by(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_fault_signal(int sig)
{
    int saved = errno;
    if (main_holds && !pthread_equal(pthread_self(), main_thread)) {
        pthread_kill(main_thread, sig);   /* pending there until the release */
        errno = saved;
        return;
    }
    /* The program stops at its next step.  The same signal again (the job
     * script passing on what Slurm sent every process, mpirun forwarding
     * it) changes nothing; another one ends the process now. */
    if (deferring && sig != SIGPIPE && (!pending_signal || pending_signal == sig)) {
        pending_signal = sig;
        errno = saved;
        return;
    }
    char why[256];
    signal_reason(why, sizeof why, sig);
    keep_and_name(why, "");
    die_by(sig);
    errno = saved;
}

void bench_fault_defer(void) { deferring = 1; }
int bench_fault_pending(void) { return pending_signal; }

_Noreturn void bench_fault_stop(MPI_Comm comm, int sig, const char *detail)
{
    char why[256];
    signal_reason(why, sizeof why, sig);
    keep_and_name(why, detail);
    fflush(stdout);
    /* Rank 0 has kept the file before any rank dies: a launcher ends a
     * job's other ranks once one has died. */
    MPI_Barrier(comm);
    die_by(sig);
    _exit(128 + sig);   /* a signal that is blocked or ignored here */
}

void bench_fault_signals(void)
{
    if (fault_rank >= 0)
        return;
    fault_rank = bench_world_rank();
    main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++)   /* a second signal waits for the first's handler */
        sigaddset(&sa.sa_mask, fault_signals[i]);
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old;
        if (sigaction(fault_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(fault_signals[i], &sa, NULL);
    }
}

static sigset_t fault_set(int alarm)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NSIGNALS; i++)
        sigaddset(&set, fault_signals[i]);
    if (alarm)
        sigaddset(&set, SIGALRM);
    return set;
}

void bench_fault_hold(int on)
{
    static sigset_t before;
    static int held;
    if (on && !held) {
        sigset_t set = fault_set(0);
        held = pthread_sigmask(SIG_BLOCK, &set, &before) == 0;
        main_holds = held && fault_rank >= 0 && pthread_equal(pthread_self(), main_thread);
    } else if (!on && held) {
        main_holds = 0;
        pthread_sigmask(SIG_SETMASK, &before, NULL);
        held = 0;
    }
}

void bench_fault_block_for_thread(void *saved)
{
    sigset_t set = fault_set(1);
    pthread_sigmask(SIG_BLOCK, &set, saved);
}

void bench_fault_unblock(const void *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}
