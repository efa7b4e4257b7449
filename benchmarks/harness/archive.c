/* The results archive (archive.h; layout in results/README.md).
 *
 * Rank 0 writes PATH.tmp.HOST.PID in the destination directory and renames
 * it to PATH only after the last attribute (complete = 1) is written, so a
 * failed run leaves nothing; a program that checkpoints (rb_micro, after
 * every row) keeps a readable temporary on disk, which a fault (a signal,
 * a watchdog: bench_keep.h) renames PATH.interrupted with its reason, and
 * which a killed run leaves as it is; the next run to the same path
 * removes the temporaries of this host's dead processes (tmpfiles.h).
 * Every status is broadcast, so all ranks return the same result. */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "bench_fail.h"
#include "bench_fault.h"
#include "bench_keep.h"
#include "bench_papi.h"
#include "h5attr.h"
#include "metadata.h"
#include "tmpfiles.h"
#include "topology.h"

#define ROOT 0
#define MAX_HELD 8

struct bench_archive {
    MPI_Comm comm;
    int rank;
    char tool[64];
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
    int force;                /* --force: the final rename may replace a file */
    int committed;            /* the temporary became the archive */
    hid_t file;               /* rank 0 */
    hid_t held[MAX_HELD];     /* rank 0: a program's objects kept open (bench_archive_hold) */
    int nheld;
};

/* ---------------------------------------------------------- faults */

/* An exit with the archive still open: removed when no row was
 * checkpointed (a failure that named itself); else an exit from inside a
 * library (an MPI library's error handling), whose rows are kept, said in
 * one line. */
static void keep_at_exit(void)
{
    static const char why[] = "the process exited before the run finished (an exit inside a "
                              "library: the MPI library's error handling?)";
    int how = bench_keep(why);
    if (how != BENCH_KEEP_RENAMED && how != BENCH_KEEP_IN_PLACE)
        return;
    fprintf(stderr, "%s: rank 0: %s", bench_prog(), why);
    char kept[2 * PATH_MAX + 256];
    bench_keep_text(kept, sizeof kept, 0, how);
    fprintf(stderr, "%s\n", kept);
}

/* Create PATH.tmp.HOST.PID ourselves (errno gives a clear reason).  A
 * file of that name is a dead predecessor's that had this process id on
 * this host (containers reuse pids): no live process can own it. */
static int create_unique_tmp(bench_archive *a)
{
    bench_tmp_name(a->path, a->tmp, sizeof a->tmp);
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0 && errno == EEXIST && unlink(a->tmp) == 0)
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    return fd;
}

/* Whether a dead run's temporary holds what its program checkpointed: a
 * readable HDF5 file with a group of the program's beside /topology
 * (rb_micro's /micro appears with its first row flushed). */
