/* Node-local rank (reducer.h: rb_node_rank): the GPU and the cores of a
 * rank are chosen by it, in the library and in the benchmarks alike. */
#include "rb_internal.h"

#include <stdlib.h>

/* Launchers' node-local ranks, most specific first; never SLURM_PROCID. */
static const char *const local_rank_vars[] = {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                              "MPI_LOCALRANKID", "PMI_LOCAL_RANK"};

/* var's value on this rank if it is in [0, n), else -1. */
static int env_rank_below(const char *var, int n)
{
    const char *v = getenv(var);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' && x >= 0 && x < n ? (int)x : -1;
}

/* Is every rank's value of var in [0, n) and distinct from the others'
 * (a permutation of 0..n-1 over the node)?  SLURM_LOCALID is inherited
 * unchanged by the ranks mpirun starts inside a batch script, and world
 * values are not local ranks of a sub-communicator: both are caught here.
 * Collective over node; *ok is the same on every rank. */
static int env_is_permutation(MPI_Comm node, int n, int mine, int *ok)
{
    int *all = rb_calloc((size_t)n, sizeof *all);
    unsigned char *seen = rb_calloc((size_t)n, 1);
    int have = all && seen, all_have = 0;
    RB_MPI(MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, node));
    *ok = all_have;
    if (all_have) {    /* every rank judges the same gathered values */
        RB_MPI(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, node));
        for (int i = 0; i < n && *ok; i++) {
            *ok = all[i] >= 0 && !seen[all[i]];
            if (*ok)
                seen[all[i]] = 1;
        }
    }
    free(all);
    free(seen);
    return all_have ? RB_OK : rb_fail(RB_ERR_NOMEM, "no memory for %d node-local ranks", n);
}

static int node_rank_on(MPI_Comm node, int *local_rank, int *local_size, const char **source)
{
    MPI_Comm_size(node, local_size);
    for (size_t i = 0; i < sizeof local_rank_vars / sizeof *local_rank_vars; i++) {
        int mine = env_rank_below(local_rank_vars[i], *local_size), ok = 0;
        RB_TRY(env_is_permutation(node, *local_size, mine, &ok));
        if (ok) {
            *local_rank = mine;
            *source = local_rank_vars[i];
            return RB_OK;
        }
    }
    MPI_Comm_rank(node, local_rank);
    *source = "MPI_COMM_TYPE_SHARED";
    return RB_OK;
}

int rb_node_rank(MPI_Comm comm, int *local_rank, int *local_size, const char **source)
{
    if (!local_rank || !local_size)
        return rb_fail(RB_ERR_ARG, "rb_node_rank: NULL output");
    const char *src = NULL;
    MPI_Comm node;
    RB_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int rc = node_rank_on(node, local_rank, local_size, &src);
    MPI_Comm_free(&node);
    if (source)
        *source = src;
    return rc;
}
