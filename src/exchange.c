/* The exchange plumbing that the sparse reducers built on MPI_Alltoallv and
 * MPI_Allgatherv of index-value pairs share (parallax, sparcml, oktopk,
 * zen): the per-rank counts and displacements, and the steps that fill
 * them.  Each reducer keeps its own algorithm; only the bookkeeping is
 * here. */
#include "exchange.h"

#include <stdlib.h>

int rb_grow_pairs(rb_pair **buf, size_t *cap, size_t k)
{
    void *b = *buf;
    int rc = rb_reserve(&b, cap, k, sizeof(rb_pair));
    *buf = b;
    return rc;
}

int rb_exchange_init(rb_exchange *x, size_t p, const char *who)
{
    x->scounts = rb_calloc(p, sizeof(int));
    x->sdispls = rb_calloc(p, sizeof(int));
    x->rcounts = rb_calloc(p, sizeof(int));
    x->rdispls = rb_calloc(p, sizeof(int));
    x->offs = rb_calloc(p + 1, sizeof(size_t));
    if (!x->scounts || !x->sdispls || !x->rcounts || !x->rdispls || !x->offs)
        return rb_fail(RB_ERR_NOMEM, "%s: no memory for the exchange counts of %zu ranks", who, p);
    return RB_OK;
}

void rb_exchange_free(rb_exchange *x)
{
    free(x->scounts);
    free(x->sdispls);
    free(x->rcounts);
    free(x->rdispls);
    free(x->offs);
    *x = (rb_exchange){0};
}

void rb_exchange_split(rb_exchange *x, int p, const rb_pair *pairs, size_t k,
                       uint64_t (*first_index)(const void *ctx, int rank), const void *ctx)
{
    for (int i = 0; i < p; i++) {
        uint64_t lo = first_index(ctx, i);
        size_t at = lo > UINT32_MAX ? k : rb_pair_lower_bound(pairs, k, (uint32_t)lo);
        x->sdispls[i] = (int)at;
        if (i > 0)
            x->scounts[i - 1] = (int)at - x->sdispls[i - 1];
    }
    x->scounts[p - 1] = (int)k - x->sdispls[p - 1];
}

/* Receive displacements in rank order from rcounts; offs are the same as
 * p + 1 prefix sums (the streams of a merge). */
static size_t place_received(rb_exchange *x, int p)
{
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        x->rdispls[i] = (int)total;
        x->offs[i] = total;
        total += (size_t)x->rcounts[i];
    }
    x->offs[p] = total;
    return total;
}

int rb_exchange_counts(rb_reducer *r, rb_stats *st, rb_exchange *x, size_t *total)
{
    RB_TRY(rb_alltoall(r, st, x->scounts, 1, MPI_INT, x->rcounts));
    *total = place_received(x, r->size);
    return RB_OK;
}

int rb_exchange_gather_counts(rb_reducer *r, rb_stats *st, int mine, rb_exchange *x,
                              size_t *total)
{
    RB_TRY(rb_allgather(r, st, &mine, 1, MPI_INT, x->rcounts));
    *total = place_received(x, r->size);
    return RB_OK;
}
