/* PAPI counters per phase (see bench_papi.h). */
#include "bench_papi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_PAPI
#include <papi.h>
#endif
#ifdef HAVE_PAPI_SDE
#include <sde_lib.h>
#include <sys/resource.h>
#include <time.h>
#endif

#include "bench_fail.h"

#define BENCH_PAPI_NAME_LEN 128
#define BENCH_PAPI_REASON_LEN 512

typedef struct papi_set {
    int eventset;
    int n;
    int idx[BENCH_PAPI_MAX_EVENTS];  /* event index of each counter in the set */
} papi_set;

struct bench_papi {
    int nev, nphases, nsets;
    char names[BENCH_PAPI_MAX_EVENTS][BENCH_PAPI_NAME_LEN];
    char phases[BENCH_PAPI_MAX_PHASES][32];
    int avail[BENCH_PAPI_MAX_EVENTS];
    int unknown[BENCH_PAPI_MAX_EVENTS];   /* the name is no event PAPI knows here */
    char reason[BENCH_PAPI_MAX_EVENTS][BENCH_PAPI_REASON_LEN];
    papi_set sets[BENCH_PAPI_MAX_EVENTS];
    long long start[BENCH_PAPI_MAX_PHASES][BENCH_PAPI_MAX_EVENTS];
    long long acc[BENCH_PAPI_MAX_PHASES][BENCH_PAPI_MAX_EVENTS];
};

/* Split a comma list into p->names; -1 (with msg) when malformed. */
static int parse_events(bench_papi *p, const char *events, char *msg, size_t len)
{
    if (!events)
        events = BENCH_PAPI_DEFAULT_EVENTS;
    if (!strcmp(events, "none"))
        events = "";
    const char *s = events;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        if (n == 0 || n >= BENCH_PAPI_NAME_LEN) {
            snprintf(msg, len, "-P: empty or too long event name in '%s'", events);
            return -1;
        }
        if (p->nev == BENCH_PAPI_MAX_EVENTS) {
            snprintf(msg, len, "-P: at most %d events", BENCH_PAPI_MAX_EVENTS);
            return -1;
        }
        memcpy(p->names[p->nev], s, n);
        p->names[p->nev][n] = '\0';
        p->nev++;
        s += n + (comma ? 1 : 0);
        if (comma && !*s) {
            snprintf(msg, len, "-P: trailing comma in '%s'", events);
            return -1;
        }
    }
    return 0;
}

#ifdef HAVE_PAPI_SDE
/* Software-defined counters: they count in any VM, so the per-phase
 * machinery can be exercised (and page faults, which are slow in VMs, are
 * worth seeing per phase). */
