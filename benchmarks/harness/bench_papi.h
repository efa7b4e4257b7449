/* PAPI counters per phase, for every benchmark (rb_micro: encode /
 * communicate / decode through the reducer's phase hook; rb_train: its own
 * phases).  Counters run continuously; each phase reads them at its begin
 * and end and adds the difference, so phases may nest.
 *
 * Events the machine cannot count (virtual machines: PAPI_ECMP_DISABLED)
 * are kept in the list, marked unavailable with PAPI's reason; the run
 * goes on.  With libsde, reducerbench also offers software-defined events
 * that work everywhere (see RB_PAPI_SDE_EVENTS). */
#ifndef RB_PAPI_H
#define RB_PAPI_H

#include <mpi.h>

#include "reducer.h"

#define RB_PAPI_DEFAULT_EVENTS "PAPI_TOT_CYC,PAPI_TOT_INS"
/* Software-defined events registered by reducerbench when built with
 * PAPI's libsde (process-wide, from getrusage/clock_gettime). */
#define RB_PAPI_SDE_EVENTS \
    "sde:::reducerbench::cpu_time_ns,sde:::reducerbench::minor_faults," \
    "sde:::reducerbench::major_faults,sde:::reducerbench::vol_ctx_switches," \
    "sde:::reducerbench::invol_ctx_switches"
#define RB_PAPI_MAX_EVENTS 16
#define RB_PAPI_MAX_PHASES 8

typedef struct rb_papi rb_papi;

/* Collective.  events: comma list (NULL = RB_PAPI_DEFAULT_EVENTS, "none" or
 * "" = no events).  phase_names: nphases names (copied).  An event is
 * available only if every rank can count it; rank 0 prints one warning
 * line naming the unavailable events and why.  Returns 0, or non-zero on
 * every rank for a malformed list (message printed on rank 0). */
int rb_papi_open(MPI_Comm comm, const char *prog, const char *events, int nphases,
                 const char *const *phase_names, rb_papi **out);
/* Phase boundaries (not collective; cheap when no event is available). */
void rb_papi_begin(rb_papi *p, int phase);
void rb_papi_end(rb_papi *p, int phase);
/* Adapter for rb_config.hook (ctx = the rb_papi). */
void rb_papi_reducer_hook(void *ctx, rb_phase phase, int begin);
/* Zero the accumulated counts (e.g. after warm-up). */
void rb_papi_reset(rb_papi *p);

int rb_papi_nevents(const rb_papi *p);
int rb_papi_nphases(const rb_papi *p);
const char *rb_papi_event(const rb_papi *p, int i);
const char *rb_papi_phase(const rb_papi *p, int i);
int rb_papi_available(const rb_papi *p, int i);
/* "" when available, else why not (PAPI's message and, for a disabled
 * component, the component's reason; or "built without PAPI"). */
const char *rb_papi_reason(const rb_papi *p, int i);
/* "7.0.0.0", or "not built". */
const char *rb_papi_version(void);
/* Collective: counts accumulated since the last reset, gathered into out
 * on root (ranks x phases x events, rank-major; -1 where unavailable).
 * out is significant on root only. */
int rb_papi_gather(const rb_papi *p, MPI_Comm comm, int root, long long *out);
void rb_papi_close(rb_papi *p);

#endif
