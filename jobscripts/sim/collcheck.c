/* collcheck: run every MPI collective whose algorithm SimGrid's selector
 * picks (allgather, allgatherv, allreduce, alltoall, alltoallv, barrier,
 * bcast, gather, reduce, reduce_scatter, scatter) at every message size
 * from 1 byte to MAX doubling, so that every cell of the selector's table
 * for this rank count runs, and check each result.  Built with smpicc and run
 * through rb-smpirun (the settings of every simulation):
 *   smpicc -O2 -o collcheck jobscripts/sim/collcheck.c
 *   jobscripts/sim/rb-smpirun knl-aries 96 ./collcheck [MAX [BUDGET [COLLS]]]
 * MAX: largest size in bytes (default 2 MiB: above every threshold of the
 * ompi selector).  BUDGET: bytes that all ranks together may hold in private
 * buffers (default 2 GiB); a larger case runs on SMPI_SHARED_MALLOC buffers,
 * where it must complete but its values cannot be checked, and one whose
 * shared buffers would pass 4 TiB of address space is skipped.  COLLS: a
 * comma list of the collectives to run (default: all).
 * Output: one line per collective (sizes checked, run unchecked, skipped);
 * exit 1 on a wrong value.  Reductions use MPI_INT and MPI_SUM (commutative,
 * as every reducer), the rest MPI_BYTE; v-collectives give a quarter of the
 * peers no data. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, np;
static long long wrong;

typedef struct {
    const char *name;
    long checked, unchecked, skipped;
} tally;

static unsigned char pat(int src, int dst, size_t k)
{
    return (unsigned char)(src * 29 + dst * 7 + (int)k);
}

/* Count of a v-collective block from src to dst around the mean `base`. */
static int vcount(int src, int dst, int base)
{
    return (src + dst) % 4 == 3 ? 0 : base + base / 3;
}

static void *buf_get(size_t bytes, int shared)
{
    if (bytes == 0)
        bytes = 1;
    return shared ? SMPI_SHARED_MALLOC(bytes) : calloc(bytes, 1);
}

static void buf_put(void *p, int shared)
{
    if (shared)
        SMPI_SHARED_FREE(p);
    else
        free(p);
}

static void expect(int ok, const char *coll, size_t size, size_t at)
{
    if (!ok && wrong++ < 10)
        fprintf(stderr, "collcheck: rank %d: %s at %zu B: wrong value at %zu\n", rank, coll, size, at);
}

/* Each case: per-rank bytes it needs, then run (checking when !shared). */
static size_t need_allgather(size_t b) { return b * (size_t)(np + 1); }
static void run_allgather(size_t b, int sh)
{
    unsigned char *s = buf_get(b, sh), *r = buf_get(b * np, sh);
    for (size_t k = 0; !sh && k < b; k++)
        s[k] = pat(rank, 0, k);
    MPI_Allgather(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, MPI_COMM_WORLD);
    for (int i = 0; !sh && i < np; i++)
        for (size_t k = 0; k < b; k++)
            expect(r[(size_t)i * b + k] == pat(i, 0, k), "allgather", b, (size_t)i * b + k);
    buf_put(s, sh);
    buf_put(r, sh);
}

static size_t need_allgatherv(size_t b) { return 2 * need_allgather(b); }
static void run_allgatherv(size_t b, int sh)
{
    int *cnt = malloc(sizeof(int) * np), *dis = malloc(sizeof(int) * np);
    size_t tot = 0;
    for (int i = 0; i < np; i++) {
        cnt[i] = vcount(i, 0, (int)b);
        dis[i] = (int)tot;
        tot += (size_t)cnt[i];
    }
    unsigned char *s = buf_get((size_t)cnt[rank], sh), *r = buf_get(tot, sh);
    for (int k = 0; !sh && k < cnt[rank]; k++)
        s[k] = pat(rank, 0, (size_t)k);
    MPI_Allgatherv(s, cnt[rank], MPI_BYTE, r, cnt, dis, MPI_BYTE, MPI_COMM_WORLD);
    for (int i = 0; !sh && i < np; i++)
        for (int k = 0; k < cnt[i]; k++)
            expect(r[dis[i] + k] == pat(i, 0, (size_t)k), "allgatherv", b, (size_t)(dis[i] + k));
    buf_put(s, sh);
    buf_put(r, sh);
    free(cnt);
    free(dis);
}

