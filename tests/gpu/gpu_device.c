/* The device path of libreducer through its public API (multi-rank).
 *
 * Without a GPU (the CI machine): rb_device_describe, rb_device_select and
 * rb_create(device = CUDA) fail cleanly with RB_ERR_DEVICE on every rank
 * (no hang, no crash), and the transport option parses.
 * With a GPU: every registered reducer reduces a device buffer to the same
 * bits as the host path (transport=staged: the same host code after a copy),
 * and with transport=nccl (one GPU per rank) the reducers with an NCCL
 * path (all: dense, s2 with and without error feedback, omnireduce,
 * agsparse, parallax with one and p servers, sparcml recdbl and rsag,
 * gossip synchronous and asynchronous, none) match it within float
 * rounding; on one GPU that is one rank, so sparcml and gossip exchange
 * nothing: a multi-GPU node runs the exchanges.  Several ranks on one GPU: auto picks staged; nccl is refused
 * with a message. */
#include "reducer.h"
#include "rb_device.h"   /* NCCL transport helpers (sendrecv) */
#include "reducer_cuda.h" /* bitmap OR over ranks */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails, rank, nranks;
#define CHECK(cond, ...) do { if (!(cond)) { fails++; \
    fprintf(stderr, "[%d] FAIL %s:%d: ", rank, __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static int gpu_count(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

static void fill(float *x, size_t n, int r)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (i * 7 + (size_t)r) % 11 < 3 ? (float)((int)((i + (size_t)r) % 13) - 6) : 0.0f;
}

/* extra: more options ("k=v;k=v"), or NULL. */
static int create(const char *name, size_t rows, size_t cols, rb_device dev, const char *transport,
                  const char *extra, rb_reducer **out)
{
    rb_config c;
    rb_config_default(&c);
    c.name = name;
    c.rows = rows;
    c.cols = cols;
    c.device = dev;
    if (transport) {
        char opt[64];
        snprintf(opt, sizeof opt, "transport=%s", transport);
        if (rb_options_set(&c.opts, opt) != RB_OK)
            return -1;
    }
    /* extra: "key=value" options separated by ';' */
    for (const char *o = extra; o && *o;) {
        char kv[128];
        size_t len = strcspn(o, ";");
        snprintf(kv, sizeof kv, "%.*s", (int)len, o);
        if (rb_options_set(&c.opts, kv) != RB_OK)
            return -1;
        o += len + (o[len] == ';');
    }
    return rb_create(&c, out);
}

static void no_gpu_checks(void)
{
    char buf[256] = "x";
    int rc = rb_device_describe(buf, sizeof buf);
    CHECK(rc == RB_ERR_DEVICE, "describe without GPU: %s", rb_strerror(rc));
    CHECK(strstr(rb_last_error(), "GPU") != NULL, "describe: message '%s' should name the GPU", rb_last_error());
    int dev = 7;
    rc = rb_device_select(MPI_COMM_WORLD, &dev);
    CHECK(rc == RB_ERR_DEVICE, "select without GPU: %s", rb_strerror(rc));
    rb_reducer *r = NULL;
    rc = create("dense", 100, 1, RB_DEVICE_CUDA, NULL, NULL, &r);
    CHECK(rc == RB_ERR_DEVICE && r == NULL, "rb_create(cuda) without GPU: %s", rb_strerror(rc));
    if (rank == 0)
        printf("# no GPU: rb_create(device=cuda) fails with: %s\n", rb_last_error());
}

/* Two calls on fresh inputs (the second sees state the first left: the
 * s2 residual, the gossip step), device against host. */
static void compare_reducer(const char *name, size_t rows, size_t cols, const char *transport,
                            const char *extra)
{
    size_t n = rows * cols;
    float *h = malloc((n + 1) * 4), *d_back = malloc((n + 1) * 4), *dbuf = NULL;
    if (cudaMalloc((void **)&dbuf, (n + 1) * 4) != cudaSuccess) {
        CHECK(0, "cudaMalloc");
        exit(99);
    }
    const char *label = extra ? extra : "";
    rb_reducer *rh = NULL, *rd = NULL;
    int ch = create(name, rows, cols, RB_DEVICE_HOST, NULL, extra, &rh);
    int cd = create(name, rows, cols, RB_DEVICE_CUDA, transport, extra, &rd);
    CHECK(cd == ch, "%s %s %zux%zu %s: create host %s, device %s (%s)", name, label, rows, cols,
          transport, rb_strerror(ch), rb_strerror(cd), rb_last_error());
    for (int call = 0; call < 2 && ch == RB_OK && cd == RB_OK; call++) {
        fill(h, n, rank + 3 * call);
        cudaMemcpy(dbuf, h, n * 4, cudaMemcpyHostToDevice);
        rb_stats sh, sd;
        int a = rb_reduce(rh, h, &sh), b = rb_reduce(rd, dbuf, &sd);
        CHECK(a == b, "%s %s %s call %d: reduce host %s, device %s (%s)", name, label, transport,
              call, rb_strerror(a), rb_strerror(b), rb_last_error());
        cudaMemcpy(d_back, dbuf, n * 4, cudaMemcpyDeviceToHost);
        size_t bad = 0, first = n;
        /* Staged: the host code on a copy, so the same bits.  NCCL (also
         * what auto picks with a GPU per rank) sums in another order, and
         * its bitmap OR sends other bytes.  A NaN never compares close. */
        int exact_bits = !rb_device_direct(rd);
        for (size_t i = 0; i < n; i++) {
            int differ = exact_bits ? memcmp(&h[i], &d_back[i], 4) != 0
                                    : !(fabsf(h[i] - d_back[i]) <= 1e-6f * (1.0f + fabsf(h[i])));
            if (differ && bad++ == 0)
                first = i;
        }
        if (bad)
            fprintf(stderr, "[%d] %s %s call %d: first difference at %zu: host %g, device %g "
                    "(stats: host sent %llu partner %d, device sent %llu partner %d)\n", rank, name,
                    label, call, first, h[first], d_back[first], (unsigned long long)sh.bytes_sent,
                    sh.partner, (unsigned long long)sd.bytes_sent, sd.partner);
        CHECK(a != RB_OK || bad == 0, "%s %s %zux%zu transport=%s call %d: %zu of %zu differ from "
              "the host path", name, label, rows, cols, transport, call, bad, n);
        CHECK(a != RB_OK || sd.bytes_sent == sh.bytes_sent || !exact_bits,
              "%s: bytes sent host %llu, device %llu", name, (unsigned long long)sh.bytes_sent,
              (unsigned long long)sd.bytes_sent);
        CHECK(a != RB_OK || (sd.nnz_local == sh.nnz_local && sd.nnz_result == sh.nnz_result),
              "%s %s %s call %d: nnz local/result host %llu/%llu, device %llu/%llu", name, label,
              transport, call, (unsigned long long)sh.nnz_local, (unsigned long long)sh.nnz_result,
              (unsigned long long)sd.nnz_local, (unsigned long long)sd.nnz_result);
    }
    rb_destroy(rh);
    rb_destroy(rd);
    cudaFree(dbuf);
    free(h);
    free(d_back);
}

#ifdef HAVE_NCCL
/* Asynchronous gossip of gradients and parameters on device buffers over
 * NCCL: reduce, mix_params, then flush, against the host path. */
static void gossip_params_flush(void)
{
    enum { N = 5003 };
    static float hg[N], hp[N], back[N];
    float *dg = NULL, *dp = NULL;
    rb_reducer *rh = NULL, *rd = NULL;
    const char *opt = "gossip_mix=both;gossip_async=on";
    int ch = create("gossip", N, 1, RB_DEVICE_HOST, NULL, opt, &rh);
    int cd = create("gossip", N, 1, RB_DEVICE_CUDA, "nccl", opt, &rd);
    CHECK(ch == RB_OK && cd == RB_OK, "gossip mix=both: create %s / %s (%s)", rb_strerror(ch),
          rb_strerror(cd), rb_last_error());
    if (ch != RB_OK || cd != RB_OK || cudaMalloc((void **)&dg, sizeof hg) != cudaSuccess ||
        cudaMalloc((void **)&dp, sizeof hp) != cudaSuccess) {
        CHECK(0, "gossip mix=both: setup");
        goto out;
    }
    for (int step = 0; step < 3; step++) {
        fill(hg, N, rank + step);
        fill(hp, N, rank + 5 * step + 1);
        cudaMemcpy(dg, hg, sizeof hg, cudaMemcpyHostToDevice);
        cudaMemcpy(dp, hp, sizeof hp, cudaMemcpyHostToDevice);
        CHECK(rb_reduce(rh, hg, NULL) == RB_OK && rb_reduce(rd, dg, NULL) == RB_OK,
              "gossip step %d: reduce: %s", step, rb_last_error());
        CHECK(rb_mix_params(rh, hp, NULL) == RB_OK && rb_mix_params(rd, dp, NULL) == RB_OK,
              "gossip step %d: mix_params: %s", step, rb_last_error());
    }
    CHECK(rb_flush(rh, hg, hp, NULL) == RB_OK && rb_flush(rd, dg, dp, NULL) == RB_OK,
          "gossip flush: %s", rb_last_error());
    cudaMemcpy(back, dg, sizeof back, cudaMemcpyDeviceToHost);
    CHECK(memcmp(back, hg, sizeof hg) == 0, "gossip mix=both: gradients differ from the host path");
    cudaMemcpy(back, dp, sizeof back, cudaMemcpyDeviceToHost);
    CHECK(memcmp(back, hp, sizeof hp) == 0, "gossip mix=both: parameters differ from the host path");
out:
    rb_destroy(rh);
    rb_destroy(rd);
    cudaFree(dg);
    cudaFree(dp);
}

/* Bitmap OR over ranks by both NCCL methods, and a ring sendrecv, against
 * what each rank can compute on the host. */
static void nccl_helpers(void)
{
    rb_reducer *r = NULL;
    if (create("dense", 1, 1, RB_DEVICE_CUDA, "nccl", NULL, &r) != RB_OK) {
        CHECK(0, "create dense nccl: %s", rb_last_error());
        return;
    }
    enum { NBITS = 100003, WORDS = (NBITS + 63) / 64 };
    uint64_t *mine = calloc(WORDS, 8), *want = calloc(WORDS, 8), *got = calloc(WORDS, 8);
    for (int q = 0; q < nranks; q++)
        for (size_t i = 0; i < NBITS; i++)
            if (i % (size_t)(q + 2) == 0 || (i * 31 + (size_t)q) % 1009 == 0) {
                want[i / 64] |= 1ull << (i % 64);
                if (q == rank)
                    mine[i / 64] |= 1ull << (i % 64);
            }
    uint64_t *dbm = NULL;
    void *scratch = NULL;
    cudaMalloc((void **)&dbm, WORDS * 8);
    cudaMalloc(&scratch, NBITS + (size_t)nranks * WORDS * 8);
    for (int method = RB_BITMAP_MAX_BYTES; method <= RB_BITMAP_AUTO; method++) {
        rb_stats st;
        memset(&st, 0, sizeof st);
        cudaMemcpy(dbm, mine, WORDS * 8, cudaMemcpyHostToDevice);
        int rc = rb_device_bitmap_or(r, &st, dbm, NBITS, method, scratch);
        cudaMemcpy(got, dbm, WORDS * 8, cudaMemcpyDeviceToHost);
        CHECK(rc == RB_OK && memcmp(got, want, WORDS * 8) == 0, "bitmap OR method %d: %s", method,
              rc == RB_OK ? "wrong bits" : rb_last_error());
    }
    /* ring: send to rank+1, receive from rank-1 */
    enum { N = 4099 };
    float hs[N], hr[N], *ds = NULL, *dr = NULL;
    for (int i = 0; i < N; i++)
        hs[i] = (float)(rank * 10000 + i);
    cudaMalloc((void **)&ds, sizeof hs);
    cudaMalloc((void **)&dr, sizeof hr);
    cudaMemcpy(ds, hs, sizeof hs, cudaMemcpyHostToDevice);
    rb_stats st;
    memset(&st, 0, sizeof st);
    int from = (rank + nranks - 1) % nranks;
    int rc = rb_device_sendrecv(r, &st, ds, (rank + 1) % nranks, dr, from, N);
    cudaMemcpy(hr, dr, sizeof hr, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += hr[i] != (float)(from * 10000 + i);
    CHECK(rc == RB_OK && bad == 0 && st.bytes_sent == sizeof hs, "nccl sendrecv: %s, %d wrong",
          rb_strerror(rc), bad);
    cudaFree(ds); cudaFree(dr); cudaFree(dbm); cudaFree(scratch);
    free(mine); free(want); free(got);
    rb_destroy(r);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rb_options o;
    rb_options_default(&o);
    CHECK(rb_options_set(&o, "transport=staged") == RB_OK && o.transport == RB_TRANSPORT_STAGED,
          "transport=staged");
    CHECK(rb_options_set(&o, "transport=bogus") == RB_ERR_ARG, "transport=bogus must be refused");

    int ngpu = gpu_count(), all_gpu = 0;
    MPI_Allreduce(&ngpu, &all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_gpu) {
        no_gpu_checks();
    } else {
        int dev = -1;
        CHECK(rb_device_select(MPI_COMM_WORLD, &dev) == RB_OK, "select: %s", rb_last_error());
        char desc[512];
        CHECK(rb_device_describe(desc, sizeof desc) == RB_OK && strstr(desc, "pci"), "describe: %s", desc);
        if (rank == 0)
            printf("# %s\n", desc);
        static const size_t shapes[][2] = {{0, 1}, {1, 1}, {1000, 1}, {300, 33}};
        for (size_t i = 0; i < rb_reducer_count(); i++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                compare_reducer(rb_reducer_name_at(i), shapes[s][0], shapes[s][1], "staged", NULL);
                compare_reducer(rb_reducer_name_at(i), shapes[s][0], shapes[s][1], "auto", NULL);
            }
        compare_reducer("s2", 300, 33, "staged", "error_feedback=on");
#ifdef HAVE_NCCL
        /* NCCL needs one GPU per rank: the library decides it from the
         * GPUs' UUIDs, the same on every rank (counting the GPUs this
         * process sees would be wrong on several nodes, or with
         * --gpus-per-task). */
        rb_reducer *probe = NULL;
        int all_ok = create("dense", 1, 1, RB_DEVICE_CUDA, "auto", NULL, &probe) == RB_OK &&
                     rb_device_direct(probe);
        rb_destroy(probe);
        if (all_ok) {
            /* The reducers with an NCCL path (the others stage through
             * the host under transport=nccl too). */
            static const char *const direct[] = {"dense", "s2", "omnireduce", "agsparse",
                                                 "parallax", "sparcml", "gossip", "none"};
            for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    compare_reducer(direct[i], shapes[s][0], shapes[s][1], "nccl", NULL);
            compare_reducer("s2", 300, 33, "nccl", "error_feedback=on");
            compare_reducer("s2", 300, 33, "nccl", "sketch_rows=3");
            compare_reducer("s2", 300, 33, "nccl", "sketch_rows=5");
            compare_reducer("omnireduce", 1000, 1, "nccl", "block_size=7");
            compare_reducer("parallax", 1000, 1, "nccl", "parallax_servers=0");
            compare_reducer("sparcml", 1000, 1, "nccl", "sparcml_algo=rsag");
            compare_reducer("sparcml", 1000, 1, "nccl", "sparcml_algo=recdbl");
            compare_reducer("sparcml", 300, 33, "nccl", "sparcml_algo=recdbl;sparcml_switch=0.01");
            compare_reducer("gossip", 300, 33, "nccl", "gossip_async=on");
            compare_reducer("gossip", 300, 33, "nccl", "gossip_schedule=dissemination");
            gossip_params_flush();
            nccl_helpers();
        } else {
            rb_reducer *r = NULL;
            int rc = create("dense", 10, 1, RB_DEVICE_CUDA, "nccl", NULL, &r);
            CHECK(rc != RB_OK && strstr(rb_last_error(), "staged"), "nccl with shared GPU: %s (%s)",
                  rb_strerror(rc), rb_last_error());
            rb_destroy(r);
        }
#endif
    }
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failure(s) on %d rank(s)%s\n", argv[0], total, nranks,
               all_gpu ? "" : " (no GPU: device-path error handling only)");
    MPI_Finalize();
    return total ? 1 : 0;
}
