/* Internal interface shared by the reducers: the vtable, the reducer object,
 * error reporting, phase timing and byte-counting communication wrappers. */
#ifndef RB_INTERNAL_H
#define RB_INTERNAL_H

#include "reducer.h"

#include <math.h>      /* the cost models at the end of every reducer file */
#include <stdbool.h>

struct rb_rowset;
struct rb_state_io;

/* What rb_reduce_rows asks of a reducer's reduce_rows op.  The op leaves
 * the average either in row form in *rows (library memory, rows not listed
 * are zero) or, where its result is dense, in a buffer of rows*cols floats
 * that it names in dense_result (dense, or a buffer of its own); core.c
 * then writes what the caller asked for. */
typedef struct rb_rows_call {
    const rb_rows *in;            /* validated on every rank */
    float *dense;                 /* the caller's dense output, or NULL */
    struct rb_rowset *rows;       /* the row form, filled by the op */
    const float *dense_result;    /* set by an op whose result is dense */
} rb_rows_call;

/* One reducer option: what rb_options_set parses, rb_option_format prints,
 * --help lists and the archives record (options.c builds the one table of
 * them from the reducers' ops).  A reducer lists its own in
 * rb_reducer_ops.options; an option that several reducers list (the same
 * definition) applies to each of them. */
enum {
    RB_OPTDEF_INT64 = 1,     /* an int64_t field (else int, for int-like types) */
    RB_OPTDEF_ODD = 2,       /* odd integers only (sketch rows: the median of an odd count) */
};
typedef struct rb_option_def {
    const char *key;
    rb_option_type type;
    const char *choices;     /* enums: "a|b|c" (index = value; an empty entry is no value) */
    const char *help;
    /* Where the value lives: offsetof(rb_options, field), or RB_OPTION_EXT
     * for a reducer without a field of its own (a slot of rb_options.ext;
     * any type but RB_OPT_U64). */
    long offset;
    double min, max;         /* numeric range (inclusive) */
    double def;              /* default value (for enums: the index) */
    unsigned flags;          /* RB_OPTDEF_* */
} rb_option_def;
#define RB_OPTION_EXT (-1L)
#define RB_OPTION_FIELD(f) ((long)offsetof(rb_options, f))
/* Shared by several reducers (options.c). */
extern const rb_option_def rb_opt_seed, rb_opt_error_feedback;
/* Value of a reducer's own option, wherever it is stored (as a double:
 * exact for every type but RB_OPT_U64). */
double rb_option_value(const rb_options *o, const rb_option_def *d);

typedef struct rb_reducer_ops {
    const char *name;
    const char *description;
    /* Its options (NULL-terminated; NULL: none besides transport, which
     * every reducer takes). */
    const rb_option_def *const *options;
    unsigned traits;                     /* RB_TRAIT_* with the default options */
    /* Optional: the traits under options o, where an option changes them. */
    unsigned (*traits_with)(const rb_options *o);
    /* Bytes of the reducer's state: core.c allocates r->impl zeroed before
     * init and frees it after fini (0: no state, r->impl stays NULL). */
    size_t state_size;
    /* Fill in r->impl's buffers.  Called after the rank agreement check;
     * on failure fini still runs, on the state as init left it. */
    int (*init)(rb_reducer *r);
    /* Optional: set up the device path (NCCL), called after init when
     * reduce_device takes this reducer's device buffers where they are. */
    int (*init_device)(rb_reducer *r);
    /* Replace grad (host memory) with the aggregate; fill st. */
    int (*reduce)(rb_reducer *r, float *grad, rb_stats *st);
    /* Optional (NULL = RB_ERR_UNSUPPORTED). */
    int (*mix_params)(rb_reducer *r, float *params, rb_stats *st);
    int (*progress)(rb_reducer *r);
    int (*flush)(rb_reducer *r, float *grad, float *params, rb_stats *st);
    /* Optional: device-memory reduce; NULL = staged through host memory. */
    int (*reduce_device)(rb_reducer *r, float *dgrad, rb_stats *st);
    /* Optional: row-sparse input (rb_reduce_rows) without a dense buffer;
     * NULL = the generic path (rows scattered into a dense buffer, reduce). */
    int (*reduce_rows)(rb_reducer *r, rb_rows_call *call, rb_stats *st);
    /* Free what init and init_device allocated in r->impl (not r->impl
     * itself); fini_device runs first. */
    void (*fini_device)(rb_reducer *r);
    void (*fini)(rb_reducer *r);
    /* Optional (NULL: none): an upper bound of the bytes it holds besides
     * the caller's buffer, n elements, k non-zeros a rank, p ranks
     * (rb_reducer_state_bytes). */
    double (*state_bytes)(const rb_options *o, double n, double k, int p);
    /* Optional (NULL: nothing carries between calls): visit every field
     * of the state that carries from one call to the next with
     * rb_state_field, in one fixed order; rb_state_save and rb_state_load
     * both go through it (state.c).  RB_ERR_STATE / RB_ERR_UNSUPPORTED
     * when the state cannot be taken now (an exchange in flight, device
     * memory). */
    int (*state)(rb_reducer *r, struct rb_state_io *io);
    /* Optional: the cost model of one call (model.c checked the input);
     * adds its terms to out with the rb_model_* blocks below. */
    void (*model)(const rb_model_input *in, rb_model_result *out);
} rb_reducer_ops;

