/* q4_K_x8.c - repacking Q4_K matrices into 8-row groups and the single-token kernel that reads them.
 *
 * The layout is described in q4_K_x8.h. Per output the kernel computes dot_q4_K's exact integers
 * per block - isum = sum over sub-blocks of scale * (nibbles . activations), msum = sum of min *
 * (activation sum of the sub-block) - and then s1 = fma(isum, d_w * d_a, s1), s2 = fma(msum,
 * dmin_w * d_a, s2) in block order, s1 - s2 at the end (kquant_dots.h, per_pair = 0), so it is
 * bit-identical to the scalar and row kernels. Batches (prompts) run the row kernels on an unpacked
 * copy (runtime/models/weights.c), which keeps their order (dot_mm for whole groups of 4 tokens) without a second
 * set of batch kernels. Tests: tests/unit/test_q4_K_x8.c. */
#include "q4_K_x8.h"

#include "kernels.h"

#include <string.h>

uint64_t sn_q4_Kx8_size(int64_t n_in, int64_t n_out) {
    if (n_in <= 0 || n_out < SN_Q4_KX8_ROWS || n_in % SN_QK_K) return 0;
    return (uint64_t)(n_out / SN_Q4_KX8_ROWS) * (uint64_t)(n_in / SN_QK_K) * SN_Q4_KX8_BLOCK_BYTES;
}

enum { SC_OFF = 1024, D_OFF = 1120, DMIN_OFF = 1136 }; /* after the 16 qs chunks: scales, d, dmin */

void sn_q4_Kx8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst) {
    const int64_t nb = n_in / SN_QK_K;
    const uint64_t gbytes = (uint64_t)nb * SN_Q4_KX8_BLOCK_BYTES;
    for (int64_t g = g0; g < g1; g++) {
        uint8_t *grp = (uint8_t *)dst + (uint64_t)g * gbytes;
        for (int r = 0; r < SN_Q4_KX8_ROWS; r++) {
            const sn_block_q4_K *row =
                (const sn_block_q4_K *)((const char *)src + (uint64_t)(g * SN_Q4_KX8_ROWS + r) * src_row_bytes);
            for (int64_t b = 0; b < nb; b++) {
                uint8_t *blk = grp + b * SN_Q4_KX8_BLOCK_BYTES;
                for (int c = 0; c < 16; c++) memcpy(blk + 64 * c + 8 * r, row[b].qs + 8 * c, 8);
                for (int k = 0; k < 3; k++) memcpy(blk + SC_OFF + 32 * k + 4 * r, row[b].scales + 4 * k, 4);
                memcpy(blk + D_OFF + 2 * r, &row[b].d, 2);
                memcpy(blk + DMIN_OFF + 2 * r, &row[b].dmin, 2);
            }
        }
    }
}

void sn_q4_Kx8_unpack(const void *w, int64_t n_in, int64_t n_groups, void *dst) {
    const int64_t nb = n_in / SN_QK_K;
    const uint64_t gbytes = (uint64_t)nb * SN_Q4_KX8_BLOCK_BYTES;
    for (int64_t g = 0; g < n_groups; g++) {
        const uint8_t *grp = (const uint8_t *)w + (uint64_t)g * gbytes;
        for (int r = 0; r < SN_Q4_KX8_ROWS; r++) {
            sn_block_q4_K *row = (sn_block_q4_K *)dst + (g * SN_Q4_KX8_ROWS + r) * nb;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = grp + b * SN_Q4_KX8_BLOCK_BYTES;
                for (int c = 0; c < 16; c++) memcpy(row[b].qs + 8 * c, blk + 64 * c + 8 * r, 8);
                for (int k = 0; k < 3; k++) memcpy(row[b].scales + 4 * k, blk + SC_OFF + 32 * k + 4 * r, 4);
                memcpy(&row[b].d, blk + D_OFF + 2 * r, 2);
                memcpy(&row[b].dmin, blk + DMIN_OFF + 2 * r, 2);
            }
        }
    }
}

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")
#include <immintrin.h>

/* vpshufb patterns over S16 (128-bit lane k: row 2k's 8 scales, then row 2k + 1's), for sub-block
 * pair j: int16 words [s(2k, 2j) x2, s(2k+1, 2j) x2, s(2k, 2j+1) x2, s(2k+1, 2j+1) x2], the
 * multipliers of packssdw(lo, hi)'s words (lo: lanes 4k..4k+3 = rows 2k, 2k, 2k+1, 2k+1). */
#define Z 0x80
#define PJ(j) 2 * (j), Z, 2 * (j), Z, 8 + 2 * (j), Z, 8 + 2 * (j), Z, 2 * (j) + 1, Z, 2 * (j) + 1, Z, 9 + 2 * (j), Z, 9 + 2 * (j), Z
static const uint8_t PICK_J[4][16] __attribute__((aligned(16))) = {{PJ(0)}, {PJ(1)}, {PJ(2)}, {PJ(3)}};
#undef PJ
#undef Z

/* The 8 rows' scales and mins (sn_kq_q4k_scales, 8 rows wide) as S16 / M16: 128-bit lane k holds
 * row 2k's 8 values, then row 2k + 1's. */
