/* The --timeout time limit: a hard watchdog for a process stuck inside a call,
 * and the cooperative check between calls. */
#ifndef BENCH_WATCHDOG_H
#define BENCH_WATCHDOG_H

#include <mpi.h>

/* After 1.25 x `seconds` + 10 s (0 = off) the process exits 124 even if
 * stuck inside MPI, with one line (rank 0's; the other ranks' fire 5 s
 * later, when rank 0's exit has not ended the job), rank 0 keeping the
 * rows its archive checkpointed (bench_keep.h); bench_deadline_passed()
 * is the cooperative check (collective), at `seconds`. */
void bench_watchdog_start(double seconds);
int bench_deadline_passed(MPI_Comm comm);
/* The stop signal a rank deferred (bench_fault_defer), as agreed by the
 * last bench_deadline_passed (the largest signal number when ranks got
 * different ones); 0 if none. */
int bench_stop_signal(void);

#endif
