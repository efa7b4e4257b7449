/* libreducer: gradient aggregation across MPI ranks.
 *
 * A reducer is created collectively from a config (name, communicator,
 * gradient shape rows x cols, device, options) and then called once per step
 * on a dense float buffer, which it replaces in place with the aggregate:
 * the average over ranks for exact and sketch reducers, the partner mix for
 * gossip.  NaN and inf are summed as IEEE floats, not refused; -0.0 is a
 * zero (docs/values.md).  Every call fills an rb_stats record.  The
 * library never prints and never exits: every function returns an RB_*
 * code, rb_strerror() names it and rb_last_error() gives the detail of the
 * most recent failure.
 */
#ifndef REDUCER_H
#define REDUCER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RB_VERSION_STRING "0.1.0"

enum rb_status {
    RB_OK = 0,
    RB_ERR_ARG,              /* invalid argument or option value */
    RB_ERR_NOMEM,            /* allocation failed */
    RB_ERR_MPI,              /* an MPI call failed */
    RB_ERR_MISMATCH,         /* ranks disagree on shape, reducer or options */
    RB_ERR_UNKNOWN_REDUCER,  /* no reducer of that name */
    RB_ERR_UNSUPPORTED,      /* operation not offered by this reducer/build */
    RB_ERR_DEVICE,           /* CUDA / NCCL / cuDNN failure */
    RB_ERR_STATE,            /* call out of order (e.g. async step pending) */
    RB_ERR_COUNT_
};

const char *rb_strerror(int code);
/* Detail of the most recent failure in this thread ("" when none). */
const char *rb_last_error(void);

typedef enum { RB_DEVICE_HOST = 0, RB_DEVICE_CUDA = 1 } rb_device;

/* Phases a call goes through; timed separately and reported to the hook. */
typedef enum {
    RB_PHASE_ENCODE = 0,
    RB_PHASE_COMM = 1,
    RB_PHASE_DECODE = 2,
    RB_PHASE_COUNT_
} rb_phase;

/* Called at the start (begin = 1) and end (begin = 0) of every phase, e.g.
 * to read PAPI counters.  Must not call back into the reducer. */
typedef void (*rb_phase_hook)(void *ctx, rb_phase phase, int begin);

/* Algorithm choices.  Every option is listed in the option table
 * (rb_option_count / rb_option_info), settable by "key=value" strings and
 * recorded by the benchmarks; all ranks must pass identical options. */
enum { RB_SPARCML_AUTO = 0, RB_SPARCML_RECDBL = 1, RB_SPARCML_RSAG = 2 };
enum { RB_GOSSIP_HYPERCUBE = 0, RB_GOSSIP_DISSEMINATION = 1 };
enum { RB_GOSSIP_MIX_GRAD = 1, RB_GOSSIP_MIX_PARAMS = 2, RB_GOSSIP_MIX_BOTH = 3 };
enum { RB_S2_WIDTH_ABS = 0, RB_S2_WIDTH_FRACTION = 1, RB_S2_WIDTH_NNZ = 2 };
enum { RB_TRANSPORT_AUTO = 0, RB_TRANSPORT_NCCL = 1, RB_TRANSPORT_STAGED = 2 };
enum { RB_OKTOPK_UNION = 0, RB_OKTOPK_TOPK = 1 };
enum { RB_ZEN_BITMAP_OFF = 0, RB_ZEN_BITMAP_ON = 1, RB_ZEN_BITMAP_AUTO = 2 };

