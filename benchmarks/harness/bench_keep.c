/* What a fault keeps of a run (bench_keep.h). */
#include "bench_keep.h"

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The paths are written before `armed` is set and not changed while it
 * is; rows: what the last flush left readable on disk. */
static struct {
    char tmp[PATH_MAX + 32];
    char kept[PATH_MAX + 32];
    int fd;
    volatile sig_atomic_t rows;
    volatile sig_atomic_t writing;
    atomic_int armed;
    const char *unit;         /* what a row is, in the line: "row(s)", "step(s)" */
} pending = {.fd = -1, .unit = "row(s)"};

void bench_keep_unit(const char *unit) { pending.unit = unit; }

void bench_keep_arm(const char *tmp, const char *kept, int fd)
{
    snprintf(pending.tmp, sizeof pending.tmp, "%s", tmp);
    snprintf(pending.kept, sizeof pending.kept, "%s", kept);
    pending.fd = fd;
    pending.rows = 0;
    pending.writing = 0;
    atomic_store(&pending.armed, 1);
}

void bench_keep_disarm(void)
{
    atomic_store(&pending.armed, 0);
    if (pending.fd >= 0)
        close(pending.fd);
    pending.fd = -1;
}

void bench_keep_writing(int on, long rows)
{
    if (rows >= 0)
        pending.rows = (sig_atomic_t)rows;
    pending.writing = on;
}

/* "reducerbench: interrupted: WHY\n", NUL-padded, into the user block. */
static void write_note(const char *why)
{
    static char block[BENCH_KEEP_NOTE_BYTES];
    static const char head[] = BENCH_KEEP_NOTE_PREFIX;
    memset(block, 0, sizeof block);
    size_t n = sizeof head - 1, w = strlen(why);
    memcpy(block, head, n);
    if (w > sizeof block - n - 2)
        w = sizeof block - n - 2;
    memcpy(block + n, why, w);
    block[n + w] = '\n';
    if (pwrite(pending.fd, block, sizeof block, 0) < 0) {
        /* the rows are kept all the same; the line on stderr gives the reason */
    }
}

/* A unit being written when a fault comes would leave the file on disk
 * half updated: a fault on another thread (the watchdog's, a signal
 * delivered to one of the MPI library's) waits up to 5 s for its flush. */
static void wait_for_flush(void)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 5000 && pending.writing; i++)
        nanosleep(&ms, NULL);
}

int bench_keep(const char *why)
{
    if (!atomic_exchange(&pending.armed, 0))
        return BENCH_KEEP_NONE;
    if (pending.rows <= 0) {
        unlink(pending.tmp);
        return BENCH_KEEP_REMOVED;
    }
    wait_for_flush();
    write_note(why);
    return rename(pending.tmp, pending.kept) == 0 ? BENCH_KEEP_RENAMED : BENCH_KEEP_IN_PLACE;
}

const char *bench_keep_path(int how)
{
    return how == BENCH_KEEP_RENAMED ? pending.kept : how == BENCH_KEEP_IN_PLACE ? pending.tmp : "";
}

long bench_keep_rows(void)
{
    return (long)pending.rows;
}

size_t bench_keep_put(char *buf, size_t cap, size_t n, const char *s)
{
    while (*s && n + 1 < cap)
        buf[n++] = *s++;
    if (n < cap)
        buf[n] = '\0';
    return n;
}

size_t bench_keep_put_long(char *buf, size_t cap, size_t n, long v)
{
    char digits[24];
    size_t k = sizeof digits;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    digits[--k] = '\0';
    do
        digits[--k] = (char)('0' + u % 10);
    while ((u /= 10) && k > 1);
    if (v < 0)
        digits[--k] = '-';
    return bench_keep_put(buf, cap, n, digits + k);
}

size_t bench_keep_text(char *buf, size_t cap, size_t n, int how)
{
    if (how == BENCH_KEEP_REMOVED)
        return bench_keep_put(buf, cap, n, "; nothing measured was saved yet: no archive is kept");
    if (how != BENCH_KEEP_RENAMED && how != BENCH_KEEP_IN_PLACE)
        return n;
    n = bench_keep_put(buf, cap, n, "; the ");
    n = bench_keep_put_long(buf, cap, n, bench_keep_rows());
    n = bench_keep_put(buf, cap, n, " ");
    n = bench_keep_put(buf, cap, n, pending.unit);
    n = bench_keep_put(buf, cap, n, " finished are kept in ");
    n = bench_keep_put(buf, cap, n, bench_keep_path(how));
    return bench_keep_put(buf, cap, n, " (complete = 0: a partial run; rb-archive show reads it)");
}
