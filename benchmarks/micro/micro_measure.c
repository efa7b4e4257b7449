/* rb_micro's measurement of one row: the reducer on this size, warm-up and
 * timed calls of rb_reduce, then the statistics, the validation and the
 * writers (micro.h gives the order). */
#include "micro.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/bench_common.h"
#include "harness/bench_device.h"
#include "harness/simmeta.h"
#include "harness/tmpfiles.h"

/* Seconds a rank whose call failed waits for the others to agree. */
#define AGREE_TIMEOUT_S 30.0

/* ---------------------------------------------------------- one call */

/* This rank's detail of its last failed call (the reducer's, or the
 * device copy's), for the line naming the failure. */
static char call_detail[512];

static int call_failed(int rc, const char *detail)
{
    snprintf(call_detail, sizeof call_detail, "%s", detail);
    return rc;
}

/* dst = src with ordinary stores: a loop the compiler cannot turn into a
 * memcpy call (the XOR with a key it cannot see is 0), which vectorises. */
static volatile uint32_t store_copy_key;
static void store_copy(float *restrict dst, const float *restrict src, size_t n)
{
    uint32_t key = store_copy_key;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, src + i, sizeof u);
        u ^= key;
        memcpy(dst + i, &u, sizeof u);
    }
}

/* Copy the pristine input into the buffer the reducer works on (on the
 * device for -d cuda); untimed.  With ordinary stores, as a backward pass
 * writes the gradient: glibc's memcpy (rep movsb, non-temporal stores when
 * large) leaves its destination out of the first-level cache on AMD Zen,
 * where a dense call of 4 KiB then took 7-14% longer than on a buffer held
 * as OSU's loop holds its send buffer. */
static int load_input(micro_run *c, size_t n)
{
    if (c->bufs->shared && !c->dev)
        return RB_OK;   /* SMPI shared buffers: garbage onto garbage, skipped */
    if (!c->dev) {
        store_copy(c->bufs->work, c->bufs->input, n);
        return RB_OK;
    }
    char msg[256];
    if (bench_dev_upload(c->dev, c->bufs->input, n, msg, sizeof msg))
        return call_failed(RB_ERR_DEVICE, msg);
    return RB_OK;
}

/* One read pass over x (a sum the compiler vectorises, into a sink it
 * cannot drop). */
static volatile float read_pass_sink;
static void read_pass(const float *x, size_t n)
{
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += x[i + j];
    for (; i < n; i++)
        acc[0] += x[i];
    float s = 0;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    read_pass_sink = s;
}

/* The memory floor of a row: the traffic no reducer can avoid on its
 * input, one read pass of it (the result's writes, in place, touch only
 * the aggregate's non-zeros: at the sparse densities this floor is for
 * they are not charged), on the buffer the reducer reads, median of 5
 * passes, slowest rank; host buffers only (NaN on the device). */
static double memory_floor_us(micro_run *c, size_t n)
{
    double t[5], mine = NAN, slowest = NAN;
    /* Not on SMPI shared buffers: every rank reads the same few MiB. */
    if (!c->dev && !c->bufs->shared) {
        store_copy(c->bufs->work, c->bufs->input, n);
        for (int i = 0; i < 5; i++) {
            double t0 = MPI_Wtime();
            read_pass(c->bufs->work, n);
            t[i] = MPI_Wtime() - t0;
        }
        for (int i = 1; i < 5; i++)   /* insertion sort of 5 */
            for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
                double x = t[j];
                t[j] = t[j - 1], t[j - 1] = x;
            }
        mine = t[2] * 1e6;
    }
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    return slowest;
}

/* Bring the device result back for validation. */
static int fetch_result(micro_run *c, size_t n)
{
    char msg[256];
    if (c->dev && bench_dev_download(c->bufs->work, c->dev, n, msg, sizeof msg))
        return call_failed(RB_ERR_DEVICE, msg);
    return RB_OK;
}

/* One timed call.  --input rows hands the rows made before the loop (the
 * result goes to the work buffer, every element written: nothing to
 * reload). */
