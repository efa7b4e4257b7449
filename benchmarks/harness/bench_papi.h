/* PAPI counters per phase, for every benchmark (rb_micro: encode /
 * communicate / decode through the reducer's phase hook; rb_train: its own
 * phases).  Counters run continuously; each phase reads them at its begin
 * and end and adds the difference, so phases may nest.
 *
 * Events the machine cannot count (virtual machines: PAPI_ECMP_DISABLED)
 * are kept in the list, marked unavailable with PAPI's reason; the run
 * goes on.  With libsde, reducerbench also offers software-defined events
 * that work everywhere (see BENCH_PAPI_SDE_EVENTS). */
#ifndef BENCH_PAPI_H
#define BENCH_PAPI_H

#include <mpi.h>

#include "reducer.h"

#define BENCH_PAPI_DEFAULT_EVENTS "PAPI_TOT_CYC,PAPI_TOT_INS"
/* Software-defined events registered by reducerbench when built with
 * PAPI's libsde (process-wide, from getrusage/clock_gettime). */
#define BENCH_PAPI_SDE_EVENTS \
    "sde:::reducerbench::cpu_time_ns,sde:::reducerbench::minor_faults," \
    "sde:::reducerbench::major_faults,sde:::reducerbench::vol_ctx_switches," \
    "sde:::reducerbench::invol_ctx_switches"
#define BENCH_PAPI_MAX_EVENTS 16
#define BENCH_PAPI_MAX_PHASES 8

typedef struct bench_papi bench_papi;

/* Collective.  events: comma list (NULL = BENCH_PAPI_DEFAULT_EVENTS, "none" or
 * "" = no events).  phase_names: nphases names (copied).  An event is
 * available only if every rank can count it; rank 0 prints one warning
 * line naming the unavailable events and why.  Returns 0, or non-zero on
 * every rank for a malformed list (message printed on rank 0). */
int bench_papi_open(MPI_Comm comm, const char *prog, const char *events, int nphases,
                 const char *const *phase_names, bench_papi **out);
/* Phase boundaries (not collective; cheap when no event is available). */
void bench_papi_begin(bench_papi *p, int phase);
void bench_papi_end(bench_papi *p, int phase);
/* Adapter for rb_config.hook (ctx = the bench_papi). */
void bench_papi_reducer_hook(void *ctx, rb_phase phase, int begin);
/* Zero the accumulated counts (e.g. after warm-up). */
void bench_papi_reset(bench_papi *p);

int bench_papi_nevents(const bench_papi *p);
int bench_papi_nphases(const bench_papi *p);
const char *bench_papi_event(const bench_papi *p, int i);
const char *bench_papi_phase(const bench_papi *p, int i);
int bench_papi_available(const bench_papi *p, int i);
/* "" when available, else why not (PAPI's message and, for a disabled
 * component, the component's reason; or "built without PAPI"). */
const char *bench_papi_reason(const bench_papi *p, int i);
/* "7.0.0.0", or "not built". */
const char *bench_papi_version(void);
/* Collective: counts accumulated since the last reset, gathered into out
 * on root (ranks x phases x events, rank-major; -1 where unavailable).
 * out is significant on root only. */
int bench_papi_gather(const bench_papi *p, MPI_Comm comm, int root, long long *out);
void bench_papi_close(bench_papi *p);

#endif
