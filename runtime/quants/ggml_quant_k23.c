/* ggml_quant_k23.c - ggml's reference quantizers for the 2- and 3-bit K-quants Q2_K and Q3_K.
 *
 * Super-blocks of 256 in sub-blocks of 16. Q2_K fits a scale and a min per sub-block (ggml's
 * make_qkx2_quants, |x| weights, absolute error) and stores both as 4 bits against fp16 d / dmin;
 * Q3_K fits a symmetric scale per sub-block (make_q3_quants: the x^2-weighted fit, then up to five
 * passes moving single levels) and stores it as 6 bits against one fp16 d. Both then requantize
 * every value against the rounded scales, as quantize_row_q2_K_ref / quantize_row_q3_K_ref do.
 * The sub-block fits of both run in SIMD lanes when the CPU has AVX2 / AVX-512, bit for bit. */
#include "ggml_types_internal.h"

#include "quants.h"

/* 2-bit levels of 4 consecutive 32-value groups of a 128-value half into one byte each. */
static void pack_2bit(const uint8_t *L, uint8_t *qs) {
    for (int j = 0; j < SN_QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

/* The 16 sub-blocks' scales, mins and levels of one Q2_K block: make_qkx2_quants with |x| weights
 * and absolute error; all 16 at once in lanes with AVX-512, 8 at a time with AVX2. */
static void q2_K_sub_scales(const float *x, int level, uint8_t *L, float *mins, float *scales) {
#ifdef SN_X86
    if (level >= 1) {
        const int lanes = level == 2 ? 16 : 8;
        float xt[16 * 16], wt[16 * 16];
        int32_t Lt[16 * 16];
        for (int b = 0; b < 16; b += lanes) {
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 16; l++) {
                    xt[l * lanes + j] = x[16 * (b + j) + l];
                    wt[l * lanes + j] = fabsf(xt[l * lanes + j]);
                }
            if (lanes == 16) sn_qkx2_quants_x16(16, 3, xt, wt, Lt, mins + b, scales + b, -0.5f, 0.1f, 15, 1);
            else sn_qkx2_quants_x8(16, 3, xt, wt, Lt, mins + b, scales + b, -0.5f, 0.1f, 15, 1);
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 16; l++) L[16 * (b + j) + l] = (uint8_t)Lt[l * lanes + j];
        }
        return;
    }
#endif
    (void)level;
    uint8_t Laux[16];
    float weights[16];
    for (int j = 0; j < SN_QK_K / 16; j++) {
        for (int l = 0; l < 16; l++) weights[l] = fabsf(x[16 * j + l]);
        scales[j] = sn_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, 1);
    }
}

static void q2_K_levels(const float *x, const float *d, const float *dm, int level, uint8_t *L);

void sn_quantize_row_q2_K(const float *x, void *vy, int64_t k) { sn_quantize_row_q2_K_at(x, vy, k, SN_GGML_LEVEL_BEST); }

void sn_quantize_row_q2_K_at(const float *x, void *vy, int64_t k, int level) {
    level = sn_ggml_level(level);
    sn_block_q2_K *y = vy;
    const int64_t nb = k / SN_QK_K;
    const float q4scale = 15.f;
    uint8_t L[SN_QK_K];
    float mins[SN_QK_K / 16], scales[SN_QK_K / 16];
    for (int64_t i = 0; i < nb; i++) {
        float max_scale = 0, max_min = 0;
        q2_K_sub_scales(x, level, L, mins, scales);
        for (int j = 0; j < SN_QK_K / 16; j++) {
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            float iscale = q4scale / max_scale;
            for (int j = 0; j < SN_QK_K / 16; j++) y[i].scales[j] = (uint8_t)nearest_int(iscale * scales[j]);
            y[i].d = sn_fp32_to_fp16(max_scale / q4scale);
        } else {
            memset(y[i].scales, 0, sizeof y[i].scales);
            y[i].d = sn_fp32_to_fp16(0.f);
        }
        if (max_min > 0) {
            float iscale = q4scale / max_min;
            for (int j = 0; j < SN_QK_K / 16; j++) /* unsigned: NaN input makes nearest_int negative */
                y[i].scales[j] |= (uint8_t)((unsigned)nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = sn_fp32_to_fp16(max_min / q4scale);
        } else {
            y[i].dmin = sn_fp32_to_fp16(0.f);
        }
        float d[SN_QK_K / 16], dm[SN_QK_K / 16];
        for (int j = 0; j < SN_QK_K / 16; j++) {
            d[j] = sn_fp16_to_fp32(y[i].d) * (y[i].scales[j] & 0xF);
            dm[j] = sn_fp16_to_fp32(y[i].dmin) * (y[i].scales[j] >> 4);
        }
        q2_K_levels(x, d, dm, level, L);
        pack_2bit(L, y[i].qs);
        x += SN_QK_K;
    }
}

/* ggml's make_q3_quants with do_rmse: levels in [-nmax, nmax-1] from the largest magnitude, then
 * passes that move one level at a time while the x^2-weighted fit improves. L gets level + nmax. */
static float q3_quants(int n, int nmax, const float *x, int8_t *L) {
    float max;
    if (!sn_sym_start(x, n, L, &max)) return 0.f;
    float sumlx, suml2;
    sn_sym_fit(n, nmax, x, -nmax / max, L, 0, &sumlx, &suml2);
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                int new_l = nearest_int(x[i] * sl2 / slx);
                new_l = SN_MAX(-nmax, SN_MIN(nmax - 1, new_l));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

#ifdef SN_X86
/* q3_sub_x8 (AVX2) and q3_sub_x16 (AVX-512): q3_quants in lanes, one body (q3_lanes.h). */
#define LANE_OPS 8
#include "lane_ops.h"
#define Q3_NAME q3_sub_x8
#include "q3_lanes.h"
#define LEVELS_NAME levels_x8
#include "levels_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"
#define LANE_OPS 16
#include "lane_ops.h"
#define Q3_NAME q3_sub_x16
#include "q3_lanes.h"
#define LEVELS_NAME levels_x16
#include "levels_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"
#endif

/* The 16 sub-blocks' scales and levels (+ 4) of one Q3_K block: all 16 at once in lanes with
 * AVX-512, 8 at a time with AVX2. */
static void q3_K_sub_scales(const float *x, int level, int8_t *L, float *scales) {
#ifdef SN_X86
    if (level >= 1) {
        const int lanes = level == 2 ? 16 : 8;
        float xt[16 * 16];
        int32_t Lt[16 * 16];
        for (int b = 0; b < 16; b += lanes) {
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 16; l++) xt[l * lanes + j] = x[16 * (b + j) + l];
            if (lanes == 16) q3_sub_x16(xt, Lt, scales + b);
            else q3_sub_x8(xt, Lt, scales + b);
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 16; l++) L[16 * (b + j) + l] = (int8_t)Lt[l * lanes + j];
        }
        return;
    }
#endif
    (void)level;
    for (int j = 0; j < SN_QK_K / 16; j++) scales[j] = q3_quants(16, 4, x + 16 * j, L + 16 * j);
}

