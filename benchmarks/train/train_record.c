/* rb_train --record-gradients: each rank's embedding gradient, as it
 * leaves the backward pass and before any reducer sees it, every
 * --record-every steps, into a gradient trace (harness/trace.h) that
 * rb_micro --input trace:FILE.h5 replays.  The rows recorded are the
 * table's non-zero rows (the rows the batch touched).  Dense layers are
 * not recorded: their gradient is dense (all rows non-zero), and a
 * sparsified one (--sparsify) is a selection of the dense group's elements
 * that rb_micro's synthetic element layout already models.  Rank 0 gathers
 * the ranks' rows and writes; the file is bounded by --record-max-bytes
 * (steps past it are not recorded, the trace says capped = 1). */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"
#include "harness/trace.h"

/* A recording failure stops the run (a trace with holes is no trace). */
static _Noreturn void record_die(const char *detail)
{
    bench_fail(BENCH_NO_CODE, "--record-gradients", "%s", detail);
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED);
    abort();
}

static void *grow_to(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        record_die("out of memory for the recorded rows");
    return q;
}

int train_record_open(train_run *r)
{
    const train_opts *o = &r->o;
    if (!o->record)
        return 0;
    char err[4400] = "";
    int rc = RB_OK;
    if (r->rank == 0) {
        bench_trace_info info = {o->model, TRAIN_PROG, r->nranks, o->record_every, o->record_max_bytes};
        rc = bench_trace_create(o->record, o->force, &info, &r->rec, err, sizeof err) ||
             bench_trace_add_layer(r->rec, "embedding", "embedding", r->ge.rows, r->ge.cols, err,
                                sizeof err) < 0 ? BENCH_NO_CODE : RB_OK;
    }
    if (bench_all_ok(MPI_COMM_WORLD, rc, "--record-gradients", err) < 0)
        return -1;
    bench_printf0("trace: recording the embedding gradient (%zu x %zu) every %ld steps into %s "
                  "(at most %llu bytes)\n", r->ge.rows, r->ge.cols, o->record_every, o->record,
                  (unsigned long long)o->record_max_bytes);
    return 0;
}

/* This rank's non-zero rows of the embedding gradient into r->rec_ids,
 * r->rec_vals; how many. */
static size_t own_rows(train_run *r)
{
    const grad_group *g = &r->ge;
    size_t k = 0;
    for (size_t row = 0; row < g->rows; row++) {
        const float *v = g->grad + row * g->cols;
        size_t c = 0;
        while (c < g->cols && v[c] == 0.0f)
            c++;
        if (c == g->cols)
            continue;
        if (k == r->rec_cap) {
            r->rec_cap = r->rec_cap ? 2 * r->rec_cap : 1024;
            r->rec_ids = grow_to(r->rec_ids, r->rec_cap * sizeof *r->rec_ids);
            r->rec_vals = grow_to(r->rec_vals, r->rec_cap * g->cols * sizeof *r->rec_vals);
        }
        r->rec_ids[k] = (int64_t)row;
        memcpy(r->rec_vals + k * g->cols, v, g->cols * sizeof *v);
        k++;
    }
    return k;
}

double train_record_step(train_run *r)
{
    const train_opts *o = &r->o;
    if (!o->record || r->rec_capped || (r->it + 1) % o->record_every)
        return 0.0;
    double t0 = MPI_Wtime();
    int p = r->nranks, cols = (int)r->ge.cols;
    int64_t k = (int64_t)own_rows(r), *counts = NULL, *ids = NULL;
    float *vals = NULL;
    int *rc_n = NULL, *rc_off = NULL, *vc_n = NULL, *vc_off = NULL;
    if (r->rank == 0)
        counts = grow_to(NULL, (size_t)p * sizeof *counts);
    MPI_Gather(&k, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (r->rank == 0) {
        rc_n = grow_to(NULL, 4 * (size_t)p * sizeof(int));
        rc_off = rc_n + p, vc_n = rc_n + 2 * p, vc_off = rc_n + 3 * p;
        int64_t total = 0;
        for (int i = 0; i < p; i++) {
            if ((total + counts[i]) * cols > INT32_MAX)
                record_die("one step's rows exceed 2^31 values");
            rc_off[i] = (int)total, rc_n[i] = (int)counts[i];
            vc_off[i] = (int)total * cols, vc_n[i] = (int)counts[i] * cols;
            total += counts[i];
        }
        ids = grow_to(NULL, (size_t)total * sizeof *ids);
        vals = grow_to(NULL, (size_t)total * (size_t)cols * sizeof *vals);
    }
    MPI_Gatherv(r->rec_ids, (int)k, MPI_INT64_T, ids, rc_n, rc_off, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Gatherv(r->rec_vals, (int)k * cols, MPI_FLOAT, vals, vc_n, vc_off, MPI_FLOAT, 0, MPI_COMM_WORLD);
    int written = 1;
    if (r->rank == 0) {
        char err[512];
        written = bench_trace_append(r->rec, 0, r->it + 1, counts, ids, vals, err, sizeof err);
        if (written < 0)
            record_die(err);
        if (!written)
            printf("trace: the next step would pass --record-max-bytes %llu; steps from %ld on "
                   "are not recorded (capped)\n", (unsigned long long)o->record_max_bytes, r->it + 1);
        r->rec_steps += written;
    }
    MPI_Bcast(&written, 1, MPI_INT, 0, MPI_COMM_WORLD);
    r->rec_capped = !written;
    free(counts), free(ids), free(vals), free(rc_n);
    return MPI_Wtime() - t0;
}

int train_record_close(train_run *r, int complete)
{
    if (!r->o.record)
        return 0;
    char err[512] = "";
    int rc = r->rank == 0 && bench_trace_close(r->rec, complete, err, sizeof err) ? BENCH_NO_CODE : RB_OK;
    r->rec = NULL;
    free(r->rec_ids), free(r->rec_vals);
    if (bench_all_ok(MPI_COMM_WORLD, rc, "--record-gradients", err) < 0)
        return -1;
    if (r->rank == 0 && complete)
        printf("trace: %s (%ld steps of %d ranks%s)\n", r->o.record, r->rec_steps, r->nranks,
               r->rec_capped ? ", capped" : "");
    else if (r->rank == 0 && r->stop_signal)
        printf("trace: %s not written: a stop signal ended the training (a trace is an input "
               "to replay whole, not kept in part)\n", r->o.record);
    else if (r->rank == 0)
        printf("trace: %s not written: the training diverged (its last gradients are not finite, "
               "a trace rb_micro refuses)\n", r->o.record);
    return 0;
}
