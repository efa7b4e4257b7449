/* rb_train without GPU models (built without CUDA, cuDNN or cuBLAS): every
 * entry point fails with the reason, so -d cuda is refused clearly. */
#include "gpu_model.h"

#include <stdio.h>

static const char reason[] = "reducerbench was built without the GPU training path "
                             "(needs CUDA, cuDNN and cuBLAS; see ./configure --with-cuda "
                             "--with-cudnn)";

int nn_gpu_model_available(void) { return 0; }

int nn_gpu_model_create(const model *m, gpu_model **out, char *err, size_t errlen)
{
    (void)m;
    *out = NULL;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

void nn_gpu_model_free(gpu_model *g) { (void)g; }

int nn_gpu_model_forward(gpu_model *g, const void *x, const int32_t *y, int batch, double *loss,
                      int *correct, char *err, size_t errlen)
{
    (void)g, (void)x, (void)y, (void)batch, (void)loss, (void)correct;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

int nn_gpu_model_backward(gpu_model *g, int batch, char *err, size_t errlen)
{
    (void)g, (void)batch;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

int nn_gpu_model_update(gpu_model *g, double lr, double mu, double wd, char *err, size_t errlen)
{
    (void)g, (void)lr, (void)mu, (void)wd;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

float *nn_gpu_model_params(gpu_model *g) { (void)g; return NULL; }
float *nn_gpu_model_grads(gpu_model *g) { (void)g; return NULL; }
float *nn_gpu_model_eparams(gpu_model *g) { (void)g; return NULL; }
float *nn_gpu_model_egrads(gpu_model *g) { (void)g; return NULL; }
int nn_gpu_copy_to_host(float *host, const float *dev, size_t n) { (void)host, (void)dev, (void)n; return -1; }
int nn_gpu_copy_to_device(float *dev, const float *host, size_t n) { (void)dev, (void)host, (void)n; return -1; }
int nn_gpu_model_download(gpu_model *g, model *m) { (void)g, (void)m; return -1; }
int nn_gpu_sparsifier_create(size_t n, int error_feedback, gpu_sparsifier **out, char *err,
                          size_t errlen)
{
    (void)n, (void)error_feedback;
    *out = NULL;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

int nn_gpu_sparsify(gpu_sparsifier *s, float *dgrad, int topk, double value, char *err,
                 size_t errlen)
{
    (void)s, (void)dgrad, (void)topk, (void)value;
    snprintf(err, errlen, "%s", reason);
    return -1;
}

void nn_gpu_sparsifier_free(gpu_sparsifier *s) { (void)s; }
const char *nn_gpu_model_libraries(void) { return reason; }
