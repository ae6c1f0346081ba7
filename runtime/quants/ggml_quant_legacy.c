/* ggml_quant_legacy.c - ggml's quantizers for the 32-value types Q4_1, Q5_0, Q5_1 and the
 * non-linear IQ4_NL / IQ4_XS (block layouts in quants.h).
 *
 * Q4_1/Q5_0/Q5_1 are quantize_row_*_ref, which is what llama-quantize runs without an importance
 * matrix. The IQ4 types are what ggml_quantize_chunk runs (quantize_iq4_nl / quantize_iq4_xs with
 * no weights): the scale search tries 15 scales (ntry 7), unlike quantize_row_iq4_nl_ref's single
 * one, so these bytes equal llama-quantize's, not the _ref function's. */
#include "ggml_types_internal.h"

#include "quants.h"

#include <float.h>

/* The min and max of a 32-value block (FLT_MAX / -FLT_MAX start, as ggml's). */
static void min_max32(const float *x, float *min, float *max) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

/* The 5th bits of a 32-value block's levels (value j at bit j), and the low nibbles packed. */
static uint32_t pack_5bit(const uint8_t *q, uint8_t *qs) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
        qh |= ((q[j] & 0x10u) >> 4) << j;
        qh |= ((q[j + 16] & 0x10u) >> 4) << (j + 16);
    }
    return qh;
}

/* Q5_0: d = (signed value of largest magnitude) / -16, q = min(31, (int8)(x/d + 16.5)). */
void sn_quantize_row_q5_0(const float *x, void *vy, int64_t k) {
    sn_block_q5_0 *y = vy;
    for (int64_t i = 0; i < k / 32; i++, x += 32) {
        float amax;
        const float d = sn_signed_amax(x, 32, &amax) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        uint8_t q[32];
        for (int j = 0; j < 32; j++) q[j] = (uint8_t)SN_MIN(31, (int)cast_i8(x[j] * id + 16.5f));
        uint32_t qh = pack_5bit(q, y[i].qs);
        memcpy(y[i].qh, &qh, 4);
    }
}

/* Q4_1 (levels 15) and Q5_1 (levels 31): d = (max - min) / levels, m = min, q = (int8)((x - min)/d
 * + 0.5), clamped to 15 for Q4_1 only (as in ggml). Both blocks start with d, m. */
static void q_1_rows(const float *x, void *vy, int64_t k, int levels) {
    const size_t bsize = levels == 15 ? sizeof(sn_block_q4_1) : sizeof(sn_block_q5_1);
    for (int64_t i = 0; i < k / 32; i++, x += 32) {
        uint8_t *blk = (uint8_t *)vy + (size_t)i * bsize;
        float min, max;
        min_max32(x, &min, &max);
        const float d = (max - min) / levels;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t dm[2] = {sn_fp32_to_fp16(d), sn_fp32_to_fp16(min)};
        memcpy(blk, dm, sizeof dm);
        uint8_t q[32];
        for (int j = 0; j < 32; j++) {
            const int v = cast_i8((x[j] - min) * id + 0.5f);
            q[j] = (uint8_t)(levels == 15 ? SN_MIN(15, v) : v);
        }
        if (levels == 15) {
            sn_block_q4_1 *y = (sn_block_q4_1 *)(void *)blk;
            for (int j = 0; j < 16; j++) y->qs[j] = (uint8_t)(q[j] | (q[j + 16] << 4));
        } else {
            sn_block_q5_1 *y = (sn_block_q5_1 *)(void *)blk;
            uint32_t qh = pack_5bit(q, y->qs);
            memcpy(y->qh, &qh, 4);
        }
    }
}

void sn_quantize_row_q4_1(const float *x, void *vy, int64_t k) { q_1_rows(x, vy, k, 15); }
void sn_quantize_row_q5_1(const float *x, void *vy, int64_t k) { q_1_rows(x, vy, k, 31); }

/* ---- IQ4_NL / IQ4_XS ---- */

