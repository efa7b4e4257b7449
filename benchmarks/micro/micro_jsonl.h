/* rb_micro -J FILE: the rows of a finished archive as JSON lines, for
 * users who will not load HDF5 (nccl-tests' -J).  One object per row of
 * /micro/results: "schema" (MICRO_JSONL_SCHEMA), the archive root's
 * attributes (the run metadata; a name that is also a column gets the
 * prefix run_), "row" (its index), then every column.  NaN and infinities
 * are null.  Written to FILE.tmp.PID and renamed, so FILE appears only
 * complete (results/README.md).  Rank 0 only; the caller prints msg. */
#ifndef MICRO_JSONL_H
#define MICRO_JSONL_H

#include <stddef.h>

#define MICRO_JSONL_SCHEMA "reducerbench-jsonl/1"

/* 0 if FILE may be written (bench_output_ok: absent or, with force, a
 * regular file, in a directory a file can be made in); else -1 with
 * "-J: why" in msg. */
int micro_jsonl_target_ok(const char *path, int force, char *msg, size_t mlen);
/* The archive at h5path (complete) into path, never replacing a file
 * that appeared meanwhile unless force; 0, or -1 with msg. */
int micro_jsonl_export(const char *h5path, const char *path, int force, char *msg, size_t mlen);

#endif
