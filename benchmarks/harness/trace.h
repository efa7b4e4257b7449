/* Gradient traces: each rank's sparse gradient rows, recorded from a model
 * (rb_train --record-gradients, analysis/rb-torch-trace) and replayed by
 * rb_micro --input trace:FILE.h5.  The HDF5 layout (results/README.md,
 * "Gradient traces"):
 *
 *   /                      format "reducerbench-gradient-trace", format_version 1,
 *                          model, source, ranks, record_every, complete (1 when
 *                          the recording finished), capped, max_bytes, created_utc
 *   /layers/NAME           group: rows, cols, kind ("embedding")
 *   /layers/NAME/steps     int64 [S]            the recorded steps (1-based iterations)
 *   /layers/NAME/counts    int64 [S, ranks]     rows of rank r at step s
 *   /layers/NAME/ids       int64 [T]            row ids, by step, then rank, ascending
 *   /layers/NAME/values    float32 [T, cols]    the rows
 *
 * T = the sum of counts.  Every program that writes one writes exactly
 * this; the reader refuses anything else with a message. */
#ifndef BENCH_TRACE_H
#define BENCH_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_TRACE_FORMAT "reducerbench-gradient-trace"
#define BENCH_TRACE_VERSION 1
/* The largest layer (ids and values) the reader loads, and the largest
 * --record-max-bytes: a trace is a sample of steps, not a training log. */
#define BENCH_TRACE_MAX_BYTES (1ULL << 30)

/* ---------------------------------------------------------- reading */

/* One layer of a trace, loaded whole, and how it maps onto a run. */
typedef struct bench_trace {
    char path[4096], model[64], source[64], layer[64], kind[32], sha256[65];
    int ranks;                   /* recorded on */
    int run_ranks;               /* replayed on (<= ranks) */
    uint64_t rows, cols;
    size_t nsteps;
    int64_t *steps;              /* [nsteps] */
    int64_t *offsets;            /* [nsteps * ranks + 1]: rows of (step, rank) */
    int64_t *ids;
    float *values;
    float scale;                 /* power of two applied to every value */
} bench_trace;

/* Load layer (NULL or "": the first in name order) of the trace at path
 * for a run on run_ranks ranks, checking everything the layout promises.
 * A trace of p ranks replays on q <= p ranks: run rank r sums trace ranks
 * r, r + q, r + 2q, ...; more ranks than recorded are refused.  Values are
 * scaled by a power of two (exact) so that the largest magnitude a run
 * rank can hold lies in (1/2, 1], as the synthetic gradients' do, so the
 * exact tolerance means the same.  0, or -1 with err filled (one line). */
int bench_trace_load(const char *path, const char *layer, int run_ranks, bench_trace *t, char *err,
                  size_t len);
void bench_trace_free(bench_trace *t);

/* Which step bench_trace_fill reads. */
typedef struct bench_trace_step {
    const bench_trace *t;
    size_t step;
} bench_trace_step;

/* bench_gradgen_source_fill over an bench_trace_step: rank of nranks's
 * gradient (rows x cols, dense) into x; its non-zero count. */
size_t bench_trace_fill(const void *step, int rank, int nranks, float *x);

/* ---------------------------------------------------------- writing */

typedef struct bench_trace_writer bench_trace_writer;

typedef struct bench_trace_info {
    const char *model, *source;
    int ranks;
    long record_every;
    uint64_t max_bytes;          /* of ids and values, all layers */
} bench_trace_info;

/* Create path (refused when it exists unless force): written to
 * PATH.tmp.HOST.PID, renamed onto path by a complete bench_trace_close;
 * 0, or -1 with err. */
int bench_trace_create(const char *path, int force, const bench_trace_info *info, bench_trace_writer **w,
                    char *err, size_t len);
/* A layer of rows x cols; its index (0, 1, ...), or -1 with err. */
int bench_trace_add_layer(bench_trace_writer *w, const char *name, const char *kind, uint64_t rows,
                       uint64_t cols, char *err, size_t len);
/* Step step of layer: counts[ranks] rows per rank, their ids and values
 * (sum of counts rows).  1 written, 0 not written because the trace would
 * pass max_bytes (the trace is then capped: no later step is written), -1
 * with err. */
int bench_trace_append(bench_trace_writer *w, int layer, int64_t step, const int64_t *counts,
                    const int64_t *ids, const float *values, char *err, size_t len);
/* Close the trace: complete, it is renamed onto its path (without force
 * never over a file made meanwhile); not complete (an aborted recording, a
 * diverged training) or failing to close, it is removed -- no file is left
 * at path.  0, or -1 with err.  w is freed either way. */
int bench_trace_close(bench_trace_writer *w, int complete, char *err, size_t len);

#endif