/* Index of the IQ4 level nearest to v (ggml's best_index_int8: binary search, ties up). */
static inline int iq4_index(float v) {
    const int8_t *val = sn_iq4nl_values;
    if (v <= val[0]) return 0;
    if (v >= val[15]) return 15;
    int ml = 0, mu = 15;
    while (mu - ml > 1) {
        int mav = (ml + mu) / 2;
        if (v < val[mav]) mu = mav;
        else ml = mav;
    }
    return v - val[mu - 1] < val[mu] - v ? mu - 1 : mu;
}

/* The x^2-weighted scale of one 32-value block (ggml's quantize_row_iq4_nl_impl inner loop with
 * ntry 7 and no importance weights): the fit at the largest magnitude, then 15 trial scales. */
static float iq4_block_scale(const float *xb) {
    const int8_t *values = sn_iq4nl_values;
    float amax;
    const float max = sn_signed_amax(xb, 32, &amax);
    if (amax < GROUP_MAX_EPS) return 0;
    float d = -max / values[0];
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < 32; j++) {
        float q = values[iq4_index(id * xb[j])], w = xb[j] * xb[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
    float best = d * sumqx;
    for (int itry = -7; itry <= 7; itry++) {
        id = (float)(itry + values[0]) / max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < 32; j++) {
            float q = values[iq4_index(id * xb[j])], w = xb[j] * xb[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* 32 values' indices at inverse scale id, as nibbles (value j low, value j + 16 high). */
static void iq4_pack(const float *xb, float id, uint8_t *qs) {
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)(iq4_index(id * xb[j]) | (iq4_index(id * xb[j + 16]) << 4));
}

#ifdef SN_X86
/* iq4_block_scales_x8 (AVX2) and iq4_block_scales_x16 (AVX-512): iq4_block_scale of nblk (<= lanes)
 * consecutive 32-value blocks at x into d[0..nblk), one block per lane; one body, iq4_lanes.h. */
/* k = the largest index in [0, 14] with values[k] <= v (0 below values[1], and for NaN): AVX2 counts
 * the 14 compares; AVX-512 searches the table (values[15] read as +inf) in four halving steps. */
__attribute__((target("avx2"))) static inline __m256i iq4_floor8(__m256 v) {
    __m256i k = _mm256_setzero_si256();
    for (int j = 1; j < 15; j++)
        k = _mm256_sub_epi32(k, _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_set1_ps((float)sn_iq4nl_values[j]), _CMP_GE_OQ)));
    return k;
}
__attribute__((target("avx512f"))) static inline __m512i iq4_floor16(__m512 v, __m512 ts) {
    __m512i k = _mm512_setzero_si512();
    for (int step = 8; step; step >>= 1) {
        const __m512i ks = _mm512_add_epi32(k, _mm512_set1_epi32(step));
        k = _mm512_mask_mov_epi32(k, _mm512_cmp_ps_mask(v, _mm512_permutexvar_ps(ks, ts), _CMP_GE_OQ), ks);
    }
    return _mm512_min_epi32(k, _mm512_set1_epi32(14));
}
#define LANE_OPS 8
#include "lane_ops.h"
#define IQ4_NAME iq4_block_scales_x8
#define IQ4_TABLE(tv) const __m256 t0 = _mm256_loadu_ps(tv), t1 = _mm256_loadu_ps((tv) + 8)
#define IQ4_LOOKUP(k)                                                                                  \
    _mm256_blendv_ps(_mm256_permutevar8x32_ps(t0, k), _mm256_permutevar8x32_ps(t1, k),                 \
                     _mm256_castsi256_ps(_mm256_cmpgt_epi32(k, _mm256_set1_epi32(7))))
#define IQ4_FLOOR(v) iq4_floor8(v)
#include "iq4_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"
#define LANE_OPS 16
#include "lane_ops.h"
#define IQ4_NAME iq4_block_scales_x16
#define IQ4_TABLE(tv) const __m512 t0 = _mm512_loadu_ps(tv), ts = _mm512_mask_mov_ps(t0, 1 << 15, _mm512_set1_ps(INFINITY))
#define IQ4_LOOKUP(k) _mm512_permutexvar_ps(k, t0)
#define IQ4_FLOOR(v) iq4_floor16(v, ts)
#include "iq4_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"

/* iq4_pack in lanes: each value's index is its floor k or k + 1 by iq4_index's subtractions and tie
 * rule, 15 for NaN (as in the scale search above). */
__attribute__((target("avx2"))) static void iq4_pack_x8(const float *xb, float id, uint8_t *qs) {
    float tv[16];
    for (int j = 0; j < 16; j++) tv[j] = (float)sn_iq4nl_values[j];
    const __m256 t0 = _mm256_loadu_ps(tv), t1 = _mm256_loadu_ps(tv + 8), vid = _mm256_set1_ps(id);
    const __m256i seven = _mm256_set1_epi32(7), one = _mm256_set1_epi32(1), top = _mm256_set1_epi32(15);
    int32_t idx[32];
    for (int h = 0; h < 32; h += 8) {
        const __m256 v = _mm256_mul_ps(vid, _mm256_loadu_ps(xb + h));
        const __m256i k = iq4_floor8(v), k1 = _mm256_add_epi32(k, one);
        const __m256 lo = _mm256_blendv_ps(_mm256_permutevar8x32_ps(t0, k), _mm256_permutevar8x32_ps(t1, k),
                                           _mm256_castsi256_ps(_mm256_cmpgt_epi32(k, seven)));
        const __m256 hi = _mm256_blendv_ps(_mm256_permutevar8x32_ps(t0, k1), _mm256_permutevar8x32_ps(t1, k1),
                                           _mm256_castsi256_ps(_mm256_cmpgt_epi32(k1, seven)));
        const __m256 keep = _mm256_cmp_ps(_mm256_sub_ps(v, lo), _mm256_sub_ps(hi, v), _CMP_LT_OQ);
        __m256i r = _mm256_blendv_epi8(k1, k, _mm256_castps_si256(keep));
        r = _mm256_blendv_epi8(r, top, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
        _mm256_storeu_si256((__m256i *)(void *)(idx + h), r);
    }
    for (int j = 0; j < 16; j++) qs[j] = (uint8_t)(idx[j] | (idx[j + 16] << 4));
}

__attribute__((target("avx512f"))) static void iq4_pack_x16(const float *xb, float id, uint8_t *qs) {
    float tv[16];
    for (int j = 0; j < 16; j++) tv[j] = (float)sn_iq4nl_values[j];
    const __m512 t0 = _mm512_loadu_ps(tv), ts = _mm512_mask_mov_ps(t0, 1 << 15, _mm512_set1_ps(INFINITY));
    const __m512 vid = _mm512_set1_ps(id);
    const __m512i one = _mm512_set1_epi32(1), top = _mm512_set1_epi32(15);
    __m512i r[2];
    for (int h = 0; h < 2; h++) {
        const __m512 v = _mm512_mul_ps(vid, _mm512_loadu_ps(xb + 16 * h));
        const __m512i k = iq4_floor16(v, ts), k1 = _mm512_add_epi32(k, one);
        const __m512 lo = _mm512_permutexvar_ps(k, t0), hi = _mm512_permutexvar_ps(k1, t0);
        const __mmask16 keep = _mm512_cmp_ps_mask(_mm512_sub_ps(v, lo), _mm512_sub_ps(hi, v), _CMP_LT_OQ);
        r[h] = _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(k1, keep, k), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), top);
    }
    _mm_storeu_si128((__m128i *)(void *)qs, _mm512_cvtepi32_epi8(_mm512_or_si512(r[0], _mm512_slli_epi32(r[1], 4))));
}
#endif