/* Q2_K's final levels against the rounded scales d and mins dm (d 0: keep the fitted ones), in
 * lanes with SIMD. */
static void q2_K_levels(const float *x, const float *d, const float *dm, int level, uint8_t *L) {
#ifdef SN_X86
    if (level >= 1) {
        if (level == 2) levels_x16(x, 16, 16, d, dm, 0, 3, 0, L);
        else levels_x8(x, 16, 16, d, dm, 0, 3, 0, L);
        return;
    }
#endif
    (void)level;
    for (int j = 0; j < SN_QK_K / 16; j++) {
        if (d[j] == 0.0f) continue; /* keep the fitted levels, as ggml does */
        for (int ii = 0; ii < 16; ii++) {
            int l = nearest_int((x[16 * j + ii] + dm[j]) / d[j]);
            L[16 * j + ii] = (uint8_t)SN_MAX(0, SN_MIN(3, l));
        }
    }
}

/* The final levels against the rounded scales dj (0: keep the fitted ones), in lanes with SIMD. */
static void q3_K_levels(const float *x, const float *dj, int level, int8_t *L) {
#ifdef SN_X86
    if (level >= 1) {
        if (level == 2) levels_x16(x, 16, 16, dj, NULL, -4, 3, 4, (uint8_t *)L);
        else levels_x8(x, 16, 16, dj, NULL, -4, 3, 4, (uint8_t *)L);
        return;
    }
#endif
    (void)level;
    for (int j = 0; j < SN_QK_K / 16; j++) {
        if (dj[j] == 0.0f) continue;
        for (int ii = 0; ii < 16; ii++) {
            int l = nearest_int(x[16 * j + ii] / dj[j]);
            L[16 * j + ii] = (int8_t)(SN_MAX(-4, SN_MIN(3, l)) + 4);
        }
    }
}

void sn_quantize_row_q3_K(const float *x, void *vy, int64_t k) { sn_quantize_row_q3_K_at(x, vy, k, SN_GGML_LEVEL_BEST); }

void sn_quantize_row_q3_K_at(const float *x, void *vy, int64_t k, int level) {
    level = sn_ggml_level(level);
    sn_block_q3_K *y = vy;
    const int64_t nb = k / SN_QK_K;
    int8_t L[SN_QK_K];
    float scales[SN_QK_K / 16];
    for (int64_t i = 0; i < nb; i++) {
        float max_scale = 0, amax = 0;
        q3_K_sub_scales(x, level, L, scales);
        for (int j = 0; j < SN_QK_K / 16; j++) {
            float scale = fabsf(scales[j]);
            if (scale > amax) { amax = scale; max_scale = scales[j]; }
        }
        memset(y[i].scales, 0, sizeof y[i].scales);
        if (max_scale != 0.0f) { /* NaN counts as non-zero, as in C */
            float iscale = -32.f / max_scale;
            for (int j = 0; j < SN_QK_K / 16; j++) {
                int8_t l = (int8_t)nearest_int(iscale * scales[j]);
                l = (int8_t)(SN_MAX(-32, SN_MIN(31, l)) + 32);
                if (j < 8) y[i].scales[j] = l & 0xF;
                else y[i].scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
                l = (int8_t)(l >> 4);
                y[i].scales[j % 4 + 8] |= (uint8_t)(l << (2 * (j / 4)));
            }
            y[i].d = sn_fp32_to_fp16(1 / iscale);
        } else {
            y[i].d = sn_fp32_to_fp16(0.f);
        }
        int8_t sc[16];
        float dj[16];
        sn_q3_K_scales(y[i].scales, sc);
        for (int j = 0; j < SN_QK_K / 16; j++) dj[j] = sn_fp16_to_fp32(y[i].d) * sc[j];
        q3_K_levels(x, dj, level, L);
        /* the 3rd bit of value j goes to hmask[j % 32], bit j / 32 */
        memset(y[i].hmask, 0, sizeof y[i].hmask);
        uint8_t U[SN_QK_K];
        for (int j = 0; j < SN_QK_K; j++) {
            if (L[j] > 3) {
                y[i].hmask[j % 32] |= (uint8_t)(1u << (j / 32));
                L[j] -= 4;
            }
            U[j] = (uint8_t)L[j];
        }
        pack_2bit(U, y[i].qs);
        x += SN_QK_K;
    }
}
