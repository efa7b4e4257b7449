/* Run metadata: the archive's root attributes (metadata.h). */
#include "metadata.h"

#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bench_init.h"
#include "bench_papi.h"
#include "h5attr.h"
#include "machine_load.h"
#include "netinfo.h"
#include "reducer.h"
#include "simmeta.h"
#include "topology.h"

/* Generated at build time from `git describe --always --dirty`
 * (benchmarks/harness.mk); "unknown" outside a git checkout. */
#if __has_include("benchmarks/harness/rb_gitrev.h")
#include "benchmarks/harness/rb_gitrev.h"
#endif
#ifndef RB_GIT_REVISION
#define RB_GIT_REVISION "unknown"
#endif

#if defined(HAVE_NCCL) && __has_include(<nccl.h>)
#include <nccl.h>
#endif
#if defined(HAVE_CUDNN) && __has_include(<cudnn_version.h>)
#include <cudnn_version.h>
#endif

#define HOST_LEN 256
/* /proc/sys/kernel/random/boot_id: one per running kernel, so ranks that
 * share it share one machine, whatever their host names (the nodes of an
 * emulated cluster are network namespaces of one machine). */
#define BOOT_ID_LEN 40

void bench_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Shell-quoted command line, so it can be pasted back. */
static char *command_line(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += 4 * strlen(argv[i]) + 3;
    char *s = malloc(len), *o = s;
    if (!s)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789-_=.,:/+%@") == strlen(a);
        if (i)
            *o++ = ' ';
        if (plain) {
            o = stpcpy(o, a);
            continue;
        }
        *o++ = '\'';
        for (; *a; a++)
            o = *a == '\'' ? stpcpy(o, "'\\''") : (*o = *a, o + 1);
        *o++ = '\'';
    }
    *o = '\0';
    return s;
}

static const char *user_name(void)
{
    const char *u = getenv("USER");
    if (u && *u)
        return u;
    struct passwd *pw = getpwuid(geteuid());
    return pw ? pw->pw_name : "unknown";
}

static const char *env_or_empty(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

/* NAME=value lines of the settings that change performance. */
static char *environment_text(void)
{
    static const char *const prefixes[] = {
        "GLIBC_TUNABLES=", "OMP_", "OMPI_MCA_", "UCX_", "NCCL_", "CUDA_VISIBLE_DEVICES=",
        "OPENBLAS_NUM_THREADS=", "MKL_NUM_THREADS=", "SLURM_CPU_BIND", "HWLOC_", "PAPI_",
        "MALLOC_", "I_MPI_", "MPICH_",
    };
    extern char **environ;
    size_t len = 1;
    for (char **e = environ; *e; e++)
        len += strlen(*e) + 1;
    char *s = malloc(len), *o = s;
    if (!s)
        return NULL;
    *o = '\0';
    for (char **e = environ; *e; e++)
        for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++)
            if (!strncmp(*e, prefixes[p], strlen(prefixes[p]))) {
                o = stpcpy(stpcpy(o, *e), "\n");
                break;
            }
    return s;
}

/* Distinct host names in rank order, comma separated; *nodes = count. */
static char *host_list(const char *all, int p, int *nodes)
{
    char *s = malloc((size_t)p * (HOST_LEN + 1) + 1), *o = s;
    if (!s)
        return NULL;
    *o = '\0';
    *nodes = 0;
    for (int r = 0; r < p; r++) {
        const char *h = all + (size_t)r * HOST_LEN;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = !strcmp(h, all + (size_t)q * HOST_LEN);
        if (seen)
            continue;
        if (*nodes)
            *o++ = ',';
        o = stpcpy(o, h);
        (*nodes)++;
    }
    return s;
}

