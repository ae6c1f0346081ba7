/* mm_avx2.c - batched (prompt) matrix multiplies for F32 / F16 / BF16 and Q8_0 weights on AVX2,
 * register-tiled: a tile of up to 4 weight rows x 3 tokens keeps 12 independent accumulators, so
 * each weight vector is loaded (and converted) once per tile instead of once per output, and the
 * fused multiply-add chains of different outputs overlap instead of waiting on each other.
 *
 * The sums are the ones ggml's AVX2 ("haswell") build computes for batches, and each output is
 * computed in exactly the same order as the single-output dot_mm of scalar.c:
 *  - F32 / F16 / BF16 (tinyBLAS with 8-lane vectors): per output one 8-lane accumulator,
 *    acc = fma(w[i..i+7], x[i..i+7], acc) for i = 0, 8, 16, ... in order, then the horizontal
 *    sum ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)). F16 / BF16 values are widened to f32 exactly.
 *    Rows whose length is not a multiple of 8 are declined by tinyBLAS (ggml then uses vec_dot),
 *    and here (sn_matmul then uses the table's dot_mm, which does the same).
 *  - Q8_0 x Q8_0 (tinyBLAS_Q0_AVX): per output and block one 8-lane vector of exact int32 sums of
 *    4 products, acc = fma(d_w * d_x, float(sums), acc) block by block, then the same horizontal sum.
 * Which tile an output belongs to changes nothing about its order, so the tile shapes here are
 * our own choice. Only installed where tuning.lanes == 8 for the float types (the AVX-512
 * build sums 16 lanes). Tests: tests/unit/test_kernels.c compares every output of these with the
 * scalar dot_mm bit for bit, for row counts, token counts and lengths that hit every edge tile. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

#include "simd_avx2.h"

#define h2f(x) _cvtsh_ss(x)
#define MM_V __m256
#define MM_LANES 8
#define MM_TILE_T 3
#define MM_ZERO() _mm256_setzero_ps()
#define MM_LOAD(p) _mm256_load_ps(p)
#define MM_STORE(p, v) _mm256_store_ps(p, v)
#define MM_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define MM_HSUM(v) sn_avx2_hsum8(v)
#include "mm_float.h"
#ifndef Q8_TILE_T
#define Q8_TILE_T 3
#endif
_Static_assert(Q8_TILE_T >= 1 && Q8_TILE_T <= MM_TILE_T, "mm_avx2.c: the Q8_0 tile lives in the float tiles' accumulators");

SN_AI __m256 ld_f32(const void *p, int64_t i) { return _mm256_loadu_ps((const float *)p + i); }
SN_AI __m256 ld_f16(const void *p, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
}
SN_AI __m256 ld_bf16(const void *p, int64_t i) {
    const __m128i v = _mm_loadu_si128((const __m128i *)((const uint16_t *)p + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

/* ---- float types ---- */

FLOAT_TILE(tile_f32, ld_f32)
/* F16 / BF16 rows are widened into buffers and multiplied by the f32 tile (mm_float.h's widening
 * driver): on AVX2 cores the conversions inside a converting tile compete with the fmas and
 * halve its rate (mm_float.h). */
WIDEN(widen_f16, ld_f16)
WIDEN(widen_bf16, ld_bf16)

/* ---- Q8_0 x Q8_0: one RM x RN tile ---- */

/* The block scales arrive as floats: dw[r * NBC + b] for the tile's rows, dx[t * NBC + b] for its
 * tokens (converted once per cache block by the driver instead of once per tile); d = dw * dx is
 * the same single-precision product ggml forms. */
enum { NBC = KC / SN_QK8_0 };

SN_AI void tile_q8_0(int64_t n, const char *w, uint64_t w_row, const char *x, uint64_t x_row, const float *dw,
                     const float *dx, float *acc, int mode, float *y, int64_t ldy, const int RM, const int RN) {
    const int64_t nb = n / SN_QK8_0;
    const __m256i ones = _mm256_set1_epi16(1);
    TILE_BEGIN(RM, RN)
    for (int64_t b = 0; b < nb; b++) {
        __m256 dxv[TILE_T];
        _Pragma("GCC unroll 4") for (int t = 0; t < RN; t++) dxv[t] = _mm256_broadcast_ss(dx + t * NBC + b);
        _Pragma("GCC unroll 4") for (int r = 0; r < RM; r++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)((const sn_block_q8_0 *)(w + (uint64_t)r * w_row) + b)->qs);
            const __m256i aq = _mm256_sign_epi8(q, q);
            const __m256 dwv = _mm256_broadcast_ss(dw + r * NBC + b);
            _Pragma("GCC unroll 4") for (int t = 0; t < RN; t++) {
                const sn_block_q8_0 *xb = (const sn_block_q8_0 *)(x + (uint64_t)t * x_row) + b;
                const __m256i s = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)xb->qs), q);
                const __m256i l = _mm256_madd_epi16(ones, _mm256_maddubs_epi16(aq, s));
                c[t][r] = _mm256_fmadd_ps(_mm256_mul_ps(dwv, dxv[t]), _mm256_cvtepi32_ps(l), c[t][r]);
            }
        }
    }
    TILE_END(RM, RN)
}

