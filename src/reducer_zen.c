/* zen: the sparse allreduce of Zen (OSDI'25; reproduction Jabir0/ZEN_repro,
 * LoadBalanceAllreduce.zen_sparse_comm): indices are hash-partitioned over
 * the ranks, which balances the reduction whatever the index distribution,
 * and the result's index set travels as a bitmap over each partition.
 *
 *   init    the partition of index i is hash(i, seed) scaled to [0, p);
 *           the partition sizes, and (unless zen_bitmap=off) every
 *           partition's indices in order (4 bytes per element, built once:
 *           the repro caches the same mapping per tensor size)
 *   encode  pack the local non-zeros; bucket them by partition (stable:
 *           index order within each partition)
 *   comm    alltoall of the per-partition counts (int), alltoallv of the
 *           pairs (the sparse reduce-scatter); the owner merge-sums the p
 *           streams.  Allgather of the reduced counts (int), then one
 *           allgatherv of every partition's result as 32-bit words: either
 *           its pairs (index, value), or a bitmap over the partition's
 *           indices (bit j = its j-th index is in the union) followed by the
 *           values in that order
 *   decode  set the union's values, scaled by 1/p, into the gradient
 *
 * zen_bitmap: on = the bitmap always (the repro's method 3), off = pairs
 * (its method 2), auto = whichever has fewer words this call (every rank
 * knows every reduced count, so all decide alike): the bitmap costs
 * ceil(|P_q| / 64) x 8 bytes per partition, the indices 4 bytes per union
 * element, so it wins once the union holds more than 1/32 of the elements.
 *
 * Not ported: the repro's GPU hash table with rehashing (the "serial
 * memory" for collisions) only lets GPU threads write without conflicts;
 * on the host the pairs are bucketed in one pass.  Its hash is a cubic
 * polynomial; here a 64-bit mix of the index and the seed.  Sums that
 * cancel to zero stay in the union (rb_merge_sum), so the union contains
 * every local support and the decode may just set.  MPI counts are ints:
 * gradients over INT_MAX elements are refused (RB_ERR_UNSUPPORTED on every
 * rank), and so is a call whose gathered words exceed INT_MAX.  Device
 * buffers go through host memory (the core's staging). */
#include "exchange.h"
#include "rb_internal.h"
#include "reducer_sparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct zen_state {
    uint64_t key;              /* hash key from the seed */
    rb_pair *send, *bucketed, *recv, *tmp;
    size_t send_cap, bucketed_cap, recv_cap, tmp_cap;
    uint32_t *part_of;         /* partition of each local non-zero */
    size_t part_of_cap;
    uint64_t *part_size;       /* p: elements per partition */
    uint32_t *members;         /* bitmap mode: partition q's indices at member_off[q] */
    uint64_t *member_off;      /* p + 1 */
    uint32_t *gather_send, *gather_recv;   /* the allgatherv, in 32-bit words */
    size_t gather_send_cap, gather_recv_cap;
    rb_exchange x;             /* counts and displacements of the pair exchanges */
    int big_receive;           /* can an owner receive more than INT_MAX pairs? */
} zen_state;

static void zen_fini(rb_reducer *r)
{
    zen_state *s = r->impl;
    free(s->send);
    free(s->bucketed);
    free(s->recv);
    free(s->tmp);
    free(s->part_of);
    free(s->part_size);
    free(s->members);
    free(s->member_off);
    free(s->gather_send);
    free(s->gather_recv);
    rb_exchange_free(&s->x);
}

/* The splitmix64 finaliser: every input bit reaches every output bit. */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Partition of index i: the hash's top 32 bits scaled to [0, p). */
static inline uint32_t partition_of(uint64_t key, uint32_t i, uint32_t p)
{
    return (uint32_t)(((mix64(key ^ i) >> 32) * (uint64_t)p) >> 32);
}

