/* rb_train's ring shuffle (--shuffle ring): GossipGraD-style, each step's
 * batch moves one hop around the ranks while the step computes. */
#include "train.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_X = 71, TAG_Y = 72 };

int train_ring_alloc(train_ring *g, const dataset *d, int B, int rank, int nranks)
{
    memset(g, 0, sizeof *g);
    g->rank = rank, g->nranks = nranks;
    g->sx = malloc((size_t)B * d->rec), g->rx = malloc((size_t)B * d->rec);
    g->sy = malloc((size_t)B * sizeof(int32_t)), g->ry = malloc((size_t)B * sizeof(int32_t));
    return g->sx && g->rx && g->sy && g->ry ? 0 : -1;
}

void train_ring_free(train_ring *g)
{
    free(g->sx), free(g->rx), free(g->sy), free(g->ry);
}

void train_ring_start(train_ring *g, const dataset *d, const size_t *slots, int B)
{
    if (g->nranks < 2)
        return;
    for (int s = 0; s < B; s++) {
        memcpy(g->sx + (size_t)s * d->rec, d->x + slots[s] * d->rec, d->rec);
        g->sy[s] = d->y[slots[s]];
    }
    int to = (g->rank + 1) % g->nranks, from = (g->rank + g->nranks - 1) % g->nranks;
    int bytes = (int)((size_t)B * d->rec);
    MPI_Irecv(g->rx, bytes, MPI_BYTE, from, TAG_X, MPI_COMM_WORLD, &g->req[0]);
    MPI_Irecv(g->ry, B, MPI_INT32_T, from, TAG_Y, MPI_COMM_WORLD, &g->req[1]);
    MPI_Isend(g->sx, bytes, MPI_BYTE, to, TAG_X, MPI_COMM_WORLD, &g->req[2]);
    MPI_Isend(g->sy, B, MPI_INT32_T, to, TAG_Y, MPI_COMM_WORLD, &g->req[3]);
    g->active = 1;
}

void train_ring_finish(train_ring *g, dataset *d, const size_t *slots, int B)
{
    if (!g->active)
        return;
    MPI_Waitall(4, g->req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < B; s++) {
        memcpy(d->x + slots[s] * d->rec, g->rx + (size_t)s * d->rec, d->rec);
        d->y[slots[s]] = g->ry[s];
    }
    g->active = 0;
}
