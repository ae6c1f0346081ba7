/* x86_avx512.c - AVX-512 kernels (F/BW/VL/DQ; VNNI for int8 dots when present).
 *
 * Same contract as x86_avx2.c: bit-identical to scalar.c, which follows the summation order of
 * ggml's AVX-512 build. The float dots here are that order natively (4 x 16-lane accumulators for
 * vec_dot, one 16-lane accumulator for tinyBLAS); the int8 dots use VPDPBUSD for the exact integer
 * lane sums and keep ggml's per-block fma chain. Anything not overridden comes from the AVX2 table.
 * AMX is never used. */
#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#include "kernels.h"

#include "cpu.h"
#include "int4.h"
#include "q4_0_x8.h"
#include "q4_K_x8.h"
#include "simd_avx2.h"
#include "simd_avx512.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* F16C conversion: the same value as sn_k_h2f, one instruction instead of a branchy function. */
#define h2f(x) _cvtsh_ss(x)

static inline __m512 ld_f32(const void *p, int64_t i) { return _mm512_loadu_ps((const float *)p + i); }
static inline __m512 ld_f16(const void *p, int64_t i) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
}
static inline float sc_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static inline float sc_f16(const void *p, int64_t i) { return h2f(((const uint16_t *)p)[i]); }

#define DOT_VEC(NAME, LD, SCAL, ELT, TAIL)                                               \
    static float NAME(int64_t n, const void *w, const void *a) {                         \
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                      \
        const int64_t np = n & ~(int64_t)63;                                             \
        for (int64_t i = 0; i < np; i += 64) {                                           \
            sn_k_prefetch((const ELT *)w + i, 64 * sizeof(ELT));                         \
            s0 = _mm512_fmadd_ps(LD(w, i), LD(a, i), s0);                                \
            s1 = _mm512_fmadd_ps(LD(w, i + 16), LD(a, i + 16), s1);                      \
            s2 = _mm512_fmadd_ps(LD(w, i + 32), LD(a, i + 32), s2);                      \
            s3 = _mm512_fmadd_ps(LD(w, i + 48), LD(a, i + 48), s3);                      \
        }                                                                                \
        s0 = _mm512_add_ps(s0, s2);                                                      \
        s1 = _mm512_add_ps(s1, s3);                                                      \
        s0 = _mm512_add_ps(s0, s1);                                                      \
        TAIL(sn_avx512_hsum16(s0), np, n, w, a, SCAL);                                          \
    }

#define DOT_MM(NAME, LD, FALLBACK)                                        \
    static float NAME(int64_t n, const void *w, const void *a) {          \
        if (n % 16) return FALLBACK(n, w, a);                             \
        __m512 acc = _mm512_setzero_ps();                                 \
        for (int64_t i = 0; i < n; i += 16) acc = _mm512_fmadd_ps(LD(w, i), LD(a, i), acc); \
        return sn_avx512_hsum16(acc);                                            \
    }

/* 4 rows x 4 tokens, one 16-lane accumulator per output: tinyBLAS's per-element order. */
#define GEMM_FLOAT(NAME, LD, TY, FALLBACK)                                                            \
    static void NAME(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, \
                     int64_t ldy) {                                                                  \
        if (n % 16) {                                                                                \
            for (int t = 0; t < 4; t++)                                                              \
                for (int r = 0; r < 4; r++)                                                          \
                    y[t * ldy + r] = FALLBACK(n, (const char *)w + r * w_row, (const char *)x + t * x_row); \
            return;                                                                                  \
        }                                                                                            \
        const TY *wr[4], *xr[4];                                                                     \
        for (int i = 0; i < 4; i++) {                                                                \
            wr[i] = (const TY *)((const char *)w + i * w_row);                                       \
            xr[i] = (const TY *)((const char *)x + i * x_row);                                       \
        }                                                                                            \
        __m512 c[4][4];                                                                              \
        for (int t = 0; t < 4; t++)                                                                  \
            for (int r = 0; r < 4; r++) c[t][r] = _mm512_setzero_ps();                               \
        for (int64_t i = 0; i < n; i += 16) {                                                        \
            const __m512 a0 = LD(wr[0], i), a1 = LD(wr[1], i), a2 = LD(wr[2], i), a3 = LD(wr[3], i); \
            _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {                                    \
                const __m512 b = LD(xr[t], i);                                                       \
                c[t][0] = _mm512_fmadd_ps(a0, b, c[t][0]);                                           \
                c[t][1] = _mm512_fmadd_ps(a1, b, c[t][1]);                                           \
                c[t][2] = _mm512_fmadd_ps(a2, b, c[t][2]);                                           \
                c[t][3] = _mm512_fmadd_ps(a3, b, c[t][3]);                                           \
            }                                                                                        \
        }                                                                                            \
        for (int t = 0; t < 4; t++)                                                                  \
            for (int r = 0; r < 4; r++) y[t * ldy + r] = sn_avx512_hsum16(c[t][r]);                         \
    }

DOT_VEC(dot_f32, ld_f32, sc_f32, float, SN_K_TAIL_F32_16)
DOT_VEC(dot_f16, ld_f16, sc_f16, uint16_t, SN_K_TAIL_F64)
DOT_MM(dot_f32_mm, ld_f32, dot_f32)
DOT_MM(dot_f16_mm, ld_f16, dot_f16)
GEMM_FLOAT(gemm_f32, ld_f32, float, dot_f32)
GEMM_FLOAT(gemm_f16, ld_f16, uint16_t, dot_f16)