static int one_call(micro_run *c, rb_reducer *red, size_t n, rb_stats *st, double *t)
{
    int rc = c->o->input_rows ? RB_OK : load_input(c, n);
    if (rc != RB_OK)
        return rc;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    bench_sim_compute(c->o->compute);  /* --compute: the training-iteration model */
    if (c->o->input_rows)
        rc = rb_reduce_rows(red, &c->bufs->rows, c->bufs->work, NULL, st);
    else
        rc = rb_reduce(red, c->dev ? c->dev : c->bufs->work, st);
    *t = MPI_Wtime() - t0;
    return rc == RB_OK ? rc : call_failed(rc, rb_last_error());
}

/* All ranks learn whether any call of a loop failed (so no rank waits in the next
 * collective for one that gave up).  A failure in the middle of an
 * exchange (no memory for a stream, an MPI error; reducer.h says which
 * errors are collective) leaves the peers inside the reducer's collective,
 * where they would wait forever: the failing rank then aborts the job with
 * the reason instead of hanging.  Non-blocking on every rank, since MPI
 * never matches a blocking collective with a non-blocking one. */
static int any_failed(MPI_Comm comm, int rc)
{
    int worst = 0;
#ifdef HAVE_SIMGRID
    /* SMPI 3.32 deadlocks on MPI_Iallreduce + MPI_Wait here (seen with the
     * 'none' reducer at 4 ranks); a simulation is one process anyway. */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm);
#else
    int done = 0;
    MPI_Request req;
    MPI_Iallreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm, &req);
    if (rc == RB_OK) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return worst;
    }
    double t0 = MPI_Wtime();
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        if (MPI_Wtime() - t0 > AGREE_TIMEOUT_S) {
            int me = 0;
            MPI_Comm_rank(comm, &me);
            fprintf(stderr, PROG ": rank %d: the reducer failed (%s: %s) while the other ranks "
                    "are still inside its exchange; aborting the job rather than hang\n",
                    me, rb_strerror(rc), rb_last_error());
            MPI_Abort(comm, BENCH_EXIT_FAILED);
        }
        usleep(1000);
    }
#endif
    return worst;
}

/* ---------------------------------------------------------- one row */

/* What the row measures: its reducer, shape and settings. */
static void describe_row(const micro_run *c, const char *reducer, uint64_t rows, uint64_t cols,
                         micro_row *row)
{
    const micro_opts *o = c->o;
    memset(row, 0, sizeof *row);
    snprintf(row->reducer, sizeof row->reducer, "%s", reducer);
    snprintf(row->layout, sizeof row->layout, "%s", bench_layout_name(c->trace ? BENCH_LAYOUT_ROW : o->layout));
    bench_gradgen_support_name(c->trace ? BENCH_OVERLAP_SOURCE : o->overlap, o->zipf_s, row->overlap,
                            sizeof row->overlap);
    snprintf(row->device, sizeof row->device, "%s", o->device == RB_DEVICE_CUDA ? "cuda" : "host");
    snprintf(row->input, sizeof row->input, "%s", o->input_rows ? "rows" : "dense");
    row->size_bytes = rows * cols * 4;
    row->count = rows * cols;
    row->rows = rows;
    row->cols = cols;
    row->density = o->density;   /* a trace's: its mean (prepare_input) */
    row->step = c->trace ? c->trace->steps[c->trace_step] : -1;
    row->ranks = c->p;
    row->iters = o->iters;
    row->warmup = o->warmup;
    row->repeat = c->repeat;
}

static int same_gradient(const bench_gradgen *a, const bench_gradgen *b)
{
    /* A recorded gradient (a trace's step) is never taken for another. */
    return a->overlap != BENCH_OVERLAP_SOURCE && b->overlap != BENCH_OVERLAP_SOURCE &&
           a->rows == b->rows && a->cols == b->cols && a->density == b->density &&
           a->layout == b->layout && a->block == b->block && a->overlap == b->overlap &&
           a->nranks == b->nranks && a->seed == b->seed && a->zipf_s == b->zipf_s;
}

