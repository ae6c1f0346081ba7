/* q4_0_x8.c - repacking Q4_0 matrices into 8-row groups and the matmul kernels that read them.
 *
 * The layout is described in q4_0_x8.h. Every kernel here computes, per output, the integer sum of
 * each 32-weight block exactly and then s = fma((float)isum, d_w * d_a, s) in block order - the
 * scalar dot_q4_0 - so scalar, AVX2 and AVX-512 results are bit-identical to the row kernels.
 * The SIMD kernels treat the 8 rows of a group as the 8 lanes of one vector: a weight byte chunk's
 * low/high nibbles (unsigned 0..15) are multiplied with one broadcast 4-byte activation word, and
 * the -8 offset of Q4_0 is applied once per block as -8 * sum(activation block), precomputed per
 * (token, block) in a small table. MXFP4 shares the layout and the kernels (q4_0_x8.h): its nibbles go
 * through a table to level + 12 (unsigned 0..24), the offset applied as -12 * sum(activation block),
 * and its per-row factor is the E8M0 exponent's 2^(e-128), so each output is dot_mxfp4's. */
#include "q4_0_x8.h"

#include "cpu.h"
#include "kernels.h"
#include "quants.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

uint64_t sn_q4_0x8_size(int64_t n_in, int64_t n_out) {
    if (n_in <= 0 || n_out < SN_Q4_0X8_ROWS || n_in % SN_QK4_0) return 0;
    return (uint64_t)(n_out / SN_Q4_0X8_ROWS) * (uint64_t)(n_in / SN_QK4_0) * SN_Q4_0X8_BLOCK_BYTES;
}

uint64_t sn_mxfp4x8_size(int64_t n_in, int64_t n_out) {
    return sn_q4_0x8_size(n_in, n_out) / SN_Q4_0X8_BLOCK_BYTES * SN_MXFP4X8_BLOCK_BYTES;
}

/* both types: a block of `bsize` bytes whose 16 nibble bytes start at qs and its factor (fp16 d,
 * or the E8M0 byte) of `fsize` bytes at 0 */
static void repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst,
                   size_t bsize, size_t qs, size_t fsize) {
    const int64_t nb = n_in / SN_QK4_0;
    const size_t gblock = 128 + 8 * fsize;
    const uint64_t gbytes = (uint64_t)nb * gblock;
    for (int64_t g = g0; g < g1; g++) {
        uint8_t *grp = (uint8_t *)dst + (uint64_t)g * gbytes;
        for (int r = 0; r < SN_Q4_0X8_ROWS; r++) {
            const uint8_t *row = (const uint8_t *)src + (uint64_t)(g * SN_Q4_0X8_ROWS + r) * src_row_bytes;
            for (int64_t b = 0; b < nb; b++) {
                uint8_t *blk = grp + b * gblock;
                const uint8_t *sb = row + b * bsize;
                for (int c = 0; c < 4; c++) memcpy(blk + c * 32 + r * 4, sb + qs + 4 * c, 4);
                memcpy(blk + 128 + fsize * r, sb, fsize);
            }
        }
    }
}

void sn_q4_0x8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst) {
    repack(src, src_row_bytes, n_in, g0, g1, dst, sizeof(sn_block_q4_0), offsetof(sn_block_q4_0, qs), 2);
}

void sn_mxfp4x8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst) {
    repack(src, src_row_bytes, n_in, g0, g1, dst, sizeof(sn_block_mxfp4), offsetof(sn_block_mxfp4, qs), 1);
}

/* MXFP4's levels + 12: unsigned bytes for the u8 x s8 products */
static const uint8_t mx_levels12[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};

/* Table of -off * sum(qs) (off: 8 for Q4_0, 12 for MXFP4) of activation blocks [b0, b1) for tokens [t0, t1): corr[(t - t0) * (b1 - b0) + b - b0]. */
enum { CORR_CAP = 8192 };

static void fill_corr(const void *x, uint64_t x_row, int64_t t0, int64_t t1, int64_t b0, int64_t b1, int32_t *corr,
                      int32_t off) {
    const int64_t nbc = b1 - b0;
    for (int64_t t = t0; t < t1; t++) {
        const sn_block_q8_0 *a = (const sn_block_q8_0 *)((const char *)x + (uint64_t)t * x_row);
        for (int64_t b = b0; b < b1; b++) {
            int32_t s = 0;
            for (int j = 0; j < SN_QK8_0; j++) s += a[b].qs[j];
            corr[(t - t0) * nbc + (b - b0)] = -off * s;
        }
    }
}

