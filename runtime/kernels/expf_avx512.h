/* expf_avx512.h - expf on 16 floats, bit-identical to the C library's expf (glibc 2.36's, which
 * llama.cpp's CPU backend calls for ggml_exp and ggml_sigmoid: ggml_vec_exp_f32 and
 * ggml_vec_sigmoid_f32 are scalar loops over expf).
 *
 * glibc's expf works in double: k = round(x * 32 / ln 2) (by adding 1.5 * 2^52 and reading the low
 * bits), r = x * 32 / ln 2 - k, 2^(k/32) = 2^(k >> 5) times a 32-entry table of 2^(i/32), and
 * 2^(r/32) by a cubic, rounded to float once at the end: every step is an IEEE double operation,
 * so the same operations on 8 double lanes give the same float. The table here is 2^(i/32) rounded
 * to double, less i << 47 (the exponent the integer k adds back); the constants are its published
 * ones. Checked against the library on every float with |x| < 88 (the library's fast path, 2.2e9
 * values, 0 differences; contracting its first multiply into the two adds or not changes none):
 * tests/unit/test_recurrent.c repeats it on a stride. Lanes outside the fast path (|x| >= 88, inf,
 * nan: overflow, underflow, errno) take the library's expf. Include after the file's target pragma
 * (AVX-512 F + DQ). */
#ifndef SN_EXPF_AVX512_H
#define SN_EXPF_AVX512_H
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

static const uint64_t SN_EXPF_TAB[32] __attribute__((aligned(64))) = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull};

/* 8 lanes of the fast path */
static inline __attribute__((always_inline)) __m256 sn_expf8_fast(__m256 x) {
    const __m512d inv = _mm512_set1_pd(0x1.71547652b82fep+0 * 32), shift = _mm512_set1_pd(0x1.8p+52);
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d kds = _mm512_fmadd_pd(xd, inv, shift); /* k + 1.5 * 2^52: k in the low bits */
    const __m512d r = _mm512_fmsub_pd(xd, inv, _mm512_sub_pd(kds, shift));
    const __m512i ki = _mm512_castpd_si512(kds), idx = _mm512_and_si512(ki, _mm512_set1_epi64(31));
    const __m512i lo = _mm512_permutex2var_epi64(_mm512_load_si512(SN_EXPF_TAB), idx, _mm512_load_si512(SN_EXPF_TAB + 8));
    const __m512i hi = _mm512_permutex2var_epi64(_mm512_load_si512(SN_EXPF_TAB + 16), idx, _mm512_load_si512(SN_EXPF_TAB + 24));
    const __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(idx, _mm512_set1_epi64(16)), lo, hi);
    const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_slli_epi64(ki, 47)));
    const __m512d z = _mm512_fmadd_pd(_mm512_set1_pd(0x1.c6af84b912394p-5 / 32 / 32 / 32), r,
                                      _mm512_set1_pd(0x1.ebfce50fac4f3p-3 / 32 / 32));
    __m512d y = _mm512_fmadd_pd(_mm512_set1_pd(0x1.62e42ff0c52d6p-1 / 32), r, _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, _mm512_mul_pd(r, r), y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

static inline __attribute__((always_inline)) __m512 sn_expf16(__m512 x) {
    const __m256 lo = sn_expf8_fast(_mm512_castps512_ps256(x)), hi = sn_expf8_fast(_mm512_extractf32x8_ps(x, 1));
    __m512 y = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
    /* the fast path holds where the top 12 bits of |x| are below 88.0f's */
    const __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
    const __mmask16 slow = _mm512_cmpge_epi32_mask(top, _mm512_set1_epi32(0x42b));
    if (slow) {
        float xs[16], ys[16];
        _mm512_storeu_ps(xs, x);
        _mm512_storeu_ps(ys, y);
        for (int i = 0; i < 16; i++)
            if (slow >> i & 1) ys[i] = expf(xs[i]);
        y = _mm512_loadu_ps(ys);
    }
    return y;
}
#endif
