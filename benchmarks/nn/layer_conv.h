/* The convolution layer's passes (layer_conv.c), for layers.c's dispatch. */
#ifndef NN_LAYER_CONV_H
#define NN_LAYER_CONV_H

#include "layer.h"

void nn_conv_forward(layer *l, const float *x, float *y, int batch, int threads);
void nn_conv_backward(layer *l, const float *x, const float *dy, float *dx, int batch,
                          int threads);

#endif
