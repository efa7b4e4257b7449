/* Faults that end a job from outside: the signals a cluster sends (Slurm's
 * time limit, scancel, preemption, a launcher ending the job after another
 * rank failed) and SIGPIPE (a peer's connection closed under a write).  Rank 0's handler keeps the rows its archive checkpointed
 * (bench_keep.h), names the signal in one line on stderr,
 * and the process then dies by the signal, as it would have.  Everything a
 * handler does is async-signal-safe. */
#ifndef BENCH_FAULT_H
#define BENCH_FAULT_H

#include <stddef.h>

/* Handle SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGPIPE where they have
 * their default action (one set by MPI or the launcher, or ignored under
 * nohup, is left alone).  After MPI_Init (the line names the rank); once
 * per process, later calls do nothing. */
void bench_fault_signals(void);
/* Hold (on = 1) or release (0) those signals on this thread: one that comes
 * meanwhile is handled at the release. */
void bench_fault_hold(int on);
/* Block those signals and SIGALRM for a thread about to be created (the
 * signals go to the main thread, where bench_fault_hold works); restore
 * with bench_fault_unblock(saved) once it is created.  saved: a sigset_t. */
void bench_fault_block_for_thread(void *saved);
void bench_fault_unblock(const void *saved);

#endif
