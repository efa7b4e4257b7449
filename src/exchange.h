/* The pair exchanges' bookkeeping, shared by the reducers built on
 * MPI_Alltoallv / MPI_Allgatherv of index-value pairs (exchange.c). */
#ifndef RB_EXCHANGE_H
#define RB_EXCHANGE_H

#include "rb_internal.h"
#include "reducer_sparse.h"

/* The counts and displacements of the pair exchanges (exchange.c):
 * scounts/sdispls what this rank sends to each rank, rcounts/rdispls what
 * it receives from each, offs the p + 1 prefix sums of rcounts (the
 * received streams of a merge). */
typedef struct rb_exchange {
    int *scounts, *sdispls, *rcounts, *rdispls;
    size_t *offs;
} rb_exchange;
int rb_exchange_init(rb_exchange *x, size_t p, const char *who);   /* RB_ERR_NOMEM */
void rb_exchange_free(rb_exchange *x);
/* Send counts of index-sorted pairs: rank i gets those from index
 * first_index(ctx, i) on (non-decreasing in i; > UINT32_MAX: none). */
void rb_exchange_split(rb_exchange *x, int p, const rb_pair *pairs, size_t k,
                       uint64_t (*first_index)(const void *ctx, int rank), const void *ctx);
/* MPI_Alltoall of the send counts, receive places in rank order; *total
 * pairs to receive. */
int rb_exchange_counts(rb_reducer *r, rb_stats *st, rb_exchange *x, size_t *total);
/* Every rank's count (MPI_Allgather of mine), receive places in rank
 * order, for an allgatherv; *total. */
int rb_exchange_gather_counts(rb_reducer *r, rb_stats *st, int mine, rb_exchange *x,
                              size_t *total);
/* A pair buffer of at least k pairs (rb_reserve). */
int rb_grow_pairs(rb_pair **buf, size_t *cap, size_t k);

#endif
