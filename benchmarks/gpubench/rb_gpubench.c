/* rb_gpubench: throughput of the libreducer CUDA kernels against the
 * device's measured copy bandwidth, and the NCCL transport (dense
 * allreduce, bitmap merge methods).  Run on one rank per GPU:
 *     mpirun -np 1 rb_gpubench [-n ELEMENTS] [-i/--iterations N]   (gpubench_options.c)
 * Timing: CUDA events around ITERS back-to-back launches on one stream
 * (kernels); MPI_Wtime around calls that synchronise (NCCL, rb_reduce).
 * rate = gradient bytes (n x 4) / time; copy = cudaMemcpy D2D of the same
 * buffer, reported as bytes copied / time (it reads and writes each byte). */
#include "gpubench.h"

#include "reducer_cuda.h"
#include "reducer_sparse.h"
#include "reducer.h"
#include "harness/bench_common.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CUDA error is this rank's own: it names it and ends the job (the other
 * ranks may be waiting in NCCL). */
#define CU(call) do { cudaError_t e_ = (cudaError_t)(call); if (e_ != cudaSuccess) { \
    bench_fail(RB_ERR_DEVICE, #call, "%s", cudaGetErrorString(e_)); \
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED); } } while (0)

static int iters = 20, rank;
static cudaEvent_t ev0, ev1;

static void tic(void) { CU(cudaEventRecord(ev0, 0)); }
static double toc(void)   /* seconds per iteration */
{
    float ms = 0;
    CU(cudaEventRecord(ev1, 0));
    CU(cudaEventSynchronize(ev1));
    CU(cudaEventElapsedTime(&ms, ev0, ev1));
    return ms / 1e3 / iters;
}

static void fill_host(float *x, size_t n, double density, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    uint64_t thresh = (uint64_t)(density * 18446744073709551615.0);
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        x[i] = (density >= 1.0 || s < thresh) ? (float)((s >> 40) & 0xff) / 255.0f - 0.5f + 1e-3f : 0.0f;
    }
}

static void row(const char *what, double density, int r, size_t n, double sec, double copy_gbs)
{
    double gbs = (double)n * 4 / sec / 1e9;
    if (rank == 0)
        printf("%-22s %8.3g %2d %12zu %10.3f %9.2f %7.1f%%\n", what, density, r, n, sec * 1e6, gbs,
               100.0 * gbs / copy_gbs);
}

/* Device buffers of n floats (and what the kernels need besides). */
typedef struct gpu_bufs {
    size_t n;
    float *hx;                   /* host copy of the gradient */
    float *dx, *dy, *dt;         /* gradient, output, sketch tables up to n counters */
    uint64_t *dbm;               /* bitmap of n bits */
    unsigned long long *dcount;
    void *scratch;               /* rbk_pack_nonzero's */
} gpu_bufs;

static void alloc_device(gpu_bufs *b)
{
    size_t n = b->n;
    CU(cudaMalloc((void **)&b->dx, n * 4));
    CU(cudaMalloc((void **)&b->dy, n * 4));
    CU(cudaMalloc((void **)&b->dt, n * 4));
    CU(cudaMalloc((void **)&b->dbm, (n / 64 + 1) * 8));
    CU(cudaMalloc((void **)&b->dcount, 8));
    CU(cudaMalloc(&b->scratch, rbk_pack_scratch_bytes(n)));
}

static void free_bufs(gpu_bufs *b)
{
    cudaFree(b->dx); cudaFree(b->dy); cudaFree(b->dt); cudaFree(b->dbm); cudaFree(b->dcount);
    cudaFree(b->scratch);
    free(b->hx);
}

/* The D2D copy rate every kernel is compared with (bytes copied / s), and
 * the table's header. */
