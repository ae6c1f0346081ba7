/* x86_avx2.c - AVX2 + FMA + F16C kernels (see kernels.h).
 *
 * Each function computes exactly what its twin in scalar.c computes, in the same order, only
 * faster: the scalar code already follows ggml's AVX-512 summation order (16-lane accumulators are
 * kept here as pairs of 8-lane registers), so scalar, AVX2 and AVX-512 tables give bit-identical
 * results and all round like llama.cpp. Compiled for AVX2 via a target pragma and only called
 * after cpu.c has confirmed AVX2/FMA/F16C and OS support. */
#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kernels.h"

#include "int4.h"
#include "kquant_dots.h"
#include "q4_0_x8.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>

/* F16C conversion: the same value as sn_k_h2f, one instruction instead of a branchy function. */
#define h2f(x) _cvtsh_ss(x)
#include <stdlib.h>
#include <string.h>

/* ---- activation conversion ---- */

static void quant_f16(const float *x, void *vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = sn_k_f2h(x[i]);
}

static void quant_q8_0(const float *x, void *vy, int64_t n) {
    sn_block_q8_0 *y = vy;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / SN_QK8_0; b++, x += SN_QK8_0) {
        __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8), v2 = _mm256_loadu_ps(x + 16),
               v3 = _mm256_loadu_ps(x + 24);
        __m256 mx = _mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1));
        mx = _mm256_max_ps(mx, _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(mx, 1), _mm256_castps256_ps128(mx));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        y[b].d = sn_k_f2h(amax / 127.f);
        const __m256 id = _mm256_set1_ps(amax != 0.0f ? 127.f / amax : 0.0f);
        __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        i0 = _mm256_packs_epi32(i0, i1);
        i2 = _mm256_packs_epi32(i2, i3);
        i0 = _mm256_packs_epi16(i0, i2);
        i0 = _mm256_permutevar8x32_epi32(i0, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y[b].qs, i0);
    }
}

/* ---- float dots in ggml's AVX-512 order (see scalar.c) ---- */

static inline float reduce16(__m256 lo, __m256 hi) {
    const __m256 t3 = _mm256_add_ps(hi, lo);
    const __m128 t6 = _mm_add_ps(_mm256_extractf128_ps(t3, 1), _mm256_castps256_ps128(t3));
    const __m128 t8 = _mm_add_ps(t6, _mm_movehl_ps(t6, t6)); /* [t6_0+t6_2, t6_1+t6_3] */
    return _mm_cvtss_f32(_mm_add_ss(t8, _mm_movehdup_ps(t8)));
}

static inline __m256 ld_f32(const void *p, int64_t i) { return _mm256_loadu_ps((const float *)p + i); }
static inline __m256 ld_f16(const void *p, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
}

#define DOT_VEC(NAME, LD, SCAL, TAIL)                                                             \
    static float NAME(int64_t n, const void *w, const void *a) {                                  \
        __m256 s[4][2];                                                                           \
        for (int j = 0; j < 4; j++) s[j][0] = s[j][1] = _mm256_setzero_ps();                      \
        const int64_t np = n & ~(int64_t)63;                                                      \
        for (int64_t i = 0; i < np; i += 64)                                                      \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {                                 \
                s[j][0] = _mm256_fmadd_ps(LD(w, i + 16 * j), LD(a, i + 16 * j), s[j][0]);         \
                s[j][1] = _mm256_fmadd_ps(LD(w, i + 16 * j + 8), LD(a, i + 16 * j + 8), s[j][1]); \
            }                                                                                     \
        for (int h = 0; h < 2; h++) {                                                             \
            s[0][h] = _mm256_add_ps(s[0][h], s[2][h]);                                            \
            s[1][h] = _mm256_add_ps(s[1][h], s[3][h]);                                            \
            s[0][h] = _mm256_add_ps(s[0][h], s[1][h]);                                            \
        }                                                                                         \
        TAIL(reduce16(s[0][0], s[0][1]), np, n, w, a, SCAL);                                      \
    }

#define DOT_MM(NAME, LD, FALLBACK)                                                  \
    static float NAME(int64_t n, const void *w, const void *a) {                    \
        if (n % 16) return FALLBACK(n, w, a);                                       \
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();                  \
        for (int64_t i = 0; i < n; i += 16) {                                       \
            lo = _mm256_fmadd_ps(LD(w, i), LD(a, i), lo);                           \
            hi = _mm256_fmadd_ps(LD(w, i + 8), LD(a, i + 8), hi);                   \
        }                                                                           \
        return reduce16(lo, hi);                                                    \
    }