/* Single-token F16 matmul with the activation row widened to f32 once per call (x86_avx2.c's
 * mv_f16_wide at 16 lanes): dot_f16 converts both operands in every row, two uops each on Intel
 * cores. Each row keeps dot_f16's four 16-lane chains over 64-element steps, its reduction and its
 * double tail, on the same float values (the widening is exact): y[r] == dot_f16(row r, x). */
static inline float row_f16_at(int64_t n, const void *w, const float *x, int prefetch) {
    __m512 s[4];
    for (int j = 0; j < 4; j++) s[j] = _mm512_setzero_ps();
    const int64_t np = n & ~(int64_t)63;
    for (int64_t i = 0; i < np; i += 64) {
        if (prefetch) sn_k_prefetch((const uint16_t *)w + i, 128);
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
            s[j] = _mm512_fmadd_ps(ld_f16(w, i + 16 * j), _mm512_loadu_ps(x + i + 16 * j), s[j]);
    }
    const __m512 t = _mm512_add_ps(_mm512_add_ps(s[0], s[2]), _mm512_add_ps(s[1], s[3]));
    double r = np ? (double)sn_avx512_hsum16(t) : 0.0;
    for (int64_t i = np; i < n; i++) r += (double)(sc_f16(w, i) * x[i]);
    return (float)r;
}
static inline float row_f16_wide(int64_t n, const void *w, const float *x) { return row_f16_at(n, w, x, 1); }

/* row_f16_wide on four rows, for the single-token matmul in four far streams (kernels.h
 * sn_k_mv_quarters, which says why): the same operations per row, interleaved, without the
 * prefetch (the hardware prefetchers keep four streams fed, and it cost time; the Q8_0 rows below
 * keep dot_q8_0's, which they need; docs/PERFORMANCE.md). */
static void rows4_f16_wide(int64_t n, const void *const *w, const void *vx, const float *aux, float *y) {
    (void)aux;
    const float *x = vx;
    __m512 s[4][4];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 4; j++) s[r][j] = _mm512_setzero_ps();
    const int64_t np = n & ~(int64_t)63;
    for (int64_t i = 0; i < np; i += 64) {
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            const __m512 xv = _mm512_loadu_ps(x + i + 16 * j);
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) s[r][j] = _mm512_fmadd_ps(ld_f16(w[r], i + 16 * j), xv, s[r][j]);
        }
    }
    for (int r = 0; r < 4; r++) {
        const __m512 t = _mm512_add_ps(_mm512_add_ps(s[r][0], s[r][2]), _mm512_add_ps(s[r][1], s[r][3]));
        double d = np ? (double)sn_avx512_hsum16(t) : 0.0;
        for (int64_t i = np; i < n; i++) d += (double)(sc_f16(w[r], i) * x[i]);
        y[r] = (float)d;
    }
}

/* Short rows, 16 at a time: per row dot_f32's / row_f16_wide's four chains (the same order, and
 * for n % 64 == 0 no tail), then the 16 rows' reductions at once. sn_avx512_hsum16 adds lanes i
 * and i + 8, then i and i + 4 of those, then 0 and 2, 1 and 3, then the two; the same lanes are
 * paired here in transposed vectors (float addition commutes), so out[r] == hsum16(t[r]) bit for
 * bit. Short rows (RWKV-7's LoRA matrices, 64 or 128 inputs) spend most of their time in those
 * reductions one row at a time; sixteen at once run them much faster (docs/PERFORMANCE.md). They
 * keep the dots' software prefetch, which these rows need. */
static inline __m512 hsum16_x16(const __m512 t[16]) {
    __m512 u[8], v[4];
    for (int k = 0; k < 8; k++) /* lanes 0-7: row 2k's lanes i + (i + 8); lanes 8-15: row 2k + 1's */
        u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)),
                             _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)));
    for (int k = 0; k < 4; k++) /* 128-bit lane j: row 4k + j's b_i = a_i + a_(i + 4) */
        v[k] = _mm512_add_ps(_mm512_shuffle_f32x4(u[2 * k], u[2 * k + 1], _MM_SHUFFLE(3, 1, 3, 1)),
                             _mm512_shuffle_f32x4(u[2 * k], u[2 * k + 1], _MM_SHUFFLE(2, 0, 2, 0)));
    /* per 128-bit lane: [v0 b0 + b2, v1 b0 + b2, v0 b1 + b3, v1 b1 + b3], then v2, v3's */
    const __m512 g0 = _mm512_add_ps(_mm512_unpacklo_ps(v[0], v[1]), _mm512_unpackhi_ps(v[0], v[1]));
    const __m512 g1 = _mm512_add_ps(_mm512_unpacklo_ps(v[2], v[3]), _mm512_unpackhi_ps(v[2], v[3]));
    /* lane j, element k: row 4k + j's (b0 + b2) + (b1 + b3); into row order */
    const __m512 h = _mm512_add_ps(_mm512_shuffle_ps(g0, g1, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_ps(g0, g1, _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), h);
}
#define ROWS16(NAME, LD)                                                                                       \
    static void NAME(int64_t n, const void *w, uint64_t w_row, const float *x, float *y) { /* n % 64 == 0 */ \
        __m512 t[16];                                                                                          \
        _Pragma("GCC unroll 16") for (int r = 0; r < 16; r++) {                                               \
            const char *wr = (const char *)w + (uint64_t)r * w_row;                                            \
            sn_k_prefetch(wr, w_row);                                                                          \
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                                        \
            for (int64_t i = 0; i < n; i += 64) {                                                              \
                s0 = _mm512_fmadd_ps(LD(wr, i), _mm512_loadu_ps(x + i), s0);                                   \
                s1 = _mm512_fmadd_ps(LD(wr, i + 16), _mm512_loadu_ps(x + i + 16), s1);                         \
                s2 = _mm512_fmadd_ps(LD(wr, i + 32), _mm512_loadu_ps(x + i + 32), s2);                         \
                s3 = _mm512_fmadd_ps(LD(wr, i + 48), _mm512_loadu_ps(x + i + 48), s3);                         \
            }                                                                                                  \
            t[r] = _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));                                \
        }                                                                                                      \
        _mm512_storeu_ps(y, hsum16_x16(t));                                                                    \
    }