static inline void scales_x8(const uint8_t *sc, __m512i *s16, __m512i *m16) {
    const __m256i u0 = _mm256_loadu_si256((const __m256i *)sc), u1 = _mm256_loadu_si256((const __m256i *)(sc + 32)),
                  u2 = _mm256_loadu_si256((const __m256i *)(sc + 64));
    const __m256i m6 = _mm256_set1_epi8(0x3f), m0f = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i s_lo = _mm256_and_si256(u0, m6), m_lo = _mm256_and_si256(u1, m6);
    const __m256i s_hi = _mm256_or_si256(_mm256_and_si256(u2, m0f), _mm256_and_si256(_mm256_srli_epi32(u0, 2), m30));
    const __m256i m_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u2, 4), m0f), _mm256_and_si256(_mm256_srli_epi32(u1, 2), m30));
    /* dword r: row r's values 0-3 (low half) / 4-7 (high half) -> lane k: rows 2k, 2k + 1, each 0-7 */
    const __m512i order = _mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    *s16 = _mm512_permutexvar_epi32(order, _mm512_inserti64x4(_mm512_castsi256_si512(s_lo), s_hi, 1));
    *m16 = _mm512_permutexvar_epi32(order, _mm512_inserti64x4(_mm512_castsi256_si512(m_lo), m_hi, 1));
}

/* One block of one group against one activation block: 128-bit lane k of the result holds
 * [isum(2k), isum(2k+1), msum(2k), msum(2k+1)], exact. */
static inline __m512i block_x8(const uint8_t *blk, const sn_block_q8_K *a) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512i s16, m16;
    scales_x8(blk + SC_OFF, &s16, &m16);
    __m512i acc = _mm512_setzero_si512();
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
            const __m512i v = _mm512_loadu_si512(blk + 64 * (4 * j + c));
            int64_t wl, wh; /* activations of elements 8c..8c+7 of sub-blocks 2j, 2j + 1 */
            memcpy(&wl, a->qs + 64 * j + 8 * c, 8);
            memcpy(&wh, a->qs + 64 * j + 32 + 8 * c, 8);
            lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, m4), _mm512_set1_epi64(wl));
            hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4), _mm512_set1_epi64(wh));
        }
        /* |lane| <= 16 * 15 * 128 < 2^15: the pack is exact */
        const __m512i sc = _mm512_shuffle_epi8(s16, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)PICK_J[j])));
        acc = _mm512_dpwssd_epi32(acc, _mm512_packs_epi32(lo, hi), sc);
    }
    /* lane k: [row 2k's lo part, 2k + 1's, 2k's hi part, 2k + 1's] -> isum(2k), isum(2k + 1) in dwords 0, 1 */
    const __m512i is = _mm512_add_epi32(acc, _mm512_shuffle_epi32(acc, _MM_PERM_BADC));
    /* mins: each row's 8 mins times the 8 sub-block sums of the activation (pairs of its 16 bsums) */
    const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)a->bsums), _mm_loadu_si128((const __m128i *)(a->bsums + 8)));
    const __m512i bs4 = _mm512_broadcast_i32x4(bs), z = _mm512_setzero_si512();
    const __m512i p0 = _mm512_madd_epi16(_mm512_unpacklo_epi8(m16, z), bs4); /* row 2k: 4 partial sums */
    const __m512i p1 = _mm512_madd_epi16(_mm512_unpackhi_epi8(m16, z), bs4); /* row 2k + 1 */
    __m512i ms = _mm512_add_epi32(_mm512_unpacklo_epi32(p0, p1), _mm512_unpackhi_epi32(p0, p1));
    ms = _mm512_add_epi32(ms, _mm512_shuffle_epi32(ms, _MM_PERM_BADC)); /* dwords 0, 1: msum(2k), msum(2k + 1) */
    return _mm512_unpacklo_epi64(is, ms);
}

/* d and dmin of the 8 rows, times d_a, in block_x8's lane order */
static inline __m512 scale_x8(const uint8_t *blk, float da) {
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(blk + D_OFF))); /* d0..d7, dmin0..dmin7 */
    const __m512i order = _mm512_setr_epi32(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    return _mm512_mul_ps(_mm512_permutexvar_ps(order, d), _mm512_set1_ps(da));
}

/* Group by group, one sequential stream: read as four far streams, as the other single-token
 * kernels do on AMD cores, this kernel decoded slower (docs/PERFORMANCE.md). */
void sn_q4_Kx8_mv_avx512vnni(int64_t n, const void *w, int64_t n_groups, const void *x, float *y) {
    const int64_t nb = n / SN_QK_K;
    const sn_block_q8_K *a = x;
    const __m512i pick = _mm512_setr_epi32(0, 1, 4, 5, 8, 9, 12, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    for (int64_t g = 0; g < n_groups; g++) {
        const uint8_t *grp = (const uint8_t *)w + (uint64_t)g * (uint64_t)nb * SN_Q4_KX8_BLOCK_BYTES;
        __m512 s = _mm512_setzero_ps(); /* lane k: s1(2k), s1(2k + 1), s2(2k), s2(2k + 1) */
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t *blk = grp + (uint64_t)b * SN_Q4_KX8_BLOCK_BYTES;
            s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(block_x8(blk, &a[b])), scale_x8(blk, a[b].d), s);
        }
        /* s1 - s2 per row: lane k's dwords 0, 1 minus 2, 3 */
        const __m512 diff = _mm512_sub_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(1, 0, 3, 2)));
        _mm256_storeu_ps(y + SN_Q4_KX8_ROWS * g, _mm512_castps512_ps256(_mm512_permutexvar_ps(pick, diff)));
    }
}
#pragma GCC pop_options
#endif