static int holds_checkpoint(const char *tmp)
{
    hid_t f = H5Fopen(tmp, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return 0;
    H5G_info_t info;
    int held = H5Gget_info(f, &info) >= 0 && info.nlinks > 1;
    H5Fclose(f);
    return held;
}

/* A dead run's temporary with rows checkpointed (its rank 0 killed:
 * SIGKILL, a node lost) is kept as PATH.interrupted where there is none
 * yet, as the job scripts and rb-archive clean keep it. */
static int keep_dead_rows(const char *tmp, const char *path, char *note, size_t nlen)
{
    char kept[PATH_MAX + 32];
    struct stat st;
    snprintf(kept, sizeof kept, "%s" BENCH_KEEP_SUFFIX, path);
    if (lstat(kept, &st) == 0 || !holds_checkpoint(tmp) || rename(tmp, kept) != 0)
        return 0;
    snprintf(note, nlen, ": its rows kept as %s", kept);
    return 1;
}

/* Temporaries of this path left by this host's dead processes: removed
 * (or kept, holding rows), and said on stderr. */
static void clean_stale(const bench_archive *a)
{
    char report[4096];
    if (bench_tmp_clean_stale(a->path, keep_dead_rows, report, sizeof report) > 0)
        fprintf(stderr, "%s: archive: removed temporaries of runs that ended without finishing "
                "(kept those holding rows):\n%s\n", a->tool, report);
}

/* A fault from now on keeps the rows checkpointed (none yet); fd: the
 * temporary, open for the note. */
static void watch_pending(const bench_archive *a, int fd)
{
    static int installed;
    char kept[PATH_MAX + 32];
    snprintf(kept, sizeof kept, "%s" BENCH_KEEP_SUFFIX, a->path);
    bench_keep_arm(a->tmp, kept, fd);
    bench_fault_signals();
    if (!installed)
        atexit(keep_at_exit);
    installed = 1;
}

/* ---------------------------------------------------------- open */

static int status_all(MPI_Comm comm, int rc)
{
    MPI_Bcast(&rc, 1, MPI_INT, ROOT, comm);
    return rc;
}

/* A Slurm variable as part of a file name under results/: letters,
 * digits, '-', '_' and '.' kept, anything else (a '/' above all: a job id
 * of "../../etc" must not leave results/) becomes '_', and a leading '.'
 * too (no hidden or ".." names).  1 when something was replaced. */
static int sanitise_name_part(const char *in, char *out, size_t len)
{
    int changed = 0;
    size_t i = 0;
    for (; in[i] && i + 1 < len && i < 64; i++) {
        char c = in[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_' || (c == '.' && i > 0);
        out[i] = ok ? c : '_';
        changed |= !ok;
    }
    changed |= in[i] != '\0';   /* cut at 64 characters */
    out[i] = '\0';
    return changed;
}

/* results/<job>[_<task>].h5 under Slurm, else results/<tool>-<UTC>-<pid>.h5. */
static int default_path(const char *tool, char *buf, size_t len, char *msg, size_t mlen)
{
    if (mkdir("results", 0777) && errno != EEXIST) {
        snprintf(msg, mlen, "cannot create directory results/: %s", strerror(errno));
        return -1;
    }
    const char *job = getenv("SLURM_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");
    if (job && *job) {
        char j[72], t[72] = "";
        int changed = sanitise_name_part(job, j, sizeof j);
        if (task && *task)
            changed |= sanitise_name_part(task, t, sizeof t);
        snprintf(buf, len, "results/%s%s%s.h5", j, t[0] ? "_" : "", t);
        if (changed)
            fprintf(stderr, "%s: warning: SLURM_JOB_ID/SLURM_ARRAY_TASK_ID hold characters "
                    "that cannot be in a file name under results/; writing %s\n", tool, buf);
        return 0;
    }
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, len, "results/%s-%s-%ld.h5", tool, stamp, (long)getpid());
    return 0;
}

/* 0 if an archive may be renamed onto path: nothing there, or (with
 * force) a regular file.  A device, FIFO or link is never replaced, even
 * with --force: as root, "-o /dev/null --force" would destroy /dev/null. */
static int target_ok(const char *path, int force, char *msg, size_t mlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode))
        snprintf(msg, mlen, "%s is a directory", path);
    else if (S_ISLNK(st.st_mode))
        snprintf(msg, mlen, "%s is a symbolic link; give the path of the file itself", path);
    else if (!S_ISREG(st.st_mode))
        snprintf(msg, mlen, "%s exists and is not a regular file (a device, FIFO or socket)", path);
    else if (!force)
        snprintf(msg, mlen, "refusing to overwrite existing archive %s (use --force)", path);
    else
        return 0;
    return -1;
}

