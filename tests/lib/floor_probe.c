/* floor_probe: how far each sparse reducer is from its memory floor,
 * measured by hand with rb_reduce_rows and its comm phase beside it;
 * rb_micro reports a floor in every run (its floor(us) column: one read
 * pass of the input).  Built with the tests
 * (make tests/lib/floor_probe), run by hand: a measurement, no pass or fail.
 *
 * Per size (bytes of the dense float buffer, x2 steps), on the synthetic
 * gradients rb_micro uses (element layout, overlap random, seed 1), every
 * iteration times, each after an MPI_Barrier and interleaved:
 *   memcpy  one read pass of the input and one write pass of a buffer of
 *           the same size: the memory traffic a reducer cannot avoid;
 *   memset  one write pass;
 *   dense   rb_reduce on a copy of the input (restored untimed), as rb_micro;
 *   rows    rb_reduce_rows on the same gradient as rows (the rows with a
 *           non-zero), row-form output only: no dense buffer is read or
 *           written, so this is the reducer's communication plus its work
 *           on the non-zeros; its comm phase is printed beside it.
 * Times are the mean over ranks of each rank's median over the iterations
 * (rb_micro's p50 per rank): on a shared machine an iteration that lost
 * its core to another job counts once, not by how long it waited.
 * ratio = dense / (memcpy + rows_comm): time / (floor + comm), the ratio
 * docs/rows.md sets its target on (<= 1.3);
 * ratio_rows = dense / (memcpy + rows), the rows run counted whole.
 *
 * Usage: mpirun -np 2 tests/lib/floor_probe [-m MIN:MAX] [-i ITERS] [-d DENSITY]
 *                                       [-r REDUCER,...] [-c COLS] [-O KEY=VALUE]
 * -c COLS: rows of COLS floats, row layout (density = fraction of rows);
 * -s RxC: one gradient of R rows x C floats, e.g. -s 32317x1024 -d 0.02
 * for the S2 authors' GNMT embedding;
 * -O: a reducer option, as rb_micro's (repeatable).
 * Without rb_reduce_rows in the library (-DNO_ROWS) only memcpy, memset
 * and dense are timed. */
#include "harness/gradgen.h"
#include "reducer.h"
#include "reducer_sparse.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_MEMCPY, T_MEMSET, T_DENSE, T_ROWS, T_ROWS_COMM, T_N };

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The mean over ranks of each rank's median of t[0..iters). */
static double median_over_ranks(double *t, int iters, int nranks)
{
    qsort(t, (size_t)iters, sizeof *t, by_value);
    double mine = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all / nranks;
}