/* This rank's gradient into the input buffer; its non-zero count.  SMPI
 * shared buffers (--no-check, large sizes) are one memory for every rank:
 * rank 0 fills it and every rank counts rank 0's non-zeros.  An on-demand
 * input (micro_bufs) gets its non-zeros only. */
static size_t fill_input(micro_run *c, const bench_gradgen *g)
{
    micro_bufs *b = c->bufs;
    /* On demand: the pages of the last gradient given back, the new
     * one's non-zeros written onto the zeros (no page of zeros backed). */
    if (b->ondemand && bench_ondemand_clear(b->input, b->cap * sizeof(float)) == 0)
        return bench_gradgen_fill_zeroed(g, c->rank, b->input);
    if (!b->shared)
        return bench_gradgen_fill(g, c->rank, b->input);
    uint64_t nnz = c->rank == 0 ? bench_gradgen_fill(g, 0, b->input) : 0;
    MPI_Bcast(&nnz, 1, MPI_UINT64_T, 0, c->comm);
    return (size_t)nnz;
}

/* This rank's gradient into the input buffer; the truth gives the union
 * support (for the wire-byte bound) and the reference for validation.
 * Without validation (--no-check) it is not computed: nnz_union = -1
 * (unknown) and no bound. */
static size_t prepare_input(micro_run *c, const bench_gradgen *g, unsigned traits, micro_row *row)
{
    int check = c->o->check, p = c->p;
    micro_bufs *b = c->bufs;
    /* Nothing writes the input and the truth after they are made (the
     * reducers work on b->work), so a sweep's rows of one shape share
     * them: at 128 simulated ranks the truth is 128 gradients. */
    if (!b->have_made || !same_gradient(&b->made, g)) {
        b->made_nnz = fill_input(c, g);
        if (c->o->input_rows)
            micro_rows_of_input(b, row->count, row->cols);
        b->made_union = check ? micro_truth(g, b, c->comm, &b->made_union_rows) : 0;
        b->made = *g;
        b->have_made = 1;
    }
    size_t own_nnz = b->made_nnz;
    uint64_t k = b->made_union, union_rows = b->made_union_rows;
    row->nnz_union = check ? (double)k : -1.0;
    row->union_rows = check ? (double)union_rows : -1.0;
    row->bound_bytes = check && p > 1 && (traits & (RB_TRAIT_EXACT | RB_TRAIT_LOSSY))
                     ? 2.0 * (double)k * (p - 1) / p * 8.0 : 0.0;
    return own_nnz;
}

/* The workload columns from the inputs' non-zeros (nnz_max: the largest
 * rank's); a trace's density column is its mean input density. */
static void describe_workload(const micro_run *c, double nnz_max, micro_row *row)
{
    double avg = row->nnz_local_avg;
    row->nnz_local_max = nnz_max;
    row->imbalance = avg > 0 ? nnz_max / avg : NAN;
    row->union_ratio = row->nnz_union >= 0 && avg > 0 ? row->nnz_union / (c->p * avg) : NAN;
    if (c->trace)
        row->density = row->count ? avg / (double)row->count : 0.0;
}

/* Whether any PAPI counter counts: the reducer hook is set only then,
 * since with one every phase change of a timed call reads the clock twice. */
static int papi_counts(const bench_papi *p)
{
    for (int i = 0; i < bench_papi_nevents(p); i++)
        if (bench_papi_available(p, i))
            return 1;
    return 0;
}

static int create_reducer(micro_run *c, const char *reducer, uint64_t rows, uint64_t cols,
                          rb_reducer **red)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = reducer;
    cfg.comm = c->comm;
    cfg.rows = rows;
    cfg.cols = cols;
    cfg.device = c->o->device;
    cfg.opts = c->o->ropts;
    cfg.hook = papi_counts(c->papi) ? bench_papi_reducer_hook : NULL;
    cfg.hook_ctx = c->papi;
    cfg.phase_times = c->o->phase_times;
    int rc = rb_create(&cfg, red);
    if (rc != RB_OK)   /* the table's note; the named line goes to stderr */
        bench_printf0("# %s: cannot create reducer: %s: %s\n", reducer, rb_strerror(rc), rb_last_error());
    char what[128];
    snprintf(what, sizeof what, "%s: create", reducer);
    bench_all_ok(c->comm, rc, what, rb_last_error());   /* rb_create fails on every rank */
    return rc;
}