static double copy_rate(gpu_bufs *b, const char *desc)
{
    size_t n = b->n;
    CU(cudaMemcpy(b->dy, b->dx, n * 4, cudaMemcpyDeviceToDevice));
    tic();
    for (int i = 0; i < iters; i++)
        CU(cudaMemcpyAsync(b->dy, b->dx, n * 4, cudaMemcpyDeviceToDevice, 0));
    double t_copy = toc(), copy_gbs = (double)n * 4 / t_copy / 1e9;
    if (rank == 0) {
        printf("# rb_gpubench: %s\n", desc);
        printf("# n = %zu floats (%.0f MiB), %d iterations, CUDA events per batch\n", n,
               (double)n * 4 / 1048576, iters);
        printf("# cudaMemcpy D2D: %.1f GB/s bytes copied (%.1f GB/s read+write)\n", copy_gbs, 2 * copy_gbs);
        printf("# rate = n*4 bytes of gradient / time; %% of the D2D copy rate\n");
        printf("%-22s %8s %2s %12s %10s %9s %8s\n", "#kernel", "density", "r", "n", "time_us", "GB/s", "of_copy");
    }
    return copy_gbs;
}

/* Count-sketch insert and decode with r = 1, 3, 5 rows; nnz: non-zeros of
 * the gradient, hbm_rows: its non-zero 1024-element rows. */
static void sketch_kernels(gpu_bufs *b, double density, size_t nnz, const uint64_t *hbm_rows,
                           double copy_gbs)
{
    size_t n = b->n;
    for (int r = 1; r <= 5; r += 2) {
        size_t cols = nnz / 4 > 1024 ? nnz / 4 : 1024;   /* authors' unit-test ratio 0.25 */
        if (cols * (size_t)r > n)
            cols = n / (size_t)r;
        rbk_sketch sk;
        memset(&sk, 0, sizeof sk);
        sk.rows = r;
        sk.cols = cols;
        for (int j = 0; j < r; j++)
            rb_cs_row_coeffs(42, j, &sk.co[j]);
        CU(cudaMemset(b->dt, 0, cols * (size_t)r * 4));
        tic();
        for (int i = 0; i < iters; i++)
            CU(rbk_cs_insert(&sk, b->dt, b->dx, n, 0, 0));
        row("cs_insert", density, r, n, toc(), copy_gbs);
        /* decode every element (worst case: the union is everything) */
        tic();
        for (int i = 0; i < iters; i++)
            CU(rbk_cs_decode(&sk, b->dt, b->dy, n, 1, NULL, 0, 0.5f, 0));
        row("cs_decode(all)", density, r, n, toc(), copy_gbs);
        /* decode of the union rows of a 1024-column embedding when a
         * `density` fraction of its rows is non-zero (the S2 case) */
        CU(cudaMemcpy(b->dbm, hbm_rows, (n / 1024 / 64 + 1) * 8, cudaMemcpyHostToDevice));
        tic();
        for (int i = 0; i < iters; i++)
            CU(rbk_cs_decode(&sk, b->dt, b->dy, n, 1024, b->dbm, 0, 0.5f, 0));
        row("cs_decode(rows1024)", density, r, n, toc(), copy_gbs);
    }
}

/* Every kernel on a gradient of this density (seed: its generator's). */
static void kernels_at(gpu_bufs *b, double density, uint64_t seed, double copy_gbs)
{
    size_t n = b->n;
    fill_host(b->hx, n, density, seed);
    CU(cudaMemcpy(b->dx, b->hx, n * 4, cudaMemcpyHostToDevice));
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++)
        nnz += b->hx[i] != 0.0f;
    uint64_t *hbm_rows = calloc(n / 1024 / 64 + 1, 8);
    for (size_t rr = 0; rr < n / 1024; rr++)
        if (b->hx[rr * 1024 + 7] != 0.0f || density >= 1.0)   /* a `density` fraction of rows */
            rb_bitmap_set(hbm_rows, rr);
    sketch_kernels(b, density, nnz, hbm_rows, copy_gbs);
    free(hbm_rows);
    tic();
    for (int i = 0; i < iters; i++)
        CU(rbk_count_nonzero(b->dx, n, b->dcount, 0));
    row("count_nonzero", density, 0, n, toc(), copy_gbs);
    if (density <= 0.1) {
        tic();
        for (int i = 0; i < iters; i++)
            CU(rbk_pack_nonzero(b->dx, n, 0, (rb_pair *)b->dt, b->dcount, b->scratch, 0));
        row("pack_nonzero", density, 0, n, toc(), copy_gbs);
    }
    tic();
    for (int i = 0; i < iters; i++)
        CU(rbk_bitmap_of_groups(b->dx, n, 1024, b->dbm, 0));
    row("row_bitmap(1024)", density, 0, n, toc(), copy_gbs);
    tic();
    for (int i = 0; i < iters; i++)
        CU(rbk_threshold(b->dx, NULL, n, 0.25f, 0));
    row("threshold", density, 0, n, toc(), copy_gbs);
}

