/* mm_float.h - the register-tiled, cache-blocked batched float matmul, written once for every
 * vector width (mm_avx2.c: 8 lanes, mm_avx512.c: 16 lanes). Include it after the file's
 * `#pragma GCC target(...)`, having defined:
 *   MM_V            the float vector type (__m256, __m512), MM_LANES its lane count
 *   MM_TILE_T       tokens per register tile (rows per tile are TILE_R = 4; 3, 4 or 6)
 *   MM_ZERO() MM_LOAD(p) MM_STORE(p, v) MM_FMA(a, b, c)   aligned load/store, c + a * b fused
 *   MM_HSUM(v)      ggml's horizontal sum for that width (the order tinyBLAS reduces in)
 *
 * Each output is tinyBLAS's: one MM_LANES-wide accumulator, acc = fma(w[i..], x[i..], acc) for
 * i = 0, MM_LANES, ... in order, then MM_HSUM. Which tile an output belongs to changes nothing
 * about that order, so the tiling below is our own choice.
 *
 * Cache blocking: a block of ROW_BLOCK weight rows meets every token of a group of TOK_GROUP;
 * long rows are cut into chunks of KC elements so the block's chunk stays in L1 while every token
 * tile passes it (each output's accumulator is parked in `acc` between chunks: storing and
 * reloading a float is exact, so every lane still runs one fma chain in element order). */
#ifndef SN_MM_FLOAT_H
#define SN_MM_FLOAT_H
#include <stdint.h>
#include <stdlib.h>

#ifndef SN_AI
#define SN_AI static inline __attribute__((always_inline))
#endif

enum { ROW_BLOCK = 16, TOK_GROUP = 64, TILE_R = 4, TILE_T = MM_TILE_T, KC = 512 };
/* MM_SWITCH_SHAPE below has a case for every shape the driver makes only at these widths */
_Static_assert(MM_TILE_T == 3 || MM_TILE_T == 4 || MM_TILE_T == 6, "mm_float.h: MM_TILE_T must be 3, 4 or 6");

/* Tile modes: FIRST starts the accumulators at zero (else loads them from acc), LAST writes the
 * horizontal sums to y (else parks the accumulators in acc). */
enum { FIRST = 1, LAST = 2 };

/* The accumulators of one RM x RN tile: c[t][r] for token t, row r. */
#define TILE_BEGIN(RM, RN)                                                                        \
    MM_V c[TILE_T][TILE_R];                                                                       \
    _Pragma("GCC unroll 8") for (int t = 0; t < RN; t++)                                          \
        _Pragma("GCC unroll 4") for (int r = 0; r < RM; r++)                                      \
            c[t][r] = (mode & FIRST) ? MM_ZERO() : MM_LOAD(acc + (t * ROW_BLOCK + r) * MM_LANES);
#define TILE_END(RM, RN)                                                                          \
    _Pragma("GCC unroll 8") for (int t = 0; t < RN; t++)                                          \
        _Pragma("GCC unroll 4") for (int r = 0; r < RM; r++) {                                    \
            if (mode & LAST) y[t * ldy + r] = MM_HSUM(c[t][r]);                                   \
            else MM_STORE(acc + (t * ROW_BLOCK + r) * MM_LANES, c[t][r]);                          \
        }

/* One RM x RN tile of a float type whose loader LD(p, i) widens MM_LANES elements at i. */
#define FLOAT_TILE(NAME, LD)                                                                      \
    SN_AI void NAME(int64_t n, const char *w, uint64_t w_row, const char *x, uint64_t x_row,     \
                    float *acc, int mode, float *y, int64_t ldy, const int RM, const int RN) {   \
        TILE_BEGIN(RM, RN)                                                                        \
        for (int64_t i = 0; i < n; i += MM_LANES) {                                               \
            MM_V b[TILE_T];                                                                       \
            _Pragma("GCC unroll 8") for (int t = 0; t < RN; t++) b[t] = LD(x + (uint64_t)t * x_row, i); \
            _Pragma("GCC unroll 4") for (int r = 0; r < RM; r++) {                                \
                const MM_V a = LD(w + (uint64_t)r * w_row, i);                                    \
                _Pragma("GCC unroll 8") for (int t = 0; t < RN; t++) c[t][r] = MM_FMA(a, b[t], c[t][r]); \
            }                                                                                     \
        }                                                                                         \
        TILE_END(RM, RN)                                                                          \
    }

