/* kquants_mm_avx2.c - batched (prompt) Q4_K matmul on AVX2, 8 weight rows per vector.
 *
 * The AVX2 twin of kquants_mm_avx512.c (read that file's comment first): same per-output order
 * (dot_mm, kquant_dots.h per_pair = 1), same idea - a chunk of 8 rows x up to CHUNK blocks is
 * rearranged once per call so that every 32-byte weight vector holds the 8 rows' 4 consecutive
 * values of one sub-block as bytes, and every token meets it with one broadcast 4-byte activation
 * word. Without VNNI the products go through vpmaddubsw (two products per int16, at most
 * 2 * 15 * 128 = 3840 in magnitude) and the 8 steps of a sub-block are added as int16 (at most
 * 8 * 3840 = 30720: no overflow); one vpmaddwd with the row's scale in both halves of each dword
 * then gives sc * (sub-block dot) as an exact int32, so sc0 * lo + sc1 * hi is an integer add, and
 * its float conversion is the scalar twin's. Tests: tests/unit/test_kernels.c (batched matmuls)
 * compares every output with the scalar dot_mm bit for bit. */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "mm_rearrange.h"

/* One rearranged block of 8 rows: 32 columns (pair j, step g) of [low nibbles x 8 rows x 4 | high
 * nibbles ...], 8 scale vectors (int16 scale in both halves of each row's dword), 4 min-pair
 * vectors (int16 pairs), d, dmin (float). */
enum {
    ROWS = 8,
    CHUNK = 8,
    MIN_T = 4,
    TILE_T = 4,
    PARK_FLOATS = 8, /* s2 of the 8 rows */
    COL_BYTES = 64,
    SC_OFF = 32 * COL_BYTES,
    MN_OFF = SC_OFF + 8 * 32,
    D_OFF = MN_OFF + 4 * 32,
    DM_OFF = D_OFF + 32,
    BLOCK_BYTES = DM_OFF + 32,
};

static inline __m256i gather32(__m256i idx, const uint8_t *p) { return _mm256_i32gather_epi32((const int *)p, idx, 1); }

/* (byte 0, byte 1) of every dword of x as its two int16 halves */
static inline __m256i byte_pair(__m256i x) {
    const __m256i ff = _mm256_set1_epi32(0xff);
    return _mm256_or_si256(_mm256_and_si256(x, ff), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(x, 8), ff), 16));
}

static void rearrange(const uint8_t *w, __m256i idx, int64_t b0, int nblk, uint8_t *dst) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), ff = _mm256_set1_epi32(0xff);
    const __m256i m6 = _mm256_set1_epi32(0x3f3f3f3f), m30 = _mm256_set1_epi32(0x30303030), m0f = _mm256_set1_epi32(0x0f0f0f0f);
    for (int b = 0; b < nblk; b++) {
        const uint8_t *blk = w + (uint64_t)(b0 + b) * sizeof(sn_block_q4_K);
        uint8_t *o = dst + (size_t)b * BLOCK_BYTES;
        for (int c = 0; c < 32; c++) {
            const __m256i v = gather32(idx, blk + offsetof(sn_block_q4_K, qs) + 4 * c);
            _mm256_store_si256((__m256i *)(o + c * COL_BYTES), _mm256_and_si256(v, m4));
            _mm256_store_si256((__m256i *)(o + c * COL_BYTES + 32), _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
        }
        const uint8_t *sc = blk + offsetof(sn_block_q4_K, scales);
        const __m256i u0 = gather32(idx, sc), u1 = gather32(idx, sc + 4), u2 = gather32(idx, sc + 8);
        const __m256i s_lo = _mm256_and_si256(u0, m6), m_lo = _mm256_and_si256(u1, m6);
        const __m256i s_hi = _mm256_or_si256(_mm256_and_si256(u2, m0f), _mm256_and_si256(_mm256_srli_epi32(u0, 2), m30));
        const __m256i m_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u2, 4), m0f), _mm256_and_si256(_mm256_srli_epi32(u1, 2), m30));
        for (int s = 0; s < 8; s++) {
            const __m256i v = _mm256_and_si256(_mm256_srlv_epi32(s < 4 ? s_lo : s_hi, _mm256_set1_epi32(8 * (s & 3))), ff);
            _mm256_store_si256((__m256i *)(o + SC_OFF + 32 * s), _mm256_or_si256(v, _mm256_slli_epi32(v, 16)));
        }
        _mm256_store_si256((__m256i *)(o + MN_OFF + 0 * 32), byte_pair(m_lo));
        _mm256_store_si256((__m256i *)(o + MN_OFF + 1 * 32), byte_pair(_mm256_srli_epi32(m_lo, 16)));
        _mm256_store_si256((__m256i *)(o + MN_OFF + 2 * 32), byte_pair(m_hi));
        _mm256_store_si256((__m256i *)(o + MN_OFF + 3 * 32), byte_pair(_mm256_srli_epi32(m_hi, 16)));
        const __m256i dd = gather32(idx, blk); /* d | dmin << 16 */
        const __m256i lo16 = _mm256_and_si256(dd, _mm256_set1_epi32(0xffff)), hi16 = _mm256_srli_epi32(dd, 16);
        /* dword -> word without AVX-512's vpmovdw: pack (unsigned saturation is exact below 2^16) */
        const __m256i dpk = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo16, hi16), 0xd8);
        _mm256_store_ps((float *)(o + D_OFF), _mm256_cvtph_ps(_mm256_castsi256_si128(dpk)));
        _mm256_store_ps((float *)(o + DM_OFF), _mm256_cvtph_ps(_mm256_extracti128_si256(dpk, 1)));
    }
}