/* One tile: 8 rows of group data (qs, d) x TT tokens, blocks [b0, b1); accumulators start at 0
 * (b0 == 0) or at the partial sums already stored in y. A pair tile takes 16 rows: the group at grp
 * and a second one gstride bytes on, whose 8 outputs go yhi floats after the first's (the next
 * group: gstride = one group, yhi = 8; the 8-row tiles ignore both). */
typedef void (*tile_fn)(int TT, const uint8_t *grp, uint64_t gstride, int64_t b0, int64_t b1,
                        const sn_block_q8_0 *const *xa, const int32_t *corr, int64_t cld, float *y, int64_t ldy,
                        int64_t yhi);

/* Walks the matrix in (token chunk, block chunk) pieces small enough for the correction table;
 * inside a piece each group meets every token tile while its weights are in cache. With a pair tile
 * and a batch (T >= 2), neighbouring groups go two at a time (a batch reuses the weights from
 * cache). A decode step (T = 1) reads neighbouring groups one at a time (two at once read DRAM
 * slower); with far set (the _far entry, tuning.far_streams) it reads group g with
 * g + n_groups / 4, g + n_groups / 2 and g + 3 n_groups / 4 (a quad tile), or with g + n_groups / 2
 * (a pair tile, where there is no quad tile or fewer than 8 groups): streams a quarter or half the
 * matrix apart, which keep more of the memory system busy on AMD cores, as for the INT4 blob
 * kernel and x86_avx512.c's F16 / Q8_0 rows (kernels.h sn_k_mv_quarters; docs/PERFORMANCE.md). */
static void drive(tile_fn tile, tile_fn pair, tile_fn quad, int64_t n, const void *w, int64_t n_groups, const void *x,
                  uint64_t x_row, int64_t T, float *y, int64_t ldy, int tmax, int far, int mx) {
    const int64_t nb = n / SN_QK4_0;
    const uint64_t gbytes = (uint64_t)nb * (mx ? SN_MXFP4X8_BLOCK_BYTES : SN_Q4_0X8_BLOCK_BYTES);
    int32_t corr[CORR_CAP];
    const int64_t bch = nb < CORR_CAP ? nb : CORR_CAP;
    int64_t tch = CORR_CAP / bch;
    if (tch > T) tch = T;
    for (int64_t tc = 0; tc < T; tc += tch) {
        const int64_t te = tc + tch < T ? tc + tch : T;
        for (int64_t bc = 0; bc < nb; bc += bch) {
            const int64_t be = bc + bch < nb ? bc + bch : nb;
            fill_corr(x, x_row, tc, te, bc, be, corr, mx ? 12 : 8);
            /* one token, far: quads (g, g + quarter, g + 2 quarter, g + 3 quarter) for g < quarter, the
             * last n_groups % 4 one by one; or pairs (g, g + half), g < half */
            const int64_t quarter = far && quad && T == 1 && n_groups >= 8 ? n_groups / 4 : 0;
            const int64_t half = !quarter && far && pair && T == 1 ? n_groups / 2 : 0;
            for (int64_t g = 0; g < quarter; g++)
                quad(1, (const uint8_t *)w + (uint64_t)g * gbytes, (uint64_t)quarter * gbytes, bc, be,
                     (const sn_block_q8_0 *const[]){(const sn_block_q8_0 *)x}, corr, be - bc, y + g * SN_Q4_0X8_ROWS,
                     ldy, quarter * SN_Q4_0X8_ROWS);
            for (int64_t g = 4 * quarter; g < n_groups;) {
                const uint8_t *grp = (const uint8_t *)w + (uint64_t)g * gbytes;
                const int farp = g < half, two = farp || (pair && T >= 2 && g + 1 < n_groups);
                const uint64_t gs = farp ? (uint64_t)half * gbytes : gbytes;
                const int64_t yhi = farp ? half * SN_Q4_0X8_ROWS : SN_Q4_0X8_ROWS;
                for (int64_t t = tc; t < te; t += tmax) {
                    const int tt = (int)(te - t < tmax ? te - t : tmax);
                    const sn_block_q8_0 *xa[4];
                    for (int i = 0; i < tt; i++) xa[i] = (const sn_block_q8_0 *)((const char *)x + (uint64_t)(t + i) * x_row);
                    (two ? pair : tile)(tt, grp, gs, bc, be, xa, corr + (t - tc) * (be - bc), be - bc,
                                        y + t * ldy + g * SN_Q4_0X8_ROWS, ldy, yhi);
                }
                g = farp ? (g + 1 == half ? 2 * half : g + 1) : g + (two ? 2 : 1);
            }
        }
    }
}

