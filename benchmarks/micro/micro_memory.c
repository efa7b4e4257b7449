/* rb_micro's memory need, checked before anything is allocated (issue 25):
 * the bytes a rank will hold at the largest size against what the node
 * has for it, or -M.  The reducers' state is bounded from their algorithms
 * (docs/wire-bytes.md's streams); the bound is what is printed. */
#include "micro.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"

/* Bytes of one reducer's state for n elements, k non-zeros per rank, p
 * ranks (an upper bound of what it allocates). */
static double reducer_state(const char *name, const rb_options *o, double n, double k, int p)
{
    if (!strcmp(name, "none") || !strcmp(name, "dense"))
        return 0.0;
    if (!strcmp(name, "gossip"))
        return 4.0 * n * (o->gossip_async ? 2 : 1);
    if (!strcmp(name, "omnireduce"))
        return 4.0 * n + n / 8.0;
    if (!strcmp(name, "s2")) {
        double w = o->sketch_width_mode == RB_S2_WIDTH_ABS ? o->sketch_width
                 : o->sketch_width_mode == RB_S2_WIDTH_FRACTION ? n * o->sketch_width
                 : k * o->sketch_width;
        return 4.0 * o->sketch_rows * fmax(w, 1.0) + n / 8.0 + (o->error_feedback ? 4.0 * n : 0.0);
    }
    /* The pair-exchanging reducers (agsparse, sparcml, parallax, oktopk,
     * zen): own pairs, every rank's pairs and a merge buffer, at most the
     * dense buffer once fill-in makes them dense. */
    double pairs = 8.0 * k * (2.0 * p + 2.0);
    return fmin(pairs, 8.0 * n * (p + 2.0)) + 4.0 * n;
}

double micro_memory_need(const micro_opts *o, int p, size_t max_n, const char *const *names,
                         size_t nred)
{
    double n = (double)max_n, k = fmin(n, n * o->density * 1.1 + 64.0);
    double bufs = 8.0 * n + (o->check ? 17.0 * n : 0.0) + (o->input_rows ? 12.0 * n : 0.0);
    double state = 0.0;
    for (size_t i = 0; i < nred; i++)
        state = fmax(state, reducer_state(names[i], &o->ropts, n, k, p));
    double samples = 8.0 * o->iters * (p + 1.0);
    return bufs + state + samples;
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

/* A Slurm memory setting in MB (plain or with a unit suffix), 0 if unset. */
static double slurm_mb(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0.0;
    char *end;
    double mb = strtod(v, &end);
    switch (*end) {
    case 'G': case 'g': mb *= 1024.0; break;
    case 'T': case 't': mb *= 1024.0 * 1024.0; break;
    default: break;
    }
    return mb > 0 ? mb : 0.0;
}

double micro_memory_limit(MPI_Comm comm, const micro_opts *o, char *source, size_t slen)
{
    if (o->mem_limit) {
        snprintf(source, slen, "-M");
        return (double)o->mem_limit;
    }
    MPI_Comm node;
    int on_node = 1;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    double cpu = slurm_mb("SLURM_MEM_PER_CPU"), nodemb = slurm_mb("SLURM_MEM_PER_NODE");
    if (cpu > 0) {
        const char *c = getenv("SLURM_CPUS_PER_TASK");
        int cpus = c && atoi(c) > 0 ? atoi(c) : 1;
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
