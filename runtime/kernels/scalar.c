/* scalar.c - the reference kernels: plain C, obviously correct, ggml's numerics.
 *
 * These define what every SIMD table must compute (tests/unit/test_kernels.c) and are what runs on
 * a CPU without AVX2. Activation conversion mirrors the x86 code path of ggml's CPU backend
 * (quantize_row_q8_0 scales by 127/amax and rounds half to even; quantize_row_q8_K is ggml's
 * reference: -127/max with nearest_int). Integer dots are exact; float sums use double. */
#include "kernels.h"
#include "int4.h"
#include "kquant_dots.h"
#include "q4_0_x8.h"

#include <math.h>
#include <string.h>

/* ---- activation conversion ---- */

static void quant_f32(const float *x, void *y, int64_t n) { memcpy(y, x, (size_t)n * sizeof(float)); }

static void quant_f16(const float *x, void *vy, int64_t n) {
    uint16_t *y = vy;
    for (int64_t i = 0; i < n; i++) y[i] = sn_k_f2h(x[i]);
}

static void quant_bf16(const float *x, void *vy, int64_t n) {
    uint16_t *y = vy;
    for (int64_t i = 0; i < n; i++) y[i] = sn_k_f2bf(x[i]);
}

static void quant_q8_0(const float *x, void *vy, int64_t n) {
    sn_block_q8_0 *y = vy;
    for (int64_t b = 0; b < n / SN_QK8_0; b++, x += SN_QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < SN_QK8_0; j++) amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        y[b].d = sn_k_f2h(d);
        for (int j = 0; j < SN_QK8_0; j++) y[b].qs[j] = (int8_t)nearbyintf(x[j] * id);
    }
}

static int nearest_int(float f) { return (int)nearbyintf(f); }

static void quant_q8_K(const float *x, void *vy, int64_t n) {
    sn_block_q8_K *y = vy;
    for (int64_t b = 0; b < n / SN_QK_K; b++, x += SN_QK_K) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < SN_QK_K; j++) {
            const float ax = fabsf(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
        if (amax == 0.0f) {
            memset(&y[b], 0, sizeof(y[b]));
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < SN_QK_K; j++) {
            int v = nearest_int(iscale * x[j]);
            y[b].qs[j] = (int8_t)(v > 127 ? 127 : v);
        }
        for (int j = 0; j < SN_QK_K / 16; j++) {
            int s = 0;
            for (int i = 0; i < 16; i++) s += y[b].qs[j * 16 + i];
            y[b].bsums[j] = (int16_t)s;
        }
        y[b].d = 1 / iscale;
    }
}

/* ---- dots ---- */

/* Float dots reproduce the summation order of ggml's AVX-512 build (what llama.cpp runs on an
 * AVX-512 machine), so that our results round like llama.cpp's:
 *  - vec_dot (single-token decode, attention scores): 4 accumulators x 16 lanes over chunks of 64,
 *    pairwise reduction, _mm512_reduce_add_ps order, the tail added in double;
 *  - tinyBLAS (llamafile sgemm, batches of 2+ tokens): 1 accumulator x 16 lanes, reduce_add. */
static float reduce16(const float *v) {
    float t3[8], t6[4];
    for (int i = 0; i < 8; i++) t3[i] = v[8 + i] + v[i];
    for (int i = 0; i < 4; i++) t6[i] = t3[4 + i] + t3[i];
    return (t6[0] + t6[2]) + (t6[1] + t6[3]);
}

static float w_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static float w_f16(const void *p, int64_t i) { return sn_k_h2f(((const uint16_t *)p)[i]); }

/* ggml's AVX2 build (the haswell variant llama.cpp loads on a CPU without AVX-512):
 *  - vec_dot: 4 accumulators x 8 lanes over chunks of 32, pairwise, then GGML_F32x8_REDUCE's two
 *    hadds ((v0+v4)+(v1+v5)) + ((v2+v6)+(v3+v7)), the tail added in double;
 *  - tinyBLAS: 1 accumulator x 8 lanes, hsum ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)). */
static float reduce8_hadd(const float *v) {
    const float t0 = v[0] + v[4], t1 = v[1] + v[5], t2 = v[2] + v[6], t3 = v[3] + v[7];
    return (t0 + t1) + (t2 + t3);
}

/* vec_dot in L lanes (the object's tuning.lanes): 4 accumulators of L lanes over chunks of 4L, pairwise, then
 * the build's reduction; the tail in double, except ggml_vec_dot_f32, which keeps a float sum and
 * adds its tail as sn_k_dot_f32_tail says. */