/* The warm-up (calls NULL) or timed calls of a row, back to back as in
 * OSU's loop: between two calls only the input's reload and the barrier (a
 * collective there, even agreeing on one int, slowed the next 4 KiB call
 * by ~5%; the deadline is checked only under --timeout).  A failure ends this
 * rank's loop; the ranks agree on it after the loop (any_failed, on its
 * own communicator). */
static int call_loop(micro_run *c, rb_reducer *red, size_t n, int iters, micro_calls *calls,
                     int *timed_out, int *rc_local)
{
    rb_stats st;
    double t = 0.0;
    int rc = RB_OK;
    for (int i = 0; i < iters && rc == RB_OK; i++) {
        rc = one_call(c, red, n, &st, &t);
        if (rc != RB_OK)
            continue;
        bench_stall_beat();
        if (calls)
            micro_calls_add(calls, i, t, &st);
        /* The warm-up too: a long one (-x) ran past --timeout until the
         * hard watchdog killed the run, losing the rows finished. */
        if (c->o->timeout > 0 && bench_deadline_passed(c->comm)) {
            *timed_out = 1;
            break;
        }
    }
    *rc_local = rc;
    return any_failed(c->agree, rc);
}

/* --save-result: rank 0 writes its result to a temporary and renames it
 * onto path, so that a failure (a full disk) leaves the last whole result,
 * or nothing, never a partial one; without --force not over a file that
 * appeared since the start (another run's).  The ranks agree on failure;
 * rank 0 names it with the system's reason. */
static int save_result(micro_run *c, const char *path, size_t n)
{
    static int saved;   /* path is this run's own file after the first row */
    int rc = RB_OK;
    if (c->rank == 0) {
        char tmp[PATH_MAX + 320], detail[256];
        bench_tmp_name(path, tmp, sizeof tmp);
        errno = 0;
        FILE *f = fopen(tmp, "wb");
        int err = f ? 0 : errno;
        if (f && fwrite(c->bufs->work, sizeof(float), n, f) != n)
            err = errno ? errno : EIO;
        if (f && fclose(f) != 0 && !err)
            err = errno;
        if (!err && bench_tmp_commit(tmp, path, c->o->force || saved) != 0)
            err = errno;
        if (err) {
            unlink(tmp);
            snprintf(detail, sizeof detail, "--save-result: cannot write the result: %s%s",
                     strerror(err), err == EEXIST ? " (it appeared during the run; use --force)" : "");
            rc = call_failed(RB_ERR_ARG, detail);
        }
        saved |= !err;
    }
    if (any_failed(c->comm, rc) != RB_OK) {
        /* no library code: the reason is the system's */
        bench_all_ok(c->comm, rc == RB_OK ? RB_OK : BENCH_NO_CODE, path, call_detail);
        return RB_ERR_ARG;
    }
    return RB_OK;
}