static void versions(char *cuda, char *nccl, char *cudnn, size_t len)
{
    snprintf(cuda, len, "not built");
    snprintf(nccl, len, "not built");
    snprintf(cudnn, len, "not built");
#if defined(HAVE_CUDA) && defined(RB_CUDA_TOOLKIT_VERSION)
    snprintf(cuda, len, "%s", RB_CUDA_TOOLKIT_VERSION);
#endif
#if defined(HAVE_NCCL)
#if defined(NCCL_MAJOR)
    snprintf(nccl, len, "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
#else
    snprintf(nccl, len, "built (version unknown)");
#endif
#endif
#if defined(HAVE_CUDNN)
#if defined(CUDNN_MAJOR)
    snprintf(cudnn, len, "%d.%d.%d", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
#else
    snprintf(cudnn, len, "built (version unknown)");
#endif
#endif
}

/* 128 random bits as 32 hex digits: tells runs apart when an archive is
 * copied or renamed, so the analysis never counts one run twice. */
static void new_run_id(char out[33])
{
    uint64_t w[2];
    if (getrandom(w, sizeof w, 0) != (ssize_t)sizeof w) {
        /* No getrandom (kernel < 3.17): time, process and host are unique
         * enough to tell runs apart, which is all run_id is for. */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        w[0] = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
        w[1] = (uint64_t)getpid() ^ ((uint64_t)gethostid() << 32);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)w[0], (unsigned long long)w[1]);
}

static int write_strings(hid_t f, const char *const (*kv)[2], size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        rc |= bench_h5_attr_str(f, kv[i][0], kv[i][1]);
    return rc;
}

static int write_root_attrs(hid_t f, const char *tool, int argc, char **argv, const char *hosts,
                            int ranks, int nodes, int machine_ranks, int machines)
{
    char start[32], host[HOST_LEN] = "", cwd[4096] = "", mpi_ver[16];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", hdf5[32];
    char cuda[64], nccl[64], cudnn[64], run_id[33];
    int len = 0, major = 0, minor = 0;
    unsigned h_maj, h_min, h_rel;
    bench_utc_now(start, sizeof start);
    new_run_id(run_id);
    gethostname(host, sizeof host - 1);
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    MPI_Get_library_version(lib, &len);
    while (len > 0 && (lib[len - 1] == '\n' || lib[len - 1] == ' '))
        lib[--len] = '\0';
    MPI_Get_version(&major, &minor);
    snprintf(mpi_ver, sizeof mpi_ver, "%d.%d", major, minor);
    H5get_libversion(&h_maj, &h_min, &h_rel);
    snprintf(hdf5, sizeof hdf5, "%u.%u.%u", h_maj, h_min, h_rel);
    versions(cuda, nccl, cudnn, sizeof cuda);
    char *cmd = command_line(argc, argv), *env = environment_text();
    const char *const kv[][2] = {
        {"tool", tool},
        {"run_id", run_id},
        {"version", RB_VERSION_STRING},
        {"git_revision", RB_GIT_REVISION},
        {"command_line", cmd ? cmd : ""},
        {"start_time", start},
        {"user", user_name()},
        {"hostname", host},
        {"hostlist", hosts},
        {"working_dir", cwd},
        {"mpi_library_version", lib},
        {"mpi_version", mpi_ver},
        {"compiler", RB_CC_VERSION},
        {"cflags", RB_CFLAGS},
        {"configure_args", RB_CONFIGURE_ARGS},
        {"hdf5_version", hdf5},
        {"papi_version", bench_papi_version()},
        {"hwloc_version", bench_hwloc_version()},
        {"cuda_version", cuda},
        {"nccl_version", nccl},
        {"cudnn_version", cudnn},
        /* Benchmarks that use a GPU replace it with rb_device_describe(). */
        {"device", "host"},
        {"slurm_job_id", env_or_empty("SLURM_JOB_ID")},
        {"slurm_array_job_id", env_or_empty("SLURM_ARRAY_JOB_ID")},
        {"slurm_array_task_id", env_or_empty("SLURM_ARRAY_TASK_ID")},
        {"slurm_partition", env_or_empty("SLURM_JOB_PARTITION")},
        {"slurm_cluster_name", env_or_empty("SLURM_CLUSTER_NAME")},
        {"slurm_nodelist", env_or_empty("SLURM_JOB_NODELIST")},
        {"slurm_submit_dir", env_or_empty("SLURM_SUBMIT_DIR")},
        {"env_GLIBC_TUNABLES", env_or_empty("GLIBC_TUNABLES")},
        {"env_OMP_NUM_THREADS", env_or_empty("OMP_NUM_THREADS")},
        {"malloc_policy", bench_malloc_policy()},
        {"environment", env ? env : ""},
    };
    int rc = write_strings(f, kv, sizeof kv / sizeof *kv);
    rc |= bench_h5_attr_int(f, "schema_version", BENCH_SCHEMA_VERSION);
    rc |= bench_h5_attr_int(f, "ranks", ranks);
    rc |= bench_h5_attr_int(f, "nodes", nodes);
    rc |= bench_h5_attr_int(f, "machines", machines);
    rc |= bench_h5_attr_int(f, "machine_ranks", machine_ranks);
    rc |= bench_netinfo_write_meta(f, nodes);
    rc |= bench_h5_attr_int(f, "slurm", getenv("SLURM_JOB_ID") != NULL);
    rc |= bench_sim_write_meta(f);  /* simulated + SimGrid platform (simmeta.c) */
    rc |= bench_h5_attr_int(f, "complete", 0);
    free(cmd);
    free(env);
    return rc;
}

/* The load probe counts the CPU of this run's processes on root's machine
 * (the ranks that share its boot id) as its own, not as other work. */
static int write_machine_load_start(hid_t file, const char *boots, const long *pids, int p,
                                    const char *root_boot)
{
    pid_t *local = calloc((size_t)p, sizeof *local);
    if (!local)
        return -1;
    int n = 0;
    for (int i = 0; i < p; i++)
        if (!strncmp(boots + (size_t)i * BOOT_ID_LEN, root_boot, BOOT_ID_LEN))
            local[n++] = (pid_t)pids[i];
    int rc = bench_machine_load_start(file, local, n);
    free(local);
    return rc;
}

/* This machine's boot id; the host name where /proc does not say (the
 * ranks are then told apart by host, as before boot ids were read). */
static void boot_id(char out[BOOT_ID_LEN])
{
    memset(out, 0, BOOT_ID_LEN);
    FILE *fp = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!fp || !fgets(out, BOOT_ID_LEN, fp)) {
        out[0] = 'h';
        gethostname(out + 1, BOOT_ID_LEN - 2);
    }
    if (fp)
        fclose(fp);
    out[strcspn(out, "\n")] = '\0';
}