static float dot_vec(int L, int64_t n, const void *w, const void *a, float (*ld)(const void *, int64_t)) {
    float sum[4][16] = {{0}};
    const int64_t np = n & ~(int64_t)(4 * L - 1);
    for (int64_t i = 0; i < np; i += 4 * L)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < L; l++)
                sum[j][l] = fmaf(ld(w, i + L * j + l), ld(a, i + L * j + l), sum[j][l]);
    for (int l = 0; l < L; l++) {
        sum[0][l] += sum[2][l];
        sum[1][l] += sum[3][l];
        sum[0][l] += sum[1][l];
    }
    const float r = L == 8 ? reduce8_hadd(sum[0]) : reduce16(sum[0]);
    if (ld == w_f32) return sn_k_dot_f32_tail(np ? r : 0.0f, w, a, np, n, L);
    double s = np ? (double)r : 0.0;
    for (int64_t i = np; i < n; i++) s += (double)(ld(w, i) * ld(a, i));
    return (float)s;
}

static float dot_mm(int L, int64_t n, const void *w, const void *a, float (*ld)(const void *, int64_t)) {
    if (n % L) return dot_vec(L, n, w, a, ld); /* tinyBLAS declines; ggml falls back to vec_dot */
    float acc[16] = {0};
    for (int64_t i = 0; i < n; i += L)
        for (int l = 0; l < L; l++) acc[l] = fmaf(ld(w, i + l), ld(a, i + l), acc[l]);
    return L == 8 ? sn_k_hsum8(acc) : reduce16(acc);
}

/* the float dots in each lane order; sn_kernels_fill_scalar installs those of tuning.lanes */
static float dot_f32_8(int64_t n, const void *w, const void *a) { return dot_vec(8, n, w, a, w_f32); }
static float dot_f16_8(int64_t n, const void *w, const void *a) { return dot_vec(8, n, w, a, w_f16); }
static float dot_f32_mm8(int64_t n, const void *w, const void *a) { return dot_mm(8, n, w, a, w_f32); }
static float dot_f16_mm8(int64_t n, const void *w, const void *a) { return dot_mm(8, n, w, a, w_f16); }
static float dot_f32_16(int64_t n, const void *w, const void *a) { return dot_vec(16, n, w, a, w_f32); }
static float dot_f16_16(int64_t n, const void *w, const void *a) { return dot_vec(16, n, w, a, w_f16); }
static float dot_f32_mm16(int64_t n, const void *w, const void *a) { return dot_mm(16, n, w, a, w_f32); }
static float dot_f16_mm16(int64_t n, const void *w, const void *a) { return dot_mm(16, n, w, a, w_f16); }

/* BF16: vdpbf16ps lanes (lane j takes elements 2j+1 then 2j of each 32), two accumulators over
 * chunks of 64 for vec_dot; one accumulator over chunks of 32 for tinyBLAS. */
static void dpbf16(float *acc, const uint16_t *w, const uint16_t *a) {
    for (int j = 0; j < 16; j++) {
        float t = acc[j] + sn_k_bf2f(w[2 * j + 1]) * sn_k_bf2f(a[2 * j + 1]);
        acc[j] = t + sn_k_bf2f(w[2 * j]) * sn_k_bf2f(a[2 * j]);
    }
}

static float w_bf16(const void *p, int64_t i) { return sn_k_bf2f(((const uint16_t *)p)[i]); }

/* AVX2 build: bf16 widened to f32, 4 accumulators x 8 lanes over chunks of 32 (fused multiply-add
 * as the compiler contracts ggml's mul+add), combined (c1+c3)+(c2+c4), hsum, tail in double. */
static float dot_bf16_8(int64_t n, const void *w, const void *a) {
    float c[4][8] = {{0}};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 8; l++) c[j][l] = fmaf(w_bf16(w, i + 8 * j + l), w_bf16(a, i + 8 * j + l), c[j][l]);
    float t[8];
    for (int l = 0; l < 8; l++) t[l] = (c[0][l] + c[2][l]) + (c[1][l] + c[3][l]);
    double s = (double)sn_k_hsum8(t);
    for (; i < n; i++) s += (double)(w_bf16(w, i) * w_bf16(a, i));
    return (float)s;
}

static float dot_bf16_16(int64_t n, const void *vw, const void *va) {
    const uint16_t *w = vw, *a = va;
    float c1[16] = {0}, c2[16] = {0};
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        dpbf16(c1, w + i, a + i);
        dpbf16(c2, w + i + 32, a + i + 32);
    }
    return sn_k_dot_bf16_tail(reduce16(c1), reduce16(c2), w, a, i, n);
}