#define RB_OPTIONS_EXT_MAX 16
typedef struct rb_options {
    /* sparcml */
    int sparcml_algo;            /* RB_SPARCML_* */
    double sparcml_switch;       /* go dense once sparse bytes > switch * dense bytes */
    /* parallax */
    int parallax_servers;        /* 1 = one server (rank 0), 0 = one per rank */
    /* omnireduce */
    int64_t block_size;          /* elements per block */
    /* oktopk */
    int oktopk_balance;          /* 0/1: regions of similar nnz (1) or even ranges (0) */
    int oktopk_repartition;      /* re-estimate the regions every N calls */
    int oktopk_throttle;         /* exchange steps in flight at once */
    int oktopk_select;           /* RB_OKTOPK_UNION (exact) / RB_OKTOPK_TOPK (lossy) */
    double oktopk_density;       /* topk: k = max(1, floor(density * n)) */
    int oktopk_reestimate;       /* topk: exact thresholds every N calls */
    /* zen */
    int zen_bitmap;              /* RB_ZEN_BITMAP_*: the result's index set as a bitmap */
    /* s2 */
    int sketch_rows;             /* r: 1, 3 or 5 */
    int sketch_width_mode;       /* RB_S2_WIDTH_* */
    double sketch_width;         /* columns, fraction of rows*cols, or x max nnz */
    int error_feedback;          /* 0/1 (s2; oktopk with oktopk_select=topk) */
    /* gossip */
    int gossip_schedule;         /* RB_GOSSIP_HYPERCUBE / _DISSEMINATION */
    int gossip_rotate;           /* 0/1 */
    int gossip_mix;              /* RB_GOSSIP_MIX_* */
    int gossip_async;            /* 0/1 */
    /* shared */
    uint64_t seed;               /* hashes (s2, zen), permutations (gossip) */
    int transport;               /* device buffers: RB_TRANSPORT_* */
    /* Options of reducers that have no field above (a reducer added in one
     * file describes its options in its ops table and keeps them here):
     * set and read by key with rb_options_set / rb_option_format. */
    double ext[RB_OPTIONS_EXT_MAX];
} rb_options;

void rb_options_default(rb_options *o);
/* Parse "key=value" into o.  RB_ERR_ARG with rb_last_error() naming the key. */
int rb_options_set(rb_options *o, const char *key_eq_value);
/* RB_ERR_ARG, naming the option, unless every value in o is one that
 * rb_options_set could produce (rb_create checks this on every rank). */
int rb_options_check(const rb_options *o);

typedef enum { RB_OPT_INT, RB_OPT_BOOL, RB_OPT_DOUBLE, RB_OPT_U64, RB_OPT_ENUM } rb_option_type;
typedef struct rb_option_info {
    const char *key;          /* e.g. "block_size" */
    const char *reducers;     /* comma list of reducers it applies to */
    rb_option_type type;
    const char *choices;      /* enums: "auto|recdbl|rsag" (index = value; an
                                 empty entry is not a valid value) */
    const char *help;
} rb_option_info;
size_t rb_option_count(void);
const rb_option_info *rb_option_info_at(size_t i);
/* Current value of option i in o as text ("auto", "0.5", "1024"). */
int rb_option_format(const rb_options *o, size_t i, char *buf, size_t len);
/* Does option i matter for this reducer? */
int rb_option_applies(size_t i, const char *reducer);

typedef struct rb_config {
    const char *name;          /* registry name, e.g. "sparcml" */
    MPI_Comm comm;             /* duplicated internally */
    size_t rows, cols;         /* gradient shape; a flat vector is n x 1 */
    rb_device device;
    rb_options opts;
    rb_phase_hook hook;        /* optional */
    void *hook_ctx;
    /* 1 (rb_config_default): time every phase into rb_stats.t_phase, a
     * clock read per phase change (~25-50 ns each, 3 in a dense call);
     * 0: only mark the phases entered (rb_stats.phases), for a caller that
     * times whole calls against another benchmark's. */
    int phase_times;
} rb_config;

void rb_config_default(rb_config *c);

