/* Rank agreement (bench_agree.h). */
#include "bench_agree.h"

#include <stdint.h>
#include <string.h>

#include "bench_fail.h"
#include "reducer.h"

int bench_peer_failure(int rc, const char *detail)
{
    static const char peer[] = "another rank failed";
    return rc > 0 && detail && !strncmp(detail, peer, sizeof peer - 1);
}

int bench_all_ok(MPI_Comm comm, int rc, const char *what, const char *detail)
{
    int rank, p, first;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    /* Own failures rank first (0..p-1), then a peer's (p..2p-1); 2p: none. */
    int me = rc == RB_OK ? 2 * p : bench_peer_failure(rc, detail) ? p + rank : rank;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == 2 * p)
        return 0;
    bench_fail_on(rank == first % p, rc, what, "%s", detail ? detail : "");
    return -1;
}

int bench_argv_agree(MPI_Comm comm, int argc, char **argv)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 1; i < argc; i++) {
        for (const char *p = argv[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        h = (h ^ 0xff) * 0x100000001b3ULL;
    }
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    return lo == hi;
}
