/* simd_avx512.h - the small AVX-512 helpers several kernel files need, written once (as
 * simd_avx2.h is for 8 lanes): the 16-lane float horizontal sum and the join of two 32-byte loads.
 * Each carries the target it needs, so a file may include it under its own `#pragma GCC target`
 * or use it from functions with target attributes (a superset, as inlining requires). */
#ifndef SN_SIMD_AVX512_H
#define SN_SIMD_AVX512_H
#include <immintrin.h>

/* _mm512_reduce_add_ps's order, spelled out (GCC's, and so ggml's and tinyBLAS's): the 256-bit
 * halves, the 128-bit halves, then (b0 + b2) + (b1 + b3). */
static inline __attribute__((always_inline, target("avx512f,avx512dq"))) float sn_avx512_hsum16(__m512 v) {
    const __m256 a = _mm256_add_ps(_mm512_extractf32x8_ps(v, 1), _mm512_castps512_ps256(v));
    const __m128 b = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}

/* two 32-byte rows side by side: p0's bytes in the low 256 bits, p1's in the high (the 16-row
 * kernels put two 8-row groups in one vector this way) */
static inline __attribute__((always_inline, target("avx512f"))) __m512i sn_avx512_join256(const void *p0, const void *p1) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)p0)),
                              _mm256_loadu_si256((const __m256i *)p1), 1);
}
#endif
