/* What the AVX-512 kernels of benchmarks/nn share (conv_avx512.c,
 * dense_avx512.c; internal to nn): the per-function target, the lanes of
 * a vector, leaving the vector unit clean for SSE2 code, and switch cases
 * that turn a runtime count into a constant for the register blocks. */
#ifndef NN_AVX512_H
#define NN_AVX512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define INLINE_AVX512 static inline __attribute__((always_inline, target("avx512f")))

/* Clear the upper halves of the vector registers before returning to code
 * built for SSE2: GCC left them dirty here, and on this Zen 5 that made
 * the (SSE2) max pooling after a convolution 4.5x slower. */
INLINE_AVX512 void leave_avx512(void) { _mm256_zeroupper(); }

/* Floats per AVX-512 vector. */
enum { LANES = 16 };

/* Switch cases that call CALL(n) with n a constant, for the register
 * blocks above: `switch (n) { CASES_2_TO_12(F) default: F(1); }`. */
#define CASE(n, CALL)                                                                             \
    case n: CALL(n); break;
#define CASES_2_TO_12(CALL)                                                                       \
    CASE(12, CALL) CASE(11, CALL) CASE(10, CALL) CASE(9, CALL) CASE(8, CALL) CASE(7, CALL)        \
    CASE(6, CALL) CASE(5, CALL) CASE(4, CALL) CASE(3, CALL) CASE(2, CALL)
#define CASES_13_TO_14(CALL) CASE(14, CALL) CASE(13, CALL)
#define CASES_15_TO_20(CALL)                                                                      \
    CASE(20, CALL) CASE(19, CALL) CASE(18, CALL) CASE(17, CALL) CASE(16, CALL) CASE(15, CALL)

#endif
#endif