ROWS16(rows16_f32, ld_f32)
ROWS16(rows16_f16, ld_f16)
enum { ROWS16_MAX = 256 }; /* longer rows: the reductions no longer dominate */
static inline int rows16_fit(int64_t n) { return n % 64 == 0 && n > 0 && n <= ROWS16_MAX; }

/* F32 matrices with short rows (RWKV-7's decay LoRA, kept F32 in every file type); others: the dot. */
static int mv_f32_short(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    if (!rows16_fit(n)) return 0;
    int64_t r = 0;
    for (; r + 16 <= R; r += 16) rows16_f32(n, (const char *)w + (uint64_t)r * w_row, w_row, x, y + r);
    for (; r < R; r++) y[r] = dot_f32(n, (const char *)w + (uint64_t)r * w_row, x);
    return 1;
}

/* Rows shorter than one 64-element step (RWKV-7's value LoRA, rank 32): row_f16_wide is then its
 * double tail alone, one dependent chain of adds per row. Eight rows' chains side by side, each
 * adding the same products in the same order, so y[r] == row_f16_wide(row r, x), with eight
 * independent chains in flight (docs/PERFORMANCE.md). */
static void rows8_f16_short(int64_t n, const void *w, uint64_t w_row, int64_t R, const float *x, float *y) {
    int64_t r = 0;
    for (; r + 8 <= R; r += 8) {
        double acc[8] = {0};
        for (int64_t i = 0; i < n; i++)
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)
                acc[j] += (double)(sc_f16((const char *)w + (uint64_t)(r + j) * w_row, i) * x[i]);
        for (int j = 0; j < 8; j++) y[r + j] = (float)acc[j];
    }
    for (; r < R; r++) y[r] = row_f16_wide(n, (const char *)w + (uint64_t)r * w_row, x);
}

enum { MV_STACK = 4096 }; /* floats of activation kept on the stack; longer rows take the heap */
/* Rows longer than this read as they would without the page touch (four far streams where
 * tuning.far_streams, else row by row): one row at a time with the touch reads the whole widened
 * activation (32 KB at 8192) per row, which then no longer stays in L1 beside the streaming
 * weights, while the four streams share each activation load (docs/PERFORMANCE.md). */
enum { PAGE_KICK_MAX_N = 4096 };
static float row_f16_wide_dot(int64_t n, const void *w, const void *xf) { return row_f16_wide(n, w, xf); }
/* The activation widened once, then row by row (with the page touch, kernels.h sn_k_stream, where
 * kick (tuning.page_kick) says so; else each row's line prefetch) or (quarters) four rows a quarter
 * apart. */
static int mv_f16_widened(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y, int quarters,
                          int kick) {
    float stack[MV_STACK] __attribute__((aligned(64)));
    float *xf = n <= MV_STACK ? stack : malloc((size_t)n * sizeof(float));
    if (!xf) return 0;
    const int64_t nv = n & ~(int64_t)15;
    for (int64_t i = 0; i < nv; i += 16) _mm512_storeu_ps(xf + i, ld_f16(x, i));
    for (int64_t i = nv; i < n; i++) xf[i] = sc_f16(x, i);
    if (n < 64) rows8_f16_short(n, w, w_row, R, xf, y);
    else if (rows16_fit(n) && R >= 16) {
        int64_t r = 0;
        for (; r + 16 <= R; r += 16) rows16_f16(n, (const char *)w + (uint64_t)r * w_row, w_row, xf, y + r);
        for (; r < R; r++) y[r] = row_f16_wide(n, (const char *)w + (uint64_t)r * w_row, xf);
    } else if (kick && n <= PAGE_KICK_MAX_N) { /* kernels.h sn_k_stream: the page kick */
        sn_k_stream p = sn_k_stream_start(w, (uint64_t)R * w_row, SN_K_PAGE, SN_K_PAGE_AHEAD);
        for (int64_t r = 0; r < R; r++) {
            const char *wr = (const char *)w + (uint64_t)r * w_row;
            sn_k_stream_to(&p, wr + w_row);
            y[r] = row_f16_at(n, wr, xf, 0);
        }
    } else if (quarters) sn_k_mv_quarters(rows4_f16_wide, n, w, w_row, R, xf, NULL, row_f16_wide_dot, y);
    else for (int64_t r = 0; r < R; r++) y[r] = row_f16_wide(n, (const char *)w + (uint64_t)r * w_row, xf);
    if (xf != stack) free(xf);
    return 1;
}
/* the four tunings of far streams x page kick, installed by sn_kernels_fill_avx512 */
static int mv_f16_wide(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return mv_f16_widened(n, w, w_row, R, x, y, 0, 0);
}
static int mv_f16_quarters(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return mv_f16_widened(n, w, w_row, R, x, y, 1, 0);
}
static int mv_f16_wide_kick(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return mv_f16_widened(n, w, w_row, R, x, y, 0, 1);
}
static int mv_f16_quarters_kick(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    return mv_f16_widened(n, w, w_row, R, x, y, 1, 1);
}