/* Partition sizes and, for the bitmap, every partition's indices in order. */
static int build_partitions(rb_reducer *r, zen_state *s, int members)
{
    uint32_t p = (uint32_t)r->size;
    for (size_t i = 0; i < r->n; i++)
        s->part_size[partition_of(s->key, (uint32_t)i, p)]++;
    uint64_t widest = 0;
    for (uint32_t q = 0; q < p; q++) {
        s->member_off[q + 1] = s->member_off[q] + s->part_size[q];
        widest = s->part_size[q] > widest ? s->part_size[q] : widest;
    }
    s->big_receive = (uint64_t)p * widest > (uint64_t)INT_MAX;
    if (!members)
        return RB_OK;
    s->members = rb_calloc(r->n, sizeof *s->members);
    uint64_t *fill = rb_calloc(p, sizeof *fill);
    if (!s->members || !fill) {
        free(fill);
        return rb_fail(RB_ERR_NOMEM, "zen: no memory for the partition map of %zu elements",
                       r->n);
    }
    for (size_t i = 0; i < r->n; i++) {
        uint32_t q = partition_of(s->key, (uint32_t)i, p);
        s->members[s->member_off[q] + fill[q]++] = (uint32_t)i;
    }
    free(fill);
    return RB_OK;
}

static int zen_init(rb_reducer *r)
{
    zen_state *s = r->impl;
    size_t p = (size_t)r->size;
    s->key = mix64(r->cfg.opts.seed ^ 0x7a656e2d68617368ULL);   /* "zen-hash" */
    s->part_size = rb_calloc(p, sizeof *s->part_size);
    s->member_off = rb_calloc(p + 1, sizeof *s->member_off);
    RB_TRY(rb_exchange_init(&s->x, p, "zen"));
    if (!s->part_size || !s->member_off)
        return rb_fail(RB_ERR_NOMEM, "zen: no memory for %zu ranks", p);
    if (r->n > (size_t)INT_MAX)
        return rb_fail(RB_ERR_UNSUPPORTED, "zen: %zu elements exceed INT_MAX", r->n);
    return build_partitions(r, s, r->cfg.opts.zen_bitmap != RB_ZEN_BITMAP_OFF);
}

static int grow(void *bufp, size_t *cap, size_t count, size_t size)
{
    void **buf = bufp;
    return rb_reserve(buf, cap, count, size);
}

/* The k local pairs grouped by partition into s->bucketed (a counting
 * sort, stable), with the alltoallv's send counts and displacements. */
static int bucket_by_partition(rb_reducer *r, size_t k)
{
    zen_state *s = r->impl;
    int p = r->size;
    RB_TRY(grow(&s->part_of, &s->part_of_cap, k, sizeof *s->part_of));
    RB_TRY(grow(&s->bucketed, &s->bucketed_cap, k, sizeof(rb_pair)));
    memset(s->x.scounts, 0, (size_t)p * sizeof *s->x.scounts);
    for (size_t i = 0; i < k; i++) {
        uint32_t q = partition_of(s->key, s->send[i].idx, (uint32_t)p);
        s->part_of[i] = q;
        s->x.scounts[q]++;
    }
    for (int q = 0, off = 0; q < p; q++) {
        s->x.sdispls[q] = off;
        off += s->x.scounts[q];
    }
    for (int q = 0; q < p; q++)   /* reused as fill positions, restored below */
        s->x.rdispls[q] = s->x.sdispls[q];
    for (size_t i = 0; i < k; i++)
        s->bucketed[s->x.rdispls[s->part_of[i]]++] = s->send[i];
    return RB_OK;
}

/* An owner receives every rank's pairs of its partition: with a wide
 * partition and many ranks, more than the int displacements can hold.
 * Only where that is possible do the ranks agree on the check. */
static int check_receive_total(rb_reducer *r, size_t total)
{
    zen_state *s = r->impl;
    if (!s->big_receive)
        return RB_OK;
    int local = total <= (size_t)INT_MAX
        ? RB_OK
        : rb_fail(RB_ERR_UNSUPPORTED, "zen: rank %d receives %zu pairs, over the MPI count "
                  "limit (INT_MAX)", r->rank, total);
    return rb_agree(r->comm, local);
}

/* The sparse reduce-scatter: pairs to their partition's owner, merge-summed
 * there; *red points at the u reduced pairs (index order). */
