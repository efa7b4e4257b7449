/* Temporary names with host and process, and their cleanup (tmpfiles.h). */
#include "tmpfiles.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* SimGrid's smpicc maps getpid to smpi_getpid, a simulated rank's number
 * (1, 2, ...): a temporary named after it would name some unrelated live
 * process of this host, or none, and be cleaned (or kept) wrongly.  The
 * name must carry the operating system's process, which is what kill()
 * asks about. */
#ifdef getpid
#undef getpid
#endif

const char *rb_tmp_host(void)
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

void rb_tmp_name(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s.tmp.%s.%ld", path, rb_tmp_host(), (long)getpid());
}

int rb_tmp_parse(const char *name, const char *base, char *host, size_t hlen, long *pid)
{
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

int rb_tmp_clean_stale(const char *path, char *report, size_t rlen)
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
        char host[256], full[PATH_MAX + 512];
        long pid;
        if (!rb_tmp_parse(e->d_name, base, host, sizeof host, &pid) ||
            strcmp(host, rb_tmp_host()) || pid == (long)getpid() || !process_gone(pid))
            continue;
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (unlink(full) != 0)
            continue;
        removed++;
        if (used < rlen)
            used += (size_t)snprintf(report + used, rlen - used, "%s%s (process %ld gone)",
                                     used ? "\n" : "", full, pid);
    }
    closedir(d);
    return removed;
}