static inline float sc_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static inline float sc_f16(const void *p, int64_t i) { return h2f(((const uint16_t *)p)[i]); }

DOT_VEC(dot_f32, ld_f32, sc_f32, SN_K_TAIL_F32_16)
DOT_VEC(dot_f16, ld_f16, sc_f16, SN_K_TAIL_F64)
DOT_MM(dot_f32_mm, ld_f32, dot_f32)
DOT_MM(dot_f16_mm, ld_f16, dot_f16)

/* BF16 pairs: a 32-bit lane holds element 2j (low half) and 2j+1 (high half). */
static inline void dpbf16(__m256 *lo, __m256 *hi, const uint16_t *w, const uint16_t *a) {
    const __m256i mask = _mm256_set1_epi32((int)0xFFFF0000u);
    for (int h = 0; h < 2; h++) {
        const __m256i wv = _mm256_loadu_si256((const __m256i *)(w + 16 * h));
        const __m256i av = _mm256_loadu_si256((const __m256i *)(a + 16 * h));
        const __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(wv, mask)), ao = _mm256_castsi256_ps(_mm256_and_si256(av, mask));
        const __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(wv, 16)), ae = _mm256_castsi256_ps(_mm256_slli_epi32(av, 16));
        __m256 *acc = h ? hi : lo;
        *acc = _mm256_add_ps(*acc, _mm256_mul_ps(wo, ao));
        *acc = _mm256_add_ps(*acc, _mm256_mul_ps(we, ae));
    }
}

static float dot_bf16(int64_t n, const void *vw, const void *va) {
    const uint16_t *w = vw, *a = va;
    __m256 c1l = _mm256_setzero_ps(), c1h = _mm256_setzero_ps(), c2l = _mm256_setzero_ps(), c2h = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        dpbf16(&c1l, &c1h, w + i, a + i);
        dpbf16(&c2l, &c2h, w + i + 32, a + i + 32);
    }
    return sn_k_dot_bf16_tail(reduce16(c1l, c1h), reduce16(c2l, c2h), w, a, i, n);
}

static float dot_bf16_mm(int64_t n, const void *vw, const void *va) {
    if (n % 32) return dot_bf16(n, vw, va);
    const uint16_t *w = vw, *a = va;
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 32) dpbf16(&lo, &hi, w + i, a + i);
    return reduce16(lo, hi);
}

/* ---- float dots in ggml's AVX2 order (tuning.lanes == 8, see scalar.c) ---- */

static inline float reduce8_hadd(__m256 x) { /* GGML_F32x8_REDUCE's final step */
    const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    const __m128 t1 = _mm_hadd_ps(t0, t0);
    return _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
}

#define DOT_VEC8(NAME, LD, SCAL, TAIL, ELT)                                                      \
    static float NAME(int64_t n, const void *w, const void *a) {                        \
        __m256 s[4];                                                                    \
        for (int j = 0; j < 4; j++) s[j] = _mm256_setzero_ps();                         \
        const int64_t np = n & ~(int64_t)31;                                            \
        for (int64_t i = 0; i < np; i += 32) {                                          \
            sn_k_prefetch((const char *)w + i * (int64_t)sizeof(ELT), 32 * sizeof(ELT));       \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                         \
                s[j] = _mm256_fmadd_ps(LD(w, i + 8 * j), LD(a, i + 8 * j), s[j]);       \
        }                                                                               \
        s[0] = _mm256_add_ps(s[0], s[2]);                                               \
        s[1] = _mm256_add_ps(s[1], s[3]);                                               \
        s[0] = _mm256_add_ps(s[0], s[1]);                                               \
        TAIL(reduce8_hadd(s[0]), np, n, w, a, SCAL);                                    \
    }

#define DOT_MM8(NAME, LD, FALLBACK)                                                     \
    static float NAME(int64_t n, const void *w, const void *a) {                        \
        if (n % 8) return FALLBACK(n, w, a);                                            \
        __m256 acc = _mm256_setzero_ps();                                               \
        for (int64_t i = 0; i < n; i += 8) acc = _mm256_fmadd_ps(LD(w, i), LD(a, i), acc); \
        return sn_avx2_hsum8(acc);                                                      \
    }

