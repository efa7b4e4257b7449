/* rb_state_size / rb_state_save / rb_state_load (checkpoints), run by
 * tests/lib/state.sh on 1, 2, 3 and 5 ranks:
 *
 *   - every reducer of the registry (default options) and the variants
 *     whose calls depend on the calls before (s2 and oktopk with error
 *     feedback, oktopk's re-partitioning, gossip's rotating schedule):
 *     reducer A makes K calls; its state is saved, a new reducer B of the
 *     same configuration loads it, and from then on A and B are fed the
 *     same gradients: every result is the same bit for bit (a run resumed
 *     from a checkpoint is the run that never stopped);
 *   - the variants that carry state are seen to need it: a fresh twin
 *     that loads nothing differs from A after the K calls (else the
 *     comparison above proves nothing);
 *   - refused, RB_ERR_ARG naming why, and the reducer unchanged (its next
 *     results still equal A's): bytes of another reducer, of the same
 *     reducer under other options (error feedback off), one byte flipped
 *     in the payload, bytes cut short, too small a buffer to save into;
 *   - gossip_async with an exchange in flight: RB_ERR_STATE (on the ranks
 *     that have a partner that step).
 *
 * Usage: test_state.  Exit 0 when every rank passed, 1 otherwise. */
#include "reducer.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failures;

#define FAIL(...) do { failures++; fprintf(stderr, "rank %d/%d: ", rank, nranks); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

#define ROWS 97
#define COLS 3
#define N (ROWS * COLS)
#define CALLS_BEFORE 7
#define CALLS_AFTER 9

typedef struct variant {
    const char *name;
    const char *opts[4];
    int stateful;   /* from this many ranks a fresh twin must differ after
                       CALLS_BEFORE calls (0: never; gossip on 2 ranks
                       has one partner whatever the step) */
} variant;

static const variant variants[] = {
    {"s2", {"sketch_width=5", "error_feedback=on", NULL}, 2},
    {"oktopk", {"oktopk_select=topk", "oktopk_density=0.05", "error_feedback=on", NULL}, 2},
    {"oktopk", {"oktopk_repartition=3", "oktopk_reestimate=2", NULL}, 0},
    {"gossip", {"gossip_schedule=dissemination", "gossip_rotate=on", NULL}, 3},
    {"gossip", {"gossip_mix=both", NULL}, 3},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

static int create(const char *name, const char *const *opts, rb_reducer **r)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = name;
    cfg.rows = ROWS;
    cfg.cols = COLS;
    for (int i = 0; opts && opts[i]; i++)
        if (rb_options_set(&cfg.opts, opts[i]) != RB_OK)
            return RB_ERR_ARG;
    return rb_create(&cfg, r);
}

/* Call `call`'s gradient on this rank: about 8% non-zero, values that
 * differ from call to call and rank to rank (splitmix64). */
static void gradient(int call, float *g)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(call * 131 + rank + 1);
    for (size_t i = 0; i < N; i++) {
        s += 0x9e3779b97f4a7c15ULL;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        g[i] = (z % 100) < 8 ? (float)((double)(z >> 40) / (double)(1 << 24) - 0.5) : 0.0f;
    }
}

/* One step of r: reduce the call's gradient into out (and, for gossip
 * mixing parameters, mix a parameter vector derived from it). */
static int step(rb_reducer *r, int call, float *out, float *params)
{
    gradient(call, out);
    int rc = rb_reduce(r, out, NULL);
    if (rc == RB_OK && params) {
        for (size_t i = 0; i < N; i++)
            params[i] -= 0.1f * out[i];
        rc = rb_mix_params(r, params, NULL);
    }
    return rc;
}

static int same(const float *a, const float *b)
{
    return !memcmp(a, b, N * sizeof *a);
}

static int uses_params(const variant *v)
{
    for (int i = 0; v->opts[i]; i++)
        if (!strcmp(v->opts[i], "gossip_mix=both"))
            return 1;
    return 0;
}

/* Save r's state into a new buffer (*len bytes); NULL on failure. */
static unsigned char *save(rb_reducer *r, size_t *len, const char *label)
{
    if (rb_state_size(r, len) != RB_OK) {
        FAIL("%s: rb_state_size: %s", label, rb_last_error());
        return NULL;
    }
    unsigned char *buf = malloc(*len);
    if (buf && rb_state_save(r, buf, *len) != RB_OK) {
        FAIL("%s: rb_state_save: %s", label, rb_last_error());
        free(buf);
        return NULL;
    }
    return buf;
}

/* A load that must be refused with RB_ERR_ARG and a detail containing want. */
static void refused(rb_reducer *r, const void *buf, size_t len, const char *want, const char *label)
{
    int rc = rb_state_load(r, buf, len);
    if (rc != RB_ERR_ARG)
        FAIL("%s: a load that must be refused returned %s", label, rb_strerror(rc));
    else if (!strstr(rb_last_error(), want))
        FAIL("%s: refused with '%s', want it to say '%s'", label, rb_last_error(), want);
}

