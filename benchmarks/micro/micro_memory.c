/* rb_micro's memory need, checked before anything is allocated:
 * the bytes a rank will hold at the largest size against what the node
 * has for it, or -M.  The reducers' state is bounded from their algorithms
 * (docs/wire-bytes.md's streams); the bound is what is printed. */
#include "micro.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/memneed.h"

double micro_memory_need(const micro_opts *o, int p, size_t max_n, const char *const *names,
                         size_t nred)
{
    double n = (double)max_n, k = fmin(n, n * o->density * 1.1 + 64.0);
    double bufs = 8.0 * n + (o->check ? 17.0 * n : 0.0) + (o->input_rows ? 12.0 * n : 0.0);
    double state = 0.0;
    for (size_t i = 0; i < nred; i++)
        state = fmax(state, bench_reducer_state_bytes(names[i], &o->ropts, n, k, p));
    double samples = 8.0 * o->iters * (p + 1.0);
    return bufs + state + samples;
}