typedef struct rb_stats {
    uint64_t bytes_sent;       /* payload bytes this rank put on the wire */
    uint64_t bytes_recv;       /* payload bytes this rank received */
    /* Point-to-point messages this rank sent: each send, sendrecv and
     * isend counts 1; a collective counts the messages of the algorithm
     * whose bytes bytes_sent counts (core.c): allreduce 2 ceil(log2 p)
     * (reduce-scatter by halving, allgather by doubling), allgather(v)
     * ceil(log2 p) (Bruck), alltoall(v) p - 1 (pairwise), bcast 1 on every
     * rank but the chain's last.  What MPI really runs may differ; the
     * count is the same model whatever the library or simulator. */
    uint64_t msgs_sent;
    double t_phase[RB_PHASE_COUNT_]; /* seconds: encode, communicate, decode */
    double t_wait;             /* seconds blocked on a partner (gossip) */
    /* Counts the algorithm computes on its way (its bit set in `counted`).
     * No reducer spends a pass on statistics alone: where the algorithm
     * needs no count (nnz_local of dense, omnireduce, gossip, none, s2
     * outside sketch_width_mode=nnz) it stays 0 with its bit clear, and a
     * benchmark counts its input itself, outside its timer
     * (rb_count_nonzeros). */
    uint64_t nnz_local;        /* non-zeros in this rank's input */
    uint64_t nnz_result;       /* support of the aggregate as sent: union non-zeros,
                                  union rows*cols (s2), union blocks (omnireduce), n (dense) */
    int partner;               /* gossip: partner this step, -1 none */
    int skipped;               /* gossip: 1 if no partner this step */
    int dense_stages;          /* sparcml: stages sent dense */
    uint64_t sketch_cols;      /* s2: sketch width used this call */
    unsigned phases;           /* phases this call entered (timed unless cfg.phase_times = 0):
                                  bit RB_PHASE_BIT(p) per phase */
    unsigned counted;          /* RB_COUNTED_*: which counts above the call produced */
} rb_stats;

#define RB_PHASE_BIT(p) (1u << (p))
#define RB_COUNTED_NNZ_LOCAL  1u
#define RB_COUNTED_NNZ_RESULT 2u

typedef struct rb_reducer rb_reducer;

/* Traits of a reducer, from the registry. */
#define RB_TRAIT_EXACT   1u  /* result equals the dense average (float order aside) */
#define RB_TRAIT_LOSSY   2u  /* result approximates the average (report error) */
#define RB_TRAIT_GOSSIP  4u  /* result is a partner mix, not the average */
#define RB_TRAIT_NOCOMM  8u  /* no communication (local SGD) */

size_t rb_reducer_count(void);
const char *rb_reducer_name_at(size_t i);
/* RB_ERR_UNKNOWN_REDUCER if not registered. */
int rb_reducer_traits(const char *name, unsigned *traits);
/* The traits of a reducer created with options o (NULL: the defaults): an
 * option can make a reducer lossy (oktopk_select=topk). */
int rb_reducer_traits_with(const char *name, const rb_options *o, unsigned *traits);
const char *rb_reducer_description(const char *name);
/* An upper bound of the bytes a rank's reducer of this name holds besides
 * the caller's buffer (its state between and during calls), for a
 * program to check a run fits before it allocates: n elements, k
 * non-zeros on a rank, p ranks, options o.  RB_ERR_UNKNOWN_REDUCER if not
 * registered. */
int rb_reducer_state_bytes(const char *name, const rb_options *o, double n, double k, int p,
                           double *bytes);

/* Collective over cfg->comm.  Fails with RB_ERR_MISMATCH on every rank when
 * ranks disagree on name, shape, device or options, with RB_ERR_ARG when an
 * option is out of range (rb_options_check).  The reducer communicates on
 * a duplicate of cfg->comm with MPI_ERRORS_RETURN: an MPI error is returned
 * as RB_ERR_MPI, it does not end the process. */
int rb_create(const rb_config *cfg, rb_reducer **out);
/* Collective.  grad holds rows*cols floats (device memory for CUDA).
 * A failure of the s2 sketch growth is returned on every rank together.
 * Other errors are found by the rank that has them: a bad argument (a NULL
 * buffer, a device buffer on another GPU) before that rank communicates,
 * out of memory for a sparse stream or an MPI error in the middle of the
 * exchange.  Its peers do not know and can be left inside a collective
 * (checking arguments together would cost a collective per call): on any
 * error the caller should abort the communicator, as rb_train does. */
int rb_reduce(rb_reducer *r, float *grad, rb_stats *st);
/* Row-sparse gradients, as frameworks hand them over: PyTorch's sparse
 * embedding gradient after .coalesce() (indices, values) and TensorFlow's
 * IndexedSlices list the rows a step touched and those rows' values.  Input
 * to rb_reduce_rows, and its row-form output. */