/* Ranks on the machine of ROOT_BOOT, and distinct machines. */
static void count_machines(const char *boots, int p, const char *root_boot, int *on_root,
                           int *machines)
{
    *on_root = *machines = 0;
    for (int r = 0; r < p; r++) {
        const char *b = boots + (size_t)r * BOOT_ID_LEN;
        *on_root += !strncmp(b, root_boot, BOOT_ID_LEN);
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = !strncmp(b, boots + (size_t)q * BOOT_ID_LEN, BOOT_ID_LEN);
        *machines += !seen;
    }
}

int bench_metadata_write_start(MPI_Comm comm, int root, hid_t file, const char *tool,
                            int argc, char **argv)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    char mine[HOST_LEN] = "", boot[BOOT_ID_LEN];
    gethostname(mine, sizeof mine - 1);
    boot_id(boot);
    char *all = rank == root ? calloc((size_t)p, HOST_LEN) : NULL;
    char *boots = rank == root ? calloc((size_t)p, BOOT_ID_LEN) : NULL;
    long pid = (long)bench_machine_os_pid(), *pids = rank == root ? calloc((size_t)p, sizeof *pids) : NULL;
    MPI_Gather(mine, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR, root, comm);
    MPI_Gather(boot, BOOT_ID_LEN, MPI_CHAR, boots, BOOT_ID_LEN, MPI_CHAR, root, comm);
    MPI_Gather(&pid, 1, MPI_LONG, pids, 1, MPI_LONG, root, comm);
    int rc = 0;
    if (rank == root) {
        int nodes = 0, on_root = 0, machines = 0;
        char *hosts = all ? host_list(all, p, &nodes) : NULL;
        if (boots)
            count_machines(boots, p, boot, &on_root, &machines);
        rc = hosts && boots ? write_root_attrs(file, tool, argc, argv, hosts, p, nodes, on_root, machines)
                            : -1;
        if (!rc && pids)
            rc = write_machine_load_start(file, boots, pids, p, boot);
        free(hosts);
        free(all);
        free(boots);
        free(pids);
    }
    MPI_Bcast(&rc, 1, MPI_INT, root, comm);
    return rc;
}

int bench_metadata_write_end(hid_t file)
{
    char end[32];
    bench_utc_now(end, sizeof end);
    int rc = bench_h5_attr_str(file, "end_time", end);
    rc |= bench_machine_load_end(file);
    /* Last: readers trust a file only when complete == 1. */
    rc |= bench_h5_attr_int(file, "complete", 1);
    return rc;
}
