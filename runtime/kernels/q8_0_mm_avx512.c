/* q8_0_mm_avx512.c - batched (prompt) Q8_0 matmul on AVX-512 VNNI, 16 weight rows per vector.
 *
 * The order every output keeps is dot_q8_0's (ggml's AVX2/AVX-512 vec_dot_q8_0_q8_0): per 32-element
 * block an 8-lane vector whose lane l is the exact integer sum of products 4l..4l+3, converted and
 * fma'd with d_w * d_a into an 8-lane accumulator, block after block; ggml's hsum_float_8 at the end.
 * Lane l of that vector is exactly what one vpdpbusd makes of one 4-byte activation word, so with 16
 * rows in the 16 lanes of a register, "lane l" becomes "step l": eight accumulators per token, one
 * per step, each holding 16 rows, and the final hsum_float_8 adds those eight vectors in ggml's
 * pairing. As in kquants_mm_avx512.c the weights are rearranged once per call (a chunk of 16 rows x
 * CHUNK blocks: for every step the 16 rows' 4 bytes side by side, stored + 128 as unsigned bytes;
 * the d scales as floats), so each token meets a 64-byte weight vector with one broadcast activation
 * word; the +128 is taken back exactly by starting each vpdpbusd from -128 x (sum of the word's four
 * activation bytes). Partial sums of a row group spanning several chunks wait in a small buffer.
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

enum {
    ROWS = 16,
    CHUNK = 32,   /* blocks rearranged at a time: 32 x 576 bytes stay in L1 while the tokens pass */
    MIN_T = 4,    /* fewer tokens do not pay for the rearranging (the 4x4 tile takes them) */
    TILE_T = 3,   /* tokens per tile: 3 x 8 accumulators */
    PARK_FLOATS = 8 * 16, /* the 8 step accumulators of the 16 rows */
    D_OFF = 8 * 64,
    BLOCK_BYTES = D_OFF + 64,
};

static inline __m512i gather32(__m512i idx, const uint8_t *p) { return _mm512_i32gather_epi32(idx, (const void *)p, 1); }

static void rearrange(const uint8_t *w, __m512i idx, int64_t b0, int nblk, uint8_t *dst) {
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    for (int b = 0; b < nblk; b++) {
        const uint8_t *blk = w + (uint64_t)(b0 + b) * sizeof(sn_block_q8_0);
        uint8_t *o = dst + (size_t)b * BLOCK_BYTES;
        for (int g = 0; g < 8; g++) _mm512_store_si512(o + 64 * g, _mm512_xor_si512(gather32(idx, blk + offsetof(sn_block_q8_0, qs) + 4 * g), bias));
        _mm512_store_ps(o + D_OFF, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(gather32(idx, blk))));
    }
}

static inline __m512i idx_load(const int32_t *off) { return _mm512_loadu_si512(off); }

/* TT (1..3, a compile-time constant) tokens x the 16 rows of the rearranged chunk (xa[t]: the
 * chunk's first activation block of token t); accumulators start at 0 (first) or in park, the last
 * chunk stores hsum_float_8 of the eight step accumulators. Rows past nr are not written. */
static inline __attribute__((always_inline)) void tile_n(const int TT, const uint8_t *pk, int nblk,
                                                         const sn_block_q8_0 *const *xa, int first, int last, float *y,
                                                         int64_t ldy, float *park, int nr) {
    const __mmask16 m = (__mmask16)((1u << nr) - 1);
    __m512 acc[TILE_T][8];
    _Pragma("GCC unroll 3") for (int t = 0; t < TT; t++)
        _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++)
            acc[t][g] = first ? _mm512_setzero_ps() : _mm512_load_ps(park + (t * 8 + g) * 16);
    const __m256i ones = _mm256_set1_epi8(1);
    for (int b = 0; b < nblk; b++) {
        const uint8_t *o = pk + (size_t)b * BLOCK_BYTES;
        const __m512 dv = _mm512_load_ps(o + D_OFF);
        __m512 dd[TILE_T];
        int32_t corr[TILE_T][8] __attribute__((aligned(32))); /* -128 x the sum of each 4-byte word */
        _Pragma("GCC unroll 3") for (int t = 0; t < TT; t++) {
            const sn_block_q8_0 *a = xa[t] + b;
            dd[t] = _mm512_mul_ps(dv, _mm512_set1_ps(_cvtsh_ss(a->d)));
            const __m256i s4 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, _mm256_loadu_si256((const __m256i *)a->qs));
            _mm256_store_si256((__m256i *)corr[t], _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(s4, 7)));
        }
        _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
            const __m512i wv = _mm512_load_si512(o + 64 * g);
            _Pragma("GCC unroll 3") for (int t = 0; t < TT; t++) {
                const __m512i s = _mm512_dpbusd_epi32(_mm512_set1_epi32(corr[t][g]), wv, _mm512_set1_epi32(sn_mm_ld32(xa[t][b].qs + 4 * g)));
                acc[t][g] = _mm512_fmadd_ps(dd[t], _mm512_cvtepi32_ps(s), acc[t][g]);
            }
        }
    }
    _Pragma("GCC unroll 3") for (int t = 0; t < TT; t++) {
        if (last) { /* hsum_float_8: (a4 + a0 + a6 + a2) + (a5 + a1 + a7 + a3), pairwise as ggml */
            const __m512 r0 = _mm512_add_ps(acc[t][4], acc[t][0]), r1 = _mm512_add_ps(acc[t][5], acc[t][1]);
            const __m512 r2 = _mm512_add_ps(acc[t][6], acc[t][2]), r3 = _mm512_add_ps(acc[t][7], acc[t][3]);
            _mm512_mask_storeu_ps(y + t * ldy, m, _mm512_add_ps(_mm512_add_ps(r0, r2), _mm512_add_ps(r1, r3)));
        } else {
            _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) _mm512_store_ps(park + (t * 8 + g) * 16, acc[t][g]);
        }
    }
}

MM_REARRANGED_TILES(tile, tile_n, sn_block_q8_0)
MM_REARRANGED_ENTRY(mm_q8_0, SN_QK8_0, sn_block_q8_0, __m512i, idx_load, MIN_T)

#pragma GCC pop_options

void sn_kernels_q8_0_mm_avx512(sn_kernels *k) { k->type[SN_GGML_Q8_0].mm = mm_q8_0; }
#else
void sn_kernels_q8_0_mm_avx512(sn_kernels *k) { (void)k; }
#endif