/* BF16 pair lanes as in scalar.c: high half (element 2j+1) first, then the low half. */
static inline __m512 dpbf16(__m512 acc, const uint16_t *w, const uint16_t *a) {
    const __m512i mask = _mm512_set1_epi32((int)0xFFFF0000u);
    const __m512i wv = _mm512_loadu_si512(w), av = _mm512_loadu_si512(a);
    acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_castsi512_ps(_mm512_and_si512(wv, mask)),
                                           _mm512_castsi512_ps(_mm512_and_si512(av, mask))));
    return _mm512_add_ps(acc, _mm512_mul_ps(_mm512_castsi512_ps(_mm512_slli_epi32(wv, 16)),
                                            _mm512_castsi512_ps(_mm512_slli_epi32(av, 16))));
}

static float dot_bf16(int64_t n, const void *vw, const void *va) {
    const uint16_t *w = vw, *a = va;
    __m512 c1 = _mm512_setzero_ps(), c2 = c1;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        c1 = dpbf16(c1, w + i, a + i);
        c2 = dpbf16(c2, w + i + 32, a + i + 32);
    }
    return sn_k_dot_bf16_tail(sn_avx512_hsum16(c1), sn_avx512_hsum16(c2), w, a, i, n);
}

static float dot_bf16_mm(int64_t n, const void *vw, const void *va) {
    if (n % 32) return dot_bf16(n, vw, va);
    const uint16_t *w = vw, *a = va;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 32) acc = dpbf16(acc, w + i, a + i);
    return sn_avx512_hsum16(acc);
}

static void gemm_bf16(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy) {
    if (n % 32) {
        for (int t = 0; t < 4; t++)
            for (int r = 0; r < 4; r++) y[t * ldy + r] = dot_bf16(n, (const char *)w + r * w_row, (const char *)x + t * x_row);
        return;
    }
    const __m512i mask = _mm512_set1_epi32((int)0xFFFF0000u);
    __m512 c[4][4];
    for (int t = 0; t < 4; t++)
        for (int r = 0; r < 4; r++) c[t][r] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 32) {
        __m512 wo[4], we[4];
        for (int r = 0; r < 4; r++) {
            const __m512i v = _mm512_loadu_si512((const uint16_t *)((const char *)w + r * w_row) + i);
            wo[r] = _mm512_castsi512_ps(_mm512_and_si512(v, mask));
            we[r] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
        }
        for (int t = 0; t < 4; t++) {
            const __m512i v = _mm512_loadu_si512((const uint16_t *)((const char *)x + t * x_row) + i);
            const __m512 ao = _mm512_castsi512_ps(_mm512_and_si512(v, mask)), ae = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
            for (int r = 0; r < 4; r++) {
                c[t][r] = _mm512_add_ps(c[t][r], _mm512_mul_ps(wo[r], ao));
                c[t][r] = _mm512_add_ps(c[t][r], _mm512_mul_ps(we[r], ae));
            }
        }
    }
    for (int t = 0; t < 4; t++)
        for (int r = 0; r < 4; r++) y[t * ldy + r] = sn_avx512_hsum16(c[t][r]);
}

static void mad_f16(int64_t n, uint16_t *y, const uint16_t *x, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i),
                            _mm512_cvtps_ph(_mm512_fmadd_ps(ld_f16(x, i), vv, ld_f16(y, i)), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = sn_k_f2h(fmaf(h2f(x[i]), v, h2f(y[i])));
}

static void scale_f16(int64_t n, uint16_t *y, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtps_ph(_mm512_mul_ps(ld_f16(y, i), vv), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = sn_k_f2h(h2f(y[i]) * v);
}

static void mad_f32(int64_t n, float *y, const float *x, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(_mm512_loadu_ps(x + i), vv, _mm512_loadu_ps(y + i)));
    for (; i < n; i++) y[i] = fmaf(x[i], v, y[i]);
}

/* mad_f32 over nt rows, 8 vectors of y held in registers across them (kernels.h). */
static void mad_rows_f32(int64_t n, float *y, const float *x, int64_t ld, const float *v, int64_t nt) {
    int64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m512 a[8];
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) a[j] = _mm512_loadu_ps(y + i + 16 * j);
        for (int64_t t = 0; t < nt; t++) {
            const __m512 vv = _mm512_set1_ps(v[t]);
            const float *r = x + t * ld + i;
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) a[j] = _mm512_fmadd_ps(_mm512_loadu_ps(r + 16 * j), vv, a[j]);
        }
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) _mm512_storeu_ps(y + i + 16 * j, a[j]);
    }
    if (i < n)
        for (int64_t t = 0; t < nt; t++) mad_f32(n - i, y + i, x + t * ld + i, v[t]);
}

static void kq_tile128(int64_t D, const float *q, const float *kt, int64_t ld, float *out) {
    __m512 c[8];
    for (int j = 0; j < 8; j++) c[j] = _mm512_setzero_ps();
    for (int64_t d = 0; d < D; d++) {
        const __m512 p = _mm512_set1_ps(q[d]);
        const float *k = kt + d * ld;
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++) c[j] = _mm512_fmadd_ps(_mm512_loadu_ps(k + 16 * j), p, c[j]);
    }
    for (int j = 0; j < 8; j++) _mm512_storeu_ps(out + 16 * j, c[j]);
}

/* G query rows (G = 1, 2 or 4) against one 64-key tile: 4G accumulators, each key vector loaded
 * once for all rows. A constant G after inlining, so the row loops unroll. */