static inline void tile_scalar_n(int TT, const uint8_t *grp, int64_t b0, int64_t b1, const sn_block_q8_0 *const *xa,
                                 const int32_t *corr, int64_t cld, float *y, int64_t ldy, int mx) {
    static const uint8_t ident[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const uint8_t *lv = mx ? mx_levels12 : ident;
    const size_t bb = mx ? SN_MXFP4X8_BLOCK_BYTES : SN_Q4_0X8_BLOCK_BYTES;
    for (int t = 0; t < TT; t++)
        for (int r = 0; r < SN_Q4_0X8_ROWS; r++) {
            float s = b0 ? y[t * ldy + r] : 0.0f;
            for (int64_t b = b0; b < b1; b++) {
                const uint8_t *q = grp + b * bb + r * 4;
                float fw;
                if (mx) {
                    fw = sn_e8m0_half(q[128 - r * 4 + r]);
                } else {
                    uint16_t dw;
                    memcpy(&dw, q - r * 4 + 128 + 2 * r, 2);
                    fw = sn_k_h2f(dw);
                }
                const int8_t *a = xa[t][b].qs;
                int32_t isum = corr[t * cld + b - b0];
                for (int c = 0; c < 4; c++)
                    for (int i = 0; i < 4; i++)
                        isum += lv[q[c * 32 + i] & 0x0F] * a[4 * c + i] + lv[q[c * 32 + i] >> 4] * a[16 + 4 * c + i];
                s = fmaf((float)isum, fw * sn_k_h2f(xa[t][b].d), s);
            }
            y[t * ldy + r] = s;
        }
}

static void tile_scalar(int TT, const uint8_t *grp, uint64_t gstride, int64_t b0, int64_t b1,
                        const sn_block_q8_0 *const *xa, const int32_t *corr, int64_t cld, float *y, int64_t ldy,
                        int64_t yhi) {
    (void)gstride, (void)yhi;
    tile_scalar_n(TT, grp, b0, b1, xa, corr, cld, y, ldy, 0);
}
static void tile_scalar_mx(int TT, const uint8_t *grp, uint64_t gstride, int64_t b0, int64_t b1,
                           const sn_block_q8_0 *const *xa, const int32_t *corr, int64_t cld, float *y, int64_t ldy,
                           int64_t yhi) {
    (void)gstride, (void)yhi;
    tile_scalar_n(TT, grp, b0, b1, xa, corr, cld, y, ldy, 1);
}

void sn_q4_0x8_mm_scalar(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                         float *y, int64_t ldy) {
    drive(tile_scalar, NULL, NULL, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 0);
}
void sn_mxfp4x8_mm_scalar(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                          float *y, int64_t ldy) {
    drive(tile_scalar_mx, NULL, NULL, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 1);
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "simd_avx512.h"

/* No software prefetch: a group is one sequential stream, which the hardware prefetcher follows
 * at DRAM speed (software prefetches only slowed it, and two neighbouring streams at once - two
 * adjacent groups, or scales in their own array - halve it; two streams half a matrix apart are
 * faster on AMD, see drive; docs/PERFORMANCE.md). */

static inline int32_t ld32(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- AVX2: u8 x s8 pairs with VPMADDUBSW (exact: |8 pair sums| <= 8 * 3840 < 32768), then VPMADDWD ---- */
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "lut4_x86.h"

/* One 144-byte block of a group: the 8 rows' low and high nibbles (4 x 32 bytes each, unsigned
 * 0..15) and their 8 scales as floats. Inlined into the AVX2 and the AVX-512 tiles. */
static inline __attribute__((always_inline)) __m256 unpack_block(const uint8_t *blk, __m256i lo[4], __m256i hi[4]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + c * 32));
        lo[c] = _mm256_and_si256(v, m4);
        hi[c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    }
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(blk + 128)));
}

/* The same for an MXFP4 block (136 bytes): nibbles through the levels + 12 table, the 8 exponents'
 * 2^(e-128) as floats. */