/* The bitmap OR of m rows by both merge methods, through reducer r. */
static void bitmap_merge(rb_reducer *r, gpu_bufs *b, size_t m)
{
    rb_stats st;
    for (int method = 0; method < 2; method++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            rb_device_bitmap_or(r, &st, b->dbm, m, method, b->dt);
        double t = (MPI_Wtime() - t0) / iters;
        if (rank == 0)
            printf("# bitmap OR of %zu rows by %s: %.1f us, %llu bytes sent\n", m,
                   method == RB_BITMAP_MAX_BYTES ? "byte-per-row ncclMax" : "allgather+OR",
                   t * 1e6, (unsigned long long)st.bytes_sent);
    }
}

/* The dense reducer over NCCL on device buffers from 1 Ki floats up to n
 * in x4 steps, and the bitmap merge methods at the largest size. */
static void dense_nccl(gpu_bufs *b)
{
    size_t n = b->n;
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = "dense";
    cfg.device = RB_DEVICE_CUDA;
    rb_options_set(&cfg.opts, "transport=nccl");
    if (rank == 0)
        printf("#\n# dense reducer, device buffer, transport=nccl, %d rank(s); MPI_Wtime per call (synchronised)\n"
               "%-14s %12s %10s %9s\n", p, "#bytes", "elements", "time_us", "algbw_GB/s");
    for (size_t m = 1 << 10; m <= n; m <<= 2) {
        cfg.rows = m;
        cfg.cols = 1;
        rb_reducer *r = NULL;
        if (rb_create(&cfg, &r) != RB_OK) {
            if (rank == 0)
                printf("# dense nccl: %s\n", rb_last_error());
            break;
        }
        rb_stats st;
        rb_reduce(r, b->dx, &st);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            if (rb_reduce(r, b->dx, &st) != RB_OK && rank == 0)
                printf("# rb_reduce: %s\n", rb_last_error());
        double t = (MPI_Wtime() - t0) / iters;
        if (rank == 0)
            printf("%-14zu %12zu %10.1f %9.2f\n", m * 4, m, t * 1e6, (double)m * 4 / t / 1e9);
        int last = m == n || m * 4 > n;
        if (!last && m * 16 > n)   /* bitmap merge on the largest size only */
            bitmap_merge(r, b, m);
        rb_destroy(r);
        if (last)
            break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);   /* not bench_mpi_init: the allocator keeps its policy */
    bench_set_prog("rb_gpubench");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    gpubench_opts o;
    gpubench_parse_options(argc, argv, &o);
    iters = (int)o.iters;
    int rc = rb_device_select(MPI_COMM_WORLD, NULL);
    if (bench_all_ok(MPI_COMM_WORLD, rc, "device", rb_last_error()) < 0)
        bench_exit(BENCH_EXIT_FAILED);
    char desc[512] = "";
    rb_device_describe(desc, sizeof desc);
    CU(cudaEventCreate(&ev0));
    CU(cudaEventCreate(&ev1));
    gpu_bufs b = {.n = (size_t)o.n};
    b.hx = malloc(b.n * 4);
    char detail[96];
    snprintf(detail, sizeof detail, "no host memory for %zu floats", b.n);
    if (bench_all_ok(MPI_COMM_WORLD, b.hx ? RB_OK : BENCH_NO_CODE, "buffers", detail) < 0)
        bench_exit(BENCH_EXIT_FAILED);
    alloc_device(&b);
    double copy_gbs = copy_rate(&b, desc);
    static const double dens[] = {0.01, 0.1, 1.0};
    for (size_t di = 0; di < sizeof dens / sizeof dens[0]; di++)
        kernels_at(&b, dens[di], 1 + di, copy_gbs);
    dense_nccl(&b);
    free_bufs(&b);
    bench_exit(BENCH_EXIT_OK);
}
