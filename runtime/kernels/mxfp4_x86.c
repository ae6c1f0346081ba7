/* mxfp4_x86.c - the AVX2 and AVX-512 twins of iq4_scalar.c's MXFP4 dot (activations Q8_0): per
 * block the exact integer sum of its 32 products, then fma(isum, e8m0_half(e) * d_a, acc) in block
 * order, so every result is bit-identical to the scalar reference and to ggml's repacked
 * mxfp4_8x8 gemv (tests/unit/test_quants.c). The single-token matmul runs 8 rows side by side, as
 * that gemv does: one block's 8 integer sums come out of one hadd tree and one vector fma advances
 * the 8 chains (lut4_x86.h); the AVX-512 one puts two rows' 64 levels in each 512-bit vector (their
 * products as exact 4-product int32 sums: maddubs on |level| with the activation carrying the
 * level's sign, then madd). Each half is compiled for its instruction set via a target pragma and
 * reached only from that table (cpu.c checked the CPU). */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "lut4_x86.h"

static float dot_avx2(int64_t n, const void *w, const void *a) { return sn_lut4_mxfp4_dot(n, w, a); }

/* block b of 8 rows: each row's 8 partial sums of 4 products */
static inline __attribute__((always_inline)) void rows8_avx2(const sn_block_mxfp4 *const *w, int64_t b, const int8_t *a,
                                                             __m256i l[8]) {
    const __m128i lut = _mm_loadu_si128((const __m128i *)sn_mxfp4_values);
    const __m256i av = _mm256_loadu_si256((const __m256i *)a);
    for (int i = 0; i < 8; i++)
        l[i] = _mm256_madd_epi16(sn_lut4_pairs(sn_lut4_levels32(lut, w[i][b].qs), av), _mm256_set1_epi16(1));
}

static int mv_avx2(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return sn_lut4_mxfp4_mv(n, w, w_row, R, x, y, rows8_avx2);
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
static float dot_avx512(int64_t n, const void *w, const void *a) { return sn_lut4_mxfp4_dot(n, w, a); }

/* the 32 levels of nibble bytes q0 in the low 256 bits, of q1 in the high (each in value order) */
static inline __m512i levels64(__m512i lut, const uint8_t *q0, const uint8_t *q1) {
    const __m256i q = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)q1), _mm_loadu_si128((const __m128i *)q0));
    const __m256i m4 = _mm256_set1_epi8(0xF);
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(q, m4)),
                                         _mm256_and_si256(_mm256_srli_epi16(q, 4), m4), 1);
    /* 128-bit lanes [low q0, low q1, high q0, high q1] -> [low q0, high q0, low q1, high q1] */
    return _mm512_shuffle_epi8(lut, _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0)));
}

/* block b of 8 rows, two rows per vector: each row's 8 partial sums of 4 products */
static inline __attribute__((always_inline)) void rows8_avx512(const sn_block_mxfp4 *const *w, int64_t b,
                                                               const int8_t *a, __m256i l[8]) {
    const __m512i lut = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)sn_mxfp4_values));
    const __m512i av = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)a));
    for (int p = 0; p < 8; p += 2) {
        const __m512i v = levels64(lut, w[p][b].qs, w[p + 1][b].qs);
        const __m512i as = _mm512_mask_sub_epi8(av, _mm512_movepi8_mask(v), _mm512_setzero_si512(), av);
        const __m512i z = _mm512_madd_epi16(_mm512_maddubs_epi16(_mm512_abs_epi8(v), as), _mm512_set1_epi16(1));
        l[p] = _mm512_castsi512_si256(z);
        l[p + 1] = _mm512_extracti64x4_epi64(z, 1);
    }
}

static int mv_avx512(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return sn_lut4_mxfp4_mv(n, w, w_row, R, x, y, rows8_avx512);
}
#pragma GCC pop_options

void sn_kernels_mxfp4_x86(sn_kernels *k, int avx512) {
    k->type[SN_GGML_MXFP4].dot = k->type[SN_GGML_MXFP4].dot_mm = avx512 ? dot_avx512 : dot_avx2;
    k->type[SN_GGML_MXFP4].mv = avx512 ? mv_avx512 : mv_avx2;
}
#else
void sn_kernels_mxfp4_x86(sn_kernels *k, int avx512) { (void)k, (void)avx512; }
#endif