static inline __attribute__((always_inline)) __m256 unpack_block_mx(const uint8_t *blk, __m256i lo[4], __m256i hi[4]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)mx_levels12));
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + c * 32));
        lo[c] = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, m4));
        hi[c] = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
    }
    return sn_lut4_e8m0_half8(blk + 128);
}

/* The 8 rows' integer sums of one block (unpacked into lo, hi) against a token's 32 activation
 * codes a, plus that token's correction corr for the block: AVX2 and VNNI spell it differently. */
typedef __m256i (*x8_isum_fn)(const __m256i lo[4], const __m256i hi[4], const int8_t *a, int32_t corr);

/* The tile for TT (1..4, a compile-time constant) tokens over blocks [b0, b1): per block and token
 * one fma of the 8 rows' sums with their scales times the token's, in block order. Inlined into the
 * AVX2 and the AVX-512 tiles with their isum (inlined through the constant pointer). */
static inline __attribute__((always_inline)) void tile_n(const int TT, const uint8_t *grp, uint64_t gstride, int64_t b0,
                                                         int64_t b1,
                                                         const sn_block_q8_0 *const *xa, const int32_t *corr,
                                                         int64_t cld, float *y, int64_t ldy, int64_t yhi,
                                                         x8_isum_fn isum, const int mx) {
    (void)gstride;
    (void)yhi;
    __m256 acc[4];
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) acc[t] = b0 ? _mm256_loadu_ps(y + t * ldy) : _mm256_setzero_ps();
    for (int64_t b = b0; b < b1; b++) {
        __m256i lo[4], hi[4];
        const __m256 dw = mx ? unpack_block_mx(grp + b * SN_MXFP4X8_BLOCK_BYTES, lo, hi)
                             : unpack_block(grp + b * SN_Q4_0X8_BLOCK_BYTES, lo, hi);
        _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
            const __m256i s = isum(lo, hi, xa[t][b].qs, corr[t * cld + b - b0]);
            const __m256 d = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(xa[t][b].d)));
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[t]);
        }
    }
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) _mm256_storeu_ps(y + t * ldy, acc[t]);
}
#define tile_q4(...) tile_n(__VA_ARGS__, 0)
#define tile_mx(...) tile_n(__VA_ARGS__, 1)

/* A tile entry point for 1..4 tokens over BODY(TT, ...) (tile_n, or tile_pair_n for 16 rows) with
 * TT a compile-time constant. */
#define TILE_BY_TOKENS(NAME, BODY, ISUM)                                                                 \
    static void NAME(int TT, const uint8_t *grp, uint64_t gstride, int64_t b0, int64_t b1,              \
                     const sn_block_q8_0 *const *xa, const int32_t *corr, int64_t cld, float *y, int64_t ldy, \
                     int64_t yhi) {                                                                     \
        switch (TT) {                                                                                   \
        case 4: BODY(4, grp, gstride, b0, b1, xa, corr, cld, y, ldy, yhi, ISUM); break;                 \
        case 3: BODY(3, grp, gstride, b0, b1, xa, corr, cld, y, ldy, yhi, ISUM); break;                 \
        case 2: BODY(2, grp, gstride, b0, b1, xa, corr, cld, y, ldy, yhi, ISUM); break;                 \
        default: BODY(1, grp, gstride, b0, b1, xa, corr, cld, y, ldy, yhi, ISUM); break;                \
        }                                                                                               \
    }

static inline __attribute__((always_inline)) __m256i isum_avx2(const __m256i lo[4], const __m256i hi[4], const int8_t *a,
                                                               int32_t corr) {
    __m256i s0 = _mm256_maddubs_epi16(lo[0], _mm256_set1_epi32(ld32(a)));
    __m256i s1 = _mm256_maddubs_epi16(hi[0], _mm256_set1_epi32(ld32(a + 16)));
    _Pragma("GCC unroll 4") for (int c = 1; c < 4; c++) {
        s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(lo[c], _mm256_set1_epi32(ld32(a + 4 * c))));
        s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(hi[c], _mm256_set1_epi32(ld32(a + 16 + 4 * c))));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(s0, s1), _mm256_set1_epi16(1)), _mm256_set1_epi32(corr));
}

