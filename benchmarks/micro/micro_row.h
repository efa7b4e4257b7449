/* One row of rb_micro's results: what the stdout table prints and what
 * /micro/results stores (every column of the table plus error metrics). */
#ifndef MICRO_ROW_H
#define MICRO_ROW_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#define MICRO_NAME_LEN 16

typedef struct micro_row {
    char reducer[MICRO_NAME_LEN];
    char layout[MICRO_NAME_LEN];      /* element | row | block */
    char overlap[MICRO_NAME_LEN];     /* random | all | none | zipf:S | trace */
    char device[MICRO_NAME_LEN];      /* host | cuda */
    uint64_t size_bytes;           /* dense buffer size in bytes */
    uint64_t count;                /* elements (rows * cols) */
    uint64_t rows, cols;
    double density;                /* requested density of each rank's input */
    int32_t ranks;
    int32_t iters, warmup;
    /* Time per call, microseconds.  avg/min/max over ranks of each rank's
     * mean over iterations; p50/p99 over all per-iteration samples of the
     * slowest rank per iteration. */
    double t_avg_us, t_min_us, t_max_us, t_p50_us, t_p99_us;
    int32_t slowest_rank;          /* rank with the largest mean */
    double t_encode_us, t_comm_us, t_decode_us;  /* phase means over ranks */
    double algbw_gbs;              /* size_bytes / t_avg, GB/s (1e9) */
    double busbw_gbs;              /* algbw * 2(p-1)/p (nccl-tests) */
    double bytes_sent_avg, bytes_sent_max;       /* per rank per call */
    double bytes_recv_avg, bytes_recv_max;
    double nnz_local_avg;          /* non-zeros per rank input */
    double nnz_union;              /* non-zeros of the true aggregate */
    double bound_bytes;            /* 2k(p-1)/p * 8 B, k = nnz_union (0 if dense) */
    double wire_to_bound;          /* bytes_sent_avg / bound_bytes */
    int32_t checked;               /* 1 if validated against the dense reference */
    int64_t wrong;                 /* exact reducers: elements out of tolerance */
    double rel_l2_err;             /* ||result - truth|| / ||truth|| (lossy) */
    double recall;                 /* fraction of true non-zero rows present (s2) */
    double max_abs_err;
    double consensus;              /* gossip: max_r ||x_r - mean|| / ||mean|| */
    int32_t repeat;                /* rb_micro --repeat: the repetition, 0-based */
    double t_model_us;             /* cost model of one call (rb_model), NaN if none */
    double model_ratio;            /* t_avg_us / t_model_us */
    char input[MICRO_NAME_LEN];       /* dense | rows (rb_micro --input) */
    double t_floor_us;             /* memory floor: one read of the input + one write of the result */
    double msgs_sent_avg, msgs_sent_max;  /* messages sent per rank per call (rb_stats.msgs_sent) */
    /* The workload: the union's rows, how far the supports overlap, how
     * even the ranks' loads are; the trace's step (-1: synthetic). */
    double union_rows;             /* non-zero rows of the true aggregate (-1: not validated) */
    double union_ratio;            /* nnz_union / (ranks x nnz_local_avg): 1/p identical, 1 disjoint */
    double nnz_local_max;          /* the largest rank's input non-zeros */
    double imbalance;              /* nnz_local_max / nnz_local_avg */
    int64_t step;                  /* --input trace: the recorded step replayed; -1 synthetic */
} micro_row;

/* The columns of /micro/results, in order (micro_row.c): name, offset in
 * micro_row, type, units.  NAME is a NUL-padded char[MICRO_NAME_LEN]. */
typedef enum { MICRO_COL_NAME, MICRO_COL_U64, MICRO_COL_I32, MICRO_COL_I64, MICRO_COL_F64 } micro_col_type;
typedef struct micro_column {
    const char *name;
    size_t off;
    int type;            /* micro_col_type */
    const char *units;
} micro_column;
const micro_column *micro_columns(size_t *n);
/* The HDF5 compound type of micro_row (/micro/results), one member per
 * column; the caller closes it. */
hid_t micro_row_h5type(void);

#endif