static inline __attribute__((always_inline)) void kq_tile64_rows(const int G, int64_t D, const float *const *q,
                                                                 const float *kt, int64_t ld, float *out) {
    __m512 c[4][4];
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) c[g][j] = _mm512_setzero_ps();
    for (int64_t d = 0; d < D; d++) {
        const float *k = kt + d * ld;
        __m512 p[4];
        _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) p[g] = _mm512_set1_ps(q[g][d]);
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            const __m512 kv = _mm512_loadu_ps(k + 16 * j);
            _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) c[g][j] = _mm512_fmadd_ps(kv, p[g], c[g][j]);
        }
    }
    _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) _mm512_storeu_ps(out + 64 * g + 16 * j, c[g][j]);
}

static void kq_tile64(int64_t D, const float *q, const float *kt, int64_t ld, float *out) {
    kq_tile64_rows(1, D, &q, kt, ld, out);
}

static void kq_tile64xg(int64_t D, const float *const *q, int G, const float *kt, int64_t ld, float *out) {
    if (G == 4) kq_tile64_rows(4, D, q, kt, ld, out);
    else kq_tile64_rows(2, D, q, kt, ld, out);
}

/* mad_rows_f32 for G accumulators (2 or 4) over the same rows, W vectors of each held in registers
 * (G * W = 16): each row vector is loaded once for all of them. */
static inline __attribute__((always_inline)) void mad_rows_g(const int G, int64_t n, float *const *y, const float *x,
                                                             int64_t ld, const float *const *v, int64_t nt) {
    const int W = 16 / G, CW = 16 * W;
    int64_t i = 0;
    for (; i + CW <= n; i += CW) {
        __m512 a[4][8];
        _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
            _Pragma("GCC unroll 8") for (int j = 0; j < W; j++) a[g][j] = _mm512_loadu_ps(y[g] + i + 16 * j);
        for (int64_t t = 0; t < nt; t++) {
            __m512 w[4];
            _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) w[g] = _mm512_set1_ps(v[g][t]);
            const float *r = x + t * ld + i;
            _Pragma("GCC unroll 8") for (int j = 0; j < W; j++) {
                const __m512 xv = _mm512_loadu_ps(r + 16 * j);
                _Pragma("GCC unroll 4") for (int g = 0; g < G; g++) a[g][j] = _mm512_fmadd_ps(xv, w[g], a[g][j]);
            }
        }
        _Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
            _Pragma("GCC unroll 8") for (int j = 0; j < W; j++) _mm512_storeu_ps(y[g] + i + 16 * j, a[g][j]);
    }
    if (i < n)
        for (int64_t t = 0; t < nt; t++)
            for (int g = 0; g < G; g++) mad_f32(n - i, y[g] + i, x + t * ld + i, v[g][t]);
}

static void mad_rowsg_f32(int64_t n, float *const *y, int G, const float *x, int64_t ld, const float *const *v,
                          int64_t nt) {
    if (G == 4) mad_rows_g(4, n, y, x, ld, v, nt);
    else mad_rows_g(2, n, y, x, ld, v, nt);
}

static void quant_f16(const float *x, void *vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) y[i] = sn_k_f2h(x[i]);
}

#pragma GCC push_options
#pragma GCC target("avx512vnni")
/* Two blocks per 512-bit VPDPBUSD: the low 8 lanes are block b, the high 8 are block b+1, each lane
 * the sum of 4 products, exactly the lanes ggml builds with 256-bit VPDPBUSD. */
static inline __m512i lane_dot2(__m512i x, __m512i y) {
    const __mmask64 neg = _mm512_movepi8_mask(x);
    const __m512i ax = _mm512_abs_epi8(x);
    const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), ax, sy);
}

static inline __m512i load2_q8(const sn_block_q8_0 *b) { /* qs of blocks b and b+1 */
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)b[0].qs)),
                              _mm256_loadu_si256((const __m256i *)b[1].qs), 1);
}

static float dot_q8_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q8_0 *w = vw, *a = va;
    const int64_t nb = n / SN_QK8_0;
    __m256 acc = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        sn_k_prefetch(&w[b], 2 * sizeof w[b]);
        const __m512 q = _mm512_cvtepi32_ps(lane_dot2(load2_q8(w + b), load2_q8(a + b)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * h2f(a[b].d)), _mm512_castps512_ps256(q), acc);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b + 1].d) * h2f(a[b + 1].d)), _mm512_extractf32x8_ps(q, 1), acc);
    }
    for (; b < nb; b++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)w[b].qs), y = _mm256_loadu_si256((const __m256i *)a[b].qs);
        const __m256i q = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(w[b].d) * h2f(a[b].d)), _mm256_cvtepi32_ps(q), acc);
    }
    return sn_avx2_hsum8(acc);
}

static inline __m256i unpack_q4(const uint8_t *qs) {
    const __m128i raw = _mm_loadu_si128((const __m128i *)qs);
    const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1);
    return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

