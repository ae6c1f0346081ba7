/* simd_avx2.h - the horizontal sums every AVX2 (and AVX-512) kernel file needs, written once.
 *
 * A float horizontal sum fixes a summation order, and every table must round like ggml, so there
 * is one spelling of it here instead of one per file. The functions are static inline without a
 * target attribute: include this header after the file's `#pragma GCC target(...)` and they compile
 * for that file's instruction set (AVX2 files and the AVX-512 file alike). */
#ifndef SN_SIMD_AVX2_H
#define SN_SIMD_AVX2_H
#include <immintrin.h>

/* (a4+a0 + a6+a2) + (a5+a1 + a7+a3): ggml's hsum_float_8, the order of sn_k_hsum8 (kernels.h). */
static inline __attribute__((always_inline)) float sn_avx2_hsum8(__m256 v) {
    __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

/* The sum of 8 int32 lanes (exact, so the order is free). */
static inline __attribute__((always_inline)) int sn_avx2_hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}
#endif
