/* Temporary names of files being written (the archive, -J): PATH.tmp.HOST.PID,
 * so that a temporary left by a killed run can be told from one still
 * being written: its host is this one and its process is gone.  Never one
 * of a live process or of another host (a shared file system). */
#ifndef BENCH_TMPFILES_H
#define BENCH_TMPFILES_H

#include <stddef.h>

/* This host's name as it goes into temporary names (no '/'). */
const char *bench_tmp_host(void);
/* PATH.tmp.HOST.PID of this process into buf (a base name too long for
 * that to fit NAME_MAX is shortened: its start, "~", a digest, ".h5"). */
void bench_tmp_name(const char *path, char *buf, size_t len);
/* Rename tmp to path; without force atomically refusing an existing path
 * (renameat2 RENAME_NOREPLACE, else link + unlink), so that of two
 * writers racing for one path exactly one wins.  0, or -1 with errno
 * (EEXIST: path exists). */
int bench_tmp_commit(const char *tmp, const char *path, int force);
/* For a temporary name of path: 1 and its host and pid; 0 if name is not
 * one (an older PATH.tmp.PID has no host: 0). */
int bench_tmp_parse(const char *name, const char *base, char *host, size_t hlen, long *pid);
/* Remove the temporaries of path (same directory) that this host's dead
 * processes left; each name into report (one per line, up to rlen).  keep
 * (NULL: none) is asked first: non-zero when it took the file (the
 * archive: kept as PATH.interrupted, what it held readable), its words
 * for the report in note.  Returns how many were removed or kept. */
typedef int (*bench_tmp_keep_fn)(const char *tmp, const char *path, char *note, size_t nlen);
int bench_tmp_clean_stale(const char *path, bench_tmp_keep_fn keep, char *report, size_t rlen);

/* Whether two paths name one file: the same inode when both exist, else
 * the same resolved directory and base name ("x.h5", "./x.h5" and a link
 * to the directory are one file before either is written). */
int bench_same_file(const char *a, const char *b);
/* Before a run measures anything: 0 if an output file (-J, --save-result,
 * a gradient trace) may be written at path: not empty, absent or (with
 * force) a regular file, and a file can be created in its directory (a
 * temporary of this process is created and removed: a missing, read-only
 * or full directory, or one like /proc, is named now, not after the run).
 * Else -1 with the reason in msg. */
int bench_output_ok(const char *path, int force, char *msg, size_t mlen);

#endif
