/* lut4_x86.h - the pieces the AVX2 and AVX-512 kernels of the 4-bit lookup-table types (IQ4_NL,
 * IQ4_XS, MXFP4) share, written once. Static inline without a target attribute: include this
 * header after the file's `#pragma GCC target(...)` (AVX2 at least). Every integer here is exact, so
 * only the float steps of the callers fix a result's bits. */
#ifndef SN_LUT4_X86_H
#define SN_LUT4_X86_H
#include <immintrin.h>
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
#endif