static inline __m256 ld_bf16(const void *p, int64_t i) {
    const __m128i v = _mm_loadu_si128((const __m128i *)((const uint16_t *)p + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}
static inline float sc_bf16(const void *p, int64_t i) { return sn_k_bf2f(((const uint16_t *)p)[i]); }

DOT_VEC8(dot_f32_8, ld_f32, sc_f32, SN_K_TAIL_F32_8, float)
DOT_VEC8(dot_f16_8, ld_f16, sc_f16, SN_K_TAIL_F64, uint16_t)
DOT_MM8(dot_f32_mm8, ld_f32, dot_f32_8)
DOT_MM8(dot_f16_mm8, ld_f16, dot_f16_8)

static float dot_bf16_8(int64_t n, const void *w, const void *a) {
    __m256 c[4];
    for (int j = 0; j < 4; j++) c[j] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
            c[j] = _mm256_fmadd_ps(ld_bf16(w, i + 8 * j), ld_bf16(a, i + 8 * j), c[j]);
    const __m256 t = _mm256_add_ps(_mm256_add_ps(c[0], c[2]), _mm256_add_ps(c[1], c[3]));
    double s = (double)sn_avx2_hsum8(t);
    for (; i < n; i++) s += (double)(sc_bf16(w, i) * sc_bf16(a, i));
    return (float)s;
}
DOT_MM8(dot_bf16_mm8, ld_bf16, dot_bf16_8)

/* Single-token F16 / BF16 matmuls with the activation row widened to f32 once per call. ggml's
 * vec_dot converts both operands in every row's dot; on AVX2 cores those conversions, not memory,
 * bound F16 decode (docs/PERFORMANCE.md). Each row's sum is dot_f16_8's / dot_bf16_8's: the same four 8-lane
 * fma chains over 32-element steps, the same reduction and tail, on the same float values (the
 * widening is exact), so y[r] == dot(row r, x) bit for bit. */
#define ROW_WIDE8(NAME, LDW, TAIL_EXPR)                                                        \
    static inline float NAME(int64_t n, const void *w, const float *x) {                      \
        __m256 s[4];                                                                          \
        for (int j = 0; j < 4; j++) s[j] = _mm256_setzero_ps();                               \
        const int64_t np = n & ~(int64_t)31;                                                  \
        for (int64_t i = 0; i < np; i += 32) {                                                \
            sn_k_prefetch((const char *)w + i * 2, 64);                                       \
            _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)                               \
                s[j] = _mm256_fmadd_ps(LDW(w, i + 8 * j), _mm256_loadu_ps(x + i + 8 * j), s[j]); \
        }                                                                                     \
        TAIL_EXPR;                                                                            \
    }
/* dot_f16_8's: ((s0 + s2) + (s1 + s3)) reduced by reduce8_hadd, then the tail in double */
ROW_WIDE8(row_f16_wide, ld_f16, {
    s[0] = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
    double r = np ? (double)reduce8_hadd(s[0]) : 0.0;
    for (int64_t i = np; i < n; i++) r += (double)(sc_f16(w, i) * x[i]);
    return (float)r;
})
/* dot_bf16_8's: (c0 + c2) + (c1 + c3) reduced by sn_avx2_hsum8, then the tail in double */
ROW_WIDE8(row_bf16_wide, ld_bf16, {
    const __m256 t = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
    double r = (double)sn_avx2_hsum8(t);
    for (int64_t i = np; i < n; i++) r += (double)(sc_bf16(w, i) * x[i]);
    return (float)r;
})

enum { MV_STACK = 4096 }; /* floats of activation kept on the stack; longer rows take the heap */
#define MV_WIDE(NAME, ROW, LD, SC)                                                                 \
    static int NAME(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) { \
        float stack[MV_STACK] __attribute__((aligned(32)));                                      \
        float *xf = n <= MV_STACK ? stack : malloc((size_t)n * sizeof(float));                   \
        if (!xf) return 0;                                                                       \
        const int64_t nv = n & ~(int64_t)7;                                                      \
        for (int64_t i = 0; i < nv; i += 8) _mm256_storeu_ps(xf + i, LD(x, i));                  \
        for (int64_t i = nv; i < n; i++) xf[i] = SC(x, i);                                       \
        for (int64_t r = 0; r < R; r++) y[r] = ROW(n, (const char *)w + (uint64_t)r * w_row, xf); \
        if (xf != stack) free(xf);                                                               \
        return 1;                                                                                \
    }
MV_WIDE(mv_f16_wide, row_f16_wide, ld_f16, sc_f16)
MV_WIDE(mv_bf16_wide, row_bf16_wide, ld_bf16, sc_bf16)

/* ---- quantized dots ---- */

/* 8 int32 lanes, lane j = sum of the products 4j..4j+3 (x, y signed int8 in [-127, 127]). */
static inline __m256i lane_dot(__m256i x, __m256i y) {
    const __m256i ax = _mm256_sign_epi8(x, x), sy = _mm256_sign_epi8(y, x);
    return _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(ax, sy));
}

