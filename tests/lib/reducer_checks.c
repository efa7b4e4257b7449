/* What the multi-rank reducer tests share: reducer_checks.h. */
#include "reducer_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rank, nranks, failures, reported;

void add_variant(variant *v, int *nv, const char *name, const char *o1, const char *o2)
{
    variant *x = &v[(*nv)++];
    x->name = name;
    x->opts[0] = o1;
    x->opts[1] = o2;
    snprintf(x->label, sizeof x->label, "%s%s%s%s%s", name, o1 ? " " : "", o1 ? o1 : "",
             o2 ? " " : "", o2 ? o2 : "");
}

/* v's options set on o; RB_OK or the first failure's code. */
int set_variant_options(const variant *v, rb_options *o)
{
    for (int i = 0; i < 2; i++) {
        int rc = v->opts[i] ? rb_options_set(o, v->opts[i]) : RB_OK;
        if (rc != RB_OK)
            return rc;
    }
    return RB_OK;
}

int create(const variant *v, size_t rows, size_t cols, rb_reducer **r)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = v->name;
    cfg.rows = rows;
    cfg.cols = cols;
    if (set_variant_options(v, &cfg.opts) != RB_OK)
        return -1;
    return rb_create(&cfg, r);
}

static const char *const skew_names[] = {"", " on one rank", " in a window",
                                         ", odd ranks empty"};

size_t fill_input(const bench_gradgen *g, skew kind, int r, float *x)
{
    size_t n = g->rows * g->cols;
    if (kind == SKEW_NONE)
        return bench_gradgen_fill(g, r, x);
    memset(x, 0, n * sizeof *x);
    if (kind == SKEW_ONE_RANK)
        return r == g->nranks - 1 ? bench_gradgen_fill(g, r, x) : 0;
    if (kind == SKEW_ODD_EMPTY)
        return r % 2 ? 0 : bench_gradgen_fill(g, r, x);
    bench_gradgen w = *g;
    w.rows = g->rows / 16 ? g->rows / 16 : g->rows;
    return bench_gradgen_fill(&w, r, x + g->rows / 2 * g->cols);
}

/* Exact average (double) and sum of |x_r| per element, from every rank's
 * input; ordered (if not NULL): agsparse's float sum, each rank's value
 * times 1/p added in rank order (its order is fixed: bit for bit). */
void reference(const bench_gradgen *g, skew kind, double *avg, double *absum, float *scratch,
                      float *ordered)
{
    size_t n = g->rows * g->cols;
    const float inv_p = 1.0f / (float)g->nranks;
    memset(avg, 0, n * sizeof *avg);
    memset(absum, 0, n * sizeof *absum);
    if (ordered)
        memset(ordered, 0, n * sizeof *ordered);
    for (int r = 0; r < g->nranks; r++) {
        fill_input(g, kind, r, scratch);
        for (size_t i = 0; i < n; i++) {
            avg[i] += scratch[i];
            absum[i] += fabs(scratch[i]);
            if (ordered && scratch[i] != 0.0f)
                ordered[i] += scratch[i] * inv_p;
        }
    }
    for (size_t i = 0; i < n; i++)
        avg[i] /= g->nranks;
}


int alloc_bufs(bufs *b, size_t n)
{
    size_t m = n ? n : 1;
    b->own = malloc(m * sizeof(float));
    b->work = malloc(m * sizeof(float));
    b->scratch = malloc(m * sizeof(float));
    b->ordered = malloc(m * sizeof(float));
    b->avg = malloc(m * sizeof(double));
    b->absum = malloc(m * sizeof(double));
    b->has_ordered = 0;
    return b->own && b->work && b->scratch && b->ordered && b->avg && b->absum ? 0 : -1;
}

void free_bufs(bufs *b)
{
    free(b->own);
    free(b->work);
    free(b->scratch);
    free(b->ordered);
    free(b->avg);
    free(b->absum);
}

void describe(char *buf, size_t len, const bench_gradgen *g, skew kind)
{
    snprintf(buf, len, "%zux%zu density %g layout %s overlap %s%s", g->rows, g->cols, g->density,
             bench_layout_name(g->layout), bench_overlap_name(g->overlap), skew_names[kind]);
}

/* Under LeakSanitizer, check for leaks before MPI_Finalize: Open MPI
 * unloads its components at finalize, and leaks reported from unloaded
 * modules can be neither symbolised nor suppressed (tests/lsan.supp). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

void checks_start(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
}

int checks_end(const char *name, const char *what, double t0)
{
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d ranks%s%s: %d failure(s), %.1f s\n", name, nranks, what[0] ? ", " : "",
               what, total, MPI_Wtime() - t0);
    if (__lsan_do_leak_check)
        __lsan_do_leak_check();
    MPI_Finalize();
    return total ? 1 : 0;
}
