/* What the multi-rank reducer tests share (test_reducers, test_wire,
 * test_agreement, test_values): the rank globals and FAIL, the variants
 * (a reducer with up to two options), the deterministic inputs of
 * benchmarks/harness/gradgen.h with the skews the generator does not give,
 * their exact average in double, and the start and end of a test. */
#ifndef RB_REDUCER_CHECKS_H
#define RB_REDUCER_CHECKS_H

#include "harness/gradgen.h"
#include "reducer.h"

#include <stddef.h>

#define TOL 1e-5
#define MAX_VARIANTS 32

typedef struct variant {
    const char *name;
    const char *opts[2];
    char label[64];
} variant;

extern int rank, nranks, failures, reported;

#define FAIL(...) do { failures++; if (reported++ < 20) { \
        fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); } } while (0)

/* Inputs the generator's overlaps do not give: every non-zero on one rank
 * (the last), or every rank's non-zeros in a window of 1/16 of the rows
 * starting half-way (even index ranges put it all in one range). */
typedef enum { SKEW_NONE, SKEW_ONE_RANK, SKEW_WINDOW, SKEW_ODD_EMPTY } skew;

typedef struct bufs {
    float *own, *work, *scratch, *ordered;
    double *avg, *absum;
    int has_ordered;   /* ordered holds this input's rank-order sum */
} bufs;

void add_variant(variant *v, int *nv, const char *name, const char *o1, const char *o2);
/* v's options set on o; RB_OK or the first failure's code. */
int set_variant_options(const variant *v, rb_options *o);
int create(const variant *v, size_t rows, size_t cols, rb_reducer **r);
size_t fill_input(const bench_gradgen *g, skew kind, int r, float *x);
/* Exact average (double) and sum of |x_r| per element, from every rank's
 * input; ordered (if not NULL): agsparse's float sum, each rank's value
 * times 1/p added in rank order (its order is fixed: bit for bit). */
void reference(const bench_gradgen *g, skew kind, double *avg, double *absum, float *scratch,
               float *ordered);
int alloc_bufs(bufs *b, size_t n);
void free_bufs(bufs *b);
void describe(char *buf, size_t len, const bench_gradgen *g, skew kind);

/* MPI_Init and the rank globals. */
void checks_start(int *argc, char ***argv);
/* Every rank's failures summed, the summary line "NAME: p ranks[, what]: N
 * failure(s), T s" from rank 0, a leak check under LeakSanitizer, then
 * MPI_Finalize; the exit status (0: every rank passed). */
int checks_end(const char *name, const char *what, double t0);

#endif