typedef struct rb_rows {
    size_t nrows;          /* rows listed */
    size_t cols;           /* floats per row: the reducer's cols */
    const int64_t *ids;    /* nrows row ids, strictly increasing, each < rows */
    const float *values;   /* nrows x cols, row-major: values[i*cols + j] is
                              element j of row ids[i] */
} rb_rows;

/* Collective: rb_reduce for a gradient given as rows (host memory); every
 * row not listed is zero.  The result, the same as rb_reduce would leave in
 * the dense buffer (bit for bit, for every exact reducer and s2), goes to
 *   dense   (if not NULL): rows*cols floats, every element written; and/or
 *   out     (if not NULL): row form in library memory, valid until the next
 *           call on r or rb_destroy(r): the rows listed (increasing ids)
 *           carry the result, every other row is zero in it.  A listed row
 *           may be all zero (e.g. omnireduce lists each row of its union
 *           blocks); the rows of the union are always listed.
 * Both may be NULL (the reduction still runs).  in->values must not overlap
 * dense.  Rows that are all zero count as not given: stats, wire bytes and
 * result are those of rb_reduce on the dense form of the input.
 * Every rank checks its input and the ranks agree before anything else (one
 * 4-byte allreduce, not counted in bytes_sent): NULL ids or values with
 * nrows > 0, ids not strictly increasing or out of [0, rows), or cols other
 * than the reducer's fail with RB_ERR_ARG on every rank, naming the problem
 * on the rank that has it ("another rank failed" on the others).
 * agsparse, sparcml, parallax, omnireduce and s2 reduce the rows where they
 * are: pairs, bitmaps and sketches are built from the listed rows, never
 * from a dense buffer, so the cost follows the rows, not rows*cols (sparcml
 * keeps a dense buffer, allocated on the first call, for where its dense
 * switch fires).
 * dense, none, gossip, and s2 with error_feedback=on (its residual is dense)
 * take the generic path: the rows are scattered into a dense buffer (dense
 * when given, else one the library keeps, allocated on the first call) and
 * reduced as by rb_reduce.  CUDA reducers: RB_ERR_UNSUPPORTED (host rows
 * only for now). */
int rb_reduce_rows(rb_reducer *r, const rb_rows *in, float *dense, rb_rows *out, rb_stats *st);
/* Gossip: mix model parameters (host memory) with this step's partner; call
 * it once per iteration after the update.  gossip_mix picks what is mixed:
 * the call that does not apply (rb_reduce under "params", rb_mix_params
 * under "grad") leaves its buffer untouched and reports skipped = 1.  One
 * step per iteration: the partner advances in rb_mix_params when parameters
 * are mixed, else in rb_reduce.  Async (gossip_async=1): each call applies
 * the previous step's exchange as x += (x_partner' - x')/2 (primes: the
 * values posted then), posts x as it is now and returns; docs/gossip.md.
 * Other reducers: RB_ERR_UNSUPPORTED. */
int rb_mix_params(rb_reducer *r, float *params, rb_stats *st);
/* Asynchronous modes: let pending communication progress (cheap, optional;
 * e.g. between layers).  Never changes a buffer. */
int rb_progress(rb_reducer *r);
/* Asynchronous modes: complete and apply what is pending (end of training);
 * a NULL buffer drops its pending exchange.  No new step is posted. */
int rb_flush(rb_reducer *r, float *grad, float *params, rb_stats *st);
void rb_destroy(rb_reducer *r);
/* Checkpoints: what a reducer carries from one call to the next (an
 * error-feedback residual, the call count its hashes and partner schedule
 * follow, oktopk's region bounds and thresholds) as bytes, so that a
 * program stopped and restarted makes the same calls, bit for bit, as one
 * that never stopped.  rb_state_size: the bytes rb_state_save writes (a
 * header of a few dozen bytes for a reducer without state).
 * rb_state_load takes them into a reducer created with the same name,
 * shape and options, on the same rank of as many ranks: RB_ERR_ARG, saying
 * which, for bytes of another reducer, shape, rank or rank count, or
 * bytes cut short or damaged.  Not collective.  RB_ERR_STATE while an
 * asynchronous exchange is in flight (gossip_async: rb_flush ends it, but
 * changes the run); RB_ERR_UNSUPPORTED for state kept in device memory. */
