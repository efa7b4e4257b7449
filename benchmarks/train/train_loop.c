/* rb_train's training loop: each step forward, backward, reduce, update;
 * a progress line every --log-every steps; an evaluation (a row of the
 * curve) every --eval-every steps, which may stop at the target. */
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"

/* Loss, correct predictions and samples summed over steps. */
typedef struct tally {
    double loss, correct, count;
} tally;

/* What the loop keeps between steps besides train_run. */
typedef struct loop_state {
    tally since_log, since_eval;
    double t_log;          /* when the last progress line was printed */
} loop_state;

/* One step's figures. */
typedef struct step_figures {
    double loss, lr;
    int correct;
    double t[5];           /* start, forward done, backward done, reduced, updated */
    double t_stats;        /* untimed statistics between backward and reduce */
    rb_stats st, st2;      /* dense and embedding reducers */
    uint64_t embed_nnz;
} step_figures;

static void *grow(growable *g)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 256;
        void *nv = realloc(g->v, nc * g->size);
        if (!nv) {
            bench_fail(BENCH_NO_CODE, "log", "out of memory for the curve's rows");
            MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED);
        }
        g->v = nv, g->cap = nc;
    }
    return (char *)g->v + g->size * g->n++;
}

/* ---------------------------------------------------------- one step */

/* The embedding gradient's non-zeros, counted before the reduction
 * replaces it (reducers count only what their algorithm needs) and left out
 * of the step's times. */
static void count_statistics(train_run *r, step_figures *f)
{
    double t0 = MPI_Wtime();
    f->embed_nnz = 0;
    if (r->ge.r && !r->ge.by_rows)   /* by rows: counted on the rows (reduce_gradients) */
        train_check_rb(rb_count_nonzeros(r->ge.r, r->ge.grad, &f->embed_nnz), "rb_count_nonzeros");
    f->t_stats = MPI_Wtime() - t0;
}

/* Non-zero floats of x[0..n) (a few hundred rows: no need for the
 * library's vectorised scan). */
static uint64_t count_nonzero(const float *x, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += x[i] != 0.0f;
    return k;
}

static int by_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The rows of the embedding gradient the batch touched: its context ids,
 * sorted and unique (the backward pass zeroes the table and adds into
 * these rows only), each row copied out of the table. */
static rb_rows touched_rows(train_run *r)
{
    size_t ids = (size_t)r->o.batch * (size_t)r->o.ctx, d = (size_t)r->o.embed_dim, k = 0;
    const int32_t *x = (const int32_t *)(const void *)r->xb;
    for (size_t i = 0; i < ids; i++)
        r->embed_ids[i] = x[i];
    /* B x ctx ids: 192 for wordlm, 1024 for embedlm, where an insertion
     * sort's n^2/4 steps would cost more than the rows' copies */
    qsort(r->embed_ids, ids, sizeof *r->embed_ids, by_id);
    for (size_t i = 0; i < ids; i++)
        if (!k || r->embed_ids[i] != r->embed_ids[k - 1])
            r->embed_ids[k++] = r->embed_ids[i];
    for (size_t i = 0; i < k; i++)
        memcpy(r->embed_rows + i * d, r->ge.grad + (size_t)r->embed_ids[i] * d, d * sizeof(float));
    if (r->trn.egrads_kept_zero)   /* the table is all zero again for the next backward */
        for (size_t i = 0; i < k; i++)
            memset(r->ge.grad + (size_t)r->embed_ids[i] * d, 0, d * sizeof(float));
    return (rb_rows){k, d, r->embed_ids, r->embed_rows};
}

