/* How busy the machine was around a run: load average, CPU taken by other
 * processes, and time stolen by the hypervisor.  On a 2-core VM a run made
 * beside other work measures that work as much as the reducer, so every
 * archive records these and the analysis keeps busy runs out of its
 * headline.  Linux /proc only; elsewhere every value is -1 (unknown). */
#ifndef BENCH_MACHINE_LOAD_H
#define BENCH_MACHINE_LOAD_H

#include <hdf5.h>
#include <sys/types.h>

/* This process as the operating system knows it (also under SimGrid). */
pid_t bench_machine_os_pid(void);

/* Before the run: the 1-minute load average and the cores busy with other
 * processes over a short window (job_pids: this run's processes on this
 * host, whose CPU time is not counted as other).  Writes
 * machine_cores, machine_load_before, machine_other_cpu_before. */
int bench_machine_load_start(hid_t file, const pid_t *job_pids, int npids);

/* After the run (same process as start): machine_load_after,
 * machine_other_cpu_during, machine_steal_during. */
int bench_machine_load_end(hid_t file);

#endif