/* iq4_pack at a SIMD level. */
static void iq4_pack_at(const float *xb, float id, uint8_t *qs, int level) {
#ifdef SN_X86
    if (level == 2) { iq4_pack_x16(xb, id, qs); return; }
    if (level == 1) { iq4_pack_x8(xb, id, qs); return; }
#endif
    (void)level;
    iq4_pack(xb, id, qs);
}

/* The scales of nblk consecutive 32-value blocks: 16 at a time in lanes with AVX-512 (level 2), 8
 * with AVX2 (level 1). */
static void iq4_block_scales(const float *x, int64_t nblk, float *d, int level) {
#ifdef SN_X86
    if (level == 2) {
        for (int64_t b = 0; b < nblk; b += 16) iq4_block_scales_x16(x + 32 * b, (int)SN_MIN(16, nblk - b), d + b);
        return;
    }
    if (level == 1) {
        for (int64_t b = 0; b < nblk; b += 8) iq4_block_scales_x8(x + 32 * b, (int)SN_MIN(8, nblk - b), d + b);
        return;
    }
#endif
    (void)level;
    for (int64_t b = 0; b < nblk; b++) d[b] = iq4_block_scale(x + 32 * b);
}

void sn_quantize_row_iq4_nl(const float *x, void *vy, int64_t k) { sn_quantize_row_iq4_nl_at(x, vy, k, SN_GGML_LEVEL_BEST); }

