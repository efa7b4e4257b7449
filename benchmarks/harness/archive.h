/* The results archive: one HDF5 file per run, written by rank 0 to a
 * temporary name and renamed when complete (schema: results/README.md).
 * All functions are collective over the communicator given to
 * bench_archive_open unless noted; they print their own error messages (rank
 * 0, or the failing rank) and return 0 on success, non-zero on failure, the
 * same on every rank. */
#ifndef BENCH_ARCHIVE_H
#define BENCH_ARCHIVE_H

#include <hdf5.h>
#include <mpi.h>

typedef struct bench_archive bench_archive;
struct bench_papi;

/* Resolve the path (NULL = default under results/: the Slurm job id, plus
 * the array task id, when there is one, else a timestamp), refuse an
 * existing file unless force, create the temporary file (so an unwritable
 * path fails here, before any measurement) and write the root metadata
 * known at start and /topology (call bench_bind first so the binding is
 * recorded).  path "none" disables the archive: *out = NULL and every
 * other function accepts NULL and does nothing. */
int bench_archive_open(MPI_Comm comm, const char *tool, const char *path, int force,
                    int argc, char **argv, bench_archive **out);
/* Final path of the archive (valid on every rank), NULL when disabled. */
const char *bench_archive_path(const bench_archive *a);
/* Store PAPI counts at an arbitrary path (e.g. /train/papi); collective. */
int bench_archive_papi(bench_archive *a, const char *path, const struct bench_papi *papi);
/* Rank 0's open HDF5 file, for benchmark-specific groups such as /train
 * and /micro; H5I_INVALID_HID on other ranks or when disabled.  Not
 * collective. */
hid_t bench_archive_file(bench_archive *a);
/* The communicator the archive was opened on (MPI_COMM_NULL when
 * disabled).  Not collective. */
MPI_Comm bench_archive_comm(const bench_archive *a);
/* Keep obj (a dataset of the file that a program appends to) open until
 * bench_archive_close, which closes it before finishing the file: what
 * HDF5 caches for it is written, and a failure to write it (a full disk)
 * named, at "cannot finish".  0; -1 (obj not taken: the caller closes it)
 * on other ranks than 0 or past 8 objects.  Rank 0; not collective. */
int bench_archive_hold(bench_archive *a, hid_t obj);
/* Collective, for a program's own groups: rank 0's status rc (of writing
 * with bench_archive_file) to every rank.  Non-zero: the failure is named
 * once, "archive: cannot DOING TMPFILE: <HDF5's reason>", and every rank
 * gets 1; else 0.  a must not be NULL. */
int bench_archive_agree(bench_archive *a, int rc, const char *doing);
/* Rank 0 from here until bench_archive_checkpoint writes a unit of data
 * (rb_micro: a row) that a fault must not split: the fault signals
 * (bench_fault.h) are held on this thread, and a fault on another thread
 * waits for the checkpoint's flush.  Not collective; a no-op elsewhere. */
void bench_archive_writing(bench_archive *a);
/* Collective: rank 0 flushes the file (H5Fflush: the temporary on disk is
 * a readable HDF5 file holding `rows` rows, still complete = 0) and
 * releases what bench_archive_writing held; a fault from now on keeps
 * those rows (bench_keep.h).  rows < 0 (the writes failed): only the
 * release, no flush, 0 returned (not collective then).  0, or 1 on every
 * rank with the failure named ("archive: cannot flush ..."). */
int bench_archive_checkpoint(bench_archive *a, long rows);

/* Set the root attribute name = 1 (timed_out, diverged: a run that
 * ended early but keeps what it measured).  Rank 0; not collective. */
int bench_archive_mark(bench_archive *a, const char *name);
/* Finish: on success write the end time, close and rename to the final
 * path (without force refusing, atomically, a file another run created
 * there meanwhile); on failure remove the temporary file (nothing looks complete).
 * Frees a. */
int bench_archive_close(bench_archive *a, int success);

#endif