static void reduce_gradients(train_run *r, step_figures *f)
{
    train_sparsify_group(&r->o, &r->gd);
    train_check_rb(rb_reduce(r->gd.r, r->gd.grad, &f->st), "rb_reduce (dense parameters)");
    if (r->ge.r && r->ge.by_rows) {
        /* the result stays in row form (ge.result) for the update by rows */
        rb_rows rows = touched_rows(r);
        double t0 = MPI_Wtime();
        f->embed_nnz = count_nonzero(rows.values, rows.nrows * rows.cols);
        f->t_stats += MPI_Wtime() - t0;
        train_check_rb(rb_reduce_rows(r->ge.r, &rows, NULL, &r->ge.result, &f->st2),
                       "rb_reduce_rows (embedding)");
    } else if (r->ge.r && r->embed_ids) {
        rb_rows rows = touched_rows(r);
        train_check_rb(rb_reduce_rows(r->ge.r, &rows, r->ge.grad, NULL, &f->st2),
                       "rb_reduce_rows (embedding)");
    } else if (r->ge.r) {
        train_check_rb(rb_reduce(r->ge.r, r->ge.grad, &f->st2), "rb_reduce (embedding)");
    }
}

static void update_parameters(train_run *r, step_figures *f)
{
    f->lr = train_lr_at(&r->o, r->it, r->total_iters);
    train_update(&r->trn, &r->gd, &r->ge, &r->o, f->lr);
    if (r->mix_params) {
        train_check_rb(rb_mix_params(r->gd.r, r->gd.params, &f->st), "rb_mix_params");
        if (r->ge.r)
            train_check_rb(rb_mix_params(r->ge.r, r->ge.params, &f->st2), "rb_mix_params (embedding)");
    }
}

/* One iteration on the batch at slots (the ring shuffle overlaps it). */
static void step(train_run *r, const size_t *slots, step_figures *f)
{
    int B = r->o.batch;
    f->t[0] = MPI_Wtime();
    train_make_batch(&r->tr, slots, B, r->xb, r->yb);
    if (r->use_ring)
        train_ring_start(&r->ring, &r->tr, slots, B);
    f->loss = train_forward(&r->trn, r->xb, r->yb, B, &f->correct);
    f->t[1] = MPI_Wtime();
    train_backward(&r->trn, r->xb, r->yb, B);
    f->t[2] = MPI_Wtime();
    count_statistics(r, f);
    f->t_stats += train_record_step(r);   /* untimed, as the statistics */
    reduce_gradients(r, f);
    f->t[3] = MPI_Wtime();
    update_parameters(r, f);
    f->t[4] = MPI_Wtime();
    r->steps_s += f->t[4] - f->t[0] - f->t_stats;
    if (r->use_ring)
        train_ring_finish(&r->ring, &r->tr, slots, B);
    r->compute_s += f->t[2] - f->t[0];
}

static void record_step(train_run *r, loop_state *s, const step_figures *f)
{
    int B = r->o.batch;
    tally *t[2] = {&s->since_eval, &s->since_log};
    for (int i = 0; i < 2; i++)
        t[i]->loss += f->loss, t[i]->correct += f->correct, t[i]->count += B;
    if (r->rank != 0)
        return;
    const rb_stats *st = &f->st, *st2 = &f->st2;
    train_phase_row *p = grow(&r->phases);
    *p = (train_phase_row){r->it + 1, f->t[1] - f->t[0], f->t[2] - f->t[1],
                           f->t[3] - f->t[2] - f->t_stats,
                           f->t[4] - f->t[3], f->loss / B,
                           st->bytes_sent + (r->ge.r ? st2->bytes_sent : 0),
                           st->bytes_recv + (r->ge.r ? st2->bytes_recv : 0), f->embed_nnz};
}

/* ---------------------------------------------------------- reports */