/* MXFP4: levels + 12 reach 24, so only 4 pair sums fit an int16 (4 * 6096); two VPMADDWD */
static inline __attribute__((always_inline)) __m256i isum_avx2_mx(const __m256i lo[4], const __m256i hi[4],
                                                                  const int8_t *a, int32_t corr) {
    __m256i s0 = _mm256_maddubs_epi16(lo[0], _mm256_set1_epi32(ld32(a)));
    __m256i s1 = _mm256_maddubs_epi16(hi[0], _mm256_set1_epi32(ld32(a + 16)));
    _Pragma("GCC unroll 4") for (int c = 1; c < 4; c++) {
        s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(lo[c], _mm256_set1_epi32(ld32(a + 4 * c))));
        s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(hi[c], _mm256_set1_epi32(ld32(a + 16 + 4 * c))));
    }
    const __m256i one = _mm256_set1_epi16(1);
    return _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(s0, one), _mm256_madd_epi16(s1, one)),
                            _mm256_set1_epi32(corr));
}

TILE_BY_TOKENS(tile_avx2, tile_q4, isum_avx2)
TILE_BY_TOKENS(tile_avx2_mx, tile_mx, isum_avx2_mx)

void sn_q4_0x8_mm_avx2(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                       float *y, int64_t ldy) {
    drive(tile_avx2, NULL, NULL, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 0);
}
void sn_mxfp4x8_mm_avx2(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                        float *y, int64_t ldy) {
    drive(tile_avx2_mx, NULL, NULL, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 1);
}
#pragma GCC pop_options

/* ---- AVX-512 VL + VNNI: 256-bit VPDPBUSD (Zen 4 runs 512-bit ops as two 256-bit halves, so
 * 8-lane vectors lose nothing there), four chains of two per block and token ---- */
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")

/* Four chains of two per block and token; the first starts from the correction. One body for the
 * 8-row tile's 256-bit vectors (isum_vnni) and the 16-row tile's 512-bit ones (isum_vnni512). */
#define ISUM_VNNI(NAME, V, DP, SET1, ADD, ZERO)                                                              \
    static inline __attribute__((always_inline)) V NAME(const V lo[4], const V hi[4], const int8_t *a, int32_t corr) { \
        const V z = ZERO();                                                                                    \
        V q0 = DP(SET1(corr), lo[0], SET1(ld32(a))), q1 = DP(z, lo[2], SET1(ld32(a + 8)));                     \
        V q2 = DP(z, hi[0], SET1(ld32(a + 16))), q3 = DP(z, hi[2], SET1(ld32(a + 24)));                        \
        q0 = DP(q0, lo[1], SET1(ld32(a + 4)));                                                                 \
        q1 = DP(q1, lo[3], SET1(ld32(a + 12)));                                                                \
        q2 = DP(q2, hi[1], SET1(ld32(a + 20)));                                                                \
        q3 = DP(q3, hi[3], SET1(ld32(a + 28)));                                                                \
        return ADD(ADD(q0, q1), ADD(q2, q3));                                                                  \
    }
ISUM_VNNI(isum_vnni, __m256i, _mm256_dpbusd_epi32, _mm256_set1_epi32, _mm256_add_epi32, _mm256_setzero_si256)
ISUM_VNNI(isum_vnni512, __m512i, _mm512_dpbusd_epi32, _mm512_set1_epi32, _mm512_add_epi32, _mm512_setzero_si512)

TILE_BY_TOKENS(tile_vnni, tile_q4, isum_vnni)
TILE_BY_TOKENS(tile_vnni_mx, tile_mx, isum_vnni)

/* the pair tile's 16 outputs of one token: 8 at y (the first group), 8 at y + yhi (the second) */
static inline __m512 load_halves(const float *y, int64_t yhi) { /* 64-bit lanes: AVX512F only, no DQ */
    const __m512d lo = _mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(y)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm256_loadu_ps(y + yhi)), 1));
}
static inline void store_halves(float *y, int64_t yhi, __m512 v) {
    _mm256_storeu_ps(y, _mm512_castps512_ps256(v));
    _mm256_storeu_ps(y + yhi, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* One block of two groups (p0's in the low 256 bits, p1's in the high): nibbles into lo / hi, the 16
 * rows' scales returned as floats. */
static inline __attribute__((always_inline)) __m512 unpack_pair(const uint8_t *p0, const uint8_t *p1, __m512i m4,
                                                               __m512i lo[4], __m512i hi[4]) {
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        const __m512i v = sn_avx512_join256(p0 + c * 32, p1 + c * 32);
        lo[c] = _mm512_and_si512(v, m4);
        hi[c] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
    return _mm512_cvtph_ps(_mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p0 + 128))), _mm_loadu_si128((const __m128i *)(p1 + 128)), 1));
}

