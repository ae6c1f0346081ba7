/* iq4_avx2.c - AVX2 twins of iq4_scalar.c (IQ4_NL and IQ4_XS dots): the same exact integers and
 * the same float steps in the same order, so results are bit-identical to the scalar reference
 * (tests/unit/test_quants.c). The 16 levels are looked up with pshufb; signed levels times signed
 * activations go through maddubs and madd to 8 int32 lanes of 4 products each (lut4_x86.h).
 * Compiled for AVX2 via a target pragma and only reached from the AVX2 / AVX-512 tables (cpu.c
 * checked the CPU). */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "quants.h"

#include "lut4_x86.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define h2f(x) _cvtsh_ss(x)

static inline __attribute__((always_inline)) float iq4_nl_scale(const uint8_t *block, const sn_block_q8_0 *a) {
    uint16_t d;
    memcpy(&d, block, 2);
    return h2f(d) * h2f(a->d);
}

/* 8 blocks' integer sums at a time (exact, any order), then the fma chain in block order */
static float dot_iq4_nl(int64_t n, const void *vw, const void *va) {
    return sn_lut4_dot(n / 32, _mm_loadu_si128((const __m128i *)sn_iq4nl_values), vw, sizeof(sn_block_iq4_nl), 2, va,
                       iq4_nl_scale);
}

/* 4 rows x 4 tokens of IQ4_NL (kernels.h gemm4x4): per block, the 4 rows' exact integer sums for
 * one token come out of one hadd tree as a 4-lane vector, so each lane of acc[t] is one output's
 * fma chain in block order - dot's order, output for output. */
static void gemm4x4_iq4_nl(int64_t n, const void *vw, uint64_t w_row, const void *vx, uint64_t x_row, float *y,
                           int64_t ldy) {
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_iq4nl_values);
    const __m256i one = _mm256_set1_epi16(1);
    const sn_block_iq4_nl *w[4];
    const sn_block_q8_0 *x[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (const sn_block_iq4_nl *)((const char *)vw + (uint64_t)i * w_row);
        x[i] = (const sn_block_q8_0 *)((const char *)vx + (uint64_t)i * x_row);
    }
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (int64_t b = 0; b < n / 32; b++) {
        __m256i v[4], av[4];
        for (int r = 0; r < 4; r++) {
            v[r] = sn_lut4_levels32(lut, w[r][b].qs);
            av[r] = _mm256_sign_epi8(v[r], v[r]);
        }
        const __m128 dw = _mm_set_ps(h2f(w[3][b].d), h2f(w[2][b].d), h2f(w[1][b].d), h2f(w[0][b].d));
        for (int t = 0; t < 4; t++) {
            const __m256i a = _mm256_loadu_si256((const __m256i *)x[t][b].qs);
            __m256i l[4];
            for (int r = 0; r < 4; r++) l[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(av[r], _mm256_sign_epi8(a, v[r])), one);
            const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(l[0], l[1]), _mm256_hadd_epi32(l[2], l[3]));
            const __m128i is = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            acc[t] = _mm_fmadd_ps(_mm_cvtepi32_ps(is), _mm_mul_ps(dw, _mm_set1_ps(h2f(x[t][b].d))), acc[t]);
        }
    }
    for (int t = 0; t < 4; t++) _mm_storeu_ps(y + t * ldy, acc[t]);
}

static float dot_iq4_xs(int64_t n, const void *vw, const void *va) {
    const sn_block_iq4_xs *w = vw;
    const sn_block_q8_K *a = va;
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_iq4nl_values);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 256; b++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const __m256i p = sn_lut4_pairs(sn_lut4_levels32(lut, w[b].qs + 16 * j), _mm256_loadu_si256((const __m256i *)(a[b].qs + 32 * j)));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16((short)sn_iq4_xs_scale(&w[b], j))));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * a[b].d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return sn_avx2_hsum8(acc);
}

/* the batched order (iq4_scalar.c): one exact integer per block, fma chain over the blocks */
static float dot_iq4_xs_mm(int64_t n, const void *vw, const void *va) {
    const sn_block_iq4_xs *w = vw;
    const sn_block_q8_K *a = va;
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_iq4nl_values);
    float s = 0;
    for (int64_t b = 0; b < n / 256; b++) {
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 8; j++) {
            const __m256i p = sn_lut4_pairs(sn_lut4_levels32(lut, w[b].qs + 16 * j), _mm256_loadu_si256((const __m256i *)(a[b].qs + 32 * j)));
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, _mm256_set1_epi16((short)sn_iq4_xs_scale(&w[b], j))));
        }
        s = fmaf((float)sn_avx2_hsum_i32(sumi), h2f(w[b].d) * a[b].d, s);
    }
    return s;
}

void sn_kernels_iq4_avx2(sn_kernels *k) {
    k->type[SN_GGML_IQ4_NL].dot = k->type[SN_GGML_IQ4_NL].dot_mm = dot_iq4_nl;
    k->type[SN_GGML_IQ4_NL].gemm4x4 = gemm4x4_iq4_nl;
    k->type[SN_GGML_IQ4_XS].dot = dot_iq4_xs;
    k->type[SN_GGML_IQ4_XS].dot_mm = dot_iq4_xs_mm;
}
#pragma GCC pop_options
#else
void sn_kernels_iq4_avx2(sn_kernels *k) { sn_kernels_iq4_scalar(k); }
#endif
