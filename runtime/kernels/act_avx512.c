/* act_avx512.c - the FFN's SwiGLU 16 lanes at a time, bit for bit what ggml_vec_swiglu_f32 computes
 * on an AVX-512 CPU (ggml_v_silu over ggml_v_expf for whole chunks of 16, libm expf for the tail).
 *
 * kernels.c's sn_v_expf emulates the same polynomial one lane at a time and is the reference; this
 * file runs it as vectors (~5 % of INT4 decode time was the scalar emulation; ~3 % of a 256-token
 * F16 prompt was its use in the flash-attention softmax, sn_exp_sub). Each vector step is
 * the same IEEE operation as the scalar step (fma, sub, mul, div, scalef = ldexpf for the integral
 * n here), so the results are identical; tests/unit/test_swiglu.c checks that on millions of
 * inputs including the overflow/underflow blend region. */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx512f,avx512dq"))) static inline __m512 v_expf(__m512 x) {
    const __m512 r = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), r);
    const __m512 n = _mm512_sub_ps(z, r);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
    const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192), _CMP_GT_OQ);
    const __m512 u = _mm512_mul_ps(b, b);
    const __m512 j = _mm512_fmadd_ps(
        _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
                        _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
        u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
    const __m512 res = _mm512_scalef_ps(j, n);
    if (!big) return res;
    /* out of range: 0 for n <= 0, +inf otherwise (as the scalar reference) */
    const __m512 alt = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ),
                                            _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
    return _mm512_mask_blend_ps(big, res, alt);
}

__attribute__((target("avx512f,avx512dq")))
void sn_swiglu_avx512(int64_t n, float *y, const float *gate, const float *up) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(gate + i);
        const __m512 e = v_expf(_mm512_sub_ps(_mm512_setzero_ps(), x));
        const __m512 silu = _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(silu, _mm512_loadu_ps(up + i)));
    }
    for (; i < n; i++) y[i] = (gate[i] / (1.0f + expf(-gate[i]))) * up[i];
}

/* the flash-attention softmax of one key tile (n % 16 == 0) */
__attribute__((target("avx512f,avx512dq")))
void sn_exp_sub_avx512(int64_t n, float *y, const float *x, float m) {
    const __m512 mv = _mm512_set1_ps(m);
    for (int64_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, v_expf(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv)));
}
/* sn_geglu_scalar 16 at a time: vcvtps2ph rounds to nearest even as sn_k_f2h, the table entries
 * are gathered as 32-bit words (the padding entry covers the last) and cut to their low halves */
__attribute__((target("avx512f,avx512dq")))
void sn_geglu_avx512(int64_t n, float *y, const float *gate, const float *up) {
    const int *tab = (const int *)(const void *)sn_gelu_f16_table();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(gate + i), u = _mm512_loadu_ps(up + i);
        const __m512i h = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m512 gel = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_i32gather_epi32(h, tab, 2)));
        __m512 r = _mm512_mul_ps(gel, u);
        r = _mm512_mask_mul_ps(r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(10.0f), _CMP_GE_OQ), x, u);
        r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-10.0f), _CMP_LE_OQ), r, _mm512_setzero_ps());
        _mm512_storeu_ps(y + i, r);
    }
    sn_geglu_scalar(n - i, y + i, gate + i, up + i);
}
#else
void sn_geglu_avx512(int64_t n, float *y, const float *gate, const float *up) { sn_geglu_scalar(n, y, gate, up); }
void sn_swiglu_avx512(int64_t n, float *y, const float *gate, const float *up) { sn_swiglu_scalar(16, n, y, gate, up); }
void sn_exp_sub_avx512(int64_t n, float *y, const float *x, float m) { sn_exp_sub_scalar(16, n, y, x, m); }
#endif