struct rb_reducer {
    const rb_reducer_ops *ops;
    rb_config cfg;
    MPI_Comm comm;          /* private duplicate of cfg.comm */
    int rank, size;
    size_t n;               /* rows * cols */
    void *impl;             /* reducer state */
    float *host_stage;      /* staging buffer for device memory without a device path */
    void *device_ctx;       /* CUDA/NCCL state, owned by the device layer */
    struct rb_rows_state *rows_state;   /* rb_reduce_rows' buffers (core.c), else NULL */
    /* Phase currently timed (RB_PHASE_COUNT_ when none) and its start. */
    int cur_phase;
    double phase_t0;
};

/* A device op of a reducer's NCCL path, NULL in builds without NCCL (the
 * function is then not compiled, and core.c stages device buffers). */
#if defined(HAVE_CUDA) && defined(HAVE_NCCL)
#define RB_NCCL_OP(fn) fn
#else
#define RB_NCCL_OP(fn) NULL
#endif

/* Registry (registry.c): one line per reducer. */
const rb_reducer_ops *rb_registry_find(const char *name);

/* config.c: cfg checked on every rank and agreed on by all of cfg->comm
 * (name, shape, device, options, seed); *ops is the named reducer.  The
 * same status on every rank, so none goes on alone. */
int rb_config_check(const rb_config *cfg, const rb_reducer_ops **ops);

/* Error detail (thread-local); returns code so callers can
 * `return rb_fail(RB_ERR_ARG, "...", ...)`. */
int rb_fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Map an MPI return code to RB_ERR_MPI with the MPI error string. */
int rb_mpi_check(int mpi_rc, const char *what);
#define RB_MPI(call) do { int rb_mpi_rc_ = rb_mpi_check((call), #call); \
        if (rb_mpi_rc_ != RB_OK) return rb_mpi_rc_; } while (0)
#define RB_TRY(call) do { int rb_try_rc_ = (call); \
        if (rb_try_rc_ != RB_OK) return rb_try_rc_; } while (0)

/* Fail together: the worst status of all ranks (core.c). */
int rb_agree(MPI_Comm comm, int local_status);

/* A dense buffer of rows*cols floats kept for rb_reduce_rows (the caller's
 * dense output may be NULL).  Allocated on the first call and agreed on
 * (RB_ERR_NOMEM on every rank together), so every rank must ask for it at
 * the same point of every call, whether it uses it or not. */
int rb_rows_scratch(rb_reducer *r, float **buf);
/* The generic path of rb_reduce_rows (dense, none, gossip, and ops that
 * hand a call over): the rows scattered into the caller's dense output or
 * rb_rows_scratch's buffer, then ops->reduce. */
int rb_reduce_rows_generic(rb_reducer *r, rb_rows_call *call, rb_stats *st);

/* Phase timing: adds elapsed seconds to st->t_phase[] and calls the hook.
 * Starting a phase ends the current one. */
void rb_phase_start(rb_reducer *r, rb_stats *st, rb_phase phase);
void rb_phase_stop(rb_reducer *r, rb_stats *st);

/* Communication wrappers that count payload bytes in st.  Collectives are
 * counted with the bandwidth-optimal (ring) model, documented in
 * docs/wire-bytes.md: allreduce of B bytes sends and receives 2(p-1)/p*B;
 * allgather(v) sends (p-1)/p of the total and receives total - own. */
int rb_allreduce(rb_reducer *r, rb_stats *st, const void *sendbuf, void *buf,
                 int count, MPI_Datatype type, MPI_Op op);