static float dot_q8_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q8_0 *w = vw, *a = va;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / SN_QK8_0; b++) {
        if (b % 2 == 0) sn_k_prefetch(&w[b], 64);
        const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(a[b].d));
        const __m256i q = lane_dot(_mm256_loadu_si256((const __m256i *)w[b].qs), _mm256_loadu_si256((const __m256i *)a[b].qs));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(q), acc);
    }
    return sn_avx2_hsum8(acc);
}

static inline __m256i unpack_q4(const uint8_t *qs) { /* 32 nibbles -> int8 in [-8, 7]: low nibbles first */
    const __m128i raw = _mm_loadu_si128((const __m128i *)qs);
    const __m256i both = _mm256_insertf128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1);
    return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

static float dot_q4_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q4_0 *w = vw;
    const sn_block_q8_0 *a = va;
    float s = 0;
    for (int64_t b = 0; b < n / SN_QK4_0; b++) {
        /* w in [-8, 7]: sign trick needs |w| <= 127, fine */
        const int isum = sn_avx2_hsum_i32(lane_dot(unpack_q4(w[b].qs), _mm256_loadu_si256((const __m256i *)a[b].qs)));
        s = fmaf((float)isum, h2f(w[b].d) * h2f(a[b].d), s);
    }
    return s;
}

/* int8 x int8 (|a| <= 127) products of 32 pairs summed to 8 int32 lanes, w given as unsigned. */
static inline __m256i udot(__m256i wu, __m256i a) {
    return _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(wu, a));
}

/* Q4_K's batched order (kquant_dots.h, per_pair = 1) with the pair's two 32-element integer dots in
 * vectors. Q4_K's single-token dot and Q6_K are kquants_avx2.c's. */
static inline void q4_K_pair(const uint8_t *q, const int8_t *q8, int *lo, int *hi) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), raw = _mm256_loadu_si256((const __m256i *)q);
    *lo = sn_avx2_hsum_i32(udot(_mm256_and_si256(raw, m4), _mm256_loadu_si256((const __m256i *)q8)));
    *hi = sn_avx2_hsum_i32(udot(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), _mm256_loadu_si256((const __m256i *)(q8 + 32))));
}

static float dot_q4_K_mm(int64_t n, const void *w, const void *a) { return sn_kq_q4_K_dot(n, w, a, 1, q4_K_pair); }

/* ---- attention helpers ---- */

static void mad_f16(int64_t n, uint16_t *y, const uint16_t *x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 r = _mm256_fmadd_ps(ld_f16(x, i), vv, ld_f16(y, i));
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) y[i] = sn_k_f2h(fmaf(h2f(x[i]), v, h2f(y[i])));
}

static void scale_f16(int64_t n, uint16_t *y, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_mul_ps(ld_f16(y, i), vv), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = sn_k_f2h(h2f(y[i]) * v);
}

static void mad_f32(int64_t n, float *y, const float *x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vv, _mm256_loadu_ps(y + i)));
    for (; i < n; i++) y[i] = fmaf(x[i], v, y[i]);
}

/* mad_f32 over nt rows, 8 vectors of y held in registers across them (kernels.h). */
static void mad_rows_f32(int64_t n, float *y, const float *x, int64_t ld, const float *v, int64_t nt) {
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256 a[8];
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) a[j] = _mm256_loadu_ps(y + i + 8 * j);
        for (int64_t t = 0; t < nt; t++) {
            const __m256 vv = _mm256_set1_ps(v[t]);
            const float *r = x + t * ld + i;
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) a[j] = _mm256_fmadd_ps(_mm256_loadu_ps(r + 8 * j), vv, a[j]);
        }
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) _mm256_storeu_ps(y + i + 8 * j, a[j]);
    }
    if (i < n)
        for (int64_t t = 0; t < nt; t++) mad_f32(n - i, y + i, x + t * ld + i, v[t]);
}

