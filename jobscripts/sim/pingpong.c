/* pingpong: one-way time of a message between ranks 0 and 1 at every size
 * from MIN to MAX bytes (doubling), for fitting a SimGrid platform to a
 * measured network (jobscripts/sim/platform-from-wire) and for checking the
 * fitted platform under SMPI (the same source, built with smpicc).
 *   mpicc -O2 -o pingpong jobscripts/sim/pingpong.c
 *   mpirun -np 2 ./pingpong [MIN [MAX [ROUNDS [BUDGET_S [GAP_US]]]]]
 * Defaults: 1 B to 16 MiB, 7 rounds, 60 s in all, 20 ms gap.  A round is a barrier,
 * then CALLS round trips (CALLS: as many as fill about 20 ms, 1 to 1000,
 * chosen once per size from a first trip); its one-way time is the round's
 * time / (2 CALLS).  Each message is received before the next is sent
 * (MPI_Send/MPI_Recv, as OSU's osu_latency).  Then as many rounds of
 * CALLS exchanges: both ranks send and receive BYTES at once
 * (MPI_Sendrecv; on a full-duplex link about the one-way time, on a link
 * whose two directions share one capacity about twice it).  Then ROUNDS
 * isolated exchanges: one each, after GAP_US of silence (a shaper's token
 * bucket refills: the burst a message after idle gets).  Ranks other
 * than 0 and 1 wait.  Output (rank 0): comment lines, then one line per size:
 *   bytes calls rounds min_us median_us max_us xmin_us xmedian_us xmax_us
 *   imin_us imedian_us imax_us
 * min/median/max over the rounds of the one-way time, x...: of an exchange,
 * i...: of an isolated exchange.  When BUDGET_S is spent the
 * sizes left are not measured (a comment says so); exit 0 either way. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L   /* nanosleep (smpicc defines it already) */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_ROUNDS = 31, MAX_CALLS = 1000 };

/* CALLS round trips (one message each way in turn), or with EXCHANGE
 * CALLS exchanges (both ways at once, MPI_Sendrecv): seconds in all. */
static double round_trips(char *buf, long bytes, int calls, int rank, MPI_Comm comm, int exchange)
{
    char *back = buf + bytes;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        if (exchange && rank < 2) {
            MPI_Sendrecv(buf, (int)bytes, MPI_CHAR, 1 - rank, 1, back, (int)bytes, MPI_CHAR,
                         1 - rank, 1, comm, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_CHAR, 1, 0, comm);
            MPI_Recv(buf, (int)bytes, MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)bytes, MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_CHAR, 0, 0, comm);
        }
    }
    return MPI_Wtime() - t0;
}

static void sort(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
}

/* Round trips that fill about 20 ms, from one trip (rank 0's, shared). */
static int calls_for(char *buf, long bytes, int rank, MPI_Comm comm)
{
    double one = round_trips(buf, bytes, 1, rank, comm, 0);
    int calls = one > 0 ? (int)(0.02 / one) : MAX_CALLS;
    calls = calls < 1 ? 1 : calls > MAX_CALLS ? MAX_CALLS : calls;
    MPI_Bcast(&calls, 1, MPI_INT, 0, comm);
    return calls;
}

/* Microseconds per message of ROUNDS rounds of CALLS, sorted: one-way
 * (half a round trip) or, with EXCHANGE, one exchange. */
static void rounds_of(double *t, int rounds, char *buf, long bytes, int calls, int rank,
                      MPI_Comm comm, int exchange)
{
    for (int r = 0; r < rounds; r++)
        t[r] = round_trips(buf, bytes, calls, rank, comm, exchange) /
               ((exchange ? 1.0 : 2.0) * calls) * 1e6;
    sort(t, rounds);
}

static double median_of(const double *t, int n)
{
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Microseconds of one exchange after GAP_US of silence on both ranks, per
 * round, sorted: what a message meets after idle (a token-bucket shaper's
 * bucket full again, the connection quiet), not in a stream. */
static void isolated_of(double *t, int rounds, char *buf, long bytes, int rank, MPI_Comm comm,
                        long gap_us)
{
    struct timespec gap = {gap_us / 1000000, (gap_us % 1000000) * 1000};
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(comm);
        nanosleep(&gap, NULL);
        t[r] = round_trips(buf, bytes, 1, rank, comm, 1) * 1e6;
    }
    sort(t, rounds);
}

static void measure(char *buf, long bytes, int rounds, int rank, MPI_Comm comm, long gap_us)
{
    double t[MAX_ROUNDS], x[MAX_ROUNDS], g[MAX_ROUNDS];
    int calls = calls_for(buf, bytes, rank, comm);
    rounds_of(t, rounds, buf, bytes, calls, rank, comm, 0);
    rounds_of(x, rounds, buf, bytes, calls, rank, comm, 1);
    isolated_of(g, rounds, buf, bytes, rank, comm, gap_us);
    if (rank != 0)
        return;
    printf("%ld %d %d %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", bytes, calls, rounds,
           t[0], median_of(t, rounds), t[rounds - 1], x[0], median_of(x, rounds),
           x[rounds - 1], g[0], median_of(g, rounds), g[rounds - 1]);
    fflush(stdout);
}

static long arg(int argc, char **argv, int i, long dflt, long lo, long hi)
{
    long v = argc > i ? strtol(argv[i], NULL, 10) : dflt;
    return v < lo ? lo : v > hi ? hi : v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long min = arg(argc, argv, 1, 1, 1, 1L << 30);
    long max = arg(argc, argv, 2, 16L << 20, min, 1L << 30);
    int rounds = (int)arg(argc, argv, 3, 7, 1, MAX_ROUNDS);
    double budget = (double)arg(argc, argv, 4, 60, 1, 3600);
    long gap_us = arg(argc, argv, 5, 20000, 0, 1000000);
    char *buf = calloc(2 * (size_t)max, 1);
    int ok = np >= 2 && buf != NULL, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs 2 ranks or more and %ld bytes per rank\n", max);
        free(buf);
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("# pingpong: one-way time, ranks 0 and 1 of %d, %d rounds per size\n"
               "# bytes calls rounds min_us median_us max_us xmin_us xmedian_us xmax_us "
               "imin_us imedian_us imax_us\n", np, rounds);
    double t0 = MPI_Wtime();
    for (long bytes = min; bytes <= max; bytes *= 2) {
        int go = MPI_Wtime() - t0 < budget;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go) {
            if (rank == 0)
                printf("# budget of %g s spent: sizes from %ld B not measured\n", budget, bytes);
            break;
        }
        measure(buf, bytes, rounds, rank, MPI_COMM_WORLD, gap_us);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