/* Rank 0: choose the path, check it, create the temporary file. */
static int create_file(bench_archive *a, const char *path, int force, char *msg, size_t mlen)
{
    if (path && !*path) {
        snprintf(msg, mlen, "the output path is empty (give a file, or 'none')");
        return -1;
    }
    if (path)
        snprintf(a->path, sizeof a->path, "%s", path);
    else if (default_path(a->tool, a->path, sizeof a->path, msg, mlen))
        return -1;
    if (target_ok(a->path, force, msg, mlen))
        return -1;
    struct stat st;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", a->path);
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, mlen, "cannot write %s: directory %s does not exist", a->path, d);
        return -1;
    }
    /* HDF5's own exit handler closes what is still open; a file whose
     * close failed (a full disk) is half torn down and that handler
     * crashed on it.  Every handle is closed here, so the handler is not
     * needed (a no-op when the library is already in use).  Its error
     * stack is not printed: failures are named here (and a dead run's
     * torn temporary, opened by clean_stale, is not ours to report). */
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    clean_stale(a);
    int fd = create_unique_tmp(a);
    if (fd < 0) {
        snprintf(msg, mlen, "cannot write %s: %s", a->tmp, strerror(errno));
        return -1;
    }
    watch_pending(a, fd);
    /* A user block before the HDF5 data: where a fault writes its note
     * with plain pwrite (results/README.md). */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0 && H5Pset_userblock(fcpl, BENCH_KEEP_NOTE_BYTES) >= 0)
        a->file = H5Fcreate(a->tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (a->file < 0) {
        char why[256];
        snprintf(msg, mlen, "HDF5 cannot create %s: %s", a->tmp, bench_h5_error_reason(why, sizeof why));
        bench_keep_disarm();
        unlink(a->tmp);
        return -1;
    }
    return 0;
}

/* Rank 0: close and remove the temporary file. */
/* Rank 0: close the objects a program handed over; 0, or -1 when HDF5
 * failed to write what it cached for one (a full disk). */
static int close_held(bench_archive *a)
{
    int rc = 0;
    for (int i = 0; i < a->nheld; i++)
        rc |= H5Oclose(a->held[i]) < 0 ? -1 : 0;
    a->nheld = 0;
    return rc;
}

/* Rank 0: close, and remove the temporary unless it became the archive. */
static void discard(bench_archive *a)
{
    close_held(a);
    if (a->file >= 0)
        H5Fclose(a->file);
    a->file = H5I_INVALID_HID;
    bench_keep_disarm();
    if (!a->committed)
        unlink(a->tmp);
}

int bench_archive_open(MPI_Comm comm, const char *tool, const char *path, int force,
                    int argc, char **argv, bench_archive **out)
{
    *out = NULL;
    if (path && !strcmp(path, "none"))
        return 0;
    bench_archive *a = calloc(1, sizeof *a);
    int rank;
    MPI_Comm_rank(comm, &rank);
    int rc = a ? 0 : 1;
    if (status_all(comm, rc) || !a) {
        bench_fail_on(rank == ROOT, BENCH_NO_CODE, "archive", "out of memory");
        free(a);
        return 1;
    }
    a->comm = comm;
    a->rank = rank;
    a->file = H5I_INVALID_HID;
    snprintf(a->tool, sizeof a->tool, "%s", tool);
    a->force = force;
    char msg[2 * PATH_MAX + 256] = "";
    if (rank == ROOT)
        rc = create_file(a, path, force, msg, sizeof msg);
    if (status_all(comm, rc)) {
        bench_fail_on(rank == ROOT, BENCH_NO_CODE, "archive", "%s", msg);
        free(a);
        return 1;
    }
    MPI_Bcast(a->path, (int)sizeof a->path, MPI_CHAR, ROOT, comm);
    rc = bench_metadata_write_start(comm, ROOT, a->file, tool, argc, argv);
    rc |= bench_topology_write(comm, ROOT, a->file);
    if (rank == ROOT && !rc)
        rc = H5Fflush(a->file, H5F_SCOPE_GLOBAL) < 0;
    char why[256] = "";
    if (rank == ROOT && rc)
        bench_h5_error_reason(why, sizeof why);
    if (status_all(comm, rc)) {
        bench_fail_on(rank == ROOT, BENCH_NO_CODE, "archive", "cannot write the run metadata to %s: %s",
                      a->tmp, why);
        if (rank == ROOT)
            discard(a);
        free(a);
        return 1;
    }
    *out = a;
    return 0;
}

