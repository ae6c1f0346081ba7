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

void sn_quantize_row_iq4_nl(const float *x, void *vy, int64_t k) {
    sn_block_iq4_nl *y = vy;
    for (int64_t i = 0; i < k / 32; i++, x += 32) {
        const float s = iq4_block_scale(x);
        y[i].d = sn_fp32_to_fp16(s);
        iq4_pack(x, s != 0.0f ? 1 / s : 0, y[i].qs);
    }
}

/* IQ4_XS: the 8 block scales as 6-bit multiples of d = -max_scale / 32 (the unrounded d, as ggml
 * uses it), then every block's indices against its rounded scale. */
void sn_quantize_row_iq4_xs(const float *x, void *vy, int64_t k) {
    sn_block_iq4_xs *y = vy;
    float scales[8];
    for (int64_t i = 0; i < k / SN_QK_K; i++, x += SN_QK_K) {
        float max_scale = 0, amax_scale = 0;
        for (int ib = 0; ib < 8; ib++) {
            scales[ib] = iq4_block_scale(x + 32 * ib);
            if (fabsf(scales[ib]) > amax_scale) { amax_scale = fabsf(scales[ib]); max_scale = scales[ib]; }
        }
        const float d = -max_scale / 32;
        y[i].d = sn_fp32_to_fp16(d);
        y[i].scales_h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        const float id = d != 0.0f ? 1 / d : 0.f;
        for (int ib = 0; ib < 8; ib++) {
            int l = nearest_int(id * scales[ib]);
            l = SN_MAX(-32, SN_MIN(31, l));
            const float dl = d * l;
            iq4_pack(x + 32 * ib, dl != 0.0f ? 1 / dl : 0.f, y[i].qs + 16 * ib);
            l += 32;
            y[i].scales_l[ib / 2] |= (uint8_t)((l & 0xF) << (4 * (ib % 2)));
            y[i].scales_h |= (uint16_t)((l >> 4) << (2 * ib));
        }
    }
}
