/* act_avx2.c - the FFN's SwiGLU 8 lanes at a time, bit for bit what ggml_vec_swiglu_f32 computes in
 * ggml's AVX2 (haswell) build: ggml_v_silu over the AVX2 flavour of ggml_v_expf for whole chunks
 * of 8, libm expf for the tail.
 *
 * kernels.c's sn_v_expf8 is the one-lane reference (sn_swiglu_scalar with tuning.lanes == 8);
 * each vector step here is the same IEEE operation as its scalar step (fma, sub, mul, integer adds
 * on the bit patterns, the same blend for |n| > 126 and > 192), so the results are identical.
 * tests/unit/test_swiglu.c checks this against the scalar reference and against libggml. */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2,fma"))) static inline __m256 v_expf8(__m256 x) {
    const __m256 r = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
    const __m256 n = _mm256_sub_ps(z, r);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 an = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 c = _mm256_cmp_ps(an, _mm256_set1_ps(126), _CMP_GT_OQ);
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 j = _mm256_fmadd_ps(
        _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                        _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
        u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    if (!_mm256_movemask_ps(c)) return _mm256_fmadd_ps(j, k, k);
    /* |n| > 126: 2^n as s1 * s2, s1 = 2^(+-127) chosen by the sign of n; beyond 192 s1 * s1 */
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32((int)0x82000000u));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 d = _mm256_cmp_ps(an, _mm256_set1_ps(192), _CMP_GT_OQ);
    const __m256 mid = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
    const __m256 big = _mm256_blendv_ps(mid, _mm256_mul_ps(s1, s1), d);
    return _mm256_blendv_ps(_mm256_fmadd_ps(j, k, k), big, c);
}

__attribute__((target("avx2,fma")))
void sn_swiglu_avx2(int64_t n, float *y, const float *gate, const float *up) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(gate + i);
        const __m256 e = v_expf8(_mm256_sub_ps(_mm256_setzero_ps(), x));
        const __m256 silu = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
    for (; i < n; i++) y[i] = (gate[i] / (1.0f + expf(-gate[i]))) * up[i];
}

/* the flash-attention softmax of one key tile, 8-lane flavour (n % 8 == 0) */
__attribute__((target("avx2,fma")))
void sn_exp_sub_avx2(int64_t n, float *y, const float *x, float m) {
    const __m256 mv = _mm256_set1_ps(m);
    for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(y + i, v_expf8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv)));
}
/* sn_geglu_scalar 8 at a time (F16C conversions, the table gathered as in act_avx512.c) */
__attribute__((target("avx2,fma,f16c")))
void sn_geglu_avx2(int64_t n, float *y, const float *gate, const float *up) {
    const int *tab = (const int *)(const void *)sn_gelu_f16_table();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(gate + i), u = _mm256_loadu_ps(up + i);
        const __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256i t = _mm256_and_si256(_mm256_i32gather_epi32(tab, h, 2), _mm256_set1_epi32(0xffff));
        /* 8 x 32 -> 8 x 16: pack within 128-bit lanes, then the two lanes' low quadwords together */
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(t, t), 0x08);
        const __m256 gel = _mm256_cvtph_ps(_mm256_castsi256_si128(p));
        const __m256 lo = _mm256_cmp_ps(x, _mm256_set1_ps(-10.0f), _CMP_LE_OQ);
        const __m256 hi = _mm256_cmp_ps(x, _mm256_set1_ps(10.0f), _CMP_GE_OQ);
        const __m256 r = _mm256_blendv_ps(_mm256_mul_ps(gel, u), _mm256_mul_ps(x, u), hi);
        _mm256_storeu_ps(y + i, _mm256_andnot_ps(lo, r));
    }
    sn_geglu_scalar(n - i, y + i, gate + i, up + i);
}
#else
void sn_geglu_avx2(int64_t n, float *y, const float *gate, const float *up) { sn_geglu_scalar(n, y, gate, up); }
void sn_swiglu_avx2(int64_t n, float *y, const float *gate, const float *up) { sn_swiglu_scalar(8, n, y, gate, up); }
void sn_exp_sub_avx2(int64_t n, float *y, const float *x, float m) { sn_exp_sub_scalar(8, n, y, x, m); }
#endif