const char *bench_archive_path(const bench_archive *a)
{
    return a ? a->path : NULL;
}

hid_t bench_archive_file(bench_archive *a)
{
    return a && a->rank == ROOT ? a->file : H5I_INVALID_HID;
}

MPI_Comm bench_archive_comm(const bench_archive *a)
{
    return a ? a->comm : MPI_COMM_NULL;
}

int bench_archive_hold(bench_archive *a, hid_t obj)
{
    if (!a || a->rank != ROOT || a->nheld == MAX_HELD)
        return -1;
    a->held[a->nheld++] = obj;
    return 0;
}

/* HDF5 often fails a write into a full file system without recording the
 * system's error (its chunk cache wrote later, or the metadata): the file
 * system is asked instead. */
static void reason_or_space(const bench_archive *a, char *why, size_t len)
{
    bench_h5_error_reason(why, len);
    if (strncmp(why, "HDF5 gives no reason", 20) && strncmp(why, "HDF5: ", 6))
        return;
    char dir[sizeof a->tmp];
    snprintf(dir, sizeof dir, "%s", a->tmp);
    struct statvfs fs;
    if (statvfs(dirname(dir), &fs) == 0 && (double)fs.f_bavail * (double)fs.f_bsize < 1048576.0)
        snprintf(why, len, "No space left on device (%.0f bytes free where it is written)",
                 (double)fs.f_bavail * (double)fs.f_bsize);
}

int bench_archive_agree(bench_archive *a, int rc, const char *doing)
{
    char why[256] = "";
    if (a->rank == ROOT && rc)
        reason_or_space(a, why, sizeof why);
    if (status_all(a->comm, rc)) {
        bench_fail_on(a->rank == ROOT, BENCH_NO_CODE, "archive", "cannot %s %s: %s", doing, a->tmp, why);
        return 1;
    }
    return 0;
}


/* ---------------------------------------------------------- PAPI */

static int write_papi(hid_t file, const char *path, const bench_papi *p, const long long *counts, int ranks)
{
    int nev = bench_papi_nevents(p), nph = bench_papi_nphases(p);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    hid_t g = bench_h5_group(file, dirname(parent));
    if (g < 0)
        return -1;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    hsize_t dims[3] = {(hsize_t)ranks, (hsize_t)nph, (hsize_t)nev};
    hid_t s = H5Screate_simple(3, dims, NULL);
    hid_t dcpl = dims[0] && dims[1] && dims[2] ? bench_h5_checked_dcpl(3, dims) : H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = dcpl < 0 ? H5I_INVALID_HID : H5Dcreate2(g, base, H5T_NATIVE_INT64, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    int rc = d < 0 ? -1 : 0;
    if (d >= 0) {
        rc |= H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts) < 0;
        const char *events[BENCH_PAPI_MAX_EVENTS], *reasons[BENCH_PAPI_MAX_EVENTS], *phases[BENCH_PAPI_MAX_PHASES];
        int avail[BENCH_PAPI_MAX_EVENTS];
        for (int e = 0; e < nev; e++) {
            events[e] = bench_papi_event(p, e);
            reasons[e] = bench_papi_reason(p, e);
            avail[e] = bench_papi_available(p, e);
        }
        for (int ph = 0; ph < nph; ph++)
            phases[ph] = bench_papi_phase(p, ph);
        rc |= bench_h5_attr_str_array(d, "events", events, (size_t)nev);
        rc |= bench_h5_attr_int_array(d, "available", avail, (size_t)nev);
        rc |= bench_h5_attr_str_array(d, "reason", reasons, (size_t)nev);
        rc |= bench_h5_attr_str_array(d, "phases", phases, (size_t)nph);
        rc |= bench_h5_attr_str(d, "dims", "rank x phase x event");
        rc |= bench_h5_attr_str(d, "units", "events counted in the phase, summed over the timed "
                                         "iterations; -1 = event unavailable");
        H5Dclose(d);
    }
    H5Sclose(s);
    H5Gclose(g);
    return rc;
}