/* ggml's tiled flash-attention scores (see kernels.h): each of the 64 outputs is an fma chain over
 * d in order, so 8 lanes x 8 accumulators give the scalar twin's bits. */
static void kq_tile64(int64_t D, const float *q, const float *kt, int64_t ld, float *out) {
    __m256 c[8];
    for (int j = 0; j < 8; j++) c[j] = _mm256_setzero_ps();
    for (int64_t d = 0; d < D; d++) {
        const __m256 p = _mm256_set1_ps(q[d]);
        const float *k = kt + d * ld;
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) c[j] = _mm256_fmadd_ps(_mm256_loadu_ps(k + 8 * j), p, c[j]);
    }
    for (int j = 0; j < 8; j++) _mm256_storeu_ps(out + 8 * j, c[j]);
}

/* The AVX2 table: k holds a copy of the scalar table; this overrides what it twins (kernels.c
 * builds it once, only where cpu.c found AVX2/FMA/F16C). */
void sn_kernels_fill_avx2(sn_kernels *k) {
    k->type[SN_GGML_F32].dot = dot_f32;
    k->type[SN_GGML_F16].dot = dot_f16;
    k->type[SN_GGML_BF16].dot = dot_bf16;
    k->type[SN_GGML_Q8_0].dot = dot_q8_0;
    k->type[SN_GGML_Q4_0].dot = dot_q4_0;
    k->mm_q4_0x8 = sn_q4_0x8_mm_avx2;
    k->mm_mxfp4x8 = sn_mxfp4x8_mm_avx2;
    for (int t = 0; t < SN_GGML_TYPE_COUNT; t++) k->type[t].dot_mm = k->type[t].dot;
    k->type[SN_GGML_F32].dot_mm = dot_f32_mm;
    k->type[SN_GGML_F16].dot_mm = dot_f16_mm;
    k->type[SN_GGML_BF16].dot_mm = dot_bf16_mm;
    k->type[SN_GGML_Q4_K].dot_mm = dot_q4_K_mm;
    if (k->tuning.lanes == 8) {
        k->type[SN_GGML_F32].dot = dot_f32_8;
        k->type[SN_GGML_F16].dot = dot_f16_8;
        k->type[SN_GGML_BF16].dot = dot_bf16_8;
        k->type[SN_GGML_F32].dot_mm = dot_f32_mm8;
        k->type[SN_GGML_F16].dot_mm = dot_f16_mm8;
        k->type[SN_GGML_BF16].dot_mm = dot_bf16_mm8;
        k->type[SN_GGML_F16].mv = mv_f16_wide;
        k->type[SN_GGML_BF16].mv = mv_bf16_wide;
    }
    sn_kernels_quants_avx2(k); /* quants_*.c: the types beyond this file */
    sn_kernels_kquants_avx2(k); /* fast Q4_K / Q6_K (kquants_avx2.c) */
    sn_kernels_mm_avx2(k);      /* tiled batches for F32/F16/BF16/Q8_0 (mm_avx2.c) */
    sn_kernels_q4_K_mm_avx2(k); /* Q4_K batches, 8 rows per vector (kquants_mm_avx2.c) */
    k->quant[SN_GGML_F16] = quant_f16;
    k->quant[SN_GGML_Q8_0] = quant_q8_0;
    k->type[SN_KTYPE_INT4G32].dot = k->type[SN_KTYPE_INT4G32].dot_mm = sn_int4_dot_avx2; /* blob weights */
    k->type[SN_KTYPE_INT4G32].gemm4x4 = sn_int4_gemm4x4_avx2;
    k->mm_int4x8 = sn_int4x8_mm_avx2;
    k->quant[SN_KTYPE_INT4G32] = sn_int4_quantize_act_avx2;
    k->mad_f16 = mad_f16;
    k->scale_f16 = scale_f16;
    k->mad_f32 = mad_f32;
    k->mad_rows_f32 = mad_rows_f32;
    k->kq_tile64 = kq_tile64;
}
#pragma GCC pop_options
#else
#include "kernels.h"
void sn_kernels_fill_avx2(sn_kernels *k) { (void)k; } /* never called: cpu.c finds no AVX2 here */
#endif
