/* kquants_mm_avx512.c - batched (prompt) Q4_K matmul on AVX-512 VNNI, 16 weight rows per vector.
 *
 * The order every output must keep is dot_mm's (kquant_dots.h, per_pair = 1, what llama.cpp's
 * repacked q4_K_8x8 gemm computes): per pair j of 32-element sub-blocks one exact integer
 * sc0 * lo + sc1 * hi, fma'd into s1 with d_w * d_a, and the pair's min term m0 * bsum0 +
 * m1 * bsum1 fma'd into s2 with dmin_w * d_a; s1 - s2 at the end. The 4x4 tile in
 * kquants_avx512.c keeps that order too, but most of its instructions move nibbles into place and
 * reduce lanes rather than multiply.
 *
 * Here the weights are rearranged once per call (not at load: no second copy of the matrix, no
 * RSS), a chunk of 16 rows x up to CHUNK blocks at a time, into the order one vpdpbusd wants:
 * for every 4 consecutive weights of a sub-block, the 16 rows' 4 values side by side, already
 * widened from nibbles to bytes (gathered with one vpgatherdd per 4-byte column); the scales as
 * floats and the mins as int16 pairs, 16 rows per vector; d and dmin as floats. Every token then
 * meets each 64-byte weight vector with one broadcast 4-byte activation word: 16 rows per
 * instruction, and the rearranged chunk serves every token of the batch. Partial sums of a row
 * group that spans several chunks wait in y (s1) and in a small buffer (s2).
 *
 * Exactness: |lo|, |hi| <= 32 * 15 * 128 < 2^16 and |sc0 * lo + sc1 * hi| < 2 * 63 * 2^16 < 2^23,
 * so converting lo and hi to float, multiplying by the scales and adding with one fma gives exactly
 * the integer the scalar twin converts; the float steps after it are the scalar twin's.
 * Tests: tests/unit/test_kernels.c (batched matmuls) compares every output of sn_matmul with the
 * scalar dot_mm bit for bit, over row groups, chunk counts and token remainders. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "mm_rearrange.h"

/* One rearranged block of 16 rows: 32 columns (pair j, step g) of [low nibbles x 16 rows x 4 | high
 * nibbles ...], then 8 scale vectors (float), 4 min-pair vectors (int16 pairs), d, dmin. */
enum {
    ROWS = 16,
    CHUNK = 8, /* blocks rearranged at a time: 8 x 4992 bytes stay in L1/L2 while the tokens pass */
    MIN_T = 4, /* fewer tokens do not pay for the rearranging (the 4x4 tile takes them) */
    TILE_T = 4,
    PARK_FLOATS = 16, /* s2 of the 16 rows */
    COL_BYTES = 128,
    SC_OFF = 32 * COL_BYTES,
    MN_OFF = SC_OFF + 8 * 64,
    D_OFF = MN_OFF + 4 * 64,
    DM_OFF = D_OFF + 64,
    BLOCK_BYTES = DM_OFF + 64,
};

static inline __m512i gather32(__m512i idx, const uint8_t *p) { return _mm512_i32gather_epi32(idx, (const void *)p, 1); }

/* int16 pair (byte 0, byte 1) of every dword of x, as the dword's two int16 halves */
static inline __m512i byte_pair(__m512i x) {
    const __m512i ff = _mm512_set1_epi32(0xff);
    return _mm512_or_si512(_mm512_and_si512(x, ff), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(x, 8), ff), 16));
}

/* Rearranges blocks [b0, b0 + nblk) of the 16 rows at w + idx[r] into dst. */
static void rearrange(const uint8_t *w, __m512i idx, int64_t b0, int nblk, uint8_t *dst) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), ff = _mm512_set1_epi32(0xff);
    const __m512i m6 = _mm512_set1_epi32(0x3f3f3f3f), m30 = _mm512_set1_epi32(0x30303030), m0f = _mm512_set1_epi32(0x0f0f0f0f);
    for (int b = 0; b < nblk; b++) {
        const uint8_t *blk = w + (uint64_t)(b0 + b) * sizeof(sn_block_q4_K);
        uint8_t *o = dst + (size_t)b * BLOCK_BYTES;
        for (int c = 0; c < 32; c++) { /* column c = pair c / 8, step c % 8: qs bytes 4c..4c+3 */
            const __m512i v = gather32(idx, blk + offsetof(sn_block_q4_K, qs) + 4 * c);
            _mm512_store_si512(o + c * COL_BYTES, _mm512_and_si512(v, m4));
            _mm512_store_si512(o + c * COL_BYTES + 64, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
        }
        /* the 6-bit scales and mins, as sn_kq_q4k_scales unpacks them, 16 rows at once */
        const uint8_t *sc = blk + offsetof(sn_block_q4_K, scales);
        const __m512i u0 = gather32(idx, sc), u1 = gather32(idx, sc + 4), u2 = gather32(idx, sc + 8);
        const __m512i s_lo = _mm512_and_si512(u0, m6), m_lo = _mm512_and_si512(u1, m6);
        const __m512i s_hi = _mm512_or_si512(_mm512_and_si512(u2, m0f), _mm512_and_si512(_mm512_srli_epi32(u0, 2), m30));
        const __m512i m_hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(u2, 4), m0f), _mm512_and_si512(_mm512_srli_epi32(u1, 2), m30));
        for (int s = 0; s < 8; s++) {
            const __m512i v = _mm512_and_si512(_mm512_srlv_epi32(s < 4 ? s_lo : s_hi, _mm512_set1_epi32(8 * (s & 3))), ff);
            _mm512_store_ps(o + SC_OFF + 64 * s, _mm512_cvtepi32_ps(v));
        }
        _mm512_store_si512(o + MN_OFF + 0 * 64, byte_pair(m_lo));
        _mm512_store_si512(o + MN_OFF + 1 * 64, byte_pair(_mm512_srli_epi32(m_lo, 16)));
        _mm512_store_si512(o + MN_OFF + 2 * 64, byte_pair(m_hi));
        _mm512_store_si512(o + MN_OFF + 3 * 64, byte_pair(_mm512_srli_epi32(m_hi, 16)));
        const __m512i dd = gather32(idx, blk); /* d | dmin << 16 */
        _mm512_store_ps(o + D_OFF, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dd)));
        _mm512_store_ps(o + DM_OFF, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dd, 16))));
    }
}

