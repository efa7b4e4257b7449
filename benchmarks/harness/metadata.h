/* Run metadata for the results archive: root attributes with Adiak-style
 * names (results/README.md lists them). */
#ifndef BENCH_METADATA_H
#define BENCH_METADATA_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

/* Schema of the files written (results/README.md); bump on any change a
 * reader could notice. */
#define BENCH_SCHEMA_VERSION 1

/* Collective (gathers host names).  Writes the metadata known at start on
 * root's file (ignored elsewhere).  Returns non-zero on every rank when
 * root failed. */
int bench_metadata_write_start(MPI_Comm comm, int root, hid_t file, const char *tool,
                            int argc, char **argv);
/* Not collective: end_time, then complete = 1 (the last attribute). */
int bench_metadata_write_end(hid_t file);

/* ISO 8601 UTC time, e.g. 2026-11-22T18:45:20Z. */
void bench_utc_now(char *buf, size_t len);

#endif
