/* benchmarks/harness: what every benchmark program shares.
 *
 * The floors (docs/architecture.md): the library (src/, libreducer) at the
 * bottom, this harness above it, the programs (benchmarks/micro, train,
 * sketch, gpubench) on top.  A file includes only its own floor and the
 * floors below it; tests/include_graph.py fails `make check` on an upward
 * include or an include circle.  Programs never include each other.
 *
 * One header per concern, from the bottom of the harness up:
 *   h5attr.h       typed HDF5 attributes, string datasets, tables of C
 *                  structs, groups by path
 *   bench_fail.h   the program's name, rank 0's printing, naming a
 *                  failure (one stderr line per job), exit codes,
 *                  bench_exit
 *   bench_usage.h  usage errors (exit 2)
 *   bench_init.h   MPI start-up with the allocator's policy (RB_MALLOC)
 *   bench_parse.h  strict number parsers
 *   bench_agree.h  rank agreement: a failure on any rank, the same
 *                  command line on all
 *   bench_quantile.h  quantiles of samples
 *   bench_watchdog.h  the -T time limit
 *   bench_common.h all seven above in one include (what programs use)
 *   bench_cli.h    the table-driven command-line parser and --help
 *   bench_device.h device buffers for -d cuda
 *   memneed.h      memory a run needs per rank against what a rank may
 *                  hold (reducer state bounds, Slurm / MemAvailable / -M)
 *   tmpfiles.h     temporary names with host and process, stale cleanup
 *   gradgen.h      deterministic synthetic sparse gradients
 *   simmeta.h      SimGrid SMPI: simulation metadata, shared buffers,
 *                  modelled compute
 *   bench_papi.h   PAPI counters per phase
 *   topology.h     hwloc topology and binding by local rank
 *   metadata.h     the archive's root attributes (calls simmeta, papi,
 *                  topology, common)
 *   archive.h      the HDF5 results archive (calls metadata, topology,
 *                  papi, tmpfiles); a program writes its own groups
 *                  (/micro, /train) through bench_archive_file
 * The harness may print (it serves programs) and returns status codes for
 * the program to act on; it exits only in bench_usage_error, bench_exit
 * and the watchdog.
 *
 * This header includes them all, for a program that wants the whole
 * harness; harness files include the single headers they need. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include "h5attr.h"
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
#include "simmeta.h"
#include "bench_papi.h"
#include "topology.h"
#include "metadata.h"
#include "archive.h"

#endif