/* The driver takes the tile through a switch on its shape, so that every shape is a straight
 * call of a fully unrolled body; SHAPE(F, RM, RN) is the call of tile F for one shape. */
/* the shapes with RN tokens, all row counts */
#define MM_SHAPES_RN(SHAPE, F, RN)                                      \
    case 4 * 8 + RN: SHAPE(F, 4, RN); break;                            \
    case 3 * 8 + RN: SHAPE(F, 3, RN); break;                            \
    case 2 * 8 + RN: SHAPE(F, 2, RN); break;                            \
    case 1 * 8 + RN: SHAPE(F, 1, RN); break;
#if MM_TILE_T >= 6
#define MM_SHAPES_WIDE(SHAPE, F) MM_SHAPES_RN(SHAPE, F, 6) MM_SHAPES_RN(SHAPE, F, 5) MM_SHAPES_RN(SHAPE, F, 4)
#elif MM_TILE_T >= 4
#define MM_SHAPES_WIDE(SHAPE, F) MM_SHAPES_RN(SHAPE, F, 4)
#else
#define MM_SHAPES_WIDE(SHAPE, F)
#endif
#define MM_SWITCH_SHAPE(rm, rn, SHAPE, F)                                                          \
    switch ((rm) * 8 + (rn)) {                                                                     \
        MM_SHAPES_WIDE(SHAPE, F)                                                                   \
    case 4 * 8 + 3: SHAPE(F, 4, 3); break;                                                            \
    case 4 * 8 + 2: SHAPE(F, 4, 2); break;                                                            \
    case 4 * 8 + 1: SHAPE(F, 4, 1); break;                                                            \
    case 3 * 8 + 3: SHAPE(F, 3, 3); break;                                                            \
    case 3 * 8 + 2: SHAPE(F, 3, 2); break;                                                            \
    case 3 * 8 + 1: SHAPE(F, 3, 1); break;                                                            \
    case 2 * 8 + 3: SHAPE(F, 2, 3); break;                                                            \
    case 2 * 8 + 2: SHAPE(F, 2, 2); break;                                                            \
    case 2 * 8 + 1: SHAPE(F, 2, 1); break;                                                            \
    case 1 * 8 + 3: SHAPE(F, 1, 3); break;                                                            \
    case 1 * 8 + 2: SHAPE(F, 1, 2); break;                                                            \
    default: SHAPE(F, 1, 1); break;                                                                   \
    }

typedef void (*tile_fn)(int64_t n, const char *w, uint64_t w_row, const char *x, uint64_t x_row, float *acc,
                        int mode, float *y, int64_t ldy, int rm, int rn);

#define TILE_ANY(TILE)                                                                              \
    static void TILE##_any(int64_t n, const char *w, uint64_t w_row, const char *x, uint64_t x_row, \
                           float *acc, int mode, float *y, int64_t ldy, int rm, int rn) {           \
        MM_SWITCH_SHAPE(rm, rn, MM_FLOAT_SHAPE, TILE)                                               \
    }
#define MM_FLOAT_SHAPE(TILE, RM, RN) TILE(n, w, w_row, x, x_row, acc, mode, y, ldy, RM, RN)

/* One cache block's pass of one K chunk: every TILE_R x TILE_T tile of the block's nr rows x nt
 * tokens, row i at w + i * w_row, token j at x + j * x_row, output (j, i) at y[j * ldy + i]; each
 * tile's accumulators parked at its place in acc. */
