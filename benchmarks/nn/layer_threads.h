/* The layers' thread pool (layer_threads.c): a layer splits its work into
 * parts, part 0 on the calling thread and the others on a pool started on
 * first use, while OpenBLAS runs one thread.  Used by layers.c only. */
#ifndef NN_LAYER_THREADS_H
#define NN_LAYER_THREADS_H

#include <stddef.h>

enum { MAX_PARTS = 64 };

typedef void (*part_fn)(void *ctx, int part, int parts);

/* fn(ctx, p, parts) for p < parts, part 0 on this thread; returns when
 * all are done.  Without the threads, all parts run here in turn. */
void nn_run_parts(int parts, part_fn fn, void *ctx);
/* Threads for this call: OpenBLAS's count (in *blas, to restore), at
 * most MAX_PARTS; OpenBLAS is set to one. */
int nn_begin_threads(int *blas);
void nn_end_threads(int blas);
/* Parts for work of `work` multiply-adds (or elements) over `items`
 * independent items: one part unless each would get at least `least`. */
int nn_parts_for(int threads, double work, double least, size_t items);
/* Parts whose scratch a layer keeps: the thread count when it is built. */
int nn_layer_parts(void);

/* Item range [start(p), start(p + 1)) of part p: as even as possible. */
static inline size_t part_start(size_t n, int parts, int p) { return n * (size_t)p / (size_t)parts; }

/* Floats per part of a scratch buffer that holds n per part: whole
 * 128-byte blocks, so that no two parts write the same cache line (a
 * shared line between the parts' pooling rows made 2 threads no faster
 * than 1). */
static inline size_t part_stride(size_t n) { return (n + 31) / 32 * 32; }

#endif