int rb_allgather(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                 MPI_Datatype type, void *recvbuf);
int rb_allgatherv(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                  MPI_Datatype type, void *recvbuf, const int *counts,
                  const int *displs);
/* Point-to-point (exact byte counts). */
int rb_sendrecv(rb_reducer *r, rb_stats *st, const void *sbuf, int scount,
                MPI_Datatype stype, int dest, void *rbuf, int rcount,
                MPI_Datatype rtype, int src, int tag, MPI_Status *status);
/* Nonblocking point-to-point, counted when posted: rb_isend adds the bytes
 * sent, rb_irecv the bytes posted for (the caller checks the status for a
 * shorter message when it completes the request). */
int rb_isend(rb_reducer *r, rb_stats *st, const void *buf, int count,
             MPI_Datatype type, int dest, int tag, MPI_Request *req);
int rb_irecv(rb_reducer *r, rb_stats *st, void *buf, int count,
             MPI_Datatype type, int src, int tag, MPI_Request *req);

/* Personalised exchange (exact byte counts: what goes to / comes from the
 * other ranks; the block to self is not counted). */
int rb_alltoall(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                MPI_Datatype type, void *recvbuf);
int rb_alltoallv(rb_reducer *r, rb_stats *st, const void *sendbuf,
                 const int *scounts, const int *sdispls, MPI_Datatype type,
                 void *recvbuf, const int *rcounts, const int *rdispls);
/* Broadcast, counted with the pipelined-chain model: every rank but the
 * root receives B, every rank but the last in the chain sends B. */
int rb_bcast(rb_reducer *r, rb_stats *st, void *buf, int count,
             MPI_Datatype type, int root);

/* Large element counts are sent as chunks of MPI_FLOAT up to INT_MAX. */
int rb_allreduce_floats(rb_reducer *r, rb_stats *st, float *buf, size_t n);

/* Zero-initialised aligned allocation (64 B); NULL on failure. */
void *rb_calloc(size_t count, size_t size);
/* The state bound of the reducers that exchange (index, value) pairs
 * (agsparse, sparcml, parallax, oktopk, zen): own pairs, every rank's
 * pairs and a merge buffer, at most the dense buffer once fill-in makes
 * them dense, plus one dense scratch buffer. */
double rb_state_bytes_pairs(double n, double k, int p);
/* A reducer's state op (state.c): field NAME of BYTES bytes at P, saved
 * or loaded (io knows which); RB_OK or the io's first error. */
int rb_state_field(struct rb_state_io *io, const char *name, void *p, size_t bytes);
/* Grow *buf to at least count*size bytes, keeping *cap in bytes. */
int rb_reserve(void **buf, size_t *cap, size_t count, size_t size);

/* Cost model building blocks (model.c).  Each adds one operation to out:
 * its messages and bytes on the critical path, and the bytes this rank
 * sends as the wrappers above count them (mean over ranks).  n, p, the
 * options and the machine come from in. */
void rb_model_allreduce(const rb_model_input *in, rb_model_result *out, double bytes);
void rb_model_allgather(const rb_model_input *in, rb_model_result *out, double bytes_per_rank);
/* total bytes gathered from all ranks */
void rb_model_allgatherv(const rb_model_input *in, rb_model_result *out, double total);
void rb_model_alltoall(const rb_model_input *in, rb_model_result *out, double bytes_per_dest);
/* sent: this rank's bytes to the others (mean over ranks); busiest: the
 * most any rank sends or receives */
void rb_model_alltoallv(const rb_model_input *in, rb_model_result *out, double sent,
                        double busiest);
void rb_model_bcast(const rb_model_input *in, rb_model_result *out, double bytes);
/* msgs messages in sequence on the critical path carrying busiest bytes;
 * sent as for alltoallv */
void rb_model_p2p(const rb_model_input *in, rb_model_result *out, double msgs, double sent,
                  double busiest);
/* a local pass touching bytes of memory */
void rb_model_local(const rb_model_input *in, rb_model_result *out, double bytes);
/* Expected support of the sum of m ranks' inputs, between nnz_mean
 * (identical supports) and m x nnz_mean (disjoint), through nnz_union at
 * m = p: supports drawn independently from a space sized to fit. */
double rb_model_union(const rb_model_input *in, double m);
double rb_model_elements(const rb_model_input *in);   /* n = rows * cols */
int rb_model_log2(int p);                              /* ceil(log2 p) */

#endif