static float dot_q4_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q4_0 *w = vw;
    const sn_block_q8_0 *a = va;
    const int64_t nb = n / SN_QK4_0;
    float s = 0;
    int64_t b = 0;
    /* integer sums of 8 blocks at a time (one hadd tree instead of 8 horizontal sums), then
     * ggml's per-block fma chain in order */
    for (; b + 8 <= nb; b += 8) {
        __m256i l[8];
        for (int k = 0; k < 8; k += 2) {
            const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(unpack_q4(w[b + k].qs)), unpack_q4(w[b + k + 1].qs), 1);
            const __m512i v = lane_dot2(x, load2_q8(a + b + k));
            l[k] = _mm512_castsi512_si256(v);
            l[k + 1] = _mm512_extracti64x4_epi64(v, 1);
        }
        const __m256i g0 = _mm256_hadd_epi32(_mm256_hadd_epi32(l[0], l[1]), _mm256_hadd_epi32(l[2], l[3]));
        const __m256i g1 = _mm256_hadd_epi32(_mm256_hadd_epi32(l[4], l[5]), _mm256_hadd_epi32(l[6], l[7]));
        const __m128i s0 = _mm_add_epi32(_mm256_castsi256_si128(g0), _mm256_extracti128_si256(g0, 1));
        const __m128i s1 = _mm_add_epi32(_mm256_castsi256_si128(g1), _mm256_extracti128_si256(g1, 1));
        const __m256 fi = _mm256_cvtepi32_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(s0), s1, 1));
        const __m256 dw = _mm256_cvtph_ps(_mm_setr_epi16((short)w[b].d, (short)w[b + 1].d, (short)w[b + 2].d, (short)w[b + 3].d,
                                                         (short)w[b + 4].d, (short)w[b + 5].d, (short)w[b + 6].d, (short)w[b + 7].d));
        const __m256 da = _mm256_cvtph_ps(_mm_setr_epi16((short)a[b].d, (short)a[b + 1].d, (short)a[b + 2].d, (short)a[b + 3].d,
                                                         (short)a[b + 4].d, (short)a[b + 5].d, (short)a[b + 6].d, (short)a[b + 7].d));
        float fv[8], dv[8];
        _mm256_storeu_ps(fv, fi);
        _mm256_storeu_ps(dv, _mm256_mul_ps(dw, da));
        for (int k = 0; k < 8; k++) s = fmaf(fv[k], dv[k], s);
    }
    for (; b < nb; b++) {
        const __m256i x = unpack_q4(w[b].qs), y = _mm256_loadu_si256((const __m256i *)a[b].qs);
        const __m256i q = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
        s = fmaf((float)sn_avx2_hsum_i32(q), h2f(w[b].d) * h2f(a[b].d), s);
    }
    return s;
}

/* dot_q8_0 on four rows (sn_k_mv_quarters), two rows per 512-bit accumulator: low 8 lanes one row, high
 * 8 lanes the other. Each lane is the same 4-product sum as in dot_q8_0 (the 256-bit halves of a
 * VPDPBUSD are independent), each scale the same float product h2f(w.d) * h2f(a.d) (aux holds the
 * activation's), each row's fma chain the same blocks in the same order, and each half ends in the
 * same hsum8: y[i] == dot_q8_0(row i, x). */
static void rows4_q8_0(int64_t n, const void *const *vw, const void *vx, const float *da, float *y) {
    const sn_block_q8_0 *a = vx;
    const int64_t nb = n / SN_QK8_0;
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int64_t b = 0; b < nb; b++) {
        const __m512i y2 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)a[b].qs));
        _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
            const sn_block_q8_0 *r0 = (const sn_block_q8_0 *)vw[2 * p] + b, *r1 = (const sn_block_q8_0 *)vw[2 * p + 1] + b;
            sn_k_prefetch(r0, sizeof *r0);
            sn_k_prefetch(r1, sizeof *r1);
            const __m512i x2 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)r0->qs)),
                                                  _mm256_loadu_si256((const __m256i *)r1->qs), 1);
            const __m512 dw = _mm512_insertf32x8(_mm512_set1_ps(h2f(r0->d)), _mm256_set1_ps(h2f(r1->d)), 1);
            const __m512 q = _mm512_cvtepi32_ps(lane_dot2(x2, y2));
            acc[p] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(da[b])), q, acc[p]);
        }
    }
    _Pragma("GCC unroll 2") for (int p = 0; p < 2; p++) {
        y[2 * p] = sn_avx2_hsum8(_mm512_castps512_ps256(acc[p]));
        y[2 * p + 1] = sn_avx2_hsum8(_mm512_extractf32x8_ps(acc[p], 1));
    }
}

enum { MV_Q8_BLOCKS = 1024 }; /* activation scales kept on the stack (rows up to 32768) */
static int mv_q8_0_quarters(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    const int64_t nb = n / SN_QK8_0;
    if (nb > MV_Q8_BLOCKS) return 0; /* the caller then runs dot_q8_0 row by row */
    const sn_block_q8_0 *a = x;
    float da[MV_Q8_BLOCKS];
    for (int64_t b = 0; b < nb; b++) da[b] = h2f(a[b].d);
    sn_k_mv_quarters(rows4_q8_0, n, w, w_row, R, x, da, dot_q8_0, y);
    return 1;
}

/* 4 rows x 4 tokens of Q8_0: lane = dpbusd(w + 128, a) - 128 * sum(a) (exact), then ggml's
 * per-block fma into 8-lane accumulators and hsum8 - the order of dot_q8_0 for every output. A
 * 512-bit register holds two outputs (one row, tokens 2p and 2p+1), so each instruction serves
 * two of the 16 fma chains. */
