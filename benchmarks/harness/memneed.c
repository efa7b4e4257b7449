/* Memory need against memory held: the programs compute what a
 * rank will allocate before allocating it, and refuse a run that does not
 * fit with both numbers instead of meeting the OOM killer. */
#include "memneed.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_agree.h"
#include "bench_fail.h"
#include "bench_parse.h"
#include "bench_usage.h"

double bench_reducer_state_bytes(const char *name, const rb_options *o, double n, double k, int p)
{
    double bytes = 0.0;   /* the reducer's own bound (rb_reducer_state_bytes) */
    return rb_reducer_state_bytes(name, o, n, k, p, &bytes) == RB_OK ? bytes : 0.0;
}

/* Bytes of /proc/meminfo's MemAvailable, 0 if unknown. */
static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = 0.0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024.0;
}

/* A Slurm memory setting in MB (a whole number, optionally with Slurm's
 * unit suffix K, M, G or T) into *mb, 0 if unset; 0, or -1 with the
 * reason in why.  Anything else (a typo, a negative number, 1e30) is
 * refused: a limit silently dropped or absurd would let the run meet the
 * OOM killer instead of a clear refusal. */
static int slurm_mb(const char *name, double *mb, char *why, size_t wlen)
{
    const char *v = getenv(name);
    *mb = 0.0;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    double x = (double)n;
    switch (*end) {
    case 'K': case 'k': x /= 1024.0, end++; break;
    case 'M': case 'm': end++; break;
    case 'G': case 'g': x *= 1024.0, end++; break;
    case 'T': case 't': x *= 1024.0 * 1024.0, end++; break;
    default: break;
    }
    /* 2^30 MB = 1 PiB: no node holds more.  0 is Slurm's "the whole node". */
    if (v[0] < '0' || v[0] > '9' || errno || *end || x > 1073741824.0) {
        snprintf(why, wlen, "%s='%s' is not a memory size (a whole number of MB from 1 to 2^30, "
                 "optionally with K, M, G or T, as Slurm sets it); unset it, or give -M", name, v);
        return -1;
    }
    *mb = x;
    return 0;
}

/* SLURM_CPUS_PER_TASK: 1 when unset; 0, or -1 with the reason in why
 * (atoi read "2x" as 2 and "abc" as 1: a limit multiplied silently). */
static int slurm_cpus(int *cpus, char *why, size_t wlen)
{
    const char *v = getenv("SLURM_CPUS_PER_TASK");
    *cpus = 1;
    if (!v || !*v)
        return 0;
    uint64_t n = 0;
    if (bench_parse_u64(v, &n) || n < 1 || n > 1 << 20) {
        snprintf(why, wlen, "SLURM_CPUS_PER_TASK='%s' is not a number of CPUs (a whole number "
                 "from 1 to 2^20); unset it, or give -M", v);
        return -1;
    }
    *cpus = (int)n;
    return 0;
}

/* This rank's limit (see bench_mem_limit); why non-empty when this rank's
 * Slurm settings cannot be read. */
static double rank_limit(MPI_Comm comm, uint64_t override, char *source, size_t slen, char *why,
                         size_t wlen)
{
    if (override) {
        snprintf(source, slen, "-M");
        return (double)override;
    }
    MPI_Comm node;
    int on_node = 1;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    double cpu = 0.0, nodemb = 0.0;
    if (slurm_mb("SLURM_MEM_PER_CPU", &cpu, why, wlen) || slurm_mb("SLURM_MEM_PER_NODE", &nodemb, why, wlen))
        return 0.0;
    if (cpu > 0) {
        int cpus = 1;
        if (slurm_cpus(&cpus, why, wlen))
            return 0.0;
        snprintf(source, slen, "SLURM_MEM_PER_CPU x %d cpu(s) per task", cpus);
        return cpu * 1024.0 * 1024.0 * cpus;
    }
    if (nodemb > 0) {
        snprintf(source, slen, "SLURM_MEM_PER_NODE / %d rank(s) on the node", on_node);
        return nodemb * 1024.0 * 1024.0 / on_node;
    }
    double avail = mem_available();
    snprintf(source, slen, "MemAvailable / %d rank(s) on the node", on_node);
    return avail > 0 ? avail / on_node : 0.0;
}

double bench_mem_limit(MPI_Comm comm, uint64_t override, char *source, size_t slen)
{
    char why[512] = "";
    double mine = rank_limit(comm, override, source, slen, why, sizeof why), least = mine;
    /* The environment may differ between ranks (each node's Slurm, an
     * MPMD launch): the rank that cannot read its own names it, and every
     * rank exits, none left waiting in a collective. */
    if (bench_all_ok(comm, why[0] ? BENCH_NO_CODE : RB_OK, "memory limit", why) < 0)
        bench_exit(BENCH_EXIT_USAGE);
    MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, comm);
    return least;
}

void bench_mem_refuse_if(const char *prog, double need, double limit, const char *source,
                         const char *what, const char *holder, const char *advice)
{
    if (limit > 0 && need > limit)
        bench_usage_error(prog, "this run needs %.3g GiB %s, more than the %.3g GiB %s may hold (%s); "
                          "%s, or -M to set the limit", need / 1073741824.0, what,
                          limit / 1073741824.0, holder, source, advice);
}