static int reduce_scatter(rb_reducer *r, rb_stats *st, rb_pair **red, size_t *u)
{
    zen_state *s = r->impl;
    int p = r->size;
    size_t total = 0;
    RB_TRY(rb_exchange_counts(r, st, &s->x, &total));
    RB_TRY(check_receive_total(r, total));
    RB_TRY(grow(&s->recv, &s->recv_cap, total, sizeof(rb_pair)));
    RB_TRY(grow(&s->tmp, &s->tmp_cap, total, sizeof(rb_pair)));
    RB_TRY(rb_alltoallv(r, st, s->bucketed, s->x.scounts, s->x.sdispls, MPI_UINT64_T, s->recv,
                        s->x.rcounts, s->x.rdispls));
    *u = rb_merge_sum_many(s->recv, s->x.offs, (size_t)p, s->tmp, red);
    return RB_OK;
}

/* 32-bit words of partition q's bitmap (whole uint64 words). */
static size_t bitmap_units(const zen_state *s, int q)
{
    return 2 * rb_bitmap_words((size_t)s->part_size[q]);
}

/* Does the bitmap form send fewer words than pairs, given every
 * partition's reduced count? */
static int use_bitmap(const rb_reducer *r, const int *ucount)
{
    const zen_state *s = r->impl;
    int mode = r->cfg.opts.zen_bitmap;
    if (mode != RB_ZEN_BITMAP_AUTO)
        return mode == RB_ZEN_BITMAP_ON;
    uint64_t bitmap = 0, pairs = 0;
    for (int q = 0; q < r->size; q++) {
        bitmap += bitmap_units(s, q) + (uint64_t)ucount[q];
        pairs += 2 * (uint64_t)ucount[q];
    }
    return bitmap < pairs;
}

/* This rank's partition result as a bitmap over its members followed by
 * the values: both in member order, a merge walk of two sorted lists. */
static void encode_bitmap(rb_reducer *r, const rb_pair *red, size_t u, uint32_t *out)
{
    zen_state *s = r->impl;
    const uint32_t *m = s->members + s->member_off[r->rank];
    size_t words = bitmap_units(s, r->rank) / 2;
    uint64_t *bm = (uint64_t *)(void *)out;   /* the buffer's start: aligned */
    memset(bm, 0, words * sizeof *bm);
    float *vals = (float *)(void *)(out + 2 * words);
    for (size_t i = 0, j = 0; i < u; i++) {
        while (m[j] != red[i].idx)
            j++;
        rb_bitmap_set(bm, j);
        vals[i] = red[i].val;
    }
}

/* grad[index] = value / p for every element of the gathered result.  A
 * block starts at any 32-bit word (the value counts before it may be odd):
 * the bitmap words are read with memcpy. */
static void decode_bitmaps(rb_reducer *r, float *grad, const uint32_t *in, float inv_p)
{
    zen_state *s = r->impl;
    for (int q = 0; q < r->size; q++) {
        const uint32_t *block = in + s->x.rdispls[q];
        size_t words = bitmap_units(s, q) / 2;
        const float *vals = (const float *)(const void *)(block + 2 * words);
        const uint32_t *m = s->members + s->member_off[q];
        size_t c = 0;
        for (size_t w = 0; w < words; w++) {
            uint64_t bits;
            memcpy(&bits, block + 2 * w, sizeof bits);
            for (; bits; bits &= bits - 1)
                grad[m[w * 64 + (size_t)__builtin_ctzll(bits)]] = vals[c++] * inv_p;
        }
    }
}

/* The allgather of every partition's result; decodes it into grad and
 * returns the union size in *all. */
