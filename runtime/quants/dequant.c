/* dequant.c - f32 values of the Q4_1 / Q5_0 / Q5_1 / Q2_K / Q3_K / Q5_K / IQ4_NL / IQ4_XS / MXFP4 blocks
 * (quants.h).
 *
 * llama.cpp reads token embeddings through ggml's reference dequantizers, so these keep their
 * expressions and evaluation order: x * d + m is a product rounded, then a sum rounded (never an
 * FMA: ggml's base library is built for baseline x86-64), and K-quant sub-block factors d * sc and
 * dmin * m are rounded before they multiply the value. */
#include "quants.h"

#include "ggml_types.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <string.h>

_Static_assert(sizeof(sn_block_q4_1) == 20, "q4_1 block");
_Static_assert(sizeof(sn_block_q5_0) == 22, "q5_0 block");
_Static_assert(sizeof(sn_block_q5_1) == 24, "q5_1 block");
_Static_assert(sizeof(sn_block_q8_1) == 36, "q8_1 block");
_Static_assert(sizeof(sn_block_q2_K) == 84, "q2_K block");
_Static_assert(sizeof(sn_block_q3_K) == 110, "q3_K block");
_Static_assert(sizeof(sn_block_q5_K) == 176, "q5_K block");
_Static_assert(sizeof(sn_block_iq4_nl) == 18, "iq4_nl block");
_Static_assert(sizeof(sn_block_iq4_xs) == 136, "iq4_xs block");
_Static_assert(sizeof(sn_block_mxfp4) == 17, "mxfp4 block");

const int8_t sn_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int8_t sn_mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

void sn_dequantize_row_q4_1(const void *vx, float *y, int64_t k) {
    const sn_block_q4_1 *x = vx;
    for (int64_t i = 0; i < k / 32; i++, y += 32) {
        const float d = sn_fp16_to_fp32(x[i].d), m = sn_fp16_to_fp32(x[i].m);
        for (int j = 0; j < 16; j++) {
            y[j] = (x[i].qs[j] & 0xF) * d + m;
            y[j + 16] = (x[i].qs[j] >> 4) * d + m;
        }
    }
}

/* value j of a 5-bit block: nibble | (bit j of qh) << 4 */
static inline int q5_value(const uint8_t *qs, const uint8_t *qh4, int j) {
    uint32_t qh;
    memcpy(&qh, qh4, 4);
    const int nib = j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4;
    return nib | (int)(((qh >> j) & 1) << 4);
}

void sn_dequantize_row_q5_0(const void *vx, float *y, int64_t k) {
    const sn_block_q5_0 *x = vx;
    for (int64_t i = 0; i < k / 32; i++, y += 32) {
        const float d = sn_fp16_to_fp32(x[i].d);
        for (int j = 0; j < 32; j++) y[j] = (q5_value(x[i].qs, x[i].qh, j) - 16) * d;
    }
}

void sn_dequantize_row_q5_1(const void *vx, float *y, int64_t k) {
    const sn_block_q5_1 *x = vx;
    for (int64_t i = 0; i < k / 32; i++, y += 32) {
        const float d = sn_fp16_to_fp32(x[i].d), m = sn_fp16_to_fp32(x[i].m);
        for (int j = 0; j < 32; j++) y[j] = q5_value(x[i].qs, x[i].qh, j) * d + m;
    }
}

void sn_dequantize_row_q2_K(const void *vx, float *y, int64_t k) {
    const sn_block_q2_K *x = vx;
    for (int64_t i = 0; i < k / 256; i++) {
        const float d = sn_fp16_to_fp32(x[i].d), min = sn_fp16_to_fp32(x[i].dmin);
        for (int e = 0; e < 256; e++) { /* e = 128 h + 32 j + l: bits 2j of qs[32h + l] */
            const int h = e / 128, j = (e % 128) / 32, l = e % 32;
            const uint8_t sc = x[i].scales[e / 16];
            const float dl = d * (sc & 0xF), ml = min * (sc >> 4);
            *y++ = dl * ((x[i].qs[32 * h + l] >> (2 * j)) & 3) - ml;
        }
    }
}

