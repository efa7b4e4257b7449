/* Faults that end a job from outside: the signals a cluster sends (Slurm's
 * time limit, scancel, preemption, a launcher ending the job after another
 * rank failed) and SIGPIPE (a peer's connection closed under a write).  Rank 0's handler keeps the rows its archive checkpointed
 * (bench_keep.h), names the signal in one line on stderr,
 * and the process then dies by the signal, as it would have.  Everything a
 * handler does is async-signal-safe. */
#ifndef BENCH_FAULT_H
#define BENCH_FAULT_H

#include <mpi.h>
#include <stddef.h>

/* Handle SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGPIPE where they have
 * their default action (one set by MPI or the launcher, or ignored under
 * nohup, is left alone).  After MPI_Init (the line names the rank); once
 * per process, later calls do nothing. */
void bench_fault_signals(void);
/* Defer the stop signals (all but SIGPIPE): the first is only recorded,
 * for the program to stop at its next step boundary, all ranks together
 * (bench_deadline_passed agrees on it, bench_stop_signal names it); the
 * same signal again changes nothing, another one ends the process as
 * without deferral.  rb_train. */
void bench_fault_defer(void);
/* The deferred signal this process received; 0 if none. */
int bench_fault_pending(void);
/* Collective: end the run stopped by sig, as the handler would have:
 * rank 0 keeps what its archive checkpointed (bench_keep.h) and names the
 * signal, detail appended (", at iteration 120"), in one line; every rank
 * then dies by sig. */
_Noreturn void bench_fault_stop(MPI_Comm comm, int sig, const char *detail);
/* Hold (on = 1) or release (0) those signals on this thread: one that comes
 * meanwhile is handled at the release. */
void bench_fault_hold(int on);
/* Block those signals and SIGALRM for a thread about to be created (the
 * signals go to the main thread, where bench_fault_hold works); restore
 * with bench_fault_unblock(saved) once it is created.  saved: a sigset_t. */
void bench_fault_block_for_thread(void *saved);
void bench_fault_unblock(const void *saved);

#endif