static long long sde_cpu_time_ns(void *arg)
{
    (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
static long long sde_rusage(void *arg)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    switch ((int)(intptr_t)arg) {
    case 0: return ru.ru_minflt;
    case 1: return ru.ru_majflt;
    case 2: return ru.ru_nvcsw;
    default: return ru.ru_nivcsw;
    }
}
#define SDE_PREFIX "sde:::reducerbench::"
/* cpu_time_ns first, then the getrusage fields in sde_rusage's order. */
static const char *const sde_names[] = {"cpu_time_ns", "minor_faults", "major_faults",
                                        "vol_ctx_switches", "invol_ctx_switches"};
#define SDE_COUNT (sizeof sde_names / sizeof *sde_names)
static void register_sde_events(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    papi_handle_t h = papi_sde_init("reducerbench");
    const int mode = PAPI_SDE_RO | PAPI_SDE_DELTA;
    papi_sde_register_counter_cb(h, sde_names[0], mode, PAPI_SDE_long_long, sde_cpu_time_ns, NULL);
    for (intptr_t i = 0; i + 1 < (intptr_t)SDE_COUNT; i++)
        papi_sde_register_counter_cb(h, sde_names[i + 1], mode, PAPI_SDE_long_long, sde_rusage, (void *)i);
}

/* PAPI takes any sde:::reducerbench::NAME (SDE counters may be registered
 * later) and counts 0 for one never registered: a typo measured nothing,
 * silently.  Only the names registered above are counters. */
static int sde_name_unknown(const char *name)
{
    if (strncmp(name, SDE_PREFIX, strlen(SDE_PREFIX)))
        return 0;
    for (size_t i = 0; i < SDE_COUNT; i++)
        if (!strcmp(name + strlen(SDE_PREFIX), sde_names[i]))
            return 0;
    return 1;
}

/* The reason an unknown sde:::reducerbench:: name is refused, listing the
 * counters that are (from sde_names, so the list cannot fall behind it). */
static void sde_unknown_reason(char *reason, size_t len)
{
    size_t at = (size_t)snprintf(reason, len, "not one of reducerbench's counters:");
    for (size_t i = 0; i < SDE_COUNT && at < len; i++)
        at += (size_t)snprintf(reason + at, len - at, " %s", sde_names[i]);
}
#endif

#ifdef HAVE_PAPI
static void set_reason(bench_papi *p, int e, const char *what, int rc, int component)
{
    const char *comp = "";
    if (component >= 0) {
        const PAPI_component_info_t *ci = PAPI_get_component_info(component);
        if (ci && ci->disabled && ci->disabled_reason[0])
            comp = ci->disabled_reason;
        if (ci && comp[0]) {
            snprintf(p->reason[e], BENCH_PAPI_REASON_LEN, "%s: %s (%.64s: %.300s)", what, PAPI_strerror(rc),
                     ci->name, comp);
            return;
        }
    }
    snprintf(p->reason[e], BENCH_PAPI_REASON_LEN, "%s: %s", what, PAPI_strerror(rc));
}

/* Eventsets are per component: find or create the one for cid. */
static papi_set *set_for_component(bench_papi *p, int cid, int *created)
{
    *created = 0;
    for (int s = 0; s < p->nsets; s++)
        if (PAPI_get_eventset_component(p->sets[s].eventset) == cid)
            return &p->sets[s];
    papi_set *set = &p->sets[p->nsets];
    set->eventset = PAPI_NULL;
    set->n = 0;
    if (PAPI_create_eventset(&set->eventset) != PAPI_OK)
        return NULL;
    *created = 1;
    p->nsets++;
    return set;
}

static void add_event(bench_papi *p, int e)
{
#ifdef HAVE_PAPI_SDE
    if (sde_name_unknown(p->names[e])) {
        sde_unknown_reason(p->reason[e], BENCH_PAPI_REASON_LEN);
        p->unknown[e] = 1;
        return;
    }
#endif
    int code = 0, rc = PAPI_event_name_to_code(p->names[e], &code);
    if (rc != PAPI_OK) {
        set_reason(p, e, "PAPI_event_name_to_code", rc, -1);
        p->unknown[e] = 1;
        return;
    }
    int cid = PAPI_get_event_component(code), created = 0;
    papi_set *set = set_for_component(p, cid, &created);
    if (!set) {
        snprintf(p->reason[e], BENCH_PAPI_REASON_LEN, "PAPI_create_eventset failed");
        return;
    }
    rc = PAPI_add_event(set->eventset, code);
    if (rc != PAPI_OK) {
        set_reason(p, e, "PAPI_add_event", rc, cid);
        if (created && set->n == 0) {
            PAPI_destroy_eventset(&set->eventset);
            p->nsets--;
        }
        return;
    }
    set->idx[set->n++] = e;
    p->avail[e] = 1;
}

static void start_sets(bench_papi *p)
{
    for (int s = 0; s < p->nsets; s++) {
        int rc = PAPI_start(p->sets[s].eventset);
        if (rc == PAPI_OK)
            continue;
        for (int k = 0; k < p->sets[s].n; k++) {
            int e = p->sets[s].idx[k];
            p->avail[e] = 0;
            set_reason(p, e, "PAPI_start", rc, -1);
        }
        p->sets[s].n = 0;
    }
}

static void open_local(bench_papi *p)
{
#ifdef HAVE_PAPI_SDE
    register_sde_events();
#endif
    if (!PAPI_is_initialized()) {
        /* rocm_smi prints errors at init on machines without AMD GPUs;
         * load it only when one of its events is asked for. */
        int want_rocm = 0;
        for (int e = 0; e < p->nev; e++)
            want_rocm |= !strncmp(p->names[e], "rocm_smi:::", 11);
        if (!want_rocm)
            PAPI_disable_component_by_name("rocm_smi");
        int rc = PAPI_library_init(PAPI_VER_CURRENT);
        if (rc != PAPI_VER_CURRENT) {
            for (int e = 0; e < p->nev; e++)
                set_reason(p, e, "PAPI_library_init", rc, -1);
            return;
        }
    }
    for (int e = 0; e < p->nev; e++)
        add_event(p, e);
    start_sets(p);
}

/* Current value of every available event into now[]. */
static void read_all(bench_papi *p, long long *now)
{
    long long v[BENCH_PAPI_MAX_EVENTS];
    for (int s = 0; s < p->nsets; s++) {
        if (p->sets[s].n == 0 || PAPI_read(p->sets[s].eventset, v) != PAPI_OK)
            continue;
        for (int k = 0; k < p->sets[s].n; k++)
            now[p->sets[s].idx[k]] = v[k];
    }
}
#else
static void open_local(bench_papi *p)
{
    for (int e = 0; e < p->nev; e++)
        snprintf(p->reason[e], BENCH_PAPI_REASON_LEN,
                 "reducerbench was built without PAPI (configure found no papi.h/libpapi)");
}
static void read_all(bench_papi *p, long long *now)
{
    (void)p, (void)now;
}
#endif

/* An event counts only if every rank can count it. */
static void agree(bench_papi *p, MPI_Comm comm)
{
    int mine[BENCH_PAPI_MAX_EVENTS], all[BENCH_PAPI_MAX_EVENTS];
    memcpy(mine, p->avail, sizeof mine);
    MPI_Allreduce(mine, all, BENCH_PAPI_MAX_EVENTS, MPI_INT, MPI_MIN, comm);
    for (int e = 0; e < p->nev; e++) {
        if (mine[e] && !all[e])
            snprintf(p->reason[e], BENCH_PAPI_REASON_LEN, "unavailable on some ranks");
        p->avail[e] = all[e];
    }
    /* Rank 0's reasons are the ones recorded: every rank reports them. */
    MPI_Bcast(p->reason, (int)sizeof p->reason, MPI_CHAR, 0, comm);
}

static void warn_unavailable(const bench_papi *p, const char *prog)
{
    char line[2048];
    size_t off = 0;
    for (int e = 0; e < p->nev && off < sizeof line; e++)
        if (!p->avail[e])
            off += (size_t)snprintf(line + off, sizeof line - off, "%s%s (%s)", off ? ", " : "",
                                    p->names[e], p->reason[e]);
    if (off)
        fprintf(stderr, "%s: warning: PAPI counters unavailable, continuing without them: %s\n",
                prog, line);
}

int bench_papi_open(MPI_Comm comm, const char *prog, const char *events, int nphases,
                 const char *const *phase_names, bench_papi **out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *out = NULL;
    bench_papi *p = calloc(1, sizeof *p);
    char msg[256] = "";
    int bad = !p || nphases < 1 || nphases > BENCH_PAPI_MAX_PHASES;
    if (!bad && parse_events(p, events, msg, sizeof msg))
        bad = 1;
    if (bad) {
        bench_fail_on(rank == 0, BENCH_NO_CODE, NULL, "%s", msg[0] ? msg : "PAPI: cannot set up counters");
        free(p);
        return 1;
    }
    p->nphases = nphases;
    for (int i = 0; i < nphases; i++)
        snprintf(p->phases[i], sizeof p->phases[i], "%s", phase_names[i]);
    if (p->nev > 0)
        open_local(p);
    agree(p, comm);
    /* A name PAPI does not know is a typo when the user gave it (-P): the
     * run would measure without the counter asked for.  An event that
     * exists but cannot be counted here (a VM) stays a warning. */
    int mine = -1, first = -1;
    for (int e = 0; events && e < p->nev && mine < 0; e++)
        if (p->unknown[e])
            mine = e;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MAX, comm);
    if (first >= 0) {
        bench_fail_on(rank == 0, BENCH_NO_CODE, "-P", "unknown PAPI event %s (%s); papi_avail and "
                      "papi_native_avail list this machine's events, -P none counts nothing",
                      p->names[first], p->reason[first]);
        free(p);
        return 1;
    }
    if (rank == 0)
        warn_unavailable(p, prog);
    *out = p;
    return 0;
}