int bench_archive_papi(bench_archive *a, const char *path, const bench_papi *papi)
{
    if (!a || !papi)
        return 0;
    int p;
    MPI_Comm_size(a->comm, &p);
    size_t per_rank = (size_t)bench_papi_nphases(papi) * (size_t)bench_papi_nevents(papi);
    long long *counts = a->rank == ROOT ? calloc((size_t)p * per_rank + 1, sizeof *counts) : NULL;
    int rc = bench_papi_gather(papi, a->comm, ROOT, counts);
    if (a->rank == ROOT)
        rc = rc || !counts || write_papi(a->file, path, papi, counts, p);
    free(counts);
    if (status_all(a->comm, rc)) {
        bench_fail_on(a->rank == ROOT, BENCH_NO_CODE, "archive", "cannot write %s to %s", path, a->tmp);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------- checkpoints */

void bench_archive_writing(bench_archive *a)
{
    if (!a || a->rank != ROOT)
        return;
    bench_fault_hold(1);
    bench_keep_writing(1, -1);
}

int bench_archive_checkpoint(bench_archive *a, long rows)
{
    if (!a)
        return 0;
    int rc = 0;
    if (a->rank == ROOT) {
        if (rows >= 0)
            rc = H5Fflush(a->file, H5F_SCOPE_LOCAL) < 0;
        bench_keep_writing(0, rows >= 0 && !rc ? rows : -1);
        bench_fault_hold(0);
    }
    return rows >= 0 ? bench_archive_agree(a, rc, "flush") : 0;
}

/* ---------------------------------------------------------- close */

int bench_archive_mark(bench_archive *a, const char *name)
{
    if (!a || a->rank != ROOT || a->file < 0)
        return 0;
    return bench_h5_attr_int(a->file, name, 1);
}

/* Rank 0: write the end, close, rename onto the final path; 0 or the
 * reason in msg. */
static int finish_file(bench_archive *a, char *msg, size_t mlen)
{
    char why[256];
    /* From here a fault leaves the temporary as it is (complete or not,
     * never under the final name). */
    bench_keep_disarm();
    int rc = close_held(a) != 0;
    rc |= bench_metadata_write_end(a->file) != 0;
    rc |= H5Fclose(a->file) < 0;
    a->file = H5I_INVALID_HID;
    if (rc) {
        snprintf(msg, mlen, "cannot finish %s: %s", a->tmp, bench_h5_error_reason(why, sizeof why));
        return 1;
    }
    if (target_ok(a->path, a->force, msg, mlen)) {
        /* Created or replaced during the run (another run to the same
         * path): the first one's file stays, this one is refused. */
        size_t used = strlen(msg);
        snprintf(msg + used, mlen - used, "; it appeared while this run was measuring "
                 "(another run writing the same path?): this run's results are discarded");
        return 1;
    }
    if (bench_tmp_commit(a->tmp, a->path, a->force) != 0) {
        if (errno == EEXIST)
            snprintf(msg, mlen, "refusing to overwrite existing archive %s (use --force): another "
                     "run wrote it while this one was measuring; this run's results are discarded",
                     a->path);
        else
            snprintf(msg, mlen, "cannot rename %s to %s: %s", a->tmp, a->path, strerror(errno));
        return 1;
    }
    a->committed = 1;
    return 0;
}

int bench_archive_close(bench_archive *a, int success)
{
    if (!a)
        return 0;
    int rc = 0;
    char msg[3 * PATH_MAX + 512] = "";
    if (a->rank == ROOT) {
        if (success)
            rc = finish_file(a, msg, sizeof msg);
        /* On failure nothing may look complete: the .tmp goes away. */
        discard(a);
    }
    rc = status_all(a->comm, rc);
    if (rc)
        bench_fail_on(a->rank == ROOT, BENCH_NO_CODE, "archive", "%s", msg);
    free(a);
    return rc;
}
