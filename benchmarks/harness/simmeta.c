/* SimGrid SMPI support: see simmeta.h. */
#include "simmeta.h"
#include "h5attr.h"
#include "sha256.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef RB_SIMGRID
#include <simgrid/version.h>
#include <smpi/smpi.h>
#endif

int bench_sim_is_simulated(void)
{
#ifdef RB_SIMGRID
    return 1;
#else
    return 0;
#endif
}

void bench_sim_compute(double sec)
{
    if (sec <= 0.0)
        return;
#ifdef RB_SIMGRID
    smpi_execute(sec);  /* simulated seconds, no wall time burnt */
#else
    double end = MPI_Wtime() + sec;
    while (MPI_Wtime() < end)
        ;
#endif
}

void *bench_sim_alloc(size_t bytes, int may_share, int *shared)
{
    *shared = 0;
#ifdef RB_SIMGRID
    const char *env = getenv("RB_SIM_SHARED_MIN");
    size_t min = env ? (size_t)strtoull(env, NULL, 0) : (size_t)16 << 20;
    if (may_share && bytes >= min) {
        *shared = 1;
        return SMPI_SHARED_MALLOC(bytes);
    }
#else
    (void)may_share;
#endif
    return calloc(bytes ? bytes : 1, 1);
}

int bench_sim_ondemand_inputs(void)
{
    const char *env = getenv("RB_SIM_ONDEMAND_INPUT");
    return bench_sim_is_simulated() && !(env && !strcmp(env, "0"));
}

void bench_sim_free(void *p, int shared)
{
#ifdef RB_SIMGRID
    if (shared) {
        SMPI_SHARED_FREE(p);
        return;
    }
#else
    (void)shared;
#endif
    free(p);
}

void *bench_ondemand_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_NOHUGEPAGE
    /* A huge page would back 2 MiB for one non-zero row. */
    madvise(p, bytes ? bytes : 1, MADV_NOHUGEPAGE);
#endif
    return p;
}

int bench_ondemand_clear(void *p, size_t bytes)
{
    /* A private anonymous page given back reads as zeros again. */
    return p && bytes ? madvise(p, bytes, MADV_DONTNEED) : 0;
}

void bench_ondemand_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes ? bytes : 1);
}

#ifdef RB_SIMGRID
/* Whole file in a NUL-terminated buffer (NULL if unreadable). */
static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 + 1 > cap) {
            char *nb = realloc(buf, cap = 2 * cap + 8192);
            if (!nb) {
                free(buf), fclose(fp);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, 4096, fp);
        n += got;
    } while (got > 0);
    fclose(fp);
    buf[n] = '\0';
    *len = n;
    return buf;
}
#endif

int bench_sim_write_meta(hid_t file)
{
    int rc = bench_h5_attr_int(file, "simulated", bench_sim_is_simulated());
#ifdef RB_SIMGRID
    const char *path = getenv("RB_SIM_PLATFORM");
    const char *calib = getenv("RB_SIM_CALIBRATION");
    const char *smpi_opts = getenv("RB_SIM_SMPI_OPTIONS");
    size_t len = 0;
    char *text = path ? slurp(path, &len) : NULL;
    char hex[65] = "";
    if (text)
        bench_sha256_hex((const unsigned char *)text, len, hex);
    rc |= bench_h5_attr_str(file, "sim_platform_path", path ? path : "");
    rc |= bench_h5_attr_str(file, "sim_platform", text ? text : "");
    rc |= bench_h5_attr_str(file, "sim_platform_sha256", hex);
    rc |= bench_h5_attr_str(file, "simgrid_version", SIMGRID_VERSION_STRING);
    rc |= bench_h5_attr_str(file, "sim_calibration", calib ? calib : "");
    rc |= bench_h5_attr_str(file, "sim_smpi_options", smpi_opts ? smpi_opts : "");
    free(text);
#endif
    return rc;
}