void bench_papi_begin(bench_papi *p, int phase)
{
    if (p && phase >= 0 && phase < p->nphases && p->nsets > 0)
        read_all(p, p->start[phase]);
}

void bench_papi_end(bench_papi *p, int phase)
{
    if (!p || phase < 0 || phase >= p->nphases || p->nsets == 0)
        return;
    long long now[BENCH_PAPI_MAX_EVENTS] = {0};
    read_all(p, now);
    for (int e = 0; e < p->nev; e++)
        if (p->avail[e])
            p->acc[phase][e] += now[e] - p->start[phase][e];
}

void bench_papi_reducer_hook(void *ctx, rb_phase phase, int begin)
{
    if (begin)
        bench_papi_begin(ctx, (int)phase);
    else
        bench_papi_end(ctx, (int)phase);
}

void bench_papi_reset(bench_papi *p)
{
    if (p)
        memset(p->acc, 0, sizeof p->acc);
}

int bench_papi_nevents(const bench_papi *p) { return p ? p->nev : 0; }
int bench_papi_nphases(const bench_papi *p) { return p ? p->nphases : 0; }
const char *bench_papi_event(const bench_papi *p, int i) { return p->names[i]; }
const char *bench_papi_phase(const bench_papi *p, int i) { return p->phases[i]; }
int bench_papi_available(const bench_papi *p, int i) { return p->avail[i]; }
const char *bench_papi_reason(const bench_papi *p, int i) { return p->reason[i]; }

