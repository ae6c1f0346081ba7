/* mxfp4_avx2.c - AVX2 twins of iq4_scalar.c's MXFP4 dot (activations Q8_0): per block the exact
 * integer sum of its 32 products, then fma(isum, e8m0_half(e) * d_a, acc) in block order, so every
 * result is bit-identical to the scalar reference and to ggml's repacked mxfp4_8x8 gemv
 * (tests/unit/test_quants.c). The single-token matmul runs 8 rows side by side, as that gemv does:
 * one block's 8 integer sums come out of one hadd tree and one vector fma advances the 8 chains.
 * Compiled for AVX2 via a target pragma and only reached from the AVX2 / AVX-512 tables. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "quants.h"

#include "lut4_x86.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>

static float dot_mxfp4(int64_t n, const void *vw, const void *va) {
    const sn_block_mxfp4 *w = vw;
    const sn_block_q8_0 *a = va;
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_mxfp4_values);
    const __m256i one = _mm256_set1_epi16(1);
    const int64_t nb = n / 32;
    float s = 0;
    int64_t b = 0;
    /* 8 blocks' integer sums at a time, then the fma chain in block order */
    for (; b + 8 <= nb; b += 8) {
        __m256i l[8];
        for (int i = 0; i < 8; i++)
            l[i] = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut, w[b + i].qs),
                                                   _mm256_loadu_si256((const __m256i *)a[b + i].qs)), one);
        float f[8];
        _mm256_storeu_ps(f, _mm256_cvtepi32_ps(sn_lut4_rows8(l)));
        for (int i = 0; i < 8; i++) s = fmaf(f[i], sn_e8m0_half(w[b + i].e) * _cvtsh_ss(a[b + i].d), s);
    }
    for (; b < nb; b++) {
        const __m256i l = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut, w[b].qs),
                                                          _mm256_loadu_si256((const __m256i *)a[b].qs)), one);
        s = fmaf((float)sn_avx2_hsum_i32(l), sn_e8m0_half(w[b].e) * _cvtsh_ss(a[b].d), s);
    }
    return s;
}

/* y[r] = dot(row r, x) for R rows w_row apart: groups of 8 rows, lane r one row's fma chain */
static int mv_mxfp4(int64_t n, const void *vw, uint64_t w_row, int64_t R, const void *vx, float *y) {
    const sn_block_q8_0 *a = vx;
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_mxfp4_values);
    const __m256i one = _mm256_set1_epi16(1);
    const int64_t nb = n / 32;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        const sn_block_mxfp4 *w[8];
        for (int i = 0; i < 8; i++) w[i] = (const sn_block_mxfp4 *)((const char *)vw + (uint64_t)(r + i) * w_row);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            const __m256i av = _mm256_loadu_si256((const __m256i *)a[b].qs);
            __m256i l[8];
            uint8_t e[8];
            for (int i = 0; i < 8; i++) {
                __builtin_prefetch(w[i] + b + 16);
                l[i] = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut, w[i][b].qs), av), one);
                e[i] = w[i][b].e;
            }
            const __m256 scale = _mm256_mul_ps(sn_lut4_e8m0_half8(e), _mm256_set1_ps(_cvtsh_ss(a[b].d)));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sn_lut4_rows8(l)), scale, acc);
        }
        _mm256_storeu_ps(y + r, acc);
    }
    for (; r < R; r++) y[r] = dot_mxfp4(n, (const char *)vw + (uint64_t)r * w_row, vx);
    return 1;
}

void sn_kernels_mxfp4_avx2(sn_kernels *k) {
    k->type[SN_GGML_MXFP4].dot = k->type[SN_GGML_MXFP4].dot_mm = dot_mxfp4;
    k->type[SN_GGML_MXFP4].mv = mv_mxfp4;
}
#pragma GCC pop_options
#else
void sn_kernels_mxfp4_avx2(sn_kernels *k) { (void)k; }
#endif
