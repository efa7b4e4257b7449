/* A program outside the tree: built against the installed libreducer with
 * `mpicc $(pkg-config --cflags --libs libreducer)`, it averages 1..p over
 * p ranks with the dense reducer and prints "avg X" on rank 0. */
#include <mpi.h>
#include <reducer.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float g[4] = {rank + 1.0f, rank + 1.0f, rank + 1.0f, rank + 1.0f};
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = "dense", cfg.comm = MPI_COMM_WORLD, cfg.rows = 4, cfg.cols = 1;
    rb_reducer *r;
    rb_stats st;
    if ((rc = rb_create(&cfg, &r)) || (rc = rb_reduce(r, g, &st)))
        fprintf(stderr, "libreducer: %s: %s\n", rb_strerror(rc), rb_last_error());
    else if (rank == 0)
        printf("avg %g version %s\n", g[0], RB_VERSION_STRING);
    if (!rc)
        rb_destroy(r);
    MPI_Finalize();
    return rc != 0;
}