static int gather_and_decode(rb_reducer *r, rb_stats *st, float *grad, const rb_pair *red,
                             size_t u, uint64_t *all)
{
    zen_state *s = r->impl;
    int p = r->size, mine_u = (int)u;
    RB_TRY(rb_allgather(r, st, &mine_u, 1, MPI_INT, s->x.rcounts));
    int bitmap = use_bitmap(r, s->x.rcounts);
    uint64_t total = 0, union_size = 0;
    for (int q = 0; q < p; q++) {
        uint64_t units = bitmap ? bitmap_units(s, q) + (uint64_t)s->x.rcounts[q]
                                : 2 * (uint64_t)s->x.rcounts[q];
        union_size += (uint64_t)s->x.rcounts[q];
        s->x.scounts[q] = (int)(units < (uint64_t)INT_MAX ? units : INT_MAX);
        s->x.rdispls[q] = (int)(total < (uint64_t)INT_MAX ? total : INT_MAX);
        total += units;
    }
    if (total > (uint64_t)INT_MAX)   /* every rank sees the same total */
        return rb_fail(RB_ERR_UNSUPPORTED, "zen: %llu words to gather exceed the MPI count "
                       "limit (INT_MAX)", (unsigned long long)total);
    int mine = s->x.scounts[r->rank];
    const uint32_t *sendbuf = (const uint32_t *)(const void *)red;
    if (bitmap) {
        RB_TRY(grow(&s->gather_send, &s->gather_send_cap, (size_t)mine, sizeof(uint32_t)));
        encode_bitmap(r, red, u, s->gather_send);
        sendbuf = s->gather_send;
    }
    RB_TRY(grow(&s->gather_recv, &s->gather_recv_cap, (size_t)total, sizeof(uint32_t)));
    RB_TRY(rb_allgatherv(r, st, sendbuf, mine, MPI_UINT32_T, s->gather_recv, s->x.scounts,
                         s->x.rdispls));

    rb_phase_start(r, st, RB_PHASE_DECODE);
    float inv_p = 1.0f / (float)p;
    if (bitmap)
        decode_bitmaps(r, grad, s->gather_recv, inv_p);
    else   /* pairs back to back: even word offsets, 8-byte aligned */
        rb_scatter_set_scaled(grad, 0, (const rb_pair *)(const void *)s->gather_recv,
                              (size_t)union_size, inv_p);
    *all = union_size;
    return RB_OK;
}

static int zen_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    zen_state *s = r->impl;
    size_t k = 0, u = 0;
    rb_pair *red = NULL;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    RB_TRY(rb_pack_nonzero_grow(grad, r->n, &s->send, &s->send_cap, &k));
    st->nnz_local = k;
    RB_TRY(bucket_by_partition(r, k));

    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(reduce_scatter(r, st, &red, &u));
    return gather_and_decode(r, st, grad, red, u, &st->nnz_result);
}

/* Cost model (docs/cost-model.md): pack and bucket (hash, count, place);
 * alltoall of the counts, alltoallv of the pairs, p-way merge; allgather
 * of the counts, allgatherv of G bytes: 8U as pairs, 8 W + 4U as bitmaps
 * (W = n/64 + p/2 words: each partition rounds up), auto the smaller;
 * decode (the bitmap walks n/8 bytes and looks each index up). */
static void zen_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in), p = in->ranks, k = in->nnz_mean, u = in->nnz_union;
    double leave = (p - 1) / p, pairs = 8 * u, bitmap = 8 * (ceil(n / 64) + p / 2) + 4 * u;
    int mode = in->opts.zen_bitmap;
    int use = mode == RB_ZEN_BITMAP_ON || (mode == RB_ZEN_BITMAP_AUTO && bitmap < pairs);
    rb_model_local(in, out, 4 * n + 8 * in->nnz_max + 28 * in->nnz_max);
    rb_model_alltoall(in, out, 4);
    rb_model_alltoallv(in, out, 8 * k * leave, 8 * in->nnz_max * leave);
    rb_model_local(in, out, 16 * k * rb_model_log2(in->ranks));
    rb_model_allgather(in, out, 4);
    rb_model_allgatherv(in, out, use ? bitmap : pairs);
    rb_model_local(in, out, use ? 4 * n / p + n / 8 + 12 * u : 12 * u);
}

static double pairs_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)o;
    return rb_state_bytes_pairs(n, k, p);
}

/* Options (rb_options_set keys; the defaults are rb_options_default's). */
static const rb_option_def opt_bitmap = {
    "zen_bitmap", RB_OPT_ENUM, "off|on|auto",
    "the result's index set travels as a bitmap over each hash partition (on), as indices "
    "(off), or whichever is smaller per call (auto)",
    RB_OPTION_FIELD(zen_bitmap), 0, 2, RB_ZEN_BITMAP_AUTO, 0};
static const rb_option_def *const zen_options[] = {&opt_bitmap, &rb_opt_seed, NULL};

const rb_reducer_ops rb_zen_ops = {
    .name = "zen",
    .options = zen_options,
    .description = "Zen: hash-partitioned sparse reduce-scatter (alltoallv), allgather of the "
                   "result with its index set as a bitmap over each partition",
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(zen_state),
    .state_bytes = pairs_state_bytes,
    .init = zen_init,
    .reduce = zen_reduce,
    .fini = zen_fini,
    .model = zen_model,
};
