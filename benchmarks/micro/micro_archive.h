/* rb_micro's part of the results archive: /micro/results (one micro_row
 * per measured row), /micro/samples/<row> and /micro/papi/<row> (layout in
 * results/README.md), as rb_train's train_archive.c writes /train.  The harness's archive owns the file; these write
 * into it and agree on the status like its own functions (collective over
 * the archive's communicator unless noted; a NULL archive does nothing). */
#ifndef MICRO_ARCHIVE_H
#define MICRO_ARCHIVE_H

#include "harness/archive.h"
#include "harness/bench_papi.h"
#include "micro_row.h"
#include "reducer.h"

/* Append one row to /micro/results with its raw samples (per iteration x
 * per rank, microseconds, iteration-major; significant on rank 0 only) and
 * the reducer options that applied to it. */
int micro_archive_row(bench_archive *a, const micro_row *row, const rb_options *opts,
                      const double *samples_us, int iters, int ranks);
/* Store the PAPI counts of the row appended last as /micro/papi/<row>
 * (ranks x phases x events) with the events asked for, whether each was
 * available and why not.  Collective (gathers the counts); papi may be
 * NULL (nothing written). */
int micro_archive_papi(bench_archive *a, const bench_papi *papi);
/* Rows appended to /micro/results so far (rank 0; 0 elsewhere).  Not
 * collective. */
long micro_archive_rows(bench_archive *a);

#endif
