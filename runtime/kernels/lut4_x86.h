/* lut4_x86.h - the pieces the AVX2 and AVX-512 kernels of the 4-bit lookup-table types (IQ4_NL,
 * IQ4_XS, MXFP4) share, written once. Static inline without a target attribute: include this
 * header after the file's `#pragma GCC target(...)` (AVX2 at least). Every integer here is exact, so
 * only the float steps of the callers fix a result's bits. */
#ifndef SN_LUT4_X86_H
#define SN_LUT4_X86_H
#include "ggml_types.h"
#include "quants.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

/* 32 signed levels of 16 nibble bytes through the 16-entry table: bytes 0..15 from the low
 * nibbles, 16..31 from the high (the blocks' value order) */
static inline __attribute__((always_inline)) __m256i sn_lut4_levels32(__m128i lut, const uint8_t *qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *)qs), m4 = _mm_set1_epi8(0xF);
    return _mm256_set_m128i(_mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(q, 4), m4)),
                            _mm_shuffle_epi8(lut, _mm_and_si128(q, m4)));
}

/* 16 int16: pair sums of signed levels v x signed bytes a, through maddubs on |v| and a with v's
 * sign (every pair is at most 2 * 127 * 127, inside int16; a zero level gives a zero product) */
static inline __attribute__((always_inline)) __m256i sn_lut4_pairs(__m256i v, __m256i a) {
    return _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(a, v));
}

/* 8 rows' block sums in one vector: l[r] holds row r's 8 partial int32 sums; lane r of the result
 * is their total */
static inline __attribute__((always_inline)) __m256i sn_lut4_rows8(const __m256i l[8]) {
    const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(l[0], l[1]), _mm256_hadd_epi32(l[2], l[3]));
    const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(l[4], l[5]), _mm256_hadd_epi32(l[6], l[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* sn_e8m0_half (quants.h) of 8 exponent bytes, one per lane */
static inline __attribute__((always_inline)) __m256 sn_lut4_e8m0_half8(const uint8_t e[8]) {
    int64_t b;
    __builtin_memcpy(&b, e, 8);
    const __m256i v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(b));
    const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(v, _mm256_set1_epi32(1)), 23);
    const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), v);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(_mm256_set1_epi32(2), v)));
}

/* The exact integer sum of one block: the levels of 16 nibble bytes qs times 32 int8 a */
static inline __attribute__((always_inline)) int sn_lut4_isum(__m128i lut, const uint8_t *qs, const int8_t *a) {
    const __m256i v = sn_lut4_levels32(lut, qs), av = _mm256_loadu_si256((const __m256i *)a);
    return sn_avx2_hsum_i32(_mm256_madd_epi16(sn_lut4_pairs(v, av), _mm256_set1_epi16(1)));
}

/* A 4-bit-level row (blocks of `stride` bytes, 16 nibble bytes at qs_off in each) against a Q8_0 row
 * of nb blocks, in the order of ggml's repacked gemv: per block the exact integer sum, then
 * fma(isum, scale(block, a_b), acc) in block order; 8 blocks' sums come out of one hadd tree. */
typedef float (*sn_lut4_scale_fn)(const uint8_t *block, const sn_block_q8_0 *a);
static inline __attribute__((always_inline)) float sn_lut4_dot(int64_t nb, __m128i lut, const uint8_t *w, size_t stride,
                                                               size_t qs_off, const sn_block_q8_0 *a,
                                                               sn_lut4_scale_fn scale) {
    float s = 0;
    int64_t b = 0;
    for (; b + 8 <= nb; b += 8) {
        __m256i l[8];
        for (int i = 0; i < 8; i++)
            l[i] = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut, w + (b + i) * stride + qs_off),
                                                   _mm256_loadu_si256((const __m256i *)a[b + i].qs)),
                                     _mm256_set1_epi16(1));
        float f[8];
        _mm256_storeu_ps(f, _mm256_cvtepi32_ps(sn_lut4_rows8(l)));
        for (int i = 0; i < 8; i++) s = fmaf(f[i], scale(w + (b + i) * stride, &a[b + i]), s);
    }
    for (; b < nb; b++) s = fmaf((float)sn_lut4_isum(lut, w + b * stride + qs_off, a[b].qs), scale(w + b * stride, &a[b]), s);
    return s;
}

/* MXFP4: 2^(e-128) * d_a, and the dot of one row */
static inline __attribute__((always_inline)) float sn_lut4_mxfp4_scale(const uint8_t *block, const sn_block_q8_0 *a) {
    return sn_e8m0_half(block[0]) * _cvtsh_ss(a->d);
}
static inline __attribute__((always_inline)) float sn_lut4_mxfp4_dot(int64_t n, const void *w, const void *a) {
    return sn_lut4_dot(n / 32, _mm_loadu_si128((const __m128i *)sn_mxfp4_values), w, sizeof(sn_block_mxfp4), 1, a,
                       sn_lut4_mxfp4_scale);
}

/* MXFP4 rows against one Q8_0 row, 8 rows at a time as ggml's mxfp4_8x8 gemv: rows8(w, b, a, l)
 * leaves the 8 rows' 8 partial int32 sums of block b in l[0..8); lane r of one vector fma advances
 * row r's chain; rows past the last group of 8 through sn_lut4_mxfp4_dot. y[r] = dot(row r). */
typedef void (*sn_lut4_rows8_fn)(const sn_block_mxfp4 *const *w, int64_t b, const int8_t *a, __m256i l[8]);
static inline __attribute__((always_inline)) int sn_lut4_mxfp4_mv(int64_t n, const void *vw, uint64_t w_row, int64_t R,
                                                                  const void *vx, float *y, sn_lut4_rows8_fn rows8) {
    const sn_block_q8_0 *a = vx;
    const int64_t nb = n / 32;
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        const sn_block_mxfp4 *w[8];
        for (int i = 0; i < 8; i++) w[i] = (const sn_block_mxfp4 *)((const char *)vw + (uint64_t)(r + i) * w_row);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            __m256i l[8];
            uint8_t e[8];
            for (int i = 0; i < 8; i++) {
                __builtin_prefetch(w[i] + b + 16);
                e[i] = w[i][b].e;
            }
            rows8(w, b, a[b].qs, l);
            const __m256 scale = _mm256_mul_ps(sn_lut4_e8m0_half8(e), _mm256_set1_ps(_cvtsh_ss(a[b].d)));
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sn_lut4_rows8(l)), scale, acc);
        }
        _mm256_storeu_ps(y + r, acc);
    }
    for (; r < R; r++) y[r] = sn_lut4_mxfp4_dot(n, (const char *)vw + (uint64_t)r * w_row, vx);
    return 1;
}
#endif