/* The refusals, on B (which must be left as it was). */
static void check_refusals(const variant *v, rb_reducer *b, const unsigned char *st, size_t len,
                           const char *label)
{
    char what[512];
    unsigned char *bad = malloc(len);
    memcpy(bad, st, len);
    bad[len - 1] ^= 0x10;
    snprintf(what, sizeof what, "%s, a byte flipped", label);
    refused(b, bad, len, "damaged", what);
    snprintf(what, sizeof what, "%s, cut short", label);
    refused(b, st, len - 1, "bytes given", what);
    rb_reducer *other = NULL;
    const char *name = strcmp(v->name, "dense") ? "dense" : "none";
    if (create(name, NULL, &other) == RB_OK) {
        snprintf(what, sizeof what, "%s into %s", label, name);
        refused(other, st, len, name, what);
    }
    rb_destroy(other);
    if (!strcmp(v->name, "s2") && v->stateful) {   /* same reducer, error feedback off */
        rb_reducer *off = NULL;
        const char *o[] = {"sketch_width=5", NULL};
        if (create("s2", o, &off) == RB_OK) {
            snprintf(what, sizeof what, "%s into s2 without error feedback", label);
            refused(off, st, len, "other options", what);
        }
        rb_destroy(off);
    }
    if (len > 8 && rb_state_save(b, bad, 8) != RB_ERR_ARG)
        FAIL("%s: saving into 8 bytes was not refused", label);
    free(bad);
}

static void run_variant(const variant *v)
{
    char label[256];
    int at = snprintf(label, sizeof label, "%s", v->name);
    for (int i = 0; v->opts[i]; i++)
        at += snprintf(label + at, sizeof label - (size_t)at, " %s", v->opts[i]);
    rb_reducer *a = NULL, *b = NULL, *fresh = NULL;
    if (create(v->name, v->opts, &a) != RB_OK || create(v->name, v->opts, &b) != RB_OK ||
        create(v->name, v->opts, &fresh) != RB_OK) {
        FAIL("%s: rb_create: %s", label, rb_last_error());
        rb_destroy(a), rb_destroy(b), rb_destroy(fresh);
        return;
    }
    int mix = uses_params(v);
    static float ga[N], gb[N], gf[N], pa[N], pb[N], pf[N];
    for (size_t i = 0; i < N; i++)
        pa[i] = pb[i] = pf[i] = (float)i / N;
    for (int c = 0; c < CALLS_BEFORE; c++)
        if (step(a, c, ga, mix ? pa : NULL) != RB_OK)
            FAIL("%s: call %d: %s", label, c, rb_last_error());
    size_t len = 0;
    unsigned char *st = save(a, &len, label);
    if (st) {
        check_refusals(v, b, st, len, label);
        if (rb_state_load(b, st, len) != RB_OK)
            FAIL("%s: rb_state_load: %s", label, rb_last_error());
    }
    if (mix)
        memcpy(pb, pa, sizeof pa), memcpy(pf, pa, sizeof pa);
    int fresh_differs = 0;
    for (int c = CALLS_BEFORE; c < CALLS_BEFORE + CALLS_AFTER; c++) {
        int ra = step(a, c, ga, mix ? pa : NULL), rb = step(b, c, gb, mix ? pb : NULL);
        int rf = step(fresh, c, gf, mix ? pf : NULL);
        if (ra != RB_OK || rb != RB_OK || rf != RB_OK)
            FAIL("%s: call %d after the load failed: %s", label, c, rb_last_error());
        if (!same(ga, gb) || (mix && !same(pa, pb)))
            FAIL("%s: call %d: the reducer that loaded the state differs from the one that saved it",
                 label, c);
        fresh_differs |= !same(ga, gf) || (mix && !same(pa, pf));
    }
    /* Any rank seeing a difference is enough: the state is per rank. */
    int any = 0;
    MPI_Allreduce(&fresh_differs, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (v->stateful && nranks >= v->stateful && !any)
        FAIL("%s: a fresh twin gives the same results: the test cannot see missing state", label);
    free(st);
    rb_destroy(a), rb_destroy(b), rb_destroy(fresh);
}

/* Every reducer of the registry, default options: the round trip. */
static void run_registry(void)
{
    for (size_t i = 0; i < rb_reducer_count(); i++) {
        variant v = {rb_reducer_name_at(i), {NULL}, 0};
        run_variant(&v);
    }
}

/* gossip_async: between steps an exchange is in flight. */
static void check_async_refused(void)
{
    if (nranks < 2)
        return;
    rb_reducer *r = NULL;
    const char *o[] = {"gossip_async=on", NULL};
    if (create("gossip", o, &r) != RB_OK) {
        FAIL("gossip async: rb_create: %s", rb_last_error());
        return;
    }
    static float g[N];
    step(r, 0, g, NULL);
    size_t len;
    int rc = rb_state_size(r, &len);
    /* A rank without a partner this step (hypercube, p not a power of
     * two) has nothing in flight; every other one must refuse. */
    int refused_here = rc == RB_ERR_STATE && strstr(rb_last_error(), "in flight"), any = 0;
    if (rc != RB_OK && !refused_here)
        FAIL("gossip async in flight: rb_state_size returned %s (%s), want RB_ERR_STATE",
             rb_strerror(rc), rb_last_error());
    MPI_Allreduce(&refused_here, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any)
        FAIL("gossip async in flight: no rank refused to take its state");
    rb_flush(r, g, NULL, NULL);
    if (rb_state_size(r, &len) != RB_OK)
        FAIL("gossip async after rb_flush: %s", rb_last_error());
    rb_destroy(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    run_registry();
    for (size_t i = 0; i < NVARIANTS; i++)
        run_variant(&variants[i]);
    check_async_refused();
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_state: %d ranks, %zu reducers and %zu variants: %s\n", nranks, rb_reducer_count(),
               NVARIANTS, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
