/* The communication wrappers every reducer uses: each makes one MPI call
 * on the reducer's communicator and adds what it moved to the call's
 * stats (bytes sent and received by this rank, messages sent), with the
 * byte formulas of docs/wire-bytes.md.  They call nothing above the
 * library's base (base.c) and the cost model's arithmetic. */
#include "rb_internal.h"

#include <limits.h>

static int rb_type_bytes(MPI_Datatype t, int count, uint64_t *bytes)
{
    int size = 0;
    RB_MPI(MPI_Type_size(t, &size));
    *bytes = (uint64_t)size * (uint64_t)(count < 0 ? 0 : count);
    return RB_OK;
}

int rb_allreduce(rb_reducer *r, rb_stats *st, const void *sendbuf, void *buf,
                 int count, MPI_Datatype type, MPI_Op op)
{
    uint64_t b;
    RB_TRY(rb_type_bytes(type, count, &b));
    RB_MPI(MPI_Allreduce(sendbuf ? sendbuf : MPI_IN_PLACE, buf, count, type, op, r->comm));
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += 2 * (p - 1) * b / p;
    st->bytes_recv += 2 * (p - 1) * b / p;
    st->msgs_sent += 2 * (uint64_t)rb_model_log2(r->size);
    return RB_OK;
}

int rb_allreduce_floats(rb_reducer *r, rb_stats *st, float *buf, size_t n)
{
    const size_t chunk = (size_t)INT_MAX / 4;
    for (size_t off = 0; off < n; off += chunk) {
        size_t len = n - off < chunk ? n - off : chunk;
        RB_TRY(rb_allreduce(r, st, NULL, buf + off, (int)len, MPI_FLOAT, MPI_SUM));
    }
    return RB_OK;
}

int rb_allgather(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                 MPI_Datatype type, void *recvbuf)
{
    uint64_t b;
    RB_TRY(rb_type_bytes(type, count, &b));
    RB_MPI(MPI_Allgather(sendbuf, count, type, recvbuf, count, type, r->comm));
    uint64_t p = (uint64_t)r->size;
    st->bytes_sent += (p - 1) * b;
    st->bytes_recv += (p - 1) * b;
    st->msgs_sent += (uint64_t)rb_model_log2(r->size);
    return RB_OK;
}

int rb_allgatherv(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                  MPI_Datatype type, void *recvbuf, const int *counts,
                  const int *displs)
{
    uint64_t own, total = 0, b;
    RB_TRY(rb_type_bytes(type, count, &own));
    for (int i = 0; i < r->size; i++) {
        RB_TRY(rb_type_bytes(type, counts[i], &b));
        total += b;
    }
    RB_MPI(MPI_Allgatherv(sendbuf, count, type, recvbuf, counts, displs, type, r->comm));
    uint64_t p = (uint64_t)r->size;
    /* Ring model: each rank forwards p-1 blocks, on average (p-1)/p of the
     * total; it receives everything but its own block. */
    st->bytes_sent += (p - 1) * total / p;
    st->bytes_recv += total - own;
    st->msgs_sent += (uint64_t)rb_model_log2(r->size);
    return RB_OK;
}

int rb_sendrecv(rb_reducer *r, rb_stats *st, const void *sbuf, int scount,
                MPI_Datatype stype, int dest, void *rbuf, int rcount,
                MPI_Datatype rtype, int src, int tag, MPI_Status *status)
{
    MPI_Status local;
    if (!status)
        status = &local;
    RB_MPI(MPI_Sendrecv(sbuf, scount, stype, dest, tag, rbuf, rcount, rtype, src, tag,
                        r->comm, status));
    uint64_t b;
    if (dest != MPI_PROC_NULL) {
        RB_TRY(rb_type_bytes(stype, scount, &b));
        st->bytes_sent += b;
        st->msgs_sent++;
    }
    if (src != MPI_PROC_NULL) {
        int got = 0;
        RB_MPI(MPI_Get_count(status, rtype, &got));
        RB_TRY(rb_type_bytes(rtype, got, &b));
        st->bytes_recv += b;
    }
    return RB_OK;
}

/* Counted personalised exchange and broadcast (parallax, sparcml rsag). */
int rb_alltoall(rb_reducer *r, rb_stats *st, const void *sendbuf, int count,
                MPI_Datatype type, void *recvbuf)
{
    uint64_t b;
    RB_TRY(rb_type_bytes(type, count, &b));
    RB_MPI(MPI_Alltoall(sendbuf, count, type, recvbuf, count, type, r->comm));
    st->bytes_sent += (uint64_t)(r->size - 1) * b;
    st->bytes_recv += (uint64_t)(r->size - 1) * b;
    st->msgs_sent += (uint64_t)(r->size - 1);
    return RB_OK;
}

int rb_alltoallv(rb_reducer *r, rb_stats *st, const void *sendbuf,
                 const int *scounts, const int *sdispls, MPI_Datatype type,
                 void *recvbuf, const int *rcounts, const int *rdispls)
{
    RB_MPI(MPI_Alltoallv(sendbuf, scounts, sdispls, type, recvbuf, rcounts, rdispls,
                         type, r->comm));
    for (int i = 0; i < r->size; i++) {
        if (i == r->rank)
            continue;
        uint64_t bs, br;
        RB_TRY(rb_type_bytes(type, scounts[i], &bs));
        RB_TRY(rb_type_bytes(type, rcounts[i], &br));
        st->bytes_sent += bs;
        st->bytes_recv += br;
    }
    st->msgs_sent += (uint64_t)(r->size - 1);
    return RB_OK;
}

int rb_bcast(rb_reducer *r, rb_stats *st, void *buf, int count,
             MPI_Datatype type, int root)
{
    uint64_t b;
    RB_TRY(rb_type_bytes(type, count, &b));
    RB_MPI(MPI_Bcast(buf, count, type, root, r->comm));
    int pos = (r->rank - root + r->size) % r->size;   /* place in the chain */
    if (pos != r->size - 1) {
        st->bytes_sent += b;
        st->msgs_sent++;
    }
    if (pos != 0)
        st->bytes_recv += b;
    return RB_OK;
}

int rb_isend(rb_reducer *r, rb_stats *st, const void *buf, int count,
             MPI_Datatype type, int dest, int tag, MPI_Request *req)
{
    RB_MPI(MPI_Isend(buf, count, type, dest, tag, r->comm, req));
    uint64_t b;
    if (dest != MPI_PROC_NULL) {
        RB_TRY(rb_type_bytes(type, count, &b));
        st->bytes_sent += b;
        st->msgs_sent++;
    }
    return RB_OK;
}

int rb_irecv(rb_reducer *r, rb_stats *st, void *buf, int count,
             MPI_Datatype type, int src, int tag, MPI_Request *req)
{
    RB_MPI(MPI_Irecv(buf, count, type, src, tag, r->comm, req));
    uint64_t b;
    if (src != MPI_PROC_NULL) {
        RB_TRY(rb_type_bytes(type, count, &b));
        st->bytes_recv += b;
    }
    return RB_OK;
}
