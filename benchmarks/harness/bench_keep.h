/* What a fault keeps of a run: the open archive's temporary, as a signal
 * handler or the stall watchdog's thread finds it, and async-signal-safe
 * text for their lines.  Everything here that a fault calls is
 * async-signal-safe (pwrite, rename, unlink, no allocation, no stdio).
 *
 * The archive (archive.h) arms it when it creates the temporary, says how
 * many rows each checkpoint (an H5Fflush) left readable on disk, and
 * disarms it when it finishes or removes the file itself.  A fault then
 * (bench_keep): with rows checkpointed, writes its reason into the file's
 * user block (BENCH_KEEP_NOTE_BYTES at the start of the file, which HDF5
 * leaves alone: BENCH_KEEP_NOTE_PREFIX, the reason, a newline, NULs) and
 * renames it PATH + BENCH_KEEP_SUFFIX, where neither the job scripts nor
 * the analysis take it for a finished run (its root attribute complete
 * stays 0); without rows it removes it. */
#ifndef BENCH_KEEP_H
#define BENCH_KEEP_H

#include <stddef.h>

#define BENCH_KEEP_NOTE_BYTES 512
#define BENCH_KEEP_NOTE_PREFIX "reducerbench: interrupted: "
#define BENCH_KEEP_SUFFIX ".interrupted"

enum {
    BENCH_KEEP_NONE,      /* nothing armed (no archive, not rank 0, finished or kept already) */
    BENCH_KEEP_REMOVED,   /* no row checkpointed: the temporary was removed */
    BENCH_KEEP_RENAMED,   /* kept as PATH.interrupted */
    BENCH_KEEP_IN_PLACE,  /* the rename failed: kept under its temporary name */
};

/* The archive's side (not async-signal-safe, rank 0).  arm: the temporary
 * tmp, to be kept as kept, open on fd (for the note; closed by disarm);
 * no rows yet.  disarm: no longer a fault's (the archive finishes or
 * removes it). */
void bench_keep_arm(const char *tmp, const char *kept, int fd);
void bench_keep_disarm(void);
/* Between a unit's first write and its flush (on = 1), then the rows the
 * flushed file holds (rows >= 0) and the end of the unit (on = 0). */
void bench_keep_writing(int on, long rows);

/* What the rows are called in bench_keep_text ("row(s)" unless set; a
 * string that lives as long as the program). */
void bench_keep_unit(const char *unit);

/* A fault's side: once (the first caller wins), a BENCH_KEEP_* value. */
int bench_keep(const char *why);
/* Where bench_keep put the file for its return value how ("" for none),
 * and the rows kept. */
const char *bench_keep_path(int how);
long bench_keep_rows(void);

/* Text: append s (or v in decimal) to buf[n..cap), NUL-terminated; the
 * new length.  And what bench_keep did (how): "; the N row(s) finished
 * are kept in PATH (complete = 0: ...)", "; nothing measured was
 * saved yet: no archive is kept", or nothing. */
size_t bench_keep_put(char *buf, size_t cap, size_t n, const char *s);
size_t bench_keep_put_long(char *buf, size_t cap, size_t n, long v);
size_t bench_keep_text(char *buf, size_t cap, size_t n, int how);

#endif
