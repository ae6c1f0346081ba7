/* quants_avx512.c - AVX-512 entries for the types of quants_scalar.c: the AVX2 twins (whose
 * lane layout is already ggml's) unless a wider kernel is added here; and the Q4_1 / Q5_0 / Q5_1
 * single-token matmuls on four rows at once (VNNI, far streams). */
#include "kernels.h"

void sn_kernels_quants_avx512(sn_kernels *k) {
    sn_kernels_quants_avx2(k);
    /* quants_avx2 starts from the scalar entries (Q5_K among them), and the AVX2 table adds its
     * K-quant kernels only after it: without this the AVX-512 table would run Q5_K dots one product
     * at a time. x86_avx512.c puts its 512-bit K-quant dots over these. */
    sn_kernels_kquants_avx2(k);
}

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#include "kquant_dots.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define h2f(x) _cvtsh_ss(x)

/* Block b of rows r0 (low 256 bits) and r1 (high) as bytes 0..31 each: value j < 16 the low nibble
 * of qs[j], j >= 16 the high nibble of qs[j - 16], plus 16 where bit j of qh is set (Q5_0 / Q5_1). */
static inline __attribute__((always_inline)) __m512i vals2(int type, sn_kq_blk32 w0, sn_kq_blk32 w1) {
    const __m256i t = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)w0.qs)),
                                              _mm_loadu_si128((const __m128i *)w1.qs), 1);
    const __m512i lh = _mm512_inserti64x4(_mm512_castsi256_si512(t), _mm256_srli_epi16(t, 4), 1); /* lo0 lo1 hi0 hi1 */
    __m512i q = _mm512_and_si512(_mm512_shuffle_i64x2(lh, lh, _MM_SHUFFLE(3, 1, 2, 0)), _mm512_set1_epi8(0xF));
    if (type != SN_GGML_Q4_1) {
        uint32_t h0, h1;
        memcpy(&h0, w0.qh, 4);
        memcpy(&h1, w1.qh, 4);
        q = _mm512_mask_add_epi8(q, (__mmask64)h0 | (__mmask64)h1 << 32, q, _mm512_set1_epi8(16));
    }
    return q;
}

/* quants_avx2.c's dot32 on four rows (sn_k_mv_quarters), two rows per 512-bit accumulator. Each lane
 * is the same exact integer (VPDPBUSD of the unsigned values with the activation; for Q5_0 started
 * from -16 times the activation's 4-value sums, i.e. (q - 16) * y), each scale the same float
 * product h2f(w.d) * h2f(a.d) (da: the activation's), each row's fma chain, min-term chain and
 * hsum8 the same: y[i] == dot32(row i, x) bit for bit. */
static inline __attribute__((always_inline)) void rows4_t(int type, int64_t n, const void *const *vw, const void *vx,
                                                          const float *da, float *y) {
    const int has_min = type != SN_GGML_Q5_0;
    const int64_t nb = n / 32;
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    float summs[4] = {0, 0, 0, 0};
    for (int64_t b = 0; b < nb; b++) {
        const sn_kq_act32 a = sn_kq_act32_at(type, vx, b);
        const __m512i y2 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)a.qs));
        const __m512i c2 = has_min ? _mm512_setzero_si512()
                                   : _mm512_sub_epi32(_mm512_setzero_si512(),
                                                      _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(16), y2));
        _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
            const sn_kq_blk32 w0 = sn_kq_blk32_at(type, vw[2 * p], b), w1 = sn_kq_blk32_at(type, vw[2 * p + 1], b);
            sn_k_prefetch(w0.qs, 32);
            sn_k_prefetch(w1.qs, 32);
            const __m512 dw = _mm512_insertf32x8(_mm512_set1_ps(h2f(w0.d)), _mm256_set1_ps(h2f(w1.d)), 1);
            const __m512 q = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(c2, vals2(type, w0, w1), y2));
            acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(da[b])), q, acc[p]);
            if (has_min) {
                summs[2 * p] = fmaf(h2f(w0.m), h2f(a.s), summs[2 * p]);
                summs[2 * p + 1] = fmaf(h2f(w1.m), h2f(a.s), summs[2 * p + 1]);
            }
        }
    }
    _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
        y[2 * p] = sn_avx2_hsum8(_mm512_castps512_ps256(acc[p]));
        y[2 * p + 1] = sn_avx2_hsum8(_mm512_extractf32x8_ps(acc[p], 1));
        if (has_min) y[2 * p] += summs[2 * p], y[2 * p + 1] += summs[2 * p + 1];
    }
}

enum { MV_BLOCKS = 1024 }; /* activation scales kept on the stack (rows up to 32768) */
static void act_scales(int type, int64_t nb, const void *x, float *da) {
    for (int64_t b = 0; b < nb; b++) da[b] = h2f(sn_kq_act32_at(type, x, b).d);
}

/* The leftover rows (R % 4) through the same kernel, the row taken four times. */
#define MV32(T, name)                                                                                              \
    static void rows4_##name(int64_t n, const void *const *w, const void *x, const float *da, float *y) {         \
        rows4_t(T, n, w, x, da, y);                                                                                \
    }                                                                                                              \
    static float one_##name(int64_t n, const void *w, const void *x) {                                            \
        float da[MV_BLOCKS], y[4];                                                                                 \
        const void *rows[4] = {w, w, w, w};                                                                        \
        act_scales(T, n / 32, x, da);                                                                              \
        rows4_t(T, n, rows, x, da, y);                                                                             \
        return y[0];                                                                                               \
    }                                                                                                              \
    static int mv_##name(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {          \
        if (n % 32 || n / 32 > MV_BLOCKS) return 0; /* the caller then runs the dot row by row */                \
        float da[MV_BLOCKS];                                                                                       \
        act_scales(T, n / 32, x, da);                                                                              \
        sn_k_mv_quarters(rows4_##name, n, w, w_row, R, x, da, one_##name, y);                                      \
        return 1;                                                                                                  \
    }
MV32(SN_GGML_Q4_1, q4_1)
MV32(SN_GGML_Q5_0, q5_0)
MV32(SN_GGML_Q5_1, q5_1)

void sn_kernels_quants_mv_avx512(sn_kernels *k) {
    k->type[SN_GGML_Q4_1].mv = mv_q4_1;
    k->type[SN_GGML_Q5_0].mv = mv_q5_0;
    k->type[SN_GGML_Q5_1].mv = mv_q5_1;
}
#pragma GCC pop_options
#else
void sn_kernels_quants_mv_avx512(sn_kernels *k) { (void)k; } /* never called */
#endif