/* ---- the blocked loops around the tile functions ---- */

TILE_ANY(tile_f32)

MM_FLOAT_ENTRY(mm_f32, tile_f32, 4)
MM_WIDENED_ENTRY(mm_f16, widen_f16, tile_f32, 2)
MM_WIDENED_ENTRY(mm_bf16, widen_bf16, tile_f32, 2)

static void tile_q8_0_any(int64_t n, const char *w, uint64_t w_row, const char *x, uint64_t x_row, const float *dw,
                          const float *dx, float *acc, int mode, float *y, int64_t ldy, int rm, int rn) {
#define Q8(F, RM, RN) tile_q8_0(n, w, w_row, x, x_row, dw, dx, acc, mode, y, ldy, RM, RN)
    MM_SWITCH_SHAPE(rm, rn, Q8, tile_q8_0)
#undef Q8
}

/* drive() with the block scales of each cache block converted to floats once. */
static int mm_q8_0(int64_t n, const void *vw, uint64_t w_row, int64_t R, const void *vx, uint64_t x_row, int64_t T,
                   float *y, int64_t ldy) {
    const char *w = vw, *x = vx;
    float acc[TOK_GROUP * ROW_BLOCK * MM_LANES] __attribute__((aligned(32)));
    float dx[TOK_GROUP * NBC], dw[ROW_BLOCK * NBC];
    for (int64_t tg = 0; tg < T; tg += TOK_GROUP) {
        const int64_t te = tg + TOK_GROUP < T ? tg + TOK_GROUP : T;
        for (int64_t rb = 0; rb < R; rb += ROW_BLOCK) {
            const int64_t re = rb + ROW_BLOCK < R ? rb + ROW_BLOCK : R;
            for (int64_t k0 = 0; k0 < n; k0 += KC) {
                const int64_t kn = n - k0 < KC ? n - k0 : KC, nb = kn / SN_QK8_0;
                const int mode = (k0 == 0 ? FIRST : 0) | (k0 + kn == n ? LAST : 0);
                const char *wk = w + (uint64_t)(k0 / SN_QK8_0) * sizeof(sn_block_q8_0);
                const char *xk = x + (uint64_t)(k0 / SN_QK8_0) * sizeof(sn_block_q8_0);
                for (int64_t t = tg; t < te; t++)
                    for (int64_t b = 0; b < nb; b++)
                        dx[(t - tg) * NBC + b] = h2f(((const sn_block_q8_0 *)(xk + (uint64_t)t * x_row))[b].d);
                for (int64_t r = rb; r < re; r++)
                    for (int64_t b = 0; b < nb; b++)
                        dw[(r - rb) * NBC + b] = h2f(((const sn_block_q8_0 *)(wk + (uint64_t)r * w_row))[b].d);
                for (int64_t t = tg; t < te; t += Q8_TILE_T) {
                    const int rn = te - t < Q8_TILE_T ? (int)(te - t) : Q8_TILE_T;
                    for (int64_t r = rb; r < re; r += TILE_R) {
                        const int rm = re - r < TILE_R ? (int)(re - r) : TILE_R;
                        tile_q8_0_any(kn, wk + (uint64_t)r * w_row, w_row, xk + (uint64_t)t * x_row, x_row,
                                      dw + (r - rb) * NBC, dx + (t - tg) * NBC, acc + ((t - tg) * ROW_BLOCK + (r - rb)) * 8,
                                      mode, y + t * ldy + r, ldy, rm, rn);
                    }
                }
            }
        }
    }
    return 1;
}

void sn_kernels_mm_avx2(sn_kernels *k) {
    if (k->tuning.lanes == 8) {
        k->type[SN_GGML_F32].mm = mm_f32;
        k->type[SN_GGML_F16].mm = mm_f16;
        k->type[SN_GGML_BF16].mm = mm_bf16;
    }
    k->type[SN_GGML_Q8_0].mm = mm_q8_0;
}
#pragma GCC pop_options
#else
void sn_kernels_mm_avx2(sn_kernels *k) { (void)k; }
#endif
