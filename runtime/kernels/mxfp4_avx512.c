/* mxfp4_avx512.c - the AVX-512 twins of iq4_scalar.c's MXFP4 dot and mxfp4_avx2.c's 8-row matmul:
 * two blocks' (or two rows') 64 levels per 512-bit vector, their products as exact 4-product int32
 * sums (maddubs on |level| with the activation carrying the level's sign, then madd), and the float
 * steps unchanged: fma(isum, e8m0_half(e) * d_a, acc) in block order per output, bit-identical to
 * the scalar reference (tests/unit/test_quants.c). Only reached from the AVX-512 table. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#include "quants.h"

#include "lut4_x86.h"
#include "simd_avx2.h"
#include "simd_avx512.h"

#include <immintrin.h>
#include <math.h>

/* the 32 levels of nibble bytes q0 in the low 256 bits, of q1 in the high (each in value order) */
static inline __m512i levels64(__m512i lut, const uint8_t *q0, const uint8_t *q1) {
    const __m256i q = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)q1), _mm_loadu_si128((const __m128i *)q0));
    const __m256i m4 = _mm256_set1_epi8(0xF);
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(q, m4)),
                                         _mm256_and_si256(_mm256_srli_epi16(q, 4), m4), 1);
    /* 128-bit lanes [low q0, low q1, high q0, high q1] -> [low q0, high q0, low q1, high q1] */
    return _mm512_shuffle_epi8(lut, _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0)));
}

/* 16 int32: sums of 4 products of signed levels v and signed bytes a (a in -127..127) */
static inline __m512i quads(__m512i v, __m512i a) {
    const __m512i as = _mm512_mask_sub_epi8(a, _mm512_movepi8_mask(v), _mm512_setzero_si512(), a);
    return _mm512_madd_epi16(_mm512_maddubs_epi16(_mm512_abs_epi8(v), as), _mm512_set1_epi16(1));
}

static inline void split(__m512i z, __m256i *lo, __m256i *hi) {
    *lo = _mm512_castsi512_si256(z);
    *hi = _mm512_extracti64x4_epi64(z, 1);
}

static float dot_mxfp4(int64_t n, const void *vw, const void *va) {
    const sn_block_mxfp4 *w = vw;
    const sn_block_q8_0 *a = va;
    const __m512i lut = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)sn_mxfp4_values));
    const int64_t nb = n / 32;
    float s = 0;
    int64_t b = 0;
    for (; b + 8 <= nb; b += 8) { /* 8 blocks' integer sums, then the fma chain in block order */
        __m256i l[8];
        for (int p = 0; p < 8; p += 2)
            split(quads(levels64(lut, w[b + p].qs, w[b + p + 1].qs), sn_avx512_join256(a[b + p].qs, a[b + p + 1].qs)),
                  &l[p], &l[p + 1]);
        float f[8];
        _mm256_storeu_ps(f, _mm256_cvtepi32_ps(sn_lut4_rows8(l)));
        for (int i = 0; i < 8; i++) s = fmaf(f[i], sn_e8m0_half(w[b + i].e) * _cvtsh_ss(a[b + i].d), s);
    }
    const __m128i lut16 = _mm512_castsi512_si128(lut);
    for (; b < nb; b++) {
        const __m256i l = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut16, w[b].qs),
                                                          _mm256_loadu_si256((const __m256i *)a[b].qs)),
                                            _mm256_set1_epi16(1));
        s = fmaf((float)sn_avx2_hsum_i32(l), sn_e8m0_half(w[b].e) * _cvtsh_ss(a[b].d), s);
    }
    return s;
}

/* y[r] = dot(row r, x), 8 rows at a time: two rows per vector, lane r of the fma one row's chain */
static int mv_mxfp4(int64_t n, const void *vw, uint64_t w_row, int64_t R, const void *vx, float *y) {
    const sn_block_q8_0 *a = vx;
    const __m512i lut = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)sn_mxfp4_values));
    const int64_t nb = n / 32;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        const sn_block_mxfp4 *w[8];
        for (int i = 0; i < 8; i++) w[i] = (const sn_block_mxfp4 *)((const char *)vw + (uint64_t)(r + i) * w_row);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            const __m512i av = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)a[b].qs));
            __m256i l[8];
            uint8_t e[8];
            for (int p = 0; p < 8; p += 2) {
                __builtin_prefetch(w[p] + b + 16);
                __builtin_prefetch(w[p + 1] + b + 16);
                split(quads(levels64(lut, w[p][b].qs, w[p + 1][b].qs), av), &l[p], &l[p + 1]);
                e[p] = w[p][b].e;
                e[p + 1] = w[p + 1][b].e;
            }
            const __m256 scale = _mm256_mul_ps(sn_lut4_e8m0_half8(e), _mm256_set1_ps(_cvtsh_ss(a[b].d)));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sn_lut4_rows8(l)), scale, acc);
        }
        _mm256_storeu_ps(y + r, acc);
    }
    for (; r < R; r++) y[r] = dot_mxfp4(n, (const char *)vw + (uint64_t)r * w_row, vx);
    return 1;
}

void sn_kernels_mxfp4_avx512(sn_kernels *k) {
    k->type[SN_GGML_MXFP4].dot = k->type[SN_GGML_MXFP4].dot_mm = dot_mxfp4;
    k->type[SN_GGML_MXFP4].mv = mv_mxfp4;
}
#pragma GCC pop_options
#else
void sn_kernels_mxfp4_avx512(sn_kernels *k) { (void)k; }
#endif
