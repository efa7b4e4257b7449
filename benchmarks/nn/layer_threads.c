/* The layers' thread pool (layer_threads.h). */
#include "layer_threads.h"

#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>

/* With rb_train --threads N (OpenBLAS's thread count when a layer is
 * called) a layer splits its work into N parts: samples for convolution,
 * pooling and softmax; for dense layers weight rows (the output's columns
 * and the weight gradient) and input columns (the input gradient).  Part 0
 * runs on the calling thread, the others on a pool
 * of N - 1 threads started on first use, while OpenBLAS runs one thread
 * (set for the call, restored after): OpenBLAS's own threads would fight
 * the pool for the cores.  A layer whose work is too small for the split
 * to pay runs as one part; with one thread every layer does, and computes
 * exactly what the serial code computed. */
/* Spins (x86 `pause`: 24 ns on this Zen 5) before a waiting thread
 * sleeps: ~100 us, longer than the serial work between two parallel
 * layers. */
enum { SPIN_ROUNDS = 1 << 12 };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int workers;            /* threads started */
    atomic_uint job;        /* incremented for every job */
    atomic_int pending;     /* workers not done with the job */
    part_fn fn;
    void *ctx;
    int parts;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
            .start = PTHREAD_COND_INITIALIZER,
            .done = PTHREAD_COND_INITIALIZER};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct worker_arg {
    int part;
    unsigned seen;   /* the job counter when the worker started */
} worker_arg;

static worker_arg worker_args[MAX_PARTS];

/* Waits (spinning, then sleeping) for a job newer than `seen`. */
static unsigned next_job(unsigned seen)
{
    unsigned job;
    for (int i = 0; (job = atomic_load_explicit(&pool.job, memory_order_acquire)) == seen; i++) {
        if (i < SPIN_ROUNDS) {
            cpu_relax();
            continue;
        }
        pthread_mutex_lock(&pool.mu);
        while ((job = atomic_load_explicit(&pool.job, memory_order_acquire)) == seen)
            pthread_cond_wait(&pool.start, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
        break;
    }
    return job;
}

static void *worker(void *arg)
{
    const worker_arg *a = arg;
    for (unsigned seen = a->seen;;) {
        seen = next_job(seen);
        if (a->part < pool.parts)
            pool.fn(pool.ctx, a->part, pool.parts);
        if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
    return NULL;
}

/* At least n workers; fewer if threads cannot be started. */
static int ensure_workers(int n)
{
    while (pool.workers < n) {
        worker_arg *a = &worker_args[pool.workers + 1];
        a->part = pool.workers + 1;
        a->seen = atomic_load(&pool.job);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker, a);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break;
        pool.workers++;
    }
    return pool.workers;
}

/* fn(ctx, p, parts) for p < parts, part 0 on this thread; returns when
 * all are done.  Without the threads, all parts run here in turn. */
void nn_run_parts(int parts, part_fn fn, void *ctx)
{
    if (parts > 1 && ensure_workers(parts - 1) < parts - 1) {
        for (int p = 0; p < parts; p++)
            fn(ctx, p, parts);
        return;
    }
    if (parts <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    pool.fn = fn, pool.ctx = ctx, pool.parts = parts;
    atomic_store_explicit(&pool.pending, pool.workers, memory_order_relaxed);
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add_explicit(&pool.job, 1, memory_order_release);
    pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.mu);
    fn(ctx, 0, parts);
    for (int i = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) > 0; i++) {
        if (i < SPIN_ROUNDS) {
            cpu_relax();
            continue;
        }
        pthread_mutex_lock(&pool.mu);
        while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0)
            pthread_cond_wait(&pool.done, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
        break;
    }
}


/* Threads for this call: OpenBLAS's count (in *blas, to restore), at
 * most MAX_PARTS; OpenBLAS is set to one. */
int nn_begin_threads(int *blas)
{
    int t = *blas = openblas_get_num_threads();
    if (t > 1)
        openblas_set_num_threads(1);
    return t < 1 ? 1 : t > MAX_PARTS ? MAX_PARTS : t;
}

void nn_end_threads(int blas)
{
    if (blas > 1)
        openblas_set_num_threads(blas);
}

/* Parts for work of `work` multiply-adds (or elements) over `items`
 * independent items: one part unless each would get at least `least`. */
int nn_parts_for(int threads, double work, double least, size_t items)
{
    int parts = threads;
    while (parts > 1 && (work / parts < least || (size_t)parts > items))
        parts--;
    return parts;
}


/* Parts whose scratch a layer keeps: the thread count when it is built. */
int nn_layer_parts(void)
{
    int t = openblas_get_num_threads();
    return t < 1 ? 1 : t > MAX_PARTS ? MAX_PARTS : t;
}