int rb_state_size(rb_reducer *r, size_t *bytes);
int rb_state_save(rb_reducer *r, void *buf, size_t len);
int rb_state_load(rb_reducer *r, const void *buf, size_t len);
/* Non-zeros of a gradient buffer of this reducer's shape (device memory
 * for CUDA), counted as the reducers count them: the statistics pass a
 * benchmark takes outside its timer, before rb_reduce replaces the buffer.
 * Not collective. */
int rb_count_nonzeros(rb_reducer *r, const float *grad, uint64_t *nnz);

/* This process's rank among comm's ranks on its node, and their number.
 * The launcher's node-local rank (SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK,
 * MPI_LOCALRANKID, PMI_LOCAL_RANK, first that fits) is used when its values
 * over the node are a permutation of 0..size-1, else the rank in an
 * MPI_COMM_TYPE_SHARED split: SLURM_LOCALID is inherited unchanged by
 * ranks that mpirun starts inside a batch script, and world values are no
 * local ranks of a sub-communicator.  Never SLURM_PROCID (global).
 * *source (may be NULL) names the one used.  Collective over comm. */
int rb_node_rank(MPI_Comm comm, int *local_rank, int *local_size, const char **source);
/* GPU of this process, chosen by rb_node_rank modulo the GPUs it sees,
 * made current.  Call before allocating device buffers
 * (rb_create does it for RB_DEVICE_CUDA).  Collective over comm.
 * RB_ERR_UNSUPPORTED without CUDA, RB_ERR_DEVICE without a GPU. */
int rb_device_select(MPI_Comm comm, int *device);
/* The current GPU for run metadata: name, PCI id, sm, memory, runtime,
 * driver and NCCL versions, in one line. */
int rb_device_describe(char *buf, size_t len);

/* Cost model: an alpha-beta estimate of one rb_reduce call of a reducer,
 * from the algorithm in its file (docs/cost-model.md).  Latency alpha per
 * message on the critical path, beta per byte on it, and the local passes
 * over memory at mem_bw (the arithmetic of MPI reductions at coll_bw).
 * Collectives are charged as the better of the two algorithms MPI
 * libraries switch between (e.g. recursive doubling for short and
 * reduce-scatter + allgather for long allreduces); bytes_sent is counted
 * as rb_stats counts it (docs/wire-bytes.md), so the two compare. */
typedef struct rb_model_input {
    int ranks;                 /* p >= 1 */
    size_t rows, cols;         /* gradient shape: n = rows * cols elements */
    double nnz_max, nnz_mean;  /* non-zeros per rank: largest, mean over ranks */
    double nnz_union;          /* non-zeros of the aggregate (the union support) */
    double run;                /* non-zeros come in aligned runs of this many
                                  elements: 1 scattered, cols whole rows, the
                                  block for block layouts (<= 1: scattered) */
    rb_options opts;
    double alpha;              /* seconds per message */
    double beta;               /* seconds per byte on the wire */
    double mem_bw;             /* bytes per second of a local pass; 0: not charged */
    double coll_bw;            /* bytes per second of the arithmetic inside MPI
                                  reductions (allreduce); 0: not charged, as
                                  under SimGrid; on a real machine about mem_bw */
} rb_model_input;

typedef struct rb_model_result {
    double seconds;            /* t_latency + t_bandwidth + t_local */
    double t_latency, t_bandwidth, t_local;
    double messages;           /* messages on the critical path */
    double bytes_critical;     /* bytes charged beta on the critical path */
    double bytes_sent;         /* payload bytes sent per rank (mean over ranks) */
    double bytes_local;        /* memory traffic of the local passes */
    double bytes_coll;         /* memory traffic of the arithmetic inside MPI reductions */
} rb_model_result;

/* p = 1, empty shape, no non-zeros, the default options, alpha = beta =
 * mem_bw = coll_bw = 0. */
void rb_model_input_default(rb_model_input *in);
/* RB_ERR_UNKNOWN_REDUCER, RB_ERR_ARG (naming the field) for an input out of
 * range, RB_ERR_UNSUPPORTED for a reducer without a model. */
int rb_model(const char *name, const rb_model_input *in, rb_model_result *out);
int rb_model_time(const char *name, const rb_model_input *in, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