static inline __m512i idx_load(const int32_t *off) { return _mm512_loadu_si512(off); }

/* TT (1..4, a compile-time constant) tokens x the 16 rows of the rearranged chunk pk (nblk blocks;
 * xa[t] points at the chunk's first activation block of token t). s1 starts at 0 (first) or at the
 * partial sum parked in y, s2 at 0 or in park; the last chunk stores s1 - s2. Lanes of rows past nr
 * are neither read nor written. */
static inline __attribute__((always_inline)) void tile_n(const int TT, const uint8_t *pk, int nblk,
                                                         const sn_block_q8_K *const *xa, int first, int last, float *y,
                                                         int64_t ldy, float *park, int nr) {
    const __mmask16 m = (__mmask16)((1u << nr) - 1);
    __m512 s1[4], s2[4];
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
        s1[t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, y + t * ldy);
        s2[t] = first ? _mm512_setzero_ps() : _mm512_load_ps(park + 16 * t);
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t *o = pk + (size_t)b * BLOCK_BYTES;
        const __m512 dv = _mm512_load_ps(o + D_OFF), dmv = _mm512_load_ps(o + DM_OFF);
        __m512 dt[4], dm[4];
        int32_t bp[4][4]; /* token t, pair j: (bsum of sub-block 2j, of 2j + 1) as two int16 */
        _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
            const sn_block_q8_K *a = xa[t] + b;
            const __m512 da = _mm512_set1_ps(a->d);
            dt[t] = _mm512_mul_ps(dv, da);
            dm[t] = _mm512_mul_ps(dmv, da);
            const __m128i b0 = _mm_loadu_si128((const __m128i *)a->bsums), b1 = _mm_loadu_si128((const __m128i *)(a->bsums + 8));
            _mm_storeu_si128((__m128i *)bp[t], _mm_hadd_epi16(b0, b1));
        }
        _Pragma("GCC unroll 1") for (int j = 0; j < 4; j++) {
            __m512i lo[4], hi[4];
            _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) lo[t] = hi[t] = _mm512_setzero_si512();
            _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
                const uint8_t *col = o + (8 * j + g) * COL_BYTES;
                const __m512i wl = _mm512_load_si512(col), wh = _mm512_load_si512(col + 64);
                _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
                    const int8_t *q = xa[t][b].qs + 64 * j + 4 * g;
                    lo[t] = _mm512_dpbusd_epi32(lo[t], wl, _mm512_set1_epi32(sn_mm_ld32(q)));
                    hi[t] = _mm512_dpbusd_epi32(hi[t], wh, _mm512_set1_epi32(sn_mm_ld32(q + 32)));
                }
            }
            const __m512 sc0 = _mm512_load_ps(o + SC_OFF + 64 * (2 * j)), sc1 = _mm512_load_ps(o + SC_OFF + 64 * (2 * j + 1));
            const __m512i mn = _mm512_load_si512(o + MN_OFF + 64 * j);
            _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
                const __m512 is = _mm512_fmadd_ps(_mm512_cvtepi32_ps(hi[t]), sc1, _mm512_mul_ps(_mm512_cvtepi32_ps(lo[t]), sc0));
                s1[t] = _mm512_fmadd_ps(is, dt[t], s1[t]);
                const __m512i ms = _mm512_madd_epi16(mn, _mm512_set1_epi32(bp[t][j]));
                s2[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ms), dm[t], s2[t]);
            }
        }
    }
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
        if (last) {
            _mm512_mask_storeu_ps(y + t * ldy, m, _mm512_sub_ps(s1[t], s2[t]));
        } else {
            _mm512_mask_storeu_ps(y + t * ldy, m, s1[t]);
            _mm512_store_ps(park + 16 * t, s2[t]);
        }
    }
}

MM_REARRANGED_TILES(tile, tile_n, sn_block_q8_K)
MM_REARRANGED_ENTRY(mm_q4_K, SN_QK_K, sn_block_q8_K, __m512i, idx_load, MIN_T)

#pragma GCC pop_options

void sn_kernels_q4_K_mm_avx512(sn_kernels *k) { k->type[SN_GGML_Q4_K].mm = mm_q4_K; }
#else
void sn_kernels_q4_K_mm_avx512(sn_kernels *k) { (void)k; }
#endif
