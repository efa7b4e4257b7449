/* The --timeout time limit: a hard watchdog for a process stuck inside a call,
 * and the cooperative check between calls. */
#ifndef BENCH_WATCHDOG_H
#define BENCH_WATCHDOG_H

#include <mpi.h>

/* After `seconds` (0 = off) the process exits 124 even if stuck inside
 * MPI; bench_deadline_passed() is the cooperative check (collective). */
void bench_watchdog_start(double seconds);
int bench_deadline_passed(MPI_Comm comm);

#endif
