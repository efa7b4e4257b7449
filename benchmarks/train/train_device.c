/* Where rb_train's model trains: the host layers (OpenBLAS) or their GPU
 * mirror (-d cuda: cuDNN, cuBLAS), and setting the GPU up. */
#include "train.h"

#include <stdio.h>
#include <string.h>

#include "harness/bench_common.h"

_Noreturn void train_gpu_die(const char *what, const char *err)
{
    bench_fail(BENCH_NO_CODE, what, "%s", err);
    MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAILED);
    bench_exit(BENCH_EXIT_FAILED);   /* not reached: MPI_Abort does not return */
}

int train_setup_gpu(train_opts *o, model *m, trainer *t)
{
    char err[1024] = "";
    int dev = -1;
    int rc = rb_device_select(MPI_COMM_WORLD, &dev);
    if (rc != RB_OK)
        snprintf(err, sizeof err, "%s", rb_last_error());
    else if (nn_gpu_model_create(m, &t->g, err, sizeof err))
        rc = RB_ERR_DEVICE;
    if (bench_all_ok(MPI_COMM_WORLD, rc, "--device cuda", err) < 0)
        return -1;
    char desc[400] = "";
    rb_device_describe(desc, sizeof desc);
    snprintf(o->device_desc, sizeof o->device_desc, "GPU %d: %s; %s", dev, desc,
             nn_gpu_model_libraries());
    bench_printf0("device: rank 0 on %s; phases timed with host clocks after the GPU "
                  "synchronises (the batch upload counts as forward)\n", o->device_desc);
    return 0;
}

double train_forward(trainer *t, const void *x, const int32_t *y, int b, int *correct)
{
    if (!t->g)
        return nn_model_forward(t->m, x, y, b, correct);
    double loss = 0.0;
    char err[512];
    if (nn_gpu_model_forward(t->g, x, y, b, &loss, correct, err, sizeof err))
        train_gpu_die("GPU forward", err);
    return loss;
}

void train_backward(trainer *t, const void *x, const int32_t *y, int b)
{
    char err[512];
    if (t->g) {
        if (nn_gpu_model_backward(t->g, b, err, sizeof err))
            train_gpu_die("GPU backward", err);
        return;
    }
    if (t->m->egrads && !t->egrads_kept_zero)
        memset(t->m->egrads, 0, t->m->n_embed * sizeof(float));
    nn_model_backward(t->m, x, y, b);
}
