/* rb_micro's cost model column: this machine's alpha, beta and local
 * memory bandwidth (measured at start, or given), and per row the model
 * time of the reducer (rb_model, docs/cost-model.md) beside the measured
 * one. */
#include "micro.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"

enum { PROBE_ROUNDS = 7, PROBE_CALLS = 20, PROBE_SMALL = 8, PROBE_LARGE = 1 << 20 };
/* A round of the probe lasts about this long at most: 7 rounds of 20 round
 * trips of 1 MiB take 2.3 s at 1 Gbit/s and 23 s at 100 Mbit/s (an
 * emulated cluster's links), before anything is measured. */
#define PROBE_ROUND_S 0.05

/* Median of v[0..n) (sorts v). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One-way time of a message of bytes between ranks 0 and 1: half a round
 * trip, the fastest of the rounds.  The fastest, not the median: on a
 * loaded node a round that waited for a core measures the scheduler (ms),
 * and a median of such rounds made the 8 B probe slower than the 1 MiB
 * one (beta 0).  ROUNDS <= PROBE_ROUNDS.  Valid on rank 0. */
static double one_way(MPI_Comm comm, int rank, char *buf, int bytes, int calls, int rounds)
{
    double t[PROBE_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++) {
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_CHAR, 1, 0, comm);
                MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_CHAR, 0, 0, comm);
            }
            bench_stall_beat();   /* a round trip: the progress watchdog's first calls */
        }
        t[r] = (MPI_Wtime() - t0) / (2.0 * calls);
    }
    double best = t[0];
    for (int r = 1; r < rounds; r++)
        best = t[r] < best ? t[r] : best;
    return best;
}

/* Round trips per round of the 1 MiB probe: PROBE_CALLS, or as many as fit
 * in PROBE_ROUND_S on a slow link (at least 2), from one timed round trip.
 * The same on every rank (rank 0's). */
static int large_calls(MPI_Comm comm, int rank, char *buf)
{
    double rtt = 2.0 * one_way(comm, rank, buf, PROBE_LARGE, 1, 1);
    int calls = PROBE_CALLS;
    if (rtt * PROBE_CALLS > PROBE_ROUND_S)
        calls = rtt > PROBE_ROUND_S / 2 ? 2 : (int)(PROBE_ROUND_S / rtt);
    MPI_Bcast(&calls, 1, MPI_INT, 0, comm);
    return calls;
}

/* Seconds per byte from the two probes: the slope between them, or, when
 * noise still hides the slope, the large message's time per byte (an upper
 * bound that stays positive, since a MiB never travels for free). */
static double beta_of(double small, double large)
{
    if (large > small)
        return (large - small) / (PROBE_LARGE - PROBE_SMALL);
    return large > 0 ? large / PROBE_LARGE : 0.0;
}

/* Bytes per second of a local pass (read n floats, write n floats), the
 * median of a few passes over the run's buffers. */
static double local_bandwidth(micro_bufs *b, size_t n)
{
    double t[PROBE_ROUNDS];
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        double t0 = MPI_Wtime();
        memcpy(b->work, b->input, n * sizeof(float));
        t[r] = MPI_Wtime() - t0;
    }
    double s = median(t, PROBE_ROUNDS);
    return s > 0 ? 2.0 * (double)n * sizeof(float) / s : 0.0;
}

void micro_probe_machine(micro_run *c, size_t max_n, micro_machine *m)
{
    const micro_opts *o = c->o;
    double v[3] = {0.0, 0.0, 0.0};
    if (c->p > 1 && (o->alpha < 0 || o->beta < 0)) {
        char *buf = calloc(PROBE_LARGE, 1);
        int ok = buf != NULL, all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->comm);
        if (all) {
            double small = one_way(c->comm, c->rank, buf, PROBE_SMALL, PROBE_CALLS, PROBE_ROUNDS);
            double large = one_way(c->comm, c->rank, buf, PROBE_LARGE,
                                   large_calls(c->comm, c->rank, buf), PROBE_ROUNDS);
            v[0] = small;
            v[1] = beta_of(small, large);
        }
        free(buf);
    }
    size_t n = max_n < (4u << 20) ? max_n : (4u << 20);   /* at most 16 MiB */
    v[2] = n ? local_bandwidth(c->bufs, n) : 0.0;
    MPI_Bcast(v, 3, MPI_DOUBLE, 0, c->comm);
    m->alpha = o->alpha >= 0 ? o->alpha : v[0];
    m->beta = o->beta >= 0 ? o->beta : v[1];
    m->mem_bw = v[2];
#ifdef HAVE_SIMGRID
    m->coll_bw = 0.0;   /* SMPI charges no time to the sums inside a reduction */
#else
    m->coll_bw = v[2];
#endif
    m->alpha_given = o->alpha >= 0;
    m->beta_given = o->beta >= 0;
}

/* Non-zeros come in runs of this many elements (rb_model_input.run). */
static double run_length(const micro_opts *o, uint64_t cols)
{
    switch (o->layout) {
    case BENCH_LAYOUT_ROW: return (double)cols;
    case BENCH_LAYOUT_BLOCK: return (double)o->ropts.block_size;
    default: return 1.0;
    }
}

void micro_model_row(micro_run *c, const micro_machine *m, double nnz_max, micro_row *row)
{
    rb_model_input in;
    rb_model_input_default(&in);
    in.ranks = c->p;
    in.rows = row->rows;
    in.cols = row->cols;
    in.nnz_max = nnz_max;
    in.nnz_mean = row->nnz_local_avg;
    /* Without validation the union is not computed: the expected union of
     * p independent supports of the mean density. */
    double d = (double)row->count > 0 ? row->nnz_local_avg / (double)row->count : 0.0;
    in.nnz_union = row->nnz_union >= 0 ? row->nnz_union
                                       : (double)row->count * (1.0 - pow(1.0 - d, c->p));
    in.run = run_length(c->o, row->cols);
    in.opts = c->o->ropts;
    in.alpha = m->alpha;
    in.beta = m->beta;
    in.mem_bw = m->mem_bw;
    in.coll_bw = m->coll_bw;
    double s = NAN;
    if (rb_model_time(row->reducer, &in, &s) != RB_OK)
        s = NAN;
    /* --compute runs inside the timed call: the model adds it. */
    row->t_model_us = isnan(s) ? NAN : (s + c->o->compute) * 1e6;
    row->model_ratio = row->t_model_us > 0 ? row->t_avg_us / row->t_model_us : NAN;
}

double micro_model_expect(micro_run *c, const micro_row *row, double nnz)
{
    micro_row guess = *row;
    guess.nnz_local_avg = nnz;
    micro_model_row(c, &c->machine, nnz, &guess);
    return guess.t_model_us * 1e-6;
}
