/* example: a reducer that lives in the test tree, to prove that adding a
 * reducer takes its file and one registry line (tests/lib/add_reducer.sh
 * copies it to src/reducer_example.c and adds RB_REDUCER(example) to
 * src/reducers.def, nothing else).  Exact: it copies the gradient through
 * example_copies scratch buffers, allreduces the last one into the
 * gradient and divides by p.  Its option has no field in rb_options; its
 * scratch is what the harness's memory check must count. */
#include "rb_internal.h"
#include "reducer_sparse.h"

#include <stdlib.h>
#include <string.h>

static const rb_option_def opt_copies = {
    "example_copies", RB_OPT_INT, NULL,
    "scratch copies of the gradient it holds (the example reducer's memory)",
    RB_OPTION_EXT, 1, 64, 1, 0};
static const rb_option_def *const example_options[] = {&opt_copies, &rb_opt_seed, NULL};

typedef struct example_state {
    int copies;
    float **scratch;
} example_state;

static int example_init(rb_reducer *r)
{
    example_state *s = r->impl;
    s->copies = (int)rb_option_value(&r->cfg.opts, &opt_copies);
    if (!(s->scratch = calloc((size_t)s->copies, sizeof *s->scratch)))
        return rb_fail(RB_ERR_NOMEM, "example: no memory");
    for (int i = 0; i < s->copies; i++)
        if (!(s->scratch[i] = malloc((r->n ? r->n : 1) * sizeof(float))))
            return rb_fail(RB_ERR_NOMEM, "example: no memory for %d copies", s->copies);
    return RB_OK;
}

static void example_fini(rb_reducer *r)
{
    example_state *s = r->impl;
    for (int i = 0; s->scratch && i < s->copies; i++)
        free(s->scratch[i]);
    free(s->scratch);
}

static int example_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    example_state *s = r->impl;
    rb_phase_start(r, st, RB_PHASE_ENCODE);
    const float *from = grad;
    for (int i = 0; i < s->copies; i++) {
        memcpy(s->scratch[i], from, r->n * sizeof(float));
        from = s->scratch[i];
    }
    rb_phase_start(r, st, RB_PHASE_COMM);
    RB_TRY(rb_allreduce(r, st, from, grad, (int)r->n, MPI_FLOAT, MPI_SUM));
    rb_phase_start(r, st, RB_PHASE_DECODE);
    rb_scale(grad, r->n, 1.0f / (float)r->size);
    st->nnz_result = r->n;
    return RB_OK;
}

static double example_state_bytes(const rb_options *o, double n, double k, int p)
{
    (void)k, (void)p;
    return rb_option_value(o, &opt_copies) * n * sizeof(float);
}

/* Cost model: the copies, an allreduce of 4n bytes, the scale. */
static void example_model(const rb_model_input *in, rb_model_result *out)
{
    double n = rb_model_elements(in);
    rb_model_local(in, out, 8 * n * rb_option_value(&in->opts, &opt_copies));
    rb_model_allreduce(in, out, 4 * n);
    rb_model_local(in, out, 8 * n);
}

const rb_reducer_ops rb_example_ops = {
    .name = "example",
    .description = "the test tree's example: allreduce through scratch copies",
    .options = example_options,
    .traits = RB_TRAIT_EXACT,
    .state_size = sizeof(example_state),
    .init = example_init,
    .reduce = example_reduce,
    .fini = example_fini,
    .state_bytes = example_state_bytes,
    .model = example_model,
};
