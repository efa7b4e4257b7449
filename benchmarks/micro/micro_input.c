/* rb_micro's input: the shapes of the sweep, the buffers, and the exact
 * average every result is checked against. */
#include "micro.h"

#include <stdlib.h>
#include <string.h>

#include "harness/simmeta.h"

/* One shape for --shape, else min..max bytes by factor.  Sizes that are
 * not a whole number of rows are rounded down to one. */
size_t micro_shapes(const micro_opts *o, uint64_t (*shapes)[2], size_t max)
{
    if (o->shape_rows || (o->shape_cols && !o->shape_rows)) {
        shapes[0][0] = o->shape_rows;
        shapes[0][1] = o->shape_cols;
        return 1;
    }
    size_t k = 0;
    for (double b = (double)o->min_bytes; b <= (double)o->max_bytes && k < max;
         b = b < 4.0 ? 4.0 : b * o->factor) {
        uint64_t count = (uint64_t)b / 4;
        shapes[k][0] = count / o->cols;
        shapes[k][1] = o->cols;
        if (k == 0 || shapes[k][0] != shapes[k - 1][0])
            k++;
        if (b == 0.0 && o->max_bytes == 0)
            break;
    }
    return k;
}

/* Under SMPI a validating run holds every rank's own input in one
 * process: on demand, only its non-zeros' pages are backed (the values
 * and the reducers' work unchanged; bench_sim_ondemand_inputs). */
static int want_ondemand(int check)
{
    return check && bench_sim_ondemand_inputs();
}

const char *micro_bufs_placement(const micro_bufs *b)
{
    if (b->shared)
        return "shared: one SMPI shared buffer for every rank's input and work "
               "(values garbage, not validated)";
    if (b->ondemand)
        return "private, on demand: each rank's own input, only the pages holding its "
               "non-zeros backed; work buffers private";
    return "private";
}

/* Without validation (--no-check) the truth buffers are not needed, and
 * under SimGrid SMPI large input/work buffers may be shared between the
 * simulated ranks (harness/simmeta.c): never when validating. */
int micro_bufs_alloc(micro_bufs *b, size_t n, int check, int rows, int rank)
{
    size_t cap = n ? n : 1;
    b->cap = cap;
    if (rows) {
        b->row_ids = malloc(cap * sizeof *b->row_ids);
        b->row_values = malloc(cap * sizeof *b->row_values);
        if (!b->row_ids || !b->row_values)
            return -1;
    }
    int shared_in = 0, shared_work = 0;
    b->ondemand = want_ondemand(check);
    b->input = b->ondemand ? bench_ondemand_alloc(cap * sizeof(float))
                           : bench_sim_alloc(cap * sizeof(float), !check, &shared_in);
    b->work = bench_sim_alloc(cap * sizeof(float), !check, &shared_work);
    b->shared = shared_in || shared_work;
    b->truth_borrowed = check && bench_sim_is_simulated() && rank != 0;
    if (!check || b->truth_borrowed)
        return b->input && b->work ? 0 : -1;
    b->truth = calloc(cap, sizeof(float));
    b->scratch = calloc(cap, sizeof(float));
    b->acc = calloc(cap, sizeof(double));
    b->union_mask = calloc(cap, 1);
    return b->input && b->work && b->truth && b->scratch && b->acc && b->union_mask ? 0 : -1;
}

void micro_bufs_free(micro_bufs *b)
{
    if (b->ondemand)
        bench_ondemand_free(b->input, b->cap * sizeof(float));
    else
        bench_sim_free(b->input, b->shared);
    bench_sim_free(b->work, b->shared);
    if (!b->truth_borrowed)
        free(b->truth), free(b->union_mask);
    free(b->scratch), free(b->acc);
    free(b->row_ids), free(b->row_values);
}

void micro_rows_of_input(micro_bufs *b, size_t n, size_t cols)
{
    size_t k = 0;
    for (size_t r = 0; r * cols < n; r++) {
        const float *row = b->input + r * cols;
        size_t c = 0;
        while (c < cols && row[c] == 0.0f)
            c++;
        if (c == cols)
            continue;
        b->row_ids[k] = (int64_t)r;
        memcpy(b->row_values + k * cols, row, cols * sizeof *row);
        k++;
    }
    b->rows = (rb_rows){k, cols, b->row_ids, b->row_values};
}

/* Double accumulation in rank order. */
static uint64_t truth_here(const bench_gradgen *g, micro_bufs *b, uint64_t *union_rows)
{
    size_t n = g->rows * g->cols;
    memset(b->acc, 0, n * sizeof *b->acc);
    memset(b->union_mask, 0, n);
    for (int r = 0; r < g->nranks; r++) {
        bench_gradgen_fill(g, r, b->scratch);
        for (size_t i = 0; i < n; i++) {
            b->acc[i] += b->scratch[i];
            b->union_mask[i] |= (b->scratch[i] != 0.0f);
        }
    }
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        b->truth[i] = (float)(b->acc[i] / g->nranks);
        k += b->union_mask[i];
    }
    *union_rows = 0;
    for (size_t r = 0; r < g->rows; r++) {
        const unsigned char *m = b->union_mask + r * g->cols;
        size_t c = 0;
        while (c < g->cols && !m[c])
            c++;
        *union_rows += c < g->cols;
    }
    return k;
}

uint64_t micro_truth(const bench_gradgen *g, micro_bufs *b, MPI_Comm comm, uint64_t *union_rows)
{
    *union_rows = 0;
    uint64_t k = b->truth_borrowed ? 0 : truth_here(g, b, union_rows);
    if (!bench_sim_is_simulated())
        return k;
    /* One SMPI process: rank 0's buffers are readable by every rank.  They
     * stay valid until rank 0 leaves the validation's allreduce, which it
     * cannot before every rank has compared against them. */
    uint64_t msg[4] = {k, (uint64_t)(uintptr_t)b->truth, (uint64_t)(uintptr_t)b->union_mask,
                       *union_rows};
    MPI_Bcast(msg, 4, MPI_UINT64_T, 0, comm);
    if (b->truth_borrowed) {
        b->truth = (float *)(uintptr_t)msg[1];
        b->union_mask = (unsigned char *)(uintptr_t)msg[2];
    }
    *union_rows = msg[3];
    return msg[0];
}