static size_t need_alltoall(size_t b) { return 2 * b * (size_t)np; }
static void run_alltoall(size_t b, int sh)
{
    unsigned char *s = buf_get(b * np, sh), *r = buf_get(b * np, sh);
    for (int j = 0; !sh && j < np; j++)
        for (size_t k = 0; k < b; k++)
            s[(size_t)j * b + k] = pat(rank, j, k);
    MPI_Alltoall(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, MPI_COMM_WORLD);
    for (int i = 0; !sh && i < np; i++)
        for (size_t k = 0; k < b; k++)
            expect(r[(size_t)i * b + k] == pat(i, rank, k), "alltoall", b, (size_t)i * b + k);
    buf_put(s, sh);
    buf_put(r, sh);
}

static size_t need_alltoallv(size_t b) { return 2 * need_alltoall(b); }
static void run_alltoallv(size_t b, int sh)
{
    int *sc = malloc(sizeof(int) * np), *sd = malloc(sizeof(int) * np);
    int *rc = malloc(sizeof(int) * np), *rd = malloc(sizeof(int) * np);
    size_t st = 0, rt = 0;
    for (int j = 0; j < np; j++) {
        sc[j] = vcount(rank, j, (int)b);
        sd[j] = (int)st;
        st += (size_t)sc[j];
        rc[j] = vcount(j, rank, (int)b);
        rd[j] = (int)rt;
        rt += (size_t)rc[j];
    }
    unsigned char *s = buf_get(st, sh), *r = buf_get(rt, sh);
    for (int j = 0; !sh && j < np; j++)
        for (int k = 0; k < sc[j]; k++)
            s[sd[j] + k] = pat(rank, j, (size_t)k);
    MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    for (int i = 0; !sh && i < np; i++)
        for (int k = 0; k < rc[i]; k++)
            expect(r[rd[i] + k] == pat(i, rank, (size_t)k), "alltoallv", b, (size_t)(rd[i] + k));
    buf_put(s, sh);
    buf_put(r, sh);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static size_t need_bcast(size_t b) { return b; }
static void run_bcast(size_t b, int sh)
{
    int root = np / 3;
    unsigned char *x = buf_get(b, sh);
    for (size_t k = 0; !sh && rank == root && k < b; k++)
        x[k] = pat(root, 1, k);
    MPI_Bcast(x, (int)b, MPI_BYTE, root, MPI_COMM_WORLD);
    for (size_t k = 0; !sh && k < b; k++)
        expect(x[k] == pat(root, 1, k), "bcast", b, k);
    buf_put(x, sh);
}

static size_t need_gather(size_t b) { return b * (size_t)(np + 1); }
static void run_gather(size_t b, int sh)
{
    int root = np / 3;
    unsigned char *s = buf_get(b, sh), *r = buf_get(b * np, sh);
    for (size_t k = 0; !sh && k < b; k++)
        s[k] = pat(rank, 2, k);
    MPI_Gather(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, root, MPI_COMM_WORLD);
    for (int i = 0; !sh && rank == root && i < np; i++)
        for (size_t k = 0; k < b; k++)
            expect(r[(size_t)i * b + k] == pat(i, 2, k), "gather", b, (size_t)i * b + k);
    buf_put(s, sh);
    buf_put(r, sh);
}

static size_t need_scatter(size_t b) { return need_gather(b); }
static void run_scatter(size_t b, int sh)
{
    int root = np / 3;
    unsigned char *s = buf_get(b * np, sh), *r = buf_get(b, sh);
    for (int j = 0; !sh && rank == root && j < np; j++)
        for (size_t k = 0; k < b; k++)
            s[(size_t)j * b + k] = pat(root, j, k);
    MPI_Scatter(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, root, MPI_COMM_WORLD);
    for (size_t k = 0; !sh && k < b; k++)
        expect(r[k] == pat(root, rank, k), "scatter", b, k);
    buf_put(s, sh);
    buf_put(r, sh);
}

/* Reductions on ints: rank r contributes r + k % 7 at position k. */
static int summed(size_t k) { return np * (np - 1) / 2 + np * (int)(k % 7); }
static int ints(size_t b) { return b < sizeof(int) ? 1 : (int)(b / sizeof(int)); }

static size_t need_allreduce(size_t b) { return 2 * (size_t)ints(b) * sizeof(int); }
static void run_allreduce(size_t b, int sh)
{
    int n = ints(b);
    int *s = buf_get((size_t)n * sizeof(int), sh), *r = buf_get((size_t)n * sizeof(int), sh);
    for (int k = 0; !sh && k < n; k++)
        s[k] = rank + k % 7;
    MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; !sh && k < n; k++)
        expect(r[k] == summed((size_t)k), "allreduce", b, (size_t)k);
    buf_put(s, sh);
    buf_put(r, sh);
}