static inline void block_tiles(tile_fn tile, int64_t kn, const char *w, uint64_t w_row, const char *x, uint64_t x_row,
                               int64_t nt, int64_t nr, float *acc, int mode, float *y, int64_t ldy) {
    for (int64_t j = 0; j < nt; j += TILE_T) {
        const int rn = nt - j < TILE_T ? (int)(nt - j) : TILE_T;
        for (int64_t i = 0; i < nr; i += TILE_R) {
            const int rm = nr - i < TILE_R ? (int)(nr - i) : TILE_R;
            tile(kn, w + (uint64_t)i * w_row, w_row, x + (uint64_t)j * x_row, x_row, acc + (j * ROW_BLOCK + i) * MM_LANES,
                 mode, y + j * ldy + i, ldy, rm, rn);
        }
    }
}

/* The blocked loop around a tile function. wb32 / xb32: bytes of 32 elements of a weight /
 * activation row (chunk offsets); kc: the K chunk (KC, or a multiple of 32 at least n for none). */
static void drive(tile_fn tile, uint64_t wb32, uint64_t xb32, int64_t kc, int64_t n, const void *vw, uint64_t w_row,
                  int64_t R, const void *vx, uint64_t x_row, int64_t T, float *y, int64_t ldy) {
    const char *w = vw, *x = vx;
    float acc[TOK_GROUP * ROW_BLOCK * MM_LANES] __attribute__((aligned(64)));
    for (int64_t tg = 0; tg < T; tg += TOK_GROUP) {
        const int64_t te = tg + TOK_GROUP < T ? tg + TOK_GROUP : T;
        for (int64_t rb = 0; rb < R; rb += ROW_BLOCK) {
            const int64_t re = rb + ROW_BLOCK < R ? rb + ROW_BLOCK : R;
            for (int64_t k0 = 0; k0 < n; k0 += kc) {
                const int64_t kn = n - k0 < kc ? n - k0 : kc;
                const int mode = (k0 == 0 ? FIRST : 0) | (k0 + kn == n ? LAST : 0);
                const char *wk = w + (uint64_t)(k0 / 32) * wb32, *xk = x + (uint64_t)(k0 / 32) * xb32;
                block_tiles(tile, kn, wk + (uint64_t)rb * w_row, w_row, xk + (uint64_t)tg * x_row, x_row, te - tg, re - rb,
                            acc, mode, y + tg * ldy + rb, ldy);
            }
        }
    }
}

/* The widening driver, for types whose loads convert (F16, BF16) on a core where the conversions
 * compete with the fused multiply-adds for the same pipes (on AVX2 cores a converting tile runs at
 * about half the f32 tile's rate; docs/PERFORMANCE.md). The token
 * group's activation rows are widened to f32 once per call, and each chunk of a block's weight rows
 * once per token group, into buffers; the f32 tile runs on the buffers. So an activation is
 * converted once per call (not once per register tile) and a weight once per token group (not once
 * per 3 tokens). f16 -> f32 and bf16 -> f32 are exact, so every output's fma chain is the one the
 * converting tile computes, bit for bit. KW: the weight chunk length here, so the block's widened
 * chunk (ROW_BLOCK x KW floats, 16 KB at 8 lanes) stays in L1 while the token tiles pass it. The
 * activation buffer is min(T, TOK_GROUP) x n floats (1 MB for 64 tokens of 4096). Returns 0 if the
 * buffers cannot be had (the caller then declines, and sn_matmul's fallback computes the same
 * values). */
enum { KW = 256 };
typedef void (*widen_fn)(const char *src, float *dst, int64_t n);
#define WIDEN(NAME, LD)                                                                           \
    static void NAME(const char *src, float *dst, int64_t n) {                                    \
        for (int64_t i = 0; i < n; i += MM_LANES) MM_STORE(dst + i, LD(src, i));                  \
    }