/* Collective: t summed over ranks, then zeroed. */
static tally sum_and_reset(tally *t)
{
    double v[3] = {t->loss, t->correct, t->count}, s[3];
    MPI_Allreduce(v, s, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *t = (tally){0, 0, 0};
    return (tally){s[0], s[1], s[2]};
}

/* A loss that is NaN or infinite (the same on every rank: it comes from
 * a sum over ranks) stops the run: every later number would be NaN posing
 * as a result.  1 when it did. */
static int diverged(train_run *r, double loss, const char *what)
{
    if (isfinite(loss))
        return 0;
    r->diverged = 1;
    r->diverged_at = r->it + 1;
    r->diverged_what = what;
    return 1;
}

/* The progress line; 1 when the training loss diverged. */
static int progress_line(train_run *r, loop_state *s, int epoch, double lr)
{
    tally all = sum_and_reset(&s->since_log);
    double now = MPI_Wtime();
    bench_printf0("epoch %d iter %ld loss %.4f acc %.2f%% lr %.4g samples/s %.0f\n", epoch + 1,
                  r->it + 1, all.loss / all.count, 100.0 * all.correct / all.count, lr,
                  all.count / (now - s->t_log));
    s->t_log = now;
    return diverged(r, all.loss / all.count, "training loss");
}

/* Evaluate, add a row to the curve, print it; 1 when the target is
 * reached or a loss diverged (r->diverged). */
static int evaluation(train_run *r, loop_state *s)
{
    tally all = sum_and_reset(&s->since_eval);
    eval_result *last = &r->last;
    *last = train_evaluate(&r->trn, &r->te, r->o.batch, r->xb, r->yb, r->slots);
    r->last_train_loss = all.loss / all.count;
    int lm = r->wordlm;
    train_curve_row *c = grow(&r->curve);
    *c = (train_curve_row){r->it + 1, (double)(r->it + 1) / r->steps_per_epoch,
                           MPI_Wtime() - r->t_start, r->last_train_loss, 100.0 * all.correct / all.count,
                           last->loss, lm ? NAN : last->accuracy, lm ? last->perplexity : NAN};
    if (lm)
        bench_printf0("eval epoch %.2f iter %ld wall %.1f s train_loss %.4f "
                      "val_loss %.4f val_perplexity %.2f\n",
                      c->epoch, r->it + 1, c->wall_s, c->train_loss, last->loss, last->perplexity);
    else
        bench_printf0("eval epoch %.2f iter %ld wall %.1f s train_loss %.4f "
                      "test_loss %.4f test_accuracy %.2f%%\n",
                      c->epoch, r->it + 1, c->wall_s, c->train_loss, last->loss, last->accuracy);
    if (diverged(r, c->train_loss, "training loss") || diverged(r, last->loss, lm ? "validation loss" : "test loss"))
        return 1;
    const train_opts *o = &r->o;
    if ((o->target_accuracy > 0 && !lm && last->accuracy >= o->target_accuracy) ||
        (o->target_perplexity > 0 && lm && last->perplexity <= o->target_perplexity)) {
        bench_printf0("target reached at iteration %ld (%.1f s)\n", r->it + 1, c->wall_s);
        return 1;
    }
    return 0;
}

/* An evaluation, set aside by the progress watchdog: it takes many
 * steps' time (a whole test split), and no peer waits long for another. */
static int evaluated(train_run *r, loop_state *s)
{
    bench_stall_pause(1);
    int stop = evaluation(r, s);
    bench_stall_pause(0);
    return stop;
}

/* ---------------------------------------------------------- the loop */

/* A checkpoint after `steps` steps (set aside by the progress watchdog,
 * as an evaluation is); a failed one is named and the run goes on. */
static void checkpoint(train_run *r, loop_state *s, long steps)
{
    double v[TRAIN_CKPT_TALLIES] = {s->since_eval.loss, s->since_eval.correct, s->since_eval.count,
                                    s->since_log.loss, s->since_log.correct, s->since_log.count,
                                    r->compute_s, r->steps_s};
    bench_stall_pause(1);
    double t0 = MPI_Wtime();
    if (train_checkpoint_write(r, steps, v) == 0)
        r->checkpoints++;
    r->checkpoint_s += MPI_Wtime() - t0;
    r->last_checkpoint_t = MPI_Wtime();
    bench_stall_pause(0);
}

/* A periodic checkpoint is due after this step (not after the last one:
 * the archive then holds everything).  By time: rank 0's clock, looked at
 * every 10 steps, its word broadcast (one small collective per 10 steps,
 * only with --checkpoint). */
static int checkpoint_due(train_run *r)
{
    long done = r->it + 1;
    if (done >= r->total_iters)
        return 0;
    if (r->checkpoint_every)
        return done % r->checkpoint_every == 0;
    if (!(r->checkpoint_seconds > 0.0) || done % 10 != 0)
        return 0;
    int due = r->rank == 0 && MPI_Wtime() - r->last_checkpoint_t >= r->checkpoint_seconds;
    MPI_Bcast(&due, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return due;
}

/* The steps of one epoch from step `first` of it; 1 when training stops
 * (time limit, target, a stop signal). */
static int epoch(train_run *r, loop_state *s, int e, long first)
{
    int B = r->o.batch;
    train_permute(r->perm, r->n_local, r->o.seed * 1000003u + (uint64_t)e * 7919u + (uint64_t)r->rank);
    for (long k = first; k < r->steps_per_epoch && r->it < r->total_iters; k++, r->it++) {
        int late = bench_deadline_passed(MPI_COMM_WORLD);
        if ((r->stop_signal = bench_stop_signal()))
            return 1;
        if (late) {
            r->timed_out = 1;
            return 1;
        }
        step_figures f;
        step(r, r->perm + (size_t)k * (size_t)B, &f);
        bench_stall_beat();
        record_step(r, s, &f);
        if ((r->it + 1) % r->log_every == 0 && progress_line(r, s, e, f.lr)) {
            r->it++;
            return 1;
        }
        if (((r->it + 1) % r->eval_every == 0 || r->it + 1 == r->total_iters) && evaluated(r, s)) {
            r->reached = !r->diverged;
            r->it++;   /* this step counts: the loop's increment is skipped */
            return 1;
        }
        if (checkpoint_due(r))
            checkpoint(r, s, r->it + 1);
    }
    return 0;
}

void train_loop_prepare(train_run *r)
{
    r->curve = (growable){.size = sizeof(train_curve_row)};
    r->phases = (growable){.size = sizeof(train_phase_row)};
    r->last = (eval_result){NAN, NAN, NAN};
    r->last_train_loss = NAN;
}

void train_loop(train_run *r)
{
    bench_watchdog_start(r->o.time_limit);
    bench_stall_where("the training loop (model %s, reducer %s)", r->o.model, r->o.reducer);
    int rc = bench_stall_start(r->o.stall_timeout) ? BENCH_NO_CODE : RB_OK;
    if (bench_all_ok(MPI_COMM_WORLD, rc, "--stall-timeout", "cannot start the watchdog's thread") < 0)
        bench_exit(BENCH_EXIT_FAILED);
    r->t_start = MPI_Wtime() - r->elapsed_before;   /* a resumed run's clock goes on */
    r->last_checkpoint_t = MPI_Wtime();
    const double *v = r->resume_tallies;
    loop_state s = {.since_eval = {v[0], v[1], v[2]}, .since_log = {v[3], v[4], v[5]}, .t_log = MPI_Wtime()};
    r->compute_s = v[6], r->steps_s = v[7];
    r->it = r->resumed_at;
    long spe = r->steps_per_epoch;
    int stopped = 0;
    for (long e = r->it / spe; r->it < r->total_iters && !stopped; e++)
        stopped = epoch(r, &s, (int)e, r->it - e * spe);
    if (r->o.checkpoint && (r->stop_signal || r->timed_out)) {
        long before = r->checkpoints;
        checkpoint(r, &s, r->it);
        if (r->checkpoints > before)
            bench_printf0("checkpoint: %s holds %ld of %ld steps; the same command with --resume "
                          "continues from there\n", r->o.checkpoint, r->it, r->total_iters);
    }
    if (r->async) {
        rb_stats st;
        train_check_rb(rb_flush(r->gd.r, r->gd.grad, r->gd.params, &st), "rb_flush");
        if (r->ge.r)
            train_check_rb(rb_flush(r->ge.r, r->ge.grad, r->ge.params, &st), "rb_flush (embedding)");
    }
    bench_stall_where("the end of the run (report, archive)");
    bench_stall_step();
}
