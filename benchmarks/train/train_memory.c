/* rb_train's memory need, checked once the data is loaded and
 * before the model, the reducers and the batch buffers are allocated: what
 * a rank will hold against what it may hold (harness/memneed.h), refused
 * with both numbers rather than found by the OOM killer.  The data is
 * counted as loaded (its size comes from the files, sharded over ranks);
 * the rest is computed from the model's layers and the reducer's
 * algorithm. */
#include "train.h"

#include <stdio.h>
#include <string.h>

#include "harness/bench_common.h"
#include "harness/memneed.h"

/* Bytes of this rank's training and test samples and corpus. */
static double data_bytes(const train_run *r)
{
    double b = (double)r->tr.n * ((double)r->tr.rec + 4.0) + (double)r->te.n * ((double)r->te.rec + 4.0);
    for (int s = 0; s < 3; s++)
        b += 4.0 * (double)r->cor.len[s];
    return b;
}

/* Velocity, sparsification residual and scratch, and the reducer's state
 * for a gradient of n floats (host buffers; on the GPU they live there). */
static double group_bytes(const train_opts *o, double n, int sparsifiable, int p)
{
    if (!strcmp(o->device, "cuda"))
        return 0.0;
    double b = 4.0 * (n + 1.0);
    if (sparsifiable && o->sparsify_kind)
        b += 8.0 * (n + 1.0);
    return b + bench_reducer_state_bytes(o->reducer, &o->ropts, n, n, p);
}

/* Batch buffers, the shuffle's permutation, the ring's two batches and
 * the embedding's touched rows. */
static double batch_bytes(const train_run *r, double in_floats)
{
    const train_opts *o = &r->o;
    double B = o->batch;
    double b = B * (4.0 * in_floats + 4.0 + 8.0) + 8.0 * ((double)r->tr.n + 1.0);
    if (!strcmp(o->shuffle, "ring") && r->nranks > 1)
        b += 2.0 * B * ((double)r->tr.rec + 4.0);
    if (r->wordlm && !strcmp(o->embed_input, "rows"))
        b += B * o->ctx * (8.0 + 4.0 * o->embed_dim);
    return b;
}

void train_check_memory(train_run *r, const model_shape *shape)
{
    const train_opts *o = &r->o;
    model_need mn;
    char err[512] = "";
    if (nn_model_memory_need(o->model, shape, o->batch, &mn, err, sizeof err))
        bench_usage_error(TRAIN_PROG, "%s", err);
    double data = data_bytes(r);
    double state = group_bytes(o, (double)mn.n_dense, 1, r->nranks) +
                   (mn.n_embed ? group_bytes(o, (double)mn.n_embed, 0, r->nranks) : 0.0);
    double need = data + mn.bytes + state + batch_bytes(r, (double)mn.in_floats), local = need;
    MPI_Allreduce(&local, &need, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    char source[96] = "";
    double limit = bench_mem_limit(MPI_COMM_WORLD, o->mem_limit, source, sizeof source);
    r->mem_need = need, r->mem_limit = limit;
    bench_printf0("memory: need %.3g MiB per rank (data %.3g, model %.3g, optimiser and reducer "
                  "%.3g), limit %.3g MiB (%s)\n",
                  need / 1048576.0, data / 1048576.0, mn.bytes / 1048576.0, state / 1048576.0,
                  limit / 1048576.0, limit > 0 ? source : "unknown: not checked");
    char what[160];
    snprintf(what, sizeof what, "per rank (data %.3g, model %.3g at --batch %d, optimiser and "
             "reducer %.3g)", data / 1073741824.0, mn.bytes / 1073741824.0, o->batch,
             state / 1073741824.0);
    bench_mem_refuse_if(TRAIN_PROG, need, limit, source, what, "a rank",
                        "use a smaller --batch, --hidden, --embed-dim or --vocab, fewer ranks per node");
}
