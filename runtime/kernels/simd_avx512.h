/* simd_avx512.h - the 16-lane float horizontal sum every AVX-512 kernel file needs, written once
 * (as simd_avx2.h is for 8 lanes). Include it after the file's `#pragma GCC target(...)`. */
#ifndef SN_SIMD_AVX512_H
#define SN_SIMD_AVX512_H
#include <immintrin.h>

/* _mm512_reduce_add_ps's order, spelled out (GCC's, and so ggml's and tinyBLAS's): the 256-bit
 * halves, the 128-bit halves, then (b0 + b2) + (b1 + b3). */
static inline __attribute__((always_inline)) float sn_avx512_hsum16(__m512 v) {
    const __m256 a = _mm256_add_ps(_mm512_extractf32x8_ps(v, 1), _mm512_castps512_ps256(v));
    const __m128 b = _mm_add_ps(_mm256_extractf128_ps(a, 1), _mm256_castps256_ps128(a));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
}
#endif
