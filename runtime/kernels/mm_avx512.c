/* mm_avx512.c - batched (prompt) matrix multiplies for F32 / F16 weights on AVX-512: the 16-lane
 * instance of mm_float.h (register tiles of 4 weight rows x 6 tokens, tinyBLAS's shape here,
 * cache-blocked so a block of rows stays in L1 while every token passes it).
 *
 * ggml's AVX-512 build multiplies F32 / F16 batches with tinyBLAS on 16-lane vectors: per output
 * one 16-lane accumulator, fma in element order, then _mm512_reduce_add_ps's order (halves of
 * 256, 128, 64 bits, then the last pair). F16 values are widened to f32 exactly. This computes
 * every output the same way, so it is bit-identical to the AVX-512 table's dot_mm; BF16 (summed in
 * pairs by vdpbf16ps' order) keeps that table's 4 x 4 tile. Installed only where
 * tuning.lanes == 16. Tests: tests/unit/test_kernels.c compares every output with the scalar
 * dot_mm bit for bit, for row counts, token counts and lengths that hit every edge tile. */
#include "cpu.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx2,fma,f16c")
#include <immintrin.h>

#include "simd_avx512.h"

#define MM_V __m512
#define MM_LANES 16
#define MM_TILE_T 6
#define MM_ZERO() _mm512_setzero_ps()
#define MM_LOAD(p) _mm512_load_ps(p)
#define MM_STORE(p, v) _mm512_store_ps(p, v)
#define MM_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define MM_HSUM(v) sn_avx512_hsum16(v)
#include "mm_float.h"

SN_AI __m512 ld_f32(const void *p, int64_t i) { return _mm512_loadu_ps((const float *)p + i); }
SN_AI __m512 ld_f16(const void *p, int64_t i) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)p + i)));
}

FLOAT_TILE(tile_f32, ld_f32)
TILE_ANY(tile_f32)
MM_FLOAT_ENTRY(mm_f32, tile_f32, 4)
/* F16 batches, two ways to the same values (f16 -> f32 is exact, and every output keeps its one
 * fma chain in element order):
 * - mm_f16_widened, on Intel cores: rows widened to f32 into buffers first (mm_float.h's widening
 *   driver), as on AVX2, because vcvtph2ps is two uops there and in the tile it ran once per weight
 *   vector per tile;
 * - mm_f16_convert, on AMD (Zen 4/5, one uop): the tile converts as it loads, like tinyBLAS, and
 *   runs whole rows (no K chunks: the 4-row x 6-token working set of a 4096-element row is 80 KB of
 *   f16, read once per tile from L2); faster there than the widening driver (docs/PERFORMANCE.md).
 * sn_tuning.mm_f16_convert picks (SN_MM_F16=convert|widen in cmd/ and tests: both run on any AVX-512 CPU). */
WIDEN(widen_f16, ld_f16)
MM_WIDENED_ENTRY(mm_f16_widened, widen_f16, tile_f32, 2)
FLOAT_TILE(tile_f16, ld_f16)
TILE_ANY(tile_f16)
MM_FLOAT_ENTRY_KC(mm_f16_convert, tile_f16, 2, (n + 31) & ~(int64_t)31)

#pragma GCC pop_options
#endif

void sn_kernels_mm_avx512(sn_kernels *k) {
#if defined(__x86_64__) || defined(__i386__)
    if (k->tuning.lanes == 16) {
        k->type[SN_GGML_F32].mm = mm_f32;
        k->type[SN_GGML_F16].mm = k->tuning.mm_f16_convert ? mm_f16_convert : mm_f16_widened;
    }
#else
    (void)k;
#endif
}
