/* Temporary names with host and process, and their cleanup (tmpfiles.h). */
#include "tmpfiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* SimGrid's smpicc maps getpid to smpi_getpid, a simulated rank's number
 * (1, 2, ...): a temporary named after it would name some unrelated live
 * process of this host, or none, and be cleaned (or kept) wrongly.  The
 * name must carry the operating system's process, which is what kill()
 * asks about. */
#ifdef getpid
#undef getpid
#endif

const char *bench_tmp_host(void)
{
    static char host[256];
    if (!host[0]) {
        if (gethostname(host, sizeof host - 1) != 0 || !host[0])
            snprintf(host, sizeof host, "unknown-host");
        for (char *c = host; *c; c++)
            if (*c == '/')
                *c = '_';
    }
    return host;
}

/* FNV-1a: a short, stable digest of a long name. */
static unsigned long name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (unsigned long)h;
}

/* The base name as it goes into a temporary name.  BASE.tmp.HOST.PID
 * must fit NAME_MAX (255) like BASE itself: a legal 250-character name
 * would otherwise be refused for its temporary's sake.  A base too long
 * for that keeps its start, then "~" and a digest of the whole base and
 * ".h5" (so the temporary still reads as an archive's). */
static void tmp_base(const char *base, char *out, size_t len)
{
    size_t room = NAME_MAX - strlen(".tmp.") - strlen(bench_tmp_host()) - strlen(".") - 10;
    size_t b = strlen(base);
    if (b <= room || room < 24) {
        snprintf(out, len, "%s", base);
        return;
    }
    snprintf(out, len, "%.*s~%08lx.h5", (int)(room - 12), base, name_hash(base));
}

void bench_tmp_name(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char shortened[NAME_MAX + 1];
    tmp_base(base, shortened, sizeof shortened);
    snprintf(buf, len, "%.*s%s.tmp.%s.%ld", (int)(base - path), path, shortened, bench_tmp_host(),
             (long)getpid());
}

int bench_tmp_commit(const char *tmp, const char *path, int force)
{
    if (force)
        return rename(tmp, path);
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    /* link() never replaces: of two writers only one can create path. */
    if (link(tmp, path) != 0)
        return -1;
    unlink(tmp);
    return 0;
}

int bench_tmp_parse(const char *name, const char *full_base, char *host, size_t hlen, long *pid)
{
    char base[NAME_MAX + 1];
    tmp_base(full_base, base, sizeof base);
    size_t b = strlen(base);
    if (strncmp(name, base, b) || strncmp(name + b, ".tmp.", 5))
        return 0;
    const char *rest = name + b + 5, *dot = strrchr(rest, '.');
    if (!dot || dot == rest || !dot[1])
        return 0;
    char *end;
    long p = strtol(dot + 1, &end, 10);
    if (*end || p <= 0)
        return 0;
    snprintf(host, hlen, "%.*s", (int)(dot - rest), rest);
    *pid = p;
    return 1;
}

/* A zombie: ended, not yet reaped by its parent (a killed mpirun's ranks
 * wait for their new parent to reap them); it will never write again. */
static int process_zombie(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');   /* the name may hold spaces and ')' */
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* The process is gone on this host: kill(pid, 0) says no such process, or
 * it is a zombie. */
static int process_gone(long pid)
{
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    return process_zombie(pid);
}

/* A writer holds the file open: HDF5 keeps an exclusive flock on a file
 * while it is open (unless HDF5_USE_FILE_LOCKING=FALSE).  The lock is seen
 * where the writer's PID is not (another PID namespace, a container, an
 * emulated node reusing the host name), so it is asked first. */
static int held_open(const char *full)
{
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);   /* releases the shared lock, if taken */
    return held;
}

int bench_tmp_clean_stale(const char *path, bench_tmp_keep_fn keep, char *report, size_t rlen)
{
    char dirbuf[PATH_MAX], basebuf[PATH_MAX];
    snprintf(dirbuf, sizeof dirbuf, "%s", path);
    snprintf(basebuf, sizeof basebuf, "%s", path);
    const char *dir = dirname(dirbuf), *base = basename(basebuf);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    size_t used = 0;
    if (rlen)
        report[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        char host[256], full[PATH_MAX + 512], note[PATH_MAX + 64] = "";
        long pid;
        if (!bench_tmp_parse(e->d_name, base, host, sizeof host, &pid) ||
            strcmp(host, bench_tmp_host()) || pid == (long)getpid() || !process_gone(pid))
            continue;
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (held_open(full))
            continue;
        if (!(keep && keep(full, path, note, sizeof note)) && unlink(full) != 0)
            continue;
        removed++;
        if (used < rlen)
            used += (size_t)snprintf(report + used, rlen - used, "%s%s (process %ld gone)%s",
                                     used ? "\n" : "", full, pid, note);
    }
    closedir(d);
    return removed;
}

int bench_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char da[PATH_MAX], db[PATH_MAX], ba[PATH_MAX], bb[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    snprintf(da, sizeof da, "%s", a), snprintf(db, sizeof db, "%s", b);
    snprintf(ba, sizeof ba, "%s", a), snprintf(bb, sizeof bb, "%s", b);
    if (!realpath(dirname(da), ra) || !realpath(dirname(db), rb))
        return !strcmp(a, b);
    return !strcmp(ra, rb) && !strcmp(basename(ba), basename(bb));
}

int bench_output_ok(const char *path, int force, char *msg, size_t mlen)
{
    struct stat st;
    if (!path || !*path)
        return snprintf(msg, mlen, "the path is empty"), -1;
    if (lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return snprintf(msg, mlen, "%s exists and is not a regular file", path), -1;
        if (!force)
            return snprintf(msg, mlen, "refusing to overwrite existing %s (use --force)", path), -1;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    const char *d = dirname(dir);
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        return snprintf(msg, mlen, "cannot write %s: directory %s does not exist", path, d), -1;
    char tmp[PATH_MAX + 320];
    bench_tmp_name(path, tmp, sizeof tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0)
        return snprintf(msg, mlen, "cannot write %s: %s", path, strerror(errno)), -1;
    close(fd);
    unlink(tmp);
    return 0;
}
