/* What a reducer's timed call holds: only what its algorithm
 * needs to turn the gradient into the aggregate, no statistics pass.
 *
 *   - dense times communication and the scaling pass only: no encode
 *     phase (the non-zero count it used to take there is statistics), and
 *     it reports no input count;
 *   - none (no communication) times nothing and counts nothing;
 *   - omnireduce and gossip need no input count, agsparse no union count:
 *     they report none;
 *   - s2 counts its input only when the count sets the sketch width
 *     (sketch_width_mode=nnz);
 *   - every reducer: a phase it did not enter has time 0; a count it
 *     reports is the true one, a count it does not report is 0;
 *   - rb_count_nonzeros (the benchmarks' untimed count) is the true count
 *     and refuses NULL arguments.
 *
 * Usage: test_timed (under mpirun, any number of ranks).  Exit 0 when
 * every rank passed, 1 otherwise. */
#include "reducer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 300
#define COLS 4

static int rank, nranks, failures;

#define FAIL(...) do { failures++; fprintf(stderr, "rank %d: ", rank); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

/* Whole rows (s2 sketches rows), a rank-dependent third of them. */
static size_t fill(float *x)
{
    size_t nnz = 0;
    for (size_t row = 0; row < ROWS; row++)
        for (size_t c = 0; c < COLS; c++) {
            int on = (row + (size_t)rank) % 3 == 0;
            x[row * COLS + c] = on ? 1.0f + (float)c : 0.0f;
            nnz += on;
        }
    return nnz;
}

typedef struct expect {
    const char *name, *option;
    int phases;            /* exact phase mask, or -1: not checked */
    unsigned never;        /* RB_COUNTED_* bits that must stay clear */
    unsigned always;       /* RB_COUNTED_* bits that must be set */
} expect;

static const expect expectations[] = {
    {"dense", NULL, RB_PHASE_BIT(RB_PHASE_COMM) | RB_PHASE_BIT(RB_PHASE_DECODE),
     RB_COUNTED_NNZ_LOCAL, RB_COUNTED_NNZ_RESULT},
    {"none", NULL, 0, RB_COUNTED_NNZ_LOCAL | RB_COUNTED_NNZ_RESULT, 0},
    {"omnireduce", NULL, -1, RB_COUNTED_NNZ_LOCAL, RB_COUNTED_NNZ_RESULT},
    {"gossip", NULL, -1, RB_COUNTED_NNZ_LOCAL, 0},
    {"agsparse", NULL, -1, RB_COUNTED_NNZ_RESULT, RB_COUNTED_NNZ_LOCAL},
    {"s2", "sketch_width_mode=abs", -1, RB_COUNTED_NNZ_LOCAL, RB_COUNTED_NNZ_RESULT},
    {"s2", "sketch_width_mode=nnz", -1, 0, RB_COUNTED_NNZ_LOCAL | RB_COUNTED_NNZ_RESULT},
};

/* The checks that hold for every reducer. */
static void check_common(const char *label, const rb_stats *st, size_t own_nnz)
{
    for (int ph = 0; ph < RB_PHASE_COUNT_; ph++)
        if (!(st->phases & RB_PHASE_BIT(ph)) && st->t_phase[ph] != 0.0)
            FAIL("%s: phase %d not entered but timed %g s", label, ph, st->t_phase[ph]);
    if ((st->counted & RB_COUNTED_NNZ_LOCAL) ? st->nnz_local != own_nnz : st->nnz_local != 0)
        FAIL("%s: nnz_local %llu (counted %u), input has %zu", label,
             (unsigned long long)st->nnz_local, st->counted, own_nnz);
    if (!(st->counted & RB_COUNTED_NNZ_RESULT) && st->nnz_result != 0)
        FAIL("%s: nnz_result %llu not counted", label, (unsigned long long)st->nnz_result);
}

static void check_expected(const char *label, const expect *e, const rb_stats *st)
{
    if (e->phases >= 0 && st->phases != (unsigned)e->phases)
        FAIL("%s: timed phases 0x%x, expected 0x%x (encode 0x1, comm 0x2, decode 0x4)", label,
             st->phases, (unsigned)e->phases);
    if (st->counted & e->never)
        FAIL("%s: counted 0x%x: a statistics pass its algorithm does not need (0x%x)", label,
             st->counted, st->counted & e->never);
    if ((st->counted & e->always) != e->always)
        FAIL("%s: counted 0x%x, its algorithm computes 0x%x", label, st->counted, e->always);
}

static const expect *expectation_of(const char *name, const char *option)
{
    for (size_t i = 0; i < sizeof expectations / sizeof *expectations; i++) {
        const expect *e = &expectations[i];
        if (!strcmp(e->name, name) && (!e->option) == (!option) &&
            (!option || !strcmp(e->option, option)))
            return e;
    }
    return NULL;
}

/* Two calls (the first may set up state), each checked. */
static void run(const char *name, const char *option, float *x)
{
    char label[96];
    snprintf(label, sizeof label, "%s%s%s", name, option ? " " : "", option ? option : "");
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = name;
    cfg.rows = ROWS;
    cfg.cols = COLS;
    if (option && rb_options_set(&cfg.opts, option) != RB_OK) {
        FAIL("%s: %s", label, rb_last_error());
        return;
    }
    rb_reducer *r = NULL;
    if (rb_create(&cfg, &r) != RB_OK) {
        FAIL("%s: rb_create: %s", label, rb_last_error());
        return;
    }
    const expect *e = expectation_of(name, option);
    for (int call = 0; call < 2; call++) {
        size_t own = fill(x);
        uint64_t counted = 0;
        if (rb_count_nonzeros(r, x, &counted) != RB_OK || counted != own)
            FAIL("%s: rb_count_nonzeros %llu, input has %zu", label,
                 (unsigned long long)counted, own);
        rb_stats st;
        if (rb_reduce(r, x, &st) != RB_OK) {
            FAIL("%s: rb_reduce: %s", label, rb_last_error());
            break;
        }
        check_common(label, &st, own);
        if (e)
            check_expected(label, e, &st);
    }
    uint64_t dummy;
    if (rb_count_nonzeros(r, NULL, &dummy) != RB_ERR_ARG || rb_count_nonzeros(r, x, NULL) != RB_ERR_ARG)
        FAIL("%s: rb_count_nonzeros accepts a NULL argument", label);
    rb_destroy(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    float *x = malloc(ROWS * COLS * sizeof *x);
    if (!x) {
        fprintf(stderr, "test_timed: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < rb_reducer_count(); i++)
        run(rb_reducer_name_at(i), NULL, x);
    run("s2", "sketch_width_mode=abs", x);
    run("s2", "sketch_width_mode=nnz", x);
    free(x);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_timed: %d ranks, %s\n", nranks, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