static float dot_bf16_mm8(int64_t n, const void *vw, const void *va) { /* tinyBLAS<8> on bf16 rows widened to f32 */
    if (n % 8) return dot_bf16_8(n, vw, va);
    float acc[8] = {0};
    for (int64_t i = 0; i < n; i += 8)
        for (int l = 0; l < 8; l++) acc[l] = fmaf(w_bf16(vw, i + l), w_bf16(va, i + l), acc[l]);
    return sn_k_hsum8(acc);
}

static float dot_bf16_mm16(int64_t n, const void *vw, const void *va) {
    if (n % 32) return dot_bf16_16(n, vw, va);
    const uint16_t *w = vw, *a = va;
    float acc[16] = {0};
    for (int64_t i = 0; i < n; i += 32) dpbf16(acc, w + i, a + i);
    return reduce16(acc);
}

/* ggml's x86 order (vec_dot and llamafile's tinyBLAS alike): 8 lanes, lane j holding the integer
 * sum of products 4j..4j+3 of each block, accumulated with fma(d_w*d_a, lane, acc) across blocks,
 * then reduced as hsum_float_8 (sn_k_hsum8). */

static float dot_q8_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q8_0 *w = vw, *a = va;
    float acc[8] = {0};
    for (int64_t b = 0; b < n / SN_QK8_0; b++) {
        const float d = sn_k_h2f(w[b].d) * sn_k_h2f(a[b].d);
        for (int j = 0; j < 8; j++) {
            int l = 0;
            for (int k = 0; k < 4; k++) l += w[b].qs[4 * j + k] * a[b].qs[4 * j + k];
            acc[j] = fmaf(d, (float)l, acc[j]);
        }
    }
    return sn_k_hsum8(acc);
}

static float dot_q4_0(int64_t n, const void *vw, const void *va) {
    const sn_block_q4_0 *w = vw;
    const sn_block_q8_0 *a = va;
    float s = 0;
    for (int64_t b = 0; b < n / SN_QK4_0; b++) {
        int isum = 0;
        for (int j = 0; j < SN_QK4_0 / 2; j++) {
            isum += ((w[b].qs[j] & 0x0F) - 8) * a[b].qs[j];
            isum += ((w[b].qs[j] >> 4) - 8) * a[b].qs[j + SN_QK4_0 / 2];
        }
        /* llama.cpp repacks Q4_0 (q4_0_8x8) on AVX2+: one integer sum per block, fma per block */
        s = fmaf((float)isum, sn_k_h2f(w[b].d) * sn_k_h2f(a[b].d), s);
    }
    return s;
}

/* Q4_K as llama.cpp runs it on AVX2+ (repacked q4_K_8x8): the float steps are kquant_dots.h's,
 * shared with the AVX2 twin; here the pair's two integer dots, one product at a time. */
static inline void q4_K_pair(const uint8_t *q, const int8_t *q8, int *lo, int *hi) {
    int l0 = 0, h0 = 0;
    for (int l = 0; l < 32; l++) {
        l0 += (q[l] & 0xF) * q8[l];
        h0 += (q[l] >> 4) * q8[l + 32];
    }
    *lo = l0;
    *hi = h0;
}

static float dot_q4_K(int64_t n, const void *w, const void *a) { return sn_kq_q4_K_dot(n, w, a, 0, q4_K_pair); }
static float dot_q4_K_mm(int64_t n, const void *w, const void *a) { return sn_kq_q4_K_dot(n, w, a, 1, q4_K_pair); }

/* Q6_K as ggml_vec_dot_q6_K_q8_K (AVX2): 8 integer lanes per block, lane L holding
 * sum_g scale(g, L/4) * (elements 4L..4L+3 of 32-group g, 6-bit values unsigned) minus
 * 32 * (bsums[2L] * sc[2L] + bsums[2L+1] * sc[2L+1]); then fma(d, lane) and hsum8. */
static inline int q6_value(const sn_block_q6_K *x, int g, int e) {
    const int j = g / 4, k = g % 4;
    const uint8_t *ql = x->ql + 64 * j, *qh = x->qh + 32 * j;
    switch (k) {
    case 0: return (ql[e] & 0xF) | (((qh[e] >> 0) & 3) << 4);
    case 1: return (ql[e + 32] & 0xF) | (((qh[e] >> 2) & 3) << 4);
    case 2: return (ql[e] >> 4) | (((qh[e] >> 4) & 3) << 4);
    default: return (ql[e + 32] >> 4) | (((qh[e] >> 6) & 3) << 4);
    }
}