__attribute__((unused)) static int drive_widened(widen_fn widen, tile_fn tile, uint64_t elt_bytes, int64_t n,
                                                 const void *vw, uint64_t w_row, int64_t R, const void *vx,
                                                 uint64_t x_row, int64_t T, float *y, int64_t ldy) {
    const char *w = vw, *x = vx;
    const int64_t tgn = T < TOK_GROUP ? T : TOK_GROUP;
    const size_t bytes = ((size_t)(tgn * n + ROW_BLOCK * KW) * sizeof(float) + 63) & ~(size_t)63;
    float *buf = aligned_alloc(64, bytes);
    if (!buf) return 0;
    float *xw = buf, *ww = buf + tgn * n;
    const uint64_t bw = KW * sizeof(float), bx = (uint64_t)n * sizeof(float);
    float acc[TOK_GROUP * ROW_BLOCK * MM_LANES] __attribute__((aligned(64)));
    for (int64_t tg = 0; tg < T; tg += TOK_GROUP) {
        const int64_t te = tg + TOK_GROUP < T ? tg + TOK_GROUP : T;
        for (int64_t t = tg; t < te; t++) widen(x + (uint64_t)t * x_row, xw + (t - tg) * n, n);
        for (int64_t rb = 0; rb < R; rb += ROW_BLOCK) {
            const int64_t re = rb + ROW_BLOCK < R ? rb + ROW_BLOCK : R;
            for (int64_t k0 = 0; k0 < n; k0 += KW) {
                const int64_t kn = n - k0 < KW ? n - k0 : KW;
                const int mode = (k0 == 0 ? FIRST : 0) | (k0 + kn == n ? LAST : 0);
                for (int64_t r = rb; r < re; r++)
                    widen(w + (uint64_t)r * w_row + (uint64_t)k0 * elt_bytes, ww + (r - rb) * KW, kn);
                block_tiles(tile, kn, (const char *)ww, bw, (const char *)(xw + k0), bx, te - tg, re - rb, acc, mode,
                            y + tg * ldy + rb, ldy);
            }
        }
    }
    free(buf);
    return 1;
}

/* sn_kernels.mm for a float type of ELT_BYTES per element, through the widening driver: WIDEN_F
 * converts its rows, F32_TILE is the f32 tile function (a TILE_ANY). */
#define MM_WIDENED_ENTRY(NAME, WIDEN_F, F32_TILE, ELT_BYTES)                                                    \
    static int NAME(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, uint64_t x_row,       \
                    int64_t T, float *y, int64_t ldy) {                                                        \
        if (n % MM_LANES) return 0;                                                                            \
        return drive_widened(WIDEN_F, F32_TILE##_any, ELT_BYTES, n, w, w_row, R, x, x_row, T, y, ldy);         \
    }

/* sn_kernels.mm for a float type of ELT_BYTES per element, K cut into chunks of KCV elements
 * (KC; a tile whose loads convert runs whole rows, ((n + 31) & ~31), see mm_avx512.c). tinyBLAS
 * declines rows whose length is not a multiple of its vector width (ggml then runs vec_dot): so do
 * we, and sn_matmul uses the table's dot_mm, which does the same. */
#define MM_FLOAT_ENTRY_KC(NAME, TILE, ELT_BYTES, KCV)                                                          \
    static int NAME(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, uint64_t x_row,       \
                    int64_t T, float *y, int64_t ldy) {                                                        \
        if (n % MM_LANES) return 0;                                                                            \
        drive(TILE##_any, 32 * (ELT_BYTES), 32 * (ELT_BYTES), (KCV), n, w, w_row, R, x, x_row, T, y, ldy);     \
        return 1;                                                                                              \
    }
#define MM_FLOAT_ENTRY(NAME, TILE, ELT_BYTES) MM_FLOAT_ENTRY_KC(NAME, TILE, ELT_BYTES, KC)
#endif