const char *bench_papi_version(void)
{
#ifdef HAVE_PAPI
    static char v[32];
    snprintf(v, sizeof v, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VERSION),
             PAPI_VERSION_MINOR(PAPI_VERSION), PAPI_VERSION_REVISION(PAPI_VERSION),
             PAPI_VERSION_INCREMENT(PAPI_VERSION));
    return v;
#else
    return "not built";
#endif
}

int bench_papi_gather(const bench_papi *p, MPI_Comm comm, int root, long long *out)
{
    int n = p->nphases * p->nev;
    long long mine[BENCH_PAPI_MAX_PHASES * BENCH_PAPI_MAX_EVENTS];
    for (int ph = 0; ph < p->nphases; ph++)
        for (int e = 0; e < p->nev; e++)
            mine[ph * p->nev + e] = p->avail[e] ? p->acc[ph][e] : -1;
    return MPI_Gather(mine, n, MPI_LONG_LONG, out, n, MPI_LONG_LONG, root, comm) == MPI_SUCCESS ? 0 : 1;
}

void bench_papi_close(bench_papi *p)
{
    if (!p)
        return;
#ifdef HAVE_PAPI
    long long v[BENCH_PAPI_MAX_EVENTS];
    for (int s = 0; s < p->nsets; s++) {
        if (p->sets[s].n > 0)
            PAPI_stop(p->sets[s].eventset, v);
        PAPI_cleanup_eventset(p->sets[s].eventset);
        PAPI_destroy_eventset(&p->sets[s].eventset);
    }
#endif
    free(p);
}
