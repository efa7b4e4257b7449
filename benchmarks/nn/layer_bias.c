/* The bias gradient of the dense and convolution layers. */
#include "layer.h"

#include <string.h>

/* db[c] = the sum over rows of dy[r * ld + c], c < cols.  Summed
 * ROW_BLOCK rows at a time as one flat block of ROW_BLOCK * cols floats
 * when the rows are contiguous and that fits the accumulator: a loop over
 * conv1's 6 columns did not vectorise (175 us per LeNet batch of 64, 25 us
 * this way). */
enum { ROW_BLOCK = 8, BLOCK_SUMS = 256 };

RB_VECTOR_CLONES void nn_bias_grad(float *db, const float *dy, size_t rows, size_t cols,
                                       size_t ld)
{
    float acc[BLOCK_SUMS] = {0};
    size_t block = ROW_BLOCK * cols, r = 0;
    if (block <= BLOCK_SUMS && ld == cols)
        for (; r + ROW_BLOCK <= rows; r += ROW_BLOCK)
            for (size_t i = 0; i < block; i++)
                acc[i] += dy[r * cols + i];
    memset(db, 0, cols * sizeof(float));
    for (size_t i = 0; i < (r ? block : 0); i++)
        db[i % cols] += acc[i];
    for (; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            db[c] += dy[r * ld + c];
}