static size_t need_reduce(size_t b) { return need_allreduce(b); }
static void run_reduce(size_t b, int sh)
{
    int n = ints(b), root = np / 3;
    int *s = buf_get((size_t)n * sizeof(int), sh), *r = buf_get((size_t)n * sizeof(int), sh);
    for (int k = 0; !sh && k < n; k++)
        s[k] = rank + k % 7;
    MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    for (int k = 0; !sh && rank == root && k < n; k++)
        expect(r[k] == summed((size_t)k), "reduce", b, (size_t)k);
    buf_put(s, sh);
    buf_put(r, sh);
}

/* b is the total reduced (the selector's total_dsize); rank i gets a share
 * around b/np, a quarter of the ranks nothing. */
static size_t need_reduce_scatter(size_t b) { return 2 * (size_t)ints(b) * sizeof(int); }
static void run_reduce_scatter(size_t b, int sh)
{
    int n = ints(b), *cnt = malloc(sizeof(int) * np), tot = 0, off = 0;
    for (int i = 0; i < np; i++) {
        cnt[i] = vcount(i, 0, n / np);
        tot += cnt[i];
    }
    cnt[0] += n > tot ? n - tot : 0; /* the sizes add up to n */
    tot = tot > n ? tot : n;
    for (int i = 0; i < rank; i++)
        off += cnt[i];
    int *s = buf_get((size_t)tot * sizeof(int), sh), *r = buf_get((size_t)cnt[rank] * sizeof(int), sh);
    for (int k = 0; !sh && k < tot; k++)
        s[k] = rank + k % 7;
    MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; !sh && k < cnt[rank]; k++)
        expect(r[k] == summed((size_t)(off + k)), "reduce_scatter", b, (size_t)k);
    buf_put(s, sh);
    buf_put(r, sh);
    free(cnt);
}

static size_t need_barrier(size_t b) { (void)b; return 0; }
static void run_barrier(size_t b, int sh) { (void)b; (void)sh; MPI_Barrier(MPI_COMM_WORLD); }

/* Whether `name` is an item of the comma list `list`. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)2 << 20;
    size_t budget = argc > 2 ? strtoull(argv[2], NULL, 0) : (size_t)2 << 30;
    const char *only = argc > 3 ? argv[3] : NULL;
    const size_t vspace = (size_t)4 << 40;
    static const struct {
        const char *name;
        size_t (*need)(size_t);
        void (*run)(size_t, int);
    } cases[] = {
        {"allgather", need_allgather, run_allgather},
        {"allgatherv", need_allgatherv, run_allgatherv},
        {"allreduce", need_allreduce, run_allreduce},
        {"alltoall", need_alltoall, run_alltoall},
        {"alltoallv", need_alltoallv, run_alltoallv},
        {"barrier", need_barrier, run_barrier},
        {"bcast", need_bcast, run_bcast},
        {"gather", need_gather, run_gather},
        {"reduce", need_reduce, run_reduce},
        {"reduce_scatter", need_reduce_scatter, run_reduce_scatter},
        {"scatter", need_scatter, run_scatter},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (only && !listed(only, cases[c].name))
            continue;
        tally t = {cases[c].name, 0, 0, 0};
        long long before = wrong;
        double t0 = MPI_Wtime();
        for (size_t b = 1; b <= max; b *= 2) {
            size_t all = cases[c].need(b) * (size_t)np;
            if (all > vspace || cases[c].need(b) > (size_t)INT32_MAX) {
                t.skipped++;
                continue;
            }
            int shared = all > budget;
            cases[c].run(b, shared);
            if (shared)
                t.unchecked++;
            else
                t.checked++;
            if (cases[c].need == need_barrier)
                break;
        }
        long long mine = wrong - before, bad = 0;
        MPI_Allreduce(&mine, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-15s %2ld sizes checked, %2ld run unchecked (shared), %2ld skipped, %lld wrong, "
                   "%.6f s simulated\n", t.name, t.checked, t.unchecked, t.skipped, bad,
                   MPI_Wtime() - t0);
        fflush(stdout);
    }
    long long bad = 0;
    MPI_Allreduce(&wrong, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad ? 1 : 0;
}
