/* A minimal allreduce latency benchmark that takes osu_allreduce's options
 * (-T mpi_float, -m MIN:MAX, -i, -x, -M, -l, -z) and prints its output format,
 * so tests/anchors/osu_vs_dense.sh can run benchmarks/anchors/osu-vs-dense end to
 * end where OSU Micro-Benchmarks is not installed (it is not packaged in
 * Debian).  Same loop as OSU 7.4: MPI_Wtime around MPI_Allreduce, then
 * MPI_Barrier; the mean over ranks of each rank's mean.  Not a substitute
 * for OSU's figures: docs/anchors.md uses the real one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* OSU's percentile: the nearest rank of the per-call times averaged over
 * ranks. */
static double percentile(const double *sorted, int n, int pct)
{
    int k = (int)((double)n * pct / 100.0 + 0.5) - 1;
    return sorted[k < 0 ? 0 : k];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    size_t min = 4, max = 1 << 20;
    int iters = 100, skip = 10, in_place = 0, tail = 0;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : "";
        if (!strcmp(argv[a], "-m") && strchr(v, ':')) {
            min = strtoull(v, NULL, 10), max = strtoull(strchr(v, ':') + 1, NULL, 10), a++;
        } else if (!strcmp(argv[a], "-i")) {
            iters = atoi(v), a++;
        } else if (!strcmp(argv[a], "-x")) {
            skip = atoi(v), a++;
        } else if (!strcmp(argv[a], "-T") && !strcmp(v, "mpi_float")) {
            a++;
        } else if (!strcmp(argv[a], "-M")) {
            a++;
        } else if (!strcmp(argv[a], "-l")) {
            in_place = 1;
        } else if (!strcmp(argv[a], "-z")) {
            tail = 1;
        } else {
            if (rank == 0)
                fprintf(stderr, "osu_format_allreduce: unsupported argument '%s'\n", argv[a]);
            MPI_Finalize();
            return 1;
        }
    }
    if (min < 4 || max < min || iters < 1 || skip < 0) {
        if (rank == 0)
            fprintf(stderr, "osu_format_allreduce: bad sizes or counts\n");
        MPI_Finalize();
        return 1;
    }
    float *send = calloc(max / 4, sizeof *send), *recv = calloc(max / 4, sizeof *recv);
    double *lat = calloc((size_t)iters, sizeof *lat), *sum_lat = calloc((size_t)iters, sizeof *lat);
    if (!send || !recv || !lat || !sum_lat)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        printf("\n# OSU MPI Allreduce Latency Test (osu_format_allreduce stand-in)\n"
               "# Datatype: MPI_FLOAT.\n# Size       Avg Latency(us)%s\n",
               tail ? "        P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)" : "");
    for (size_t size = min; size <= max; size *= 2) {
        int n = (int)(size / 4);
        double timer = 0.0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            if (i >= skip) {
                timer += t1 - t0;
                lat[i - skip] = (t1 - t0) * 1e6;
            }
        }
        double mean = timer * 1e6 / iters, sum = 0.0;
        MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(lat, sum_lat, iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank != 0)
            continue;
        printf("%-10zu%18.2f", size, sum / p);
        if (tail) {
            for (int i = 0; i < iters; i++)
                sum_lat[i] /= p;
            qsort(sum_lat, (size_t)iters, sizeof *sum_lat, ascending);
            printf("%18.2f%18.2f%18.2f", percentile(sum_lat, iters, 50),
                   percentile(sum_lat, iters, 90), percentile(sum_lat, iters, 99));
        }
        printf("\n");
    }
    free(send);
    free(recv);
    free(lat);
    free(sum_lat);
    MPI_Finalize();
    return 0;
}
