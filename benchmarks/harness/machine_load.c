/* Machine load around a run (machine_load.h). */
#include "machine_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h5attr.h"

/* SimGrid's smpicc maps getpid to a simulated rank's number; the load
 * probe reads /proc, which knows only the operating system's process. */
#ifdef getpid
#undef getpid
#endif

#define MAX_JOB_PIDS 1024
/* Long enough to see a competing process, short enough to cost little
 * per launch. */
#define BEFORE_WINDOW_NS 250000000L

typedef struct {
    double wall;                 /* seconds, monotonic */
    unsigned long long busy;     /* ticks: user nice system irq softirq */
    unsigned long long total;    /* ticks: all fields */
    unsigned long long steal;    /* ticks stolen by the hypervisor */
    unsigned long long job;      /* ticks used by this run's processes */
    int ok;
} cpu_snapshot;

static struct {
    pid_t pids[MAX_JOB_PIDS];
    int npids;
    cpu_snapshot at_start;
} probe;

static double monotonic_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double load_average(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double one = -1;
    if (f) {
        if (fscanf(f, "%lf", &one) != 1)
            one = -1;
        fclose(f);
    }
    return one;
}

/* The aggregate "cpu" line of /proc/stat. */
static int read_proc_stat(cpu_snapshot *s)
{
    unsigned long long v[10] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 8)
        return -1;
    /* guest (8) and guest_nice (9) are already inside user and nice */
    s->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    s->steal = v[7];
    return 0;
}

/* utime + stime of one process (fields 14 and 15 of /proc/PID/stat, after
 * the parenthesised command name, which may hold spaces); 0 once gone. */
static unsigned long long process_ticks(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return ut + st;
}

static void snapshot(cpu_snapshot *s)
{
    s->wall = monotonic_seconds();
    s->ok = read_proc_stat(s) == 0;
    s->job = 0;
    for (int i = 0; i < probe.npids; i++)
        s->job += process_ticks(probe.pids[i]);
}

/* Cores busy with processes other than this run between a and b. */
static double other_cores(const cpu_snapshot *a, const cpu_snapshot *b)
{
    double dt = b->wall - a->wall;
    long hz = sysconf(_SC_CLK_TCK);
    if (!a->ok || !b->ok || dt <= 0 || hz <= 0)
        return -1;
    double busy = (double)(b->busy - a->busy), job = (double)(b->job - a->job);
    double other = (busy - job) / (double)hz / dt;
    return other > 0 ? other : 0;
}

static double steal_fraction(const cpu_snapshot *a, const cpu_snapshot *b)
{
    if (!a->ok || !b->ok || b->total <= a->total)
        return -1;
    return (double)(b->steal - a->steal) / (double)(b->total - a->total);
}

static void remember_pids(const pid_t *pids, int n)
{
    probe.npids = 0;
    for (int i = 0; i < n && probe.npids < MAX_JOB_PIDS; i++) {
        int seen = 0;  /* SimGrid's ranks are threads of one process */
        for (int j = 0; j < probe.npids && !seen; j++)
            seen = probe.pids[j] == pids[i];
        if (!seen)
            probe.pids[probe.npids++] = pids[i];
    }
}

pid_t bench_machine_os_pid(void)
{
    return getpid();
}

int bench_machine_load_start(hid_t file, const pid_t *job_pids, int npids)
{
    remember_pids(job_pids, npids);
    double load = load_average();
    cpu_snapshot before;
    snapshot(&before);
    struct timespec window = {0, BEFORE_WINDOW_NS};
    nanosleep(&window, NULL);
    snapshot(&probe.at_start);
    int rc = bench_h5_attr_int(file, "machine_cores", (int)sysconf(_SC_NPROCESSORS_ONLN));
    rc |= bench_h5_attr_double(file, "machine_load_before", load);
    rc |= bench_h5_attr_double(file, "machine_other_cpu_before", other_cores(&before, &probe.at_start));
    return rc;
}

int bench_machine_load_end(hid_t file)
{
    cpu_snapshot end;
    snapshot(&end);
    int rc = bench_h5_attr_double(file, "machine_load_after", load_average());
    rc |= bench_h5_attr_double(file, "machine_other_cpu_during", other_cores(&probe.at_start, &end));
    rc |= bench_h5_attr_double(file, "machine_steal_during", steal_fraction(&probe.at_start, &end));
    return rc;
}
