/* benchmarks/harness: what every benchmark program shares.
 *
 * The floors (docs/architecture.md): the library (src/, libreducer) at the
 * bottom, this harness above it, the programs (benchmarks/micro, train,
 * sketch, gpubench) on top.  A file includes only its own floor and the
 * floors below it; tests/arch/include_graph.py fails `make check` on an upward
 * include or an include circle.  Programs never include each other.
 *
 * One header per job, from the bottom of the harness up:
 *   h5attr.h          typed HDF5 attributes, string datasets, tables of C
 *                     structs, groups by path
 *   sha256.h          SHA-256 of a buffer or a file (provenance hashes)
 *   bench_fail.h      the program's name, this rank, rank 0's printing,
 *                     naming a failure (one stderr line per job), the exit
 *                     codes and bench_exit
 *   bench_usage.h     usage errors (exit 2)
 *   bench_init.h      MPI start-up with the allocator's policy (RB_MALLOC)
 *   bench_parse.h     strict number parsers
 *   bench_agree.h     rank agreement: a failure on any rank (named once),
 *                     the same command line on all
 *   bench_quantile.h  quantiles of samples
 *   bench_watchdog.h  the --timeout time limit
 *   bench_keep.h      what a fault keeps of the open archive (async-signal-
 *                     safe: a note in its user block, FILE.h5.interrupted)
 *   bench_fault.h     the signals that end a job: rank 0 keeps, names, dies
 *                     by the signal
 *   bench_stall.h     the progress watchdog: no call finished for too long
 *                     (a link down, a peer gone) ends the run, exit 3
 *   bench_common.h    the ten above in one include (what programs use)
 *   bench_cli.h       the table-driven command-line parser and --help
 *   bench_device.h    device buffers for -d cuda
 *   memneed.h         memory a run needs per rank against what a rank may
 *                     hold (reducer state bounds, Slurm / MemAvailable / -M)
 *   tmpfiles.h        temporary names with host and process, stale cleanup
 *   gradgen.h         deterministic synthetic sparse gradients
 *   trace.h           recorded gradient traces: written by rb_train,
 *                     replayed by rb_micro --input trace:
 *   simmeta.h         SimGrid SMPI: simulation metadata, shared buffers,
 *                     modelled compute
 *   bench_papi.h      PAPI counters per phase
 *   topology.h        hwloc topology and binding by local rank
 *   machine_load.h    how busy the machine was around the run
 *   metadata.h        the archive's root attributes (calls simmeta, papi,
 *                     topology, machine_load, bench_init)
 *   archive.h         the HDF5 results archive (calls metadata, topology,
 *                     papi, tmpfiles, keep, fault); a program writes its own groups
 *                     through bench_archive_file, _hold and _agree
 *                     (/micro: benchmarks/micro/micro_archive.c; /train:
 *                     benchmarks/train/train_archive.c)
 * Every exported name starts with bench_ (the library owns rb_;
 * tests/arch/harness_symbols.sh).  The harness may print (it serves programs)
 * and returns status codes for the program to act on; it exits only in
 * bench_usage_error, bench_exit, the watchdogs (--timeout's hard one, the
 * progress watchdog) and the fault signals' handler.
 *
 * This header includes them all, for a program that wants the whole
 * harness; harness files include the single headers they need. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include "h5attr.h"
#include "sha256.h"
#include "bench_fail.h"
#include "bench_usage.h"
#include "bench_init.h"
#include "bench_parse.h"
#include "bench_agree.h"
#include "bench_quantile.h"
#include "bench_watchdog.h"
#include "bench_common.h"
#include "bench_cli.h"
#include "bench_device.h"
#include "memneed.h"
#include "tmpfiles.h"
#include "gradgen.h"
#include "trace.h"
#include "simmeta.h"
#include "bench_papi.h"
#include "topology.h"
#include "machine_load.h"
#include "metadata.h"
#include "archive.h"

#endif