/* 16 rows at once, two groups (g and g + 1, or a far pair; tile_fn) in the two 256-bit halves of
 * each 512-bit vector: one broadcast activation word meets 16 rows' nibbles in one VPDPBUSD. Per
 * lane the same integer sums (exact) and the same d = d_w * d_x and fma per block, in block order,
 * as the 8-row tile. */
static inline __attribute__((always_inline)) void tile_pair_n(const int TT, const uint8_t *grp, uint64_t gstride,
                                                              int64_t b0, int64_t b1, const sn_block_q8_0 *const *xa,
                                                              const int32_t *corr, int64_t cld, float *y, int64_t ldy,
                                                              int64_t yhi, x8_isum_fn isum) {
    (void)isum; /* the 8-row isum's signature; this tile's sums are isum_vnni512 */
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512 acc[4];
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) acc[t] = b0 ? load_halves(y + t * ldy, yhi) : _mm512_setzero_ps();
    for (int64_t b = b0; b < b1; b++) {
        const uint8_t *p0 = grp + b * SN_Q4_0X8_BLOCK_BYTES;
        __m512i lo[4], hi[4];
        const __m512 dw = unpack_pair(p0, p0 + gstride, m4, lo, hi);
        _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
            const __m512i s = isum_vnni512(lo, hi, xa[t][b].qs, corr[t * cld + b - b0]);
            const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(xa[t][b].d)));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d, acc[t]);
        }
    }
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) store_halves(y + t * ldy, yhi, acc[t]);
}

TILE_BY_TOKENS(tile_vnni_pair, tile_pair_n, isum_vnni)

/* One token, four groups gstride bytes apart (a far quad; drive): two pair tiles stepped block by
 * block together, outputs at y, y + yhi, y + 2 yhi, y + 3 yhi. Each lane does the pair tile's
 * operations, so every output is bit for bit the same. */
static void tile_vnni_quad(int TT, const uint8_t *grp, uint64_t gstride, int64_t b0, int64_t b1,
                           const sn_block_q8_0 *const *xa, const int32_t *corr, int64_t cld, float *y, int64_t ldy,
                           int64_t yhi) {
    (void)TT, (void)cld, (void)ldy; /* one token */
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512 acc[2];
    for (int h = 0; h < 2; h++) acc[h] = b0 ? load_halves(y + 2 * h * yhi, yhi) : _mm512_setzero_ps();
    for (int64_t b = b0; b < b1; b++) {
        const uint8_t *p0 = grp + b * SN_Q4_0X8_BLOCK_BYTES;
        __m512i lo[2][4], hi[2][4];
        const __m512 dw0 = unpack_pair(p0, p0 + gstride, m4, lo[0], hi[0]);
        const __m512 dw1 = unpack_pair(p0 + 2 * gstride, p0 + 3 * gstride, m4, lo[1], hi[1]);
        const __m512 dx = _mm512_set1_ps(_cvtsh_ss(xa[0][b].d));
        const __m512i s0 = isum_vnni512(lo[0], hi[0], xa[0][b].qs, corr[b - b0]);
        const __m512i s1 = isum_vnni512(lo[1], hi[1], xa[0][b].qs, corr[b - b0]);
        acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_mul_ps(dw0, dx), acc[0]);
        acc[1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), _mm512_mul_ps(dw1, dx), acc[1]);
    }
    for (int h = 0; h < 2; h++) store_halves(y + 2 * h * yhi, yhi, acc[h]);
}

void sn_q4_0x8_mm_avx512vnni(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                             int64_t T, float *y, int64_t ldy) {
    drive(tile_vnni, tile_vnni_pair, tile_vnni_quad, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 0);
}
void sn_mxfp4x8_mm_avx512vnni(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                              int64_t T, float *y, int64_t ldy) {
    drive(tile_vnni_mx, NULL, NULL, n, w, n_groups, x, x_row, T, y, ldy, 4, 0, 1);
}
void sn_q4_0x8_mm_avx512vnni_far(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                                 int64_t T, float *y, int64_t ldy) {
    drive(tile_vnni, tile_vnni_pair, tile_vnni_quad, n, w, n_groups, x, x_row, T, y, ldy, 4, 1, 0);
}
#pragma GCC pop_options
#endif