static void gemm_q8_0(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy) {
    const int64_t nb = n / SN_QK8_0;
    const sn_block_q8_0 *wr[4], *xr[4];
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 4; i++) {
        wr[i] = (const sn_block_q8_0 *)((const char *)w + i * w_row);
        xr[i] = (const sn_block_q8_0 *)((const char *)x + i * x_row);
    }
    const __m512i bias = _mm512_set1_epi8((char)0x80), ones = _mm512_set1_epi8(1);
    __m512 c[4][2]; /* [row][token pair]: low 8 lanes token 2p, high 8 lanes token 2p + 1 */
    _Pragma("GCC unroll 16")
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        __m512i a[2], corr[2];
        __m512 da[2];
        _Pragma("GCC unroll 2")
        for (int p = 0; p < 2; p++) {
            a[p] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)xr[2 * p][b].qs)),
                                      _mm256_loadu_si256((const __m256i *)xr[2 * p + 1][b].qs), 1);
            corr[p] = _mm512_slli_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, a[p]), 7);
            da[p] = _mm512_insertf32x8(_mm512_set1_ps(h2f(xr[2 * p][b].d)), _mm256_set1_ps(h2f(xr[2 * p + 1][b].d)), 1);
        }
        _Pragma("GCC unroll 16")
        for (int r = 0; r < 4; r++) {
            const __m512i wu = _mm512_xor_si512(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)wr[r][b].qs)), bias);
            const __m512 dw = _mm512_set1_ps(h2f(wr[r][b].d));
            _Pragma("GCC unroll 2")
            for (int p = 0; p < 2; p++) {
                const __m512i l = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wu, a[p]), corr[p]);
                c[r][p] = _mm512_fmadd_ps(_mm512_mul_ps(dw, da[p]), _mm512_cvtepi32_ps(l), c[r][p]);
            }
        }
    }
    _Pragma("GCC unroll 16")
    for (int r = 0; r < 4; r++)
        _Pragma("GCC unroll 2")
        for (int p = 0; p < 2; p++) {
            y[2 * p * ldy + r] = sn_avx2_hsum8(_mm512_castps512_ps256(c[r][p]));
            y[(2 * p + 1) * ldy + r] = sn_avx2_hsum8(_mm512_extractf32x8_ps(c[r][p], 1));
        }
}

/* 4 rows x 4 tokens of Q4_0: per output one integer sum per block, then s = fma(isum, d, s) in
 * block order (llama.cpp's repacked q4_0 order), done for 16 outputs at once in a vector. */
static void gemm_q4_0(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy) {
    const int64_t nb = n / SN_QK4_0;
    const sn_block_q4_0 *wr[4];
    const sn_block_q8_0 *xr[4];
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 4; i++) {
        wr[i] = (const sn_block_q4_0 *)((const char *)w + i * w_row);
        xr[i] = (const sn_block_q8_0 *)((const char *)x + i * x_row);
    }
    const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi8(1);
    __m512 acc = _mm512_setzero_ps(); /* output o = t * 4 + r */
    for (int64_t b = 0; b < nb; b++) {
        __m256i wq[4];
        float dw[4];
        _Pragma("GCC unroll 16")
        for (int r = 0; r < 4; r++) {
            const __m128i raw = _mm_loadu_si128((const __m128i *)wr[r][b].qs);
            wq[r] = _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1), m4);
            dw[r] = h2f(wr[r][b].d);
        }
        __m256i lanes[16];
        float d[16];
        _Pragma("GCC unroll 16")
        for (int t = 0; t < 4; t++) {
            const __m256i a = _mm256_loadu_si256((const __m256i *)xr[t][b].qs);
            const __m256i corr = _mm256_slli_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, a), 3);
            const float da = h2f(xr[t][b].d);
            _Pragma("GCC unroll 16")
            for (int r = 0; r < 4; r++) {
                lanes[t * 4 + r] = _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), wq[r], a), corr);
                d[t * 4 + r] = dw[r] * da;
            }
        }
        /* horizontal sums of 16 vectors of 8 lanes -> 16 ints */
        __m256i h[8];
        _Pragma("GCC unroll 16")
        for (int i = 0; i < 8; i++) h[i] = _mm256_hadd_epi32(lanes[2 * i], lanes[2 * i + 1]);
        __m256i g[4];
        _Pragma("GCC unroll 16")
        for (int i = 0; i < 4; i++) g[i] = _mm256_hadd_epi32(h[2 * i], h[2 * i + 1]);
        /* g[i] lanes: [o0 lo, o1 lo, o2 lo, o3 lo, o0 hi, o1 hi, o2 hi, o3 hi] for outputs 4i..4i+3 */
        int isum[16];
        _Pragma("GCC unroll 16")
        for (int i = 0; i < 4; i++) {
            const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(g[i]), _mm256_extracti128_si256(g[i], 1));
            _mm_storeu_si128((__m128i *)(isum + 4 * i), s4);
        }
        const __m512 fi = _mm512_cvtepi32_ps(_mm512_loadu_si512(isum));
        acc = _mm512_fmadd_ps(fi, _mm512_loadu_ps(d), acc);
    }
    float out[16];
    _mm512_storeu_ps(out, acc);
    _Pragma("GCC unroll 16")
    for (int t = 0; t < 4; t++)
        _Pragma("GCC unroll 16")
        for (int r = 0; r < 4; r++) y[t * ldy + r] = out[t * 4 + r];
}
#pragma GCC pop_options

/* This file's kernels per weight type: the single-token dot, the batched one and the 4x4 tile.
 * Decode stays one mapped row per call: 4-row single-token kernels (f16, q8_0) were slower here;
 * Q4_0 decode runs on the repacked 8-row layout (q4_0_x8.c). */
typedef struct {
    int type;
    sn_dot_fn dot, dot_mm;
    void (*gemm4x4)(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy);
} own_kernels;
static const own_kernels k_float[] = {
    {SN_GGML_F32, dot_f32, dot_f32_mm, gemm_f32},
    {SN_GGML_F16, dot_f16, dot_f16_mm, gemm_f16},
    {SN_GGML_BF16, dot_bf16, dot_bf16_mm, gemm_bf16},
};
static const own_kernels k_vnni[] = { /* where cpu.c found AVX512-VNNI */
    {SN_GGML_Q8_0, dot_q8_0, dot_q8_0, gemm_q8_0},
    {SN_GGML_Q4_0, dot_q4_0, dot_q4_0, gemm_q4_0},
};