int main(int argc, char **argv)
{
    /* Keep freed memory, as rb_micro does: glibc unmapping MPI's scratch
     * would add page faults to every large call. */
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t lo = 1 << 20, hi = 64 << 20;
    int iters = 20;
    double density = 0.01;
    char reducers[256] = "agsparse,sparcml,parallax,omnireduce,dense";
    size_t cols = 1;
    const char *opts[8];
    int nopts = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-m")) {
            char *colon = strchr(argv[i + 1], ':');
            lo = parse_size(argv[i + 1]);
            hi = colon ? parse_size(colon + 1) : lo;
        } else if (!strcmp(argv[i], "-i")) {
            iters = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        } else if (!strcmp(argv[i], "-d")) {
            density = atof(argv[i + 1]);
        } else if (!strcmp(argv[i], "-r")) {
            snprintf(reducers, sizeof reducers, "%s", argv[i + 1]);
        } else if (!strcmp(argv[i], "-c")) {
            cols = (size_t)atol(argv[i + 1]);
        } else if (!strcmp(argv[i], "-s")) {
            char *x = strchr(argv[i + 1], 'x');
            cols = x ? (size_t)atol(x + 1) : 1;
            lo = hi = (size_t)atol(argv[i + 1]) * cols * sizeof(float);
        } else if (!strcmp(argv[i], "-O") && nopts < 8) {
            opts[nopts++] = argv[i + 1];
        }
    }
    const char *names[16];
    int nred = 0;
    for (char *tok = strtok(reducers, ","); tok && nred < 16; tok = strtok(NULL, ","))
        names[nred++] = tok;
    if (rank == 0)
        printf("# floor_probe: %d ranks, density %g, %s layout, %d iterations; times in "
               "us (mean over ranks of per-rank medians)\n# %10s %-10s %9s %9s %9s %9s %9s %7s %10s\n",
               nranks, density, cols > 1 ? "row" : "element", iters, "size(B)", "reducer", "memcpy", "memset", "dense",
               "rows", "rows_comm", "ratio", "ratio_rows");
    for (size_t bytes = lo; bytes <= hi; bytes *= 2) {
        size_t rows = bytes / sizeof(float) / (cols ? cols : 1), n = rows * cols;
        bytes = n * sizeof(float);
        float *in = malloc(bytes), *work = malloc(bytes), *copy = malloc(bytes);
        int64_t *ids = malloc(n * sizeof *ids);
        float *vals = malloc(bytes);
        if (!in || !work || !copy || !ids || !vals) {
            fprintf(stderr, "floor_probe: no memory for %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bench_gradgen g = {.rows = rows, .cols = cols, .density = density,
                        .layout = cols > 1 ? BENCH_LAYOUT_ROW : BENCH_LAYOUT_ELEMENT,
                        .overlap = BENCH_OVERLAP_RANDOM, .nranks = nranks, .seed = 1};
        bench_gradgen_fill(&g, rank, in);
        size_t nr = 0;   /* the rows with a non-zero */
        for (size_t i = 0; i < rows; i++) {
            if (!rb_count_nonzero(in + i * cols, cols))
                continue;
            ids[nr] = (int64_t)i;
            memcpy(vals + nr++ * cols, in + i * cols, cols * sizeof(float));
        }
        memcpy(copy, in, bytes);
        rb_reducer *red[16] = {0};
        for (int j = 0; j < nred; j++) {
            rb_config cfg;
            rb_config_default(&cfg);
            cfg.name = names[j];
            cfg.rows = rows;
            cfg.cols = cols;
            for (int o = 0; o < nopts; o++)
                if (rb_options_set(&cfg.opts, opts[o]) != RB_OK) {
                    if (rank == 0)
                        fprintf(stderr, "floor_probe: %s\n", rb_last_error());
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
            if (rb_create(&cfg, &red[j]) != RB_OK) {
                if (rank == 0)
                    fprintf(stderr, "floor_probe: %s: %s\n", names[j], rb_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        double *samples = malloc((size_t)nred * T_N * (size_t)iters * sizeof *samples);
        if (!samples)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int it = -3; it < iters; it++) {
            double t[T_N];
            MPI_Barrier(MPI_COMM_WORLD);
            t[T_MEMCPY] = MPI_Wtime();
            memcpy(copy, in, bytes);
            t[T_MEMCPY] = MPI_Wtime() - t[T_MEMCPY];
            MPI_Barrier(MPI_COMM_WORLD);
            t[T_MEMSET] = MPI_Wtime();
            memset(copy, 0, bytes);
            t[T_MEMSET] = MPI_Wtime() - t[T_MEMSET];
            for (int j = 0; j < nred; j++) {
                rb_stats st;
                memcpy(work, in, bytes);
                MPI_Barrier(MPI_COMM_WORLD);
                t[T_DENSE] = MPI_Wtime();
                int rc = rb_reduce(red[j], work, &st);
                t[T_DENSE] = MPI_Wtime() - t[T_DENSE];
                t[T_ROWS] = t[T_ROWS_COMM] = 0;
#ifndef NO_ROWS
                rb_rows rin = {nr, cols, ids, vals}, rout;
                MPI_Barrier(MPI_COMM_WORLD);
                t[T_ROWS] = MPI_Wtime();
                if (rc == RB_OK)
                    rc = rb_reduce_rows(red[j], &rin, NULL, &rout, &st);
                t[T_ROWS] = MPI_Wtime() - t[T_ROWS];
                t[T_ROWS_COMM] = st.t_phase[RB_PHASE_COMM];
#endif
                if (rc != RB_OK) {
                    fprintf(stderr, "floor_probe: %s: %s\n", names[j], rb_last_error());
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                if (it >= 0)
                    for (int k = 0; k < T_N; k++)
                        samples[((size_t)j * T_N + (size_t)k) * (size_t)iters + (size_t)it] = t[k];
            }
        }
        for (int j = 0; j < nred; j++) {
            double m[T_N];
            for (int k = 0; k < T_N; k++)
                m[k] = median_over_ranks(samples + ((size_t)j * T_N + (size_t)k) * (size_t)iters,
                                         iters, nranks) * 1e6;
            if (rank == 0)
                printf("  %10zu %-10s %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %10.2f\n", bytes,
                       names[j], m[T_MEMCPY], m[T_MEMSET], m[T_DENSE], m[T_ROWS],
                       m[T_ROWS_COMM], m[T_DENSE] / (m[T_MEMCPY] + m[T_ROWS_COMM]),
                       m[T_DENSE] / (m[T_MEMCPY] + m[T_ROWS]));
            rb_destroy(red[j]);
        }
        free(in);
        free(work);
        free(copy);
        free(ids);
        free(vals);
        free(samples);
    }
    MPI_Finalize();
    return 0;
}