void sn_quantize_row_iq4_nl_at(const float *x, void *vy, int64_t k, int level) {
    level = sn_ggml_level(level);
    sn_block_iq4_nl *y = vy;
    float sc[16];
    for (int64_t i = 0; i < k / 32; i += 16) {
        const int64_t nb = SN_MIN(16, k / 32 - i);
        iq4_block_scales(x + 32 * i, nb, sc, level);
        for (int64_t b = 0; b < nb; b++) {
            y[i + b].d = sn_fp32_to_fp16(sc[b]);
            iq4_pack_at(x + 32 * (i + b), sc[b] != 0.0f ? 1 / sc[b] : 0, y[i + b].qs, level);
        }
    }
}

/* IQ4_XS: the 8 block scales as 6-bit multiples of d = -max_scale / 32 (the unrounded d, as ggml
 * uses it), then every block's indices against its rounded scale. */
void sn_quantize_row_iq4_xs(const float *x, void *vy, int64_t k) { sn_quantize_row_iq4_xs_at(x, vy, k, SN_GGML_LEVEL_BEST); }

void sn_quantize_row_iq4_xs_at(const float *x, void *vy, int64_t k, int level) {
    level = sn_ggml_level(level);
    sn_block_iq4_xs *y = vy;
    float pair[16], *scales = pair; /* two super-blocks' block scales at a time (16 lanes) */
    for (int64_t i = 0; i < k / SN_QK_K; i++, x += SN_QK_K, scales += 8) {
        float max_scale = 0, amax_scale = 0;
        if (i % 2 == 0) iq4_block_scales(x, SN_MIN(16, 8 * (k / SN_QK_K - i)), scales = pair, level);
        for (int ib = 0; ib < 8; ib++)
            if (fabsf(scales[ib]) > amax_scale) { amax_scale = fabsf(scales[ib]); max_scale = scales[ib]; }
        const float d = -max_scale / 32;
        y[i].d = sn_fp32_to_fp16(d);
        y[i].scales_h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        const float id = d != 0.0f ? 1 / d : 0.f;
        for (int ib = 0; ib < 8; ib++) {
            int l = nearest_int(id * scales[ib]);
            l = SN_MAX(-32, SN_MIN(31, l));
            const float dl = d * l;
            iq4_pack_at(x + 32 * ib, dl != 0.0f ? 1 / dl : 0.f, y[i].qs + 16 * ib, level);
            l += 32;
            y[i].scales_l[ib / 2] |= (uint8_t)((l & 0xF) << (4 * (ib % 2)));
            y[i].scales_h |= (uint16_t)((l >> 4) << (2 * ib));
        }
    }
}