static void install(sn_kernels *k, const own_kernels *rows, size_t count) {
    for (size_t i = 0; i < count; i++) {
        k->type[rows[i].type].dot = rows[i].dot;
        k->type[rows[i].type].dot_mm = rows[i].dot_mm;
        k->type[rows[i].type].gemm4x4 = rows[i].gemm4x4;
    }
}

/* The AVX-512 table: k holds a copy of the AVX2 table (base); this overrides what it twins
 * (kernels.c builds it once, only where cpu.c found AVX-512 F/BW/VL/DQ). */
void sn_kernels_fill_avx512(sn_kernels *k, const sn_kernels *base) {
    const uint32_t f = sn_cpu_features();
    /* batched order = single-token order for every type this table inherits, but Q4_K's */
    for (int t = 0; t < SN_GGML_TYPE_COUNT; t++) k->type[t].dot_mm = k->type[t].dot;
    k->type[SN_GGML_Q4_K].dot_mm = base->type[SN_GGML_Q4_K].dot_mm; /* AVX2's is already per-block integer work */
    install(k, k_float, sizeof k_float / sizeof k_float[0]);
    if (f & SN_CPU_AVX512VNNI) {
        install(k, k_vnni, sizeof k_vnni / sizeof k_vnni[0]);
        k->mm_q4_0x8 = k->tuning.far_streams ? sn_q4_0x8_mm_avx512vnni_far : sn_q4_0x8_mm_avx512vnni;
        k->mm_mxfp4x8 = sn_mxfp4x8_mm_avx512vnni;
        k->mv_q4_Kx8 = sn_q4_Kx8_mv_avx512vnni;
    }
    sn_kernels_quants_avx512(k); /* quants_*.c: the types beyond this file */
    if (f & SN_CPU_AVX512VNNI) sn_kernels_kquants_avx512(k); /* Q4_K / Q6_K decode dots */
    /* The AVX2 batched kernels sum floats in 8 lanes; this table's float order is 16 lanes
     * (restored below for SN_GGML_LANES=8), and its own VNNI tiles serve Q8_0. */
    for (int t = 0; t < SN_KTYPE_COUNT; t++) {
        k->type[t].mm = NULL;
        k->type[t].mv = NULL;
    }
    sn_kernels_mm_avx512(k); /* F32 / F16 batches, cache-blocked (mm_avx512.c) */
    sn_kernels_mxfp4_x86(k, 1); /* MXFP4 dot and 8-row single-token matmul (mxfp4_x86.c) */
    const int quarters = k->tuning.far_streams; /* see sn_k_mv_quarters */
    /* 16-lane order; SN_GGML_LANES=8 restores AVX2's below */
    k->type[SN_GGML_F16].mv = k->tuning.page_kick ? (quarters ? mv_f16_quarters_kick : mv_f16_wide_kick)
                                                  : quarters ? mv_f16_quarters : mv_f16_wide;
    k->type[SN_GGML_F32].mv = mv_f32_short;
    if (quarters && (f & SN_CPU_AVX512VNNI)) {
        k->type[SN_GGML_Q8_0].mv = mv_q8_0_quarters;
        sn_kernels_kquants_mv_avx512(k); /* Q6_K */
    }
    if (f & SN_CPU_AVX512VNNI) sn_kernels_q8_0_mm_avx512(k); /* Q8_0 batches, 16 rows per vector */
    else k->type[SN_GGML_Q8_0].mm = base->type[SN_GGML_Q8_0].mm;
    if (f & SN_CPU_AVX512VNNI) sn_kernels_q4_K_mm_avx512(k); /* Q4_K batches, 16 rows per vector */
    else k->type[SN_GGML_Q4_K].mm = base->type[SN_GGML_Q4_K].mm;
    if (k->tuning.lanes == 8) { /* SN_GGML_LANES=8 here: the AVX2 table's 8-lane float order */
        static const int float_types[] = {SN_GGML_F32, SN_GGML_F16, SN_GGML_BF16};
        for (int i = 0; i < 3; i++) {
            const int t = float_types[i];
            k->type[t].dot = base->type[t].dot;
            k->type[t].dot_mm = base->type[t].dot_mm;
            k->type[t].gemm4x4 = NULL;
            k->type[t].mm = base->type[t].mm;
            k->type[t].mv = base->type[t].mv;
        }
    }
    k->quant[SN_GGML_F16] = quant_f16;
    k->quant[SN_KTYPE_INT4G32] = sn_int4_quantize_act_avx512;
    if (f & SN_CPU_AVX512VNNI) { /* blob weights */
        k->type[SN_KTYPE_INT4G32].dot = k->type[SN_KTYPE_INT4G32].dot_mm = sn_int4_dot_avx512vnni;
        k->type[SN_KTYPE_INT4G32].gemm4x4 = sn_int4_gemm4x4_avx512vnni;
        k->mm_int4x8 = k->tuning.far_streams ? sn_int4x8_mm_avx512vnni_far : sn_int4x8_mm_avx512vnni;
    }
    k->mad_f16 = mad_f16;
    k->scale_f16 = scale_f16;
    k->mad_f32 = mad_f32;
    k->mad_rows_f32 = mad_rows_f32;
    k->kq_tile64 = kq_tile64;
    k->kq_tile128 = kq_tile128;
    k->kq_tile64xg = kq_tile64xg;
    k->mad_rowsg_f32 = mad_rowsg_f32;
}
#pragma GCC pop_options
#else
#include "kernels.h"
void sn_kernels_fill_avx512(sn_kernels *k, const sn_kernels *base) { (void)k, (void)base; } /* never called */
#endif
