/* iq4_scalar.c - reference dots for IQ4_NL and MXFP4 (activations Q8_0) and IQ4_XS (activations
 * Q8_K), block layouts in quants/quants.h, summed in the order llama.cpp's x86 CPU backend (AVX2 and AVX-512
 * builds alike) uses for the files llama-quantize writes:
 *  - IQ4_NL: ggml repacks every IQ4_NL matrix whose row count is a multiple of 8 (iq4_nl_8x8) on
 *    AVX2+, and its gemv and gemm both take one exact integer per 32-value block (the sum of its 32
 *    products level[nibble] * q8) and chain fma(isum, d_w * d_a, acc) over the blocks in order -
 *    the same order as Q4_0's repacked kernels, with the levels of sn_iq4nl_values instead of
 *    nibble - 8. So dot_mm = dot. (A matrix with a row count not a multiple of 8 is not repacked
 *    by ggml and would use its vec_dot's two 8-lane accumulators; we do not follow that case, as
 *    for Q4_0: llama-quantize's files have no such IQ4_NL matrix in the models we know.)
 *  - IQ4_XS, one token (and batches under 8): ggml_vec_dot_iq4_xs_q8_K. 8 integer lanes per
 *    256-block, lane L = sum over the eight 32-value sub-blocks j of (scale_j - 32) * (products
 *    32j + 4L .. 32j + 4L + 3), then fma(d_w * d_a, lane, acc[L]) per block and hsum_float_8 at
 *    the end (dot).
 *  - IQ4_XS, batches of 8+ tokens: ggml's "IQ panel" gemm (ggml-cpu iqp.cpp, on AVX2 for every
 *    matrix with a row count divisible by 8) decodes 8 rows to int8 and takes one exact integer per
 *    256-block (sum of (scale_j - 32) * products), chained as fma(isum, d_w * d_a, acc) over the
 *    blocks; its gemm and its gemv for the leftover tokens agree (dot_mm; kernels.h
 *    sn_kernel_mm_tokens sends batches under 8 to dot).
 *  - MXFP4: repacked by ggml like IQ4_NL (mxfp4_8x8, every matrix with a row count divisible by 8,
 *    expert stacks included, on AVX2+): one exact integer per block (levels sn_mxfp4_values),
 *    chained as fma(isum, e8m0_half(e) * d_a, acc) over the blocks in order. Its mul_mat_id runs
 *    that gemv for every (expert, token) pair, and its gemm has the same order: dot = dot_mm.
 * Every integer is exact, so the SIMD twins (iq4_avx2.c, mxfp4_x86.c) only have
 * to keep the float steps. */
#include "kernels.h"

#include "quants.h"

#include <math.h>

/* product of 32 levels (16 nibble bytes: low nibbles = values 0..15, high = 16..31) with 32 int8,
 * as 8 partial sums: p[L] = products 4L..4L+3 */
static inline void lut4_lanes(const int8_t *levels, const uint8_t *qs, const int8_t *a, int p[8]) {
    for (int L = 0; L < 8; L++) {
        int s = 0;
        for (int k = 0; k < 4; k++) {
            const int e = 4 * L + k;
            const int v = levels[e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4];
            s += v * a[e];
        }
        p[L] = s;
    }
}
static inline void iq4_lanes(const uint8_t *qs, const int8_t *a, int p[8]) { lut4_lanes(sn_iq4nl_values, qs, a, p); }

/* the exact integer sum of one 32-value block */
static inline int lut4_isum(const int8_t *levels, const uint8_t *qs, const int8_t *a) {
    int p[8], isum = 0;
    lut4_lanes(levels, qs, a, p);
    for (int L = 0; L < 8; L++) isum += p[L];
    return isum;
}

/* blocks of `stride` bytes (16 nibble bytes at qs_off) against Q8_0 blocks: fma(isum, scale, acc)
 * per block in block order, scale(block, a_b) = the block's factor times d_a */
static inline float lut4_dot(int64_t nb, const int8_t *levels, const uint8_t *w, size_t stride, size_t qs_off,
                             const sn_block_q8_0 *a, float (*scale)(const uint8_t *block, const sn_block_q8_0 *a)) {
    float s = 0;
    for (int64_t b = 0; b < nb; b++)
        s = fmaf((float)lut4_isum(levels, w + b * stride + qs_off, a[b].qs), scale(w + b * stride, &a[b]), s);
    return s;
}

static inline float iq4_nl_scale(const uint8_t *block, const sn_block_q8_0 *a) {
    return sn_k_h2f(((const sn_block_iq4_nl *)(const void *)block)->d) * sn_k_h2f(a->d);
}
static inline float mxfp4_scale(const uint8_t *block, const sn_block_q8_0 *a) {
    return sn_e8m0_half(block[0]) * sn_k_h2f(a->d);
}

static float dot_iq4_nl(int64_t n, const void *w, const void *a) {
    return lut4_dot(n / 32, sn_iq4nl_values, w, sizeof(sn_block_iq4_nl), 2, a, iq4_nl_scale);
}
static float dot_mxfp4(int64_t n, const void *w, const void *a) {
    return lut4_dot(n / 32, sn_mxfp4_values, w, sizeof(sn_block_mxfp4), 1, a, mxfp4_scale);
}

static float dot_iq4_xs(int64_t n, const void *vw, const void *va) {
    const sn_block_iq4_xs *w = vw;
    const sn_block_q8_K *a = va;
    float acc[8] = {0};
    for (int64_t b = 0; b < n / 256; b++) {
        int lane[8] = {0};
        for (int j = 0; j < 8; j++) {
            int p[8];
            const int ls = sn_iq4_xs_scale(&w[b], j);
            iq4_lanes(w[b].qs + 16 * j, a[b].qs + 32 * j, p);
            for (int L = 0; L < 8; L++) lane[L] += ls * p[L];
        }
        const float d = sn_k_h2f(w[b].d) * a[b].d;
        for (int L = 0; L < 8; L++) acc[L] = fmaf(d, (float)lane[L], acc[L]);
    }
    return sn_k_hsum8(acc);
}

static float dot_iq4_xs_mm(int64_t n, const void *vw, const void *va) {
    const sn_block_iq4_xs *w = vw;
    const sn_block_q8_K *a = va;
    float s = 0;
    for (int64_t b = 0; b < n / 256; b++) {
        int isum = 0;
        for (int j = 0; j < 8; j++) {
            int p[8], t = 0;
            iq4_lanes(w[b].qs + 16 * j, a[b].qs + 32 * j, p);
            for (int L = 0; L < 8; L++) t += p[L];
            isum += sn_iq4_xs_scale(&w[b], j) * t;
        }
        s = fmaf((float)isum, sn_k_h2f(w[b].d) * a[b].d, s);
    }
    return s;
}

void sn_kernels_iq4_scalar(sn_kernels *k) {
    k->type[SN_GGML_MXFP4].dot = k->type[SN_GGML_MXFP4].dot_mm = dot_mxfp4;
    k->type[SN_GGML_IQ4_NL].dot = k->type[SN_GGML_IQ4_NL].dot_mm = dot_iq4_nl;
    k->type[SN_GGML_IQ4_XS].dot = dot_iq4_xs;
    k->type[SN_GGML_IQ4_XS].dot_mm = dot_iq4_xs_mm;
}