/* Warm-up calls, then the timed calls into calls; a micro_row_status. */
static int time_calls(micro_run *c, rb_reducer *red, const micro_row *row, micro_calls *calls)
{
    int timed_out = 0, mine = RB_OK;
    unsigned long long size = (unsigned long long)row->size_bytes;
    bench_stall_where("%s at %llu B (warm-up calls)", row->reducer, size);
    bench_stall_step();   /* the first call's time starts here */
    int rc = call_loop(c, red, row->count, c->o->warmup, NULL, &timed_out, &mine);
    bench_papi_reset(c->papi);  /* count the timed calls only */
    bench_stall_where("%s at %llu B (timed calls)", row->reducer, size);
    if (rc == RB_OK && !timed_out)
        rc = call_loop(c, red, row->count, c->o->iters, calls, &timed_out, &mine);
    bench_stall_where("%s at %llu B (statistics, validation, archive)", row->reducer, size);
    if (rc == RB_OK)
        return timed_out ? ROW_TIMEOUT : ROW_OK;
    bench_printf0("# %s: reduce failed at size %llu: %s\n", row->reducer,
                  (unsigned long long)row->size_bytes, rb_strerror(rc));
    char what[160];
    snprintf(what, sizeof what, "%s: reduce at %llu bytes", row->reducer,
             (unsigned long long)row->size_bytes);
    /* The ranks whose own call failed name it (rank 0's may have none). */
    bench_all_ok(c->comm, mine, what, call_detail);
    return ROW_ERROR;
}

int micro_run_row(micro_run *c, const char *reducer, uint64_t rows, uint64_t cols, micro_row *row)
{
    const micro_opts *o = c->o;
    unsigned traits = 0;
    rb_reducer_traits_with(reducer, &o->ropts, &traits);
    bench_gradgen g = {
        .rows = rows, .cols = cols, .density = o->density, .layout = o->layout,
        .block = (size_t)o->ropts.block_size, .overlap = o->overlap, .nranks = c->p, .seed = o->seed,
        .zipf_s = o->zipf_s,
    };
    bench_trace_step replay = {c->trace, c->trace_step};
    if (c->trace) {   /* the recorded rows, summed as bench_trace_load says */
        g.overlap = BENCH_OVERLAP_SOURCE, g.layout = BENCH_LAYOUT_ROW;
        g.source_fill = bench_trace_fill, g.source = &replay;
    }
    describe_row(c, reducer, rows, cols, row);
    bench_stall_where("%s at %llu B (set-up)", reducer, (unsigned long long)row->size_bytes);
    /* The nnz/rank column: counted here, untimed (reducers count only what
     * their algorithm needs).  Every rank makes every rank's gradient for
     * the truth on its own: no wait for a peer, whatever it takes. */
    bench_stall_pause(1);
    size_t own_nnz = prepare_input(c, &g, traits, row);
    bench_stall_pause(0);
    rb_reducer *red = NULL;
    if (create_reducer(c, reducer, rows, cols, &red) != RB_OK)
        return ROW_ERROR;
    row->t_floor_us = memory_floor_us(c, row->count);
    bench_stall_expect(micro_model_expect(c, row, (double)own_nnz));
    micro_calls calls = {.times = c->times, .nnz_local = (double)own_nnz};
    int status = time_calls(c, red, row, &calls);
    rb_destroy(red);
    if (status != ROW_OK)
        return status;

    micro_summarise(&calls, o->iters, c->comm, row, c->samples);
    double nnz_max = 0.0;
    MPI_Allreduce(&calls.nnz_local, &nnz_max, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    describe_workload(c, nnz_max, row);
    micro_model_row(c, &c->machine, nnz_max, row);
    if (!o->phase_times)
        row->t_encode_us = row->t_comm_us = row->t_decode_us = NAN;
    int fetched = fetch_result(c, row->count);
    if (any_failed(c->comm, fetched) != RB_OK) {
        bench_all_ok(c->comm, fetched, "-d cuda: download", call_detail);
        return ROW_ERROR;
    }
    if (o->save_result && save_result(c, o->save_result, row->count) != RB_OK)
        return ROW_ERROR;
    if (o->check && !(traits & RB_TRAIT_NOCOMM))
        micro_validate(c, &g, traits, row);
    if (micro_write_row(c, row, traits))
        return ROW_ARCHIVE;   /* the archive named it */
    if (row->wrong > 0)
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, reducer,
                      "validation at %llu bytes: %lld elements beyond the exact tolerance "
                      "(rel_l2_err %.3g)", (unsigned long long)row->size_bytes,
                      (long long)row->wrong, row->rel_l2_err);
    return row->wrong > 0 ? ROW_WRONG : ROW_OK;
}
