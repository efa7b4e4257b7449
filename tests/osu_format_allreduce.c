/* A minimal allreduce latency benchmark that takes osu_allreduce's options
 * (-T mpi_float, -m MIN:MAX, -i, -x, -M, -l) and prints its output format,
 * so tests/osu_vs_dense.sh can run benchmarks/anchors/osu-vs-dense end to
 * end where OSU Micro-Benchmarks is not installed (it is not packaged in
 * Debian).  Same loop as OSU 7.4: MPI_Wtime around MPI_Allreduce, then
 * MPI_Barrier; the mean over ranks of each rank's mean.  Not a substitute
 * for OSU's figures: docs/anchors.md uses the real one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    size_t min = 4, max = 1 << 20;
    int iters = 100, skip = 10, in_place = 0;
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
    if (!send || !recv)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        printf("\n# OSU MPI Allreduce Latency Test (osu_format_allreduce stand-in)\n"
               "# Datatype: MPI_FLOAT.\n# Size       Avg Latency(us)\n");
    for (size_t size = min; size <= max; size *= 2) {
        int n = (int)(size / 4);
        double timer = 0.0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            if (i >= skip)
                timer += t1 - t0;
        }
        double mean = timer * 1e6 / iters, sum = 0.0;
        MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-10zu%18.2f\n", size, sum / p);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
