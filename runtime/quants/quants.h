/* quants.h - the ggml block types beyond ggml_types.h's core set: Q4_1, Q5_0, Q5_1 (+ their Q8_1
 * activation blocks), the K-quants Q2_K, Q3_K, Q5_K and the non-imatrix IQ types IQ4_NL, IQ4_XS,
 * as llama-quantize writes them.
 *
 * Layouts are ggml's (ggml-common.h), field for field:
 *   Q4_1  32 values: d, m (f16), 16 bytes of nibbles          value = q * d + m        (20 bytes)
 *   Q5_0  32 values: d, qh (bit i = 5th bit of value i), 16 nibble bytes, value = (q - 16) * d (22)
 *   Q5_1  32 values: d, m, qh, 16 nibble bytes                value = q * d + m        (24 bytes)
 *   Q8_1  32 values: d, s = f16(d * sum(qs)), qs[32]          (activation side of Q4_1 / Q5_1)
 *   Q2_K  256 values: 16 (scale | min << 4) bytes, 64 bytes of 2-bit values, d, dmin  (84 bytes)
 *   Q3_K  256 values: hmask[32] (3rd bit), 64 bytes of 2-bit values, 12 bytes of 16 packed 6-bit
 *         scales (minus 32), d                                                        (110 bytes)
 *   Q5_K  256 values: d, dmin, 12 bytes of 8 6-bit scales + mins (Q4_K's packing), qh[32] (5th
 *         bits), 128 nibble bytes                                                     (176 bytes)
 *   IQ4_NL 32 values: d (f16), 16 nibble bytes; value = d * sn_iq4nl_values[nibble]      (18 bytes)
 *   IQ4_XS 256 values: d, scales_h (2 high bits of sub-block j's scale at bits 2j..2j+1),
 *         scales_l[4] (low 4 bits: byte j/2, nibble j%2), 128 nibble bytes (16 per 32-value
 *         sub-block j, in IQ4_NL's order); value = d * (scale_j - 32) * sn_iq4nl_values[nibble] (136)
 *   MXFP4 32 values: e (E8M0 exponent), 16 nibble bytes; value = 2^(e-128) * sn_mxfp4_values[nibble]
 *         (the levels are twice OCP's E2M1 values, so the scale is half of 2^(e-127))  (17 bytes)
 * In each 32-value block of Q4_1/Q5_x/IQ4_NL (and sub-block of IQ4_XS), value i < 16 is the low nibble of byte i and value i >= 16
 * the high nibble of byte i - 16 (MXFP4 too). Dequantization follows ggml's dequantize_row_* (reference C,
 * each product and sum rounded on its own), which is what llama.cpp uses for token embeddings. */
#ifndef SN_QUANTS_H
#define SN_QUANTS_H
#include <stdint.h>

typedef struct { uint16_t d, m; uint8_t qs[16]; } sn_block_q4_1;                         /* 20 */
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; } sn_block_q5_0;             /* 22 */
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; } sn_block_q5_1;          /* 24 */
typedef struct { uint16_t d, s; int8_t qs[32]; } sn_block_q8_1;                          /* 36 */
typedef struct { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; } sn_block_q2_K;  /* 84 */
typedef struct { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; } sn_block_q3_K; /* 110 */
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } sn_block_q5_K; /* 176 */
typedef struct { uint16_t d; uint8_t qs[16]; } sn_block_iq4_nl;                          /* 18 */
typedef struct { uint16_t d, scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } sn_block_iq4_xs; /* 136 */
typedef struct { uint8_t e; uint8_t qs[16]; } sn_block_mxfp4;                            /* 17 */

/* ggml's 16 non-linear 4-bit levels of IQ4_NL / IQ4_XS (ggml-common.h kvalues_iq4nl). */
extern const int8_t sn_iq4nl_values[16];
/* MXFP4's 16 levels: E2M1 values doubled (ggml-common.h kvalues_mxfp4). */
extern const int8_t sn_mxfp4_values[16];
/* 2^(e-128), the factor of an MXFP4 block's levels, as ggml_e8m0_to_fp32_half builds it (exponents
 * 0 and 1 give the subnormals 2^-128 and 2^-127; 255 gives infinity, ggml's NaN case unhandled). */
static inline float sn_e8m0_half(uint8_t e) {
    union { uint32_t u; float f; } v = {e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23};
    return v.f;
}
/* The 6-bit scale of sub-block j (0..7) of an IQ4_XS block, minus 32. */
static inline int sn_iq4_xs_scale(const sn_block_iq4_xs *x, int j) {
    return (((x->scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((x->scales_h >> (2 * j)) & 3) << 4)) - 32;
}

/* Row dequantizers of the types above (k values, a multiple of the block size), in ggml's reference
 * order; the type table (ggml_types.c) points at them. */
typedef void sn_quants_dequant_fn(const void *x, float *y, int64_t k);
sn_quants_dequant_fn sn_dequantize_row_q4_1, sn_dequantize_row_q5_0, sn_dequantize_row_q5_1, sn_dequantize_row_q2_K,
    sn_dequantize_row_q3_K, sn_dequantize_row_q5_K, sn_dequantize_row_iq4_nl, sn_dequantize_row_iq4_xs,
    sn_dequantize_row_mxfp4;

/* Row quantizers of the types above (k a multiple of the block size): ggml's quantize_row_*_ref
 * for Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K; for IQ4_NL / IQ4_XS what ggml_quantize_chunk runs without
 * an importance matrix. Bit-exact with llama-quantize; the type table points at them. */
typedef void sn_quants_quant_fn(const float *x, void *y, int64_t k);
sn_quants_quant_fn sn_quantize_row_q4_1, sn_quantize_row_q5_0, sn_quantize_row_q5_1, sn_quantize_row_q2_K,
    sn_quantize_row_q3_K, sn_quantize_row_q5_K, sn_quantize_row_iq4_nl, sn_quantize_row_iq4_xs;

/* The 16 signed Q3_K sub-block scales (already minus 32) of one block. */
void sn_q3_K_scales(const uint8_t packed[12], int8_t out[16]);

#endif