void sn_q3_K_scales(const uint8_t packed[12], int8_t out[16]) {
    for (int s = 0; s < 16; s++) { /* low 4 bits from bytes 0-7, high 2 bits from bytes 8-11 */
        const int lo = s < 8 ? packed[s] & 0xF : packed[s - 8] >> 4;
        const int hi = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
        out[s] = (int8_t)((lo | hi << 4) - 32);
    }
}

void sn_dequantize_row_q3_K(const void *vx, float *y, int64_t k) {
    const sn_block_q3_K *x = vx;
    for (int64_t i = 0; i < k / 256; i++) {
        const float d_all = sn_fp16_to_fp32(x[i].d);
        int8_t sc[16];
        sn_q3_K_scales(x[i].scales, sc);
        for (int e = 0; e < 256; e++) {
            const int h = e / 128, j = (e % 128) / 32, l = e % 32;
            const float dl = d_all * sc[e / 16];
            const int q = ((x[i].qs[32 * h + l] >> (2 * j)) & 3) - ((x[i].hmask[l] >> (4 * h + j)) & 1 ? 0 : 4);
            *y++ = dl * q;
        }
    }
}

static void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

void sn_dequantize_row_q5_K(const void *vx, float *y, int64_t k) {
    const sn_block_q5_K *x = vx;
    for (int64_t i = 0; i < k / 256; i++) {
        const float d = sn_fp16_to_fp32(x[i].d), min = sn_fp16_to_fp32(x[i].dmin);
        for (int g = 0; g < 8; g++) { /* 32-value group g: nibble half g%2 of qs[32(g/2) ..], qh bit g */
            uint8_t sc, m;
            scale_min_k4(g, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            const uint8_t *ql = x[i].qs + 32 * (g / 2);
            for (int l = 0; l < 32; l++) {
                const int q = (g % 2 ? ql[l] >> 4 : ql[l] & 0xF) + ((x[i].qh[l] >> g) & 1 ? 16 : 0);
                *y++ = d1 * q - m1;
            }
        }
    }
}

/* 16 nibble bytes -> 32 values dl * level: low nibbles first, then high (one product each) */
static void lut4_32(const int8_t *levels, const uint8_t *qs, float dl, float *y) {
    for (int j = 0; j < 16; j++) {
        y[j] = dl * levels[qs[j] & 0xF];
        y[j + 16] = dl * levels[qs[j] >> 4];
    }
}
static void iq4_32(const uint8_t *qs, float dl, float *y) { lut4_32(sn_iq4nl_values, qs, dl, y); }

void sn_dequantize_row_iq4_nl(const void *vx, float *y, int64_t k) {
    const sn_block_iq4_nl *x = vx;
    for (int64_t i = 0; i < k / 32; i++, y += 32) iq4_32(x[i].qs, sn_fp16_to_fp32(x[i].d), y);
}

void sn_dequantize_row_iq4_xs(const void *vx, float *y, int64_t k) {
    const sn_block_iq4_xs *x = vx;
    for (int64_t i = 0; i < k / 256; i++) {
        const float d = sn_fp16_to_fp32(x[i].d);
        for (int j = 0; j < 8; j++, y += 32) iq4_32(x[i].qs + 16 * j, d * (float)sn_iq4_xs_scale(&x[i], j), y);
    }
}

void sn_dequantize_row_mxfp4(const void *vx, float *y, int64_t k) {
    const sn_block_mxfp4 *x = vx;
    for (int64_t i = 0; i < k / 32; i++, y += 32) lut4_32(sn_mxfp4_values, x[i].qs, sn_e8m0_half(x[i].e), y);
}