static float dot_q6_K(int64_t n, const void *vw, const void *va) {
    const sn_block_q6_K *w = vw;
    const sn_block_q8_K *a = va;
    float acc[8] = {0};
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        const int8_t *sc = w[b].scales, *q8 = a[b].qs;
        const float d = a[b].d * sn_k_h2f(w[b].d);
        for (int L = 0; L < 8; L++) {
            int lane = 0;
            for (int g = 0; g < 8; g++) {
                int p = 0;
                for (int i = 0; i < 4; i++) p += q6_value(&w[b], g, 4 * L + i) * q8[32 * g + 4 * L + i];
                lane += sc[2 * g + L / 4] * p;
            }
            lane -= 32 * (a[b].bsums[2 * L] * sc[2 * L] + a[b].bsums[2 * L + 1] * sc[2 * L + 1]);
            acc[L] = fmaf(d, (float)lane, acc[L]);
        }
    }
    return sn_k_hsum8(acc);
}

/* ---- attention helpers ---- */

static void mad_f16(int64_t n, uint16_t *y, const uint16_t *x, float v) {
    for (int64_t i = 0; i < n; i++) y[i] = sn_k_f2h(fmaf(sn_k_h2f(x[i]), v, sn_k_h2f(y[i])));
}

static void scale_f16(int64_t n, uint16_t *y, float v) {
    for (int64_t i = 0; i < n; i++) y[i] = sn_k_f2h(sn_k_h2f(y[i]) * v);
}

static void mad_f32(int64_t n, float *y, const float *x, float v) {
    for (int64_t i = 0; i < n; i++) y[i] = fmaf(x[i], v, y[i]);
}

static void mad_rows_f32(int64_t n, float *y, const float *x, int64_t ld, const float *v, int64_t nt) {
    for (int64_t t = 0; t < nt; t++) mad_f32(n, y, x + t * ld, v[t]);
}

static void kq_tile64(int64_t D, const float *q, const float *kt, int64_t ld, float *out) {
    for (int j = 0; j < 64; j++) out[j] = 0.0f;
    for (int64_t d = 0; d < D; d++)
        for (int j = 0; j < 64; j++) out[j] = fmaf(kt[d * ld + j], q[d], out[j]);
}

/* The reference table (kernels.c builds it once, then the SIMD tables on top of a copy of it). */
void sn_kernels_fill_scalar(sn_kernels *k) {
    /* per weight type: the single-token order (dot), then the batched one (dot_mm) */
    const int l8 = k->tuning.lanes == 8;
    k->type[SN_GGML_F32].dot = l8 ? dot_f32_8 : dot_f32_16;
    k->type[SN_GGML_F32].dot_mm = l8 ? dot_f32_mm8 : dot_f32_mm16;
    k->type[SN_GGML_F16].dot = l8 ? dot_f16_8 : dot_f16_16;
    k->type[SN_GGML_F16].dot_mm = l8 ? dot_f16_mm8 : dot_f16_mm16;
    k->type[SN_GGML_BF16].dot = l8 ? dot_bf16_8 : dot_bf16_16;
    k->type[SN_GGML_BF16].dot_mm = l8 ? dot_bf16_mm8 : dot_bf16_mm16;
    k->type[SN_GGML_Q8_0].dot = k->type[SN_GGML_Q8_0].dot_mm = dot_q8_0;
    k->type[SN_GGML_Q4_0].dot = k->type[SN_GGML_Q4_0].dot_mm = dot_q4_0;
    k->mm_q4_0x8 = sn_q4_0x8_mm_scalar; /* repacked Q4_0 (q4_0_x8.h) */
    k->mm_mxfp4x8 = sn_mxfp4x8_mm_scalar; /* and MXFP4 */
    k->type[SN_GGML_Q4_K].dot = dot_q4_K;
    k->type[SN_GGML_Q4_K].dot_mm = dot_q4_K_mm;
    k->type[SN_GGML_Q6_K].dot = k->type[SN_GGML_Q6_K].dot_mm = dot_q6_K;
    sn_kernels_quants_scalar(k); /* Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q5_K, Q8_1 */
    k->quant[SN_GGML_F32] = quant_f32;
    k->quant[SN_GGML_F16] = quant_f16;
    k->quant[SN_GGML_BF16] = quant_bf16;
    k->quant[SN_GGML_Q8_0] = quant_q8_0;
    k->quant[SN_GGML_Q8_K] = quant_q8_K;
    k->type[SN_KTYPE_INT4G32].dot = k->type[SN_KTYPE_INT4G32].dot_mm = sn_int4_dot_scalar; /* blob weights */
    k->type[SN_KTYPE_INT4G32].gemm4x4 = sn_int4_gemm4x4_scalar;
    k->mm_int4x8 = sn_int4x8_mm_scalar;
    k->quant[SN_KTYPE_INT4G32] = sn_int4_quantize_act_scalar;
    k->mad_f16 = mad_f16;
    k->scale_f16 = scale_f16;
    k->mad_f32 = mad_f32;
    k->mad_rows_f32 = mad_rows_f32;
    k->kq_tile64 = kq_tile64;
}