static inline __m256i idx_load(const int32_t *off) { return _mm256_loadu_si256((const __m256i *)off); }

/* sc * (dot of one 32-element sub-block) per row, exact: 8 steps of 4 values, added as int16 */
static inline __attribute__((always_inline)) __m256i sub_block(const uint8_t *col0, int half, const int8_t *q, __m256i sc) {
    __m256i acc = _mm256_setzero_si256();
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
        const __m256i wv = _mm256_load_si256((const __m256i *)(col0 + g * COL_BYTES + 32 * half));
        acc = _mm256_add_epi16(acc, _mm256_maddubs_epi16(wv, _mm256_set1_epi32(sn_mm_ld32(q + 4 * g))));
    }
    return _mm256_madd_epi16(acc, sc);
}

/* TT (1..4, a compile-time constant) tokens x the 8 rows of the rearranged chunk; as the AVX-512
 * tile: s1 parked in y, s2 in park between chunks, rows past nr neither read nor written. */
static inline __attribute__((always_inline)) void tile_n(const int TT, const uint8_t *pk, int nblk,
                                                         const sn_block_q8_K *const *xa, int first, int last, float *y,
                                                         int64_t ldy, float *park, int nr) {
    __m256 s1[4], s2[4];
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
        s1[t] = first ? _mm256_setzero_ps() : _mm256_maskload_ps(y + t * ldy, mask);
        s2[t] = first ? _mm256_setzero_ps() : _mm256_load_ps(park + 8 * t);
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t *o = pk + (size_t)b * BLOCK_BYTES;
        const __m256 dv = _mm256_load_ps((const float *)(o + D_OFF)), dmv = _mm256_load_ps((const float *)(o + DM_OFF));
        _Pragma("GCC unroll 1") for (int j = 0; j < 4; j++) {
            const uint8_t *col0 = o + 8 * j * COL_BYTES;
            const __m256i sc0 = _mm256_load_si256((const __m256i *)(o + SC_OFF + 32 * (2 * j)));
            const __m256i sc1 = _mm256_load_si256((const __m256i *)(o + SC_OFF + 32 * (2 * j + 1)));
            const __m256i mn = _mm256_load_si256((const __m256i *)(o + MN_OFF + 32 * j));
            _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
                const sn_block_q8_K *a = xa[t] + b;
                const int8_t *q = a->qs + 64 * j;
                const __m256i is = _mm256_add_epi32(sub_block(col0, 0, q, sc0), sub_block(col0, 1, q + 32, sc1));
                const __m256 da = _mm256_set1_ps(a->d);
                s1[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(dv, da), s1[t]);
                /* (bsum of sub-block 2j, of 2j + 1): bsums 4j..4j+3 added in pairs */
                const int32_t bp = (int32_t)(uint16_t)(a->bsums[4 * j] + a->bsums[4 * j + 1]) |
                                   (int32_t)((uint32_t)(uint16_t)(a->bsums[4 * j + 2] + a->bsums[4 * j + 3]) << 16);
                const __m256i ms = _mm256_madd_epi16(mn, _mm256_set1_epi32(bp));
                s2[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ms), _mm256_mul_ps(dmv, da), s2[t]);
            }
        }
    }
    _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {
        if (last) {
            _mm256_maskstore_ps(y + t * ldy, mask, _mm256_sub_ps(s1[t], s2[t]));
        } else {
            _mm256_maskstore_ps(y + t * ldy, mask, s1[t]);
            _mm256_store_ps(park + 8 * t, s2[t]);
        }
    }
}

MM_REARRANGED_TILES(tile, tile_n, sn_block_q8_K)
MM_REARRANGED_ENTRY(mm_q4_K, SN_QK_K, sn_block_q8_K, __m256i, idx_load, MIN_T)

#pragma GCC pop_options

void sn_kernels_q4_K_mm_avx2(sn_kernels *k) { k->type[SN_GGML_Q4_K].mm = mm_q4_K; }
#else
void sn_kernels_q4_K_mm_avx2(sn_kernels *k) { (void)k; }
#endif
