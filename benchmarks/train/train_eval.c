/* rb_train's evaluation: the test split (images) or the validation split
 * (wordlm), every rank its shard, summed over ranks. */
#include "train.h"

#include <math.h>

eval_result train_evaluate(trainer *t, const dataset *te, int B, float *x, int32_t *y,
                           size_t *slots)
{
    double sums[3] = {0, 0, 0}, tot[3];   /* loss, correct, count */
    for (size_t at = 0; at < te->n; at += (size_t)B) {
        int b = te->n - at < (size_t)B ? (int)(te->n - at) : B, correct;
        for (int s = 0; s < b; s++)
            slots[s] = at + (size_t)s;
        train_make_batch(te, slots, b, x, y);
        sums[0] += train_forward(t, x, y, b, &correct);
        sums[1] += correct;
        sums[2] += b;
    }
    MPI_Allreduce(sums, tot, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    eval_result r;
    r.loss = tot[2] > 0 ? tot[0] / tot[2] : NAN;
    r.accuracy = tot[2] > 0 ? 100.0 * tot[1] / tot[2] : NAN;
    r.perplexity = exp(r.loss);
    return r;
}
