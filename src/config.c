/* A reducer's config: its defaults, the checks of one rank's config and
 * the check that all ranks agree on it (rb_create's first step). */
#include "rb_internal.h"
#include "reducer_sparse.h"   /* RB_MAX_ELEMENTS */

#include <string.h>

void rb_config_default(rb_config *c)
{
    memset(c, 0, sizeof *c);
    c->name = "dense";
    c->comm = MPI_COMM_WORLD;
    c->rows = 0;
    c->cols = 1;
    c->device = RB_DEVICE_HOST;
    c->phase_times = 1;
    rb_options_default(&c->opts);
}

/* FNV-1a over bytes. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Fingerprint of what all ranks must agree on: the options in their text
 * form, so padding bytes never matter. */
static uint64_t options_hash(const rb_options *o)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    char buf[64];
    for (size_t i = 0; i < rb_option_count(); i++) {
        if (rb_option_format(o, i, buf, sizeof buf) == RB_OK)
            h = fnv1a(h, buf, strlen(buf) + 1);
    }
    return h;
}

enum { AGREE_STATUS, AGREE_NAME, AGREE_ROWS, AGREE_COLS, AGREE_DEVICE, AGREE_OPTS, AGREE_SEED, AGREE_N };
static const char *const agree_what[AGREE_N] = {
    "status", "reducer name", "rows", "cols", "device", "options", "seed",
};

/* Every rank learns whether all ranks agree (and whether any failed
 * locally), so no rank goes on to a collective the others skip. */
static int check_agreement(MPI_Comm comm, int local_status, const rb_config *cfg)
{
    uint64_t mine[AGREE_N] = {
        [AGREE_STATUS] = (uint64_t)local_status,
        [AGREE_NAME] = cfg->name ? fnv1a(0xcbf29ce484222325ULL, cfg->name, strlen(cfg->name)) : 0,
        [AGREE_ROWS] = cfg->rows,
        [AGREE_COLS] = cfg->cols,
        [AGREE_DEVICE] = (uint64_t)cfg->device,
        [AGREE_OPTS] = options_hash(&cfg->opts),
        [AGREE_SEED] = cfg->opts.seed,
    };
    uint64_t lo[AGREE_N], hi[AGREE_N];
    RB_MPI(MPI_Allreduce(mine, lo, AGREE_N, MPI_UINT64_T, MPI_MIN, comm));
    RB_MPI(MPI_Allreduce(mine, hi, AGREE_N, MPI_UINT64_T, MPI_MAX, comm));
    if (hi[AGREE_STATUS] != RB_OK) {
        if (local_status != RB_OK)
            return local_status;   /* keep this rank's own detail */
        return rb_fail((int)hi[AGREE_STATUS], "another rank failed: %s",
                       rb_strerror((int)hi[AGREE_STATUS]));
    }
    for (int i = AGREE_NAME; i < AGREE_N; i++) {
        if (lo[i] != hi[i]) {
            if (i == AGREE_ROWS || i == AGREE_COLS)
                return rb_fail(RB_ERR_MISMATCH, "ranks disagree on %s (from %llu to %llu)",
                               agree_what[i], (unsigned long long)lo[i], (unsigned long long)hi[i]);
            return rb_fail(RB_ERR_MISMATCH, "ranks disagree on %s", agree_what[i]);
        }
    }
    return RB_OK;
}

static int check_locally(const rb_config *cfg, const rb_reducer_ops **ops)
{
    *ops = rb_registry_find(cfg->name);
    if (!*ops)
        return rb_fail(RB_ERR_UNKNOWN_REDUCER, "unknown reducer '%s'", cfg->name ? cfg->name : "(null)");
    if (cfg->cols == 0 && cfg->rows != 0)
        return rb_fail(RB_ERR_ARG, "cols must be >= 1");
    if (cfg->cols && cfg->rows > RB_MAX_ELEMENTS / cfg->cols)
        return rb_fail(RB_ERR_ARG, "rows x cols = %zu x %zu exceeds %zu elements",
                       cfg->rows, cfg->cols, (size_t)RB_MAX_ELEMENTS);
    if (cfg->device != RB_DEVICE_HOST && cfg->device != RB_DEVICE_CUDA)
        return rb_fail(RB_ERR_ARG, "unknown device %d", (int)cfg->device);
    return rb_options_check(&cfg->opts);
}

int rb_config_check(const rb_config *cfg, const rb_reducer_ops **ops)
{
    *ops = NULL;
    return check_agreement(cfg->comm, check_locally(cfg, ops), cfg);
}
