/* rb_micro's statistics: the timed calls of every rank -> one row. */
#include "micro.h"

#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"

void micro_calls_add(micro_calls *c, int i, double t, const rb_stats *st)
{
    c->times[i] = t;
    for (int ph = 0; ph < RB_PHASE_COUNT_; ph++)
        c->phase[ph] += st->t_phase[ph];
    c->sent += (double)st->bytes_sent;
    c->recv += (double)st->bytes_recv;
    c->msgs += (double)st->msgs_sent;
}

/* Rank 0: the gathered samples arrive rank-major; the archive wants them
 * iteration-major in microseconds, and p50/p99 use the slowest rank of
 * each iteration. */
static void iteration_quantiles(double *samples, int iters, int p, micro_row *row)
{
    double *per_iter = malloc((size_t)iters * sizeof *per_iter);
    double *tmp = malloc((size_t)iters * (size_t)p * sizeof *tmp);
    if (per_iter && tmp) {
        for (int i = 0; i < iters; i++) {
            per_iter[i] = 0;
            for (int r = 0; r < p; r++) {
                double v = samples[(size_t)r * iters + i];
                tmp[(size_t)i * p + r] = v * 1e6;
                if (v > per_iter[i])
                    per_iter[i] = v;
            }
        }
        memcpy(samples, tmp, (size_t)iters * (size_t)p * sizeof *tmp);
        row->t_p50_us = bench_quantile(per_iter, (size_t)iters, 0.50) * 1e6;
        row->t_p99_us = bench_quantile(per_iter, (size_t)iters, 0.99) * 1e6;
    }
    free(per_iter);
    free(tmp);
}

void micro_summarise(const micro_calls *c, int iters, MPI_Comm comm, micro_row *row,
                     double *samples)
{
    int p = row->ranks, rank;
    MPI_Comm_rank(comm, &rank);
    double mean = 0;
    for (int i = 0; i < iters; i++)
        mean += c->times[i];
    mean /= iters;
    struct { double v; int r; } mine = {mean, rank}, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    double sums[8] = {mean, c->phase[0] / iters, c->phase[1] / iters, c->phase[2] / iters,
                      c->sent / iters, c->recv / iters, c->nnz_local, c->msgs / iters}, tot[8];
    MPI_Allreduce(sums, tot, 8, MPI_DOUBLE, MPI_SUM, comm);
    double maxes[3] = {c->sent / iters, c->recv / iters, c->msgs / iters}, mx[3];
    MPI_Allreduce(maxes, mx, 3, MPI_DOUBLE, MPI_MAX, comm);
    double tmin = 0;
    MPI_Allreduce(&mean, &tmin, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Gather(c->times, iters, MPI_DOUBLE, samples, iters, MPI_DOUBLE, 0, comm);

    row->t_avg_us = tot[0] / p * 1e6;
    row->t_min_us = tmin * 1e6;
    row->t_max_us = slowest.v * 1e6;
    row->slowest_rank = slowest.r;
    row->t_encode_us = tot[1] / p * 1e6;
    row->t_comm_us = tot[2] / p * 1e6;
    row->t_decode_us = tot[3] / p * 1e6;
    row->bytes_sent_avg = tot[4] / p;
    row->bytes_recv_avg = tot[5] / p;
    row->bytes_sent_max = mx[0];
    row->bytes_recv_max = mx[1];
    row->nnz_local_avg = tot[6] / p;
    row->msgs_sent_avg = tot[7] / p;
    row->msgs_sent_max = mx[2];
    double t = row->t_avg_us * 1e-6;
    row->algbw_gbs = t > 0 ? (double)row->size_bytes / t / 1e9 : 0;
    row->busbw_gbs = row->algbw_gbs * (p > 1 ? 2.0 * (p - 1) / p : 0.0);
    row->wire_to_bound = row->bound_bytes > 0 ? row->bytes_sent_avg / row->bound_bytes : 0.0;
    if (rank == 0)
        iteration_quantiles(samples, iters, p, row);
    MPI_Bcast(&row->t_p50_us, 1, MPI_DOUBLE, 0, comm);
    MPI_Bcast(&row->t_p99_us, 1, MPI_DOUBLE, 0, comm);
}
