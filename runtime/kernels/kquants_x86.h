/* kquants_x86.h - the Q4_K / Q5_K scale and min unpacking both x86 K-quant files use, written once.
 * Static inline without a target attribute, like simd_avx2.h: include it after the file's
 * `#pragma GCC target(...)` (at least SSSE3/SSE4.1) and it compiles for that instruction set. */
#ifndef SN_KQUANTS_X86_H
#define SN_KQUANTS_X86_H
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* The 8 6-bit scales and the 8 mins of a Q4_K / Q5_K block (the packing of sn_k_q4k_scale_min) as
 * bytes 0-7 of two registers. They are built in general registers and moved over whole: stored as
 * bytes and reloaded 8 at a time, every block paid a failed store-to-load forward (two 4-byte
 * stores feeding one 8-byte load), which cost the Q4_K dots more than their arithmetic. */
static inline void sn_kq_q4k_scales(const uint8_t *q, __m128i *sc, __m128i *mn) {
    uint32_t u0, u1, u2;
    memcpy(&u0, q, 4);
    memcpy(&u1, q + 4, 4);
    memcpy(&u2, q + 8, 4);
    const uint64_t s_lo = u0 & 0x3f3f3f3fu, m_lo = u1 & 0x3f3f3f3fu;
    const uint64_t s_hi = (u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u);
    const uint64_t m_hi = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
    *sc = _mm_cvtsi64_si128((long long)(s_lo | s_hi << 32));
    *mn = _mm_cvtsi64_si128((long long)(m_lo | m_hi << 32));
}

/* The 4 sub-block pairs' min terms m0 * (bsums of the first 32) + m1 * (of the second 32), lanes j
 * (exact: |bsums pair| <= 2 * 16 * 128, mins <= 63). */
static inline __m128i sn_kq_q4k_mins(__m128i mn, const int16_t *bsums) {
    const __m128i b0 = _mm_loadu_si128((const __m128i *)bsums), b1 = _mm_loadu_si128((const __m128i *)(bsums + 8));
    return _mm_madd_epi16(_mm_cvtepu8_epi16(mn), _mm_hadd_epi16(b0, b1));
}

/* Q6_K's single-token dot in ggml's vec_dot_q6_K order (8 integer lanes per block, one 8-lane fma
 * per block, hsum8), with the same three arguments as the tile below. */
#define SN_KQ_Q6K_DOT(NAME, BLOCK, UNPACK, LANES)                                                        \
    static float NAME(int64_t n, const void *vw, const void *va) {                                       \
        const sn_block_q6_K *w = vw;                                                                     \
        const sn_block_q8_K *a = va;                                                                     \
        __m256 acc = _mm256_setzero_ps();                                                                \
        for (int64_t b = 0; b < n / SN_QK_K; b++) {                                                      \
            sn_k_prefetch(&w[b], sizeof w[b]);                                                           \
            BLOCK k;                                                                                     \
            UNPACK(&w[b], &k);                                                                           \
            const float d = a[b].d * _cvtsh_ss(w[b].d);                                                  \
            acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(LANES(&k, &a[b])), acc);         \
        }                                                                                                \
        return sn_avx2_hsum8(acc);                                                                       \
    }

/* A 4x4 tile (kernels.h gemm4x4) of a K-quant type against Q8_K activations as four rows, each met
 * by the four tokens: row(n, weight row r, the tokens' rows, y + r, ldy) writes y[t * ldy], t < 4.
 * The files pass their row kernels as static inline functions (inlined through the constant
 * pointer). */
typedef void (*sn_kq_row4_fn)(int64_t n, const void *w, const sn_block_q8_K *const x[4], float *y, int64_t ldy);
static inline __attribute__((always_inline)) void sn_kq_gemm4x4(int64_t n, const void *vw, uint64_t w_row, const void *vx,
                                                                uint64_t x_row, float *y, int64_t ldy, sn_kq_row4_fn row) {
    const sn_block_q8_K *x[4];
    for (int t = 0; t < 4; t++) x[t] = (const sn_block_q8_K *)((const char *)vx + t * x_row);
    for (int r = 0; r < 4; r++) row(n, (const char *)vw + r * w_row, x, y + r, ldy);
}

/* Q6_K's 4 rows x 4 tokens tile in dot_q6_K's order (Q6_K's batched order is the same: ggml's 8
 * integer lanes per block, one 8-lane fma per block, hsum8), written once for both files: each
 * passes its unpacked-block type, a function unpacking a row's block once, and one giving that
 * block's 8 lanes against a token's block. Needs simd_avx2.h. */
#define SN_KQ_Q6K_GEMM4X4(NAME, BLOCK, UNPACK, LANES)                                                     \
    static inline __attribute__((always_inline)) void NAME##_row(int64_t n, const void *vw,               \
                                                                 const sn_block_q8_K *const x[4], float *y, \
                                                                 int64_t ldy) {                          \
        const sn_block_q6_K *w = vw;                                                                     \
        __m256 acc[4];                                                                                   \
        for (int t = 0; t < 4; t++) acc[t] = _mm256_setzero_ps();                                        \
        for (int64_t b = 0; b < n / SN_QK_K; b++) {                                                      \
            BLOCK k;                                                                                     \
            UNPACK(&w[b], &k);                                                                           \
            const float dw = _cvtsh_ss(w[b].d);                                                          \
            _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) acc[t] =                                 \
                _mm256_fmadd_ps(_mm256_set1_ps(x[t][b].d * dw), _mm256_cvtepi32_ps(LANES(&k, &x[t][b])), acc[t]); \
        }                                                                                                \
        for (int t = 0; t < 4; t++) y[t * ldy] = sn_avx2_hsum8(acc[t]);                                  \
    }                                                                                                    \
    static void NAME(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,  \
                     int64_t ldy) {                                                                      \
        sn_kq_gemm4x4(n, w, w_row, x, x_row, y, ldy, NAME##_row);                                        \
    }
/* The Q4_K and Q6_K entries both files install: single-token dot, 4x4 tile (Q6_K's batched dot is
 * its single-token one; Q4_K's batched dot stays x86_avx2.c's). */
typedef void (*sn_kq_gemm4x4_fn)(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy);
static inline void sn_kq_set_q4k_q6k(sn_kernels *k, sn_dot_fn q4k, sn_kq_gemm4x4_fn q4k_tile, sn_dot_fn q6k,
                                     sn_kq_gemm4x4_fn q6k_tile) {
    k->type[SN_GGML_Q4_K].dot = q4k;
    k->type[SN_GGML_Q4_K].gemm4x4 = q4k_tile;
    k->type[SN_GGML_Q6_K].dot = k->type[SN_GGML_Q6_K].dot_mm = q6k;
    k->type[SN_GGML_Q6_K].gemm4x4 = q6k_tile;
}
#endif
