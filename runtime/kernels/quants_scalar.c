/* quants_scalar.c - reference dots for Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K (block layouts in
 * quants/quants.h) and the Q8_1 activation conversion, in the order ggml's AVX-512 CPU build
 * (what llama.cpp runs on such a machine) sums them:
 *  - Q4_1 / Q5_0 / Q5_1 (ggml_vec_dot_q*_q8_*): 8 integer lanes per 32-block, lane j = the sum of
 *    products 4j..4j+3, fma(d_w * d_a, lane, acc) across blocks, hsum8; for the two "_1" types
 *    plus a scalar fma chain of m_w * s_a added last. Batches take the same path (Q5_0's tinyBLAS
 *    kernel has the same per-block fma order), so dot_mm = dot.
 *  - Q3_K / Q5_K (vec_dot_q3_K/q5_K): 8 integer lanes per 256-block, lane L = sum over the eight
 *    32-value groups g of scale * (products 32g + 4L .. +3), one fma(d, lane) per block, hsum8;
 *    Q5_K adds its min term as a scalar fma chain after the lanes. dot_mm = dot.
 *  - Q2_K: on an AVX-512 CPU ggml repacks it (q2_K_8x8, every matrix whose row count is a
 *    multiple of 8): the gemv takes one exact integer per block for the scales and one for the mins,
 *    fma'd into two sums, subtracted at the end (dot); the 4-token gemm does the same per 128-value
 *    half (dot_mm; sn_kernel_mm_tokens decides which tokens go where). Elsewhere ggml runs
 *    vec_dot_q2_K's 8 lanes for everything (dot_q2_K_lanes). Which one this table holds follows
 *    the CPU (sn_kernel_q2_K_repacked), because that is what llama.cpp's choice follows.
 * Every integer here is exact, so the SIMD twins only have to keep the float steps. */
#include "kernels.h"

#include "kquant_dots.h"
#include "quants.h"

#include <math.h>
#include <string.h>

/* ---- Q8_1 activations: Q8_0's values plus s = f16(d * sum(qs)) ---- */

void sn_quant_q8_1_scalar(const float *x, void *vy, int64_t n) {
    sn_block_q8_1 *y = vy;
    for (int64_t b = 0; b < n / 32; b++, x += 32) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.f, id = amax != 0.0f ? 127.f / amax : 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            y[b].qs[j] = (int8_t)nearbyintf(x[j] * id);
            sum += y[b].qs[j];
        }
        y[b].d = sn_k_f2h(d);
        y[b].s = sn_k_f2h(d * (float)sum);
    }
}

/* ---- 32-value blocks ---- */

static inline void nib32(const uint8_t *qs, const uint8_t *qh4, int *v) { /* values 0..15 or 0..31 */
    uint32_t qh = 0;
    if (qh4) memcpy(&qh, qh4, 4);
    for (int j = 0; j < 32; j++) v[j] = (j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4) | (int)(((qh >> j) & 1) << 4);
}

static inline void lanes32(const int *v, int bias, const int8_t *a, int *lane) {
    for (int L = 0; L < 8; L++) {
        lane[L] = 0;
        for (int k = 0; k < 4; k++) lane[L] += (v[4 * L + k] - bias) * a[4 * L + k];
    }
}

/* Q4_1 / Q5_0 / Q5_1 (type: a constant in each caller): the "_1" types add their min term m_w * s_a
 * as a scalar chain after the lanes; Q5_0 has no min and centres its values on 16 instead. */
static inline __attribute__((always_inline)) float dot32(int type, int64_t n, const void *vw, const void *va) {
    const int has_min = type != SN_GGML_Q5_0;
    float acc[8] = {0}, summs = 0;
    for (int64_t b = 0; b < n / 32; b++) {
        const sn_kq_blk32 w = sn_kq_blk32_at(type, vw, b);
        const sn_kq_act32 a = sn_kq_act32_at(type, va, b);
        int v[32], lane[8];
        if (has_min) summs = fmaf(sn_k_h2f(w.m), sn_k_h2f(a.s), summs);
        const float d = sn_k_h2f(w.d) * sn_k_h2f(a.d);
        nib32(w.qs, w.qh, v);
        lanes32(v, has_min ? 0 : 16, a.qs, lane);
        for (int L = 0; L < 8; L++) acc[L] = fmaf(d, (float)lane[L], acc[L]);
    }
    return has_min ? sn_k_hsum8(acc) + summs : sn_k_hsum8(acc);
}

static float dot_q4_1(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q4_1, n, w, a); }
static float dot_q5_0(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q5_0, n, w, a); }
static float dot_q5_1(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q5_1, n, w, a); }

/* ---- 256-value K blocks ---- */

/* lane[L] = sum_g sc(g, L) * sum_k v[32g + 4L + k] * a[32g + 4L + k]; sc16 gives one scale per
 * 16 values (Q3_K) when per16, else one per 32 (Q5_K). */
static inline void lanes256(const int *v, const int *sc, int per16, const int8_t *a, int *lane) {
    for (int L = 0; L < 8; L++) {
        int s = 0;
        for (int g = 0; g < 8; g++) {
            int p = 0;
            for (int k = 0; k < 4; k++) p += v[32 * g + 4 * L + k] * a[32 * g + 4 * L + k];
            s += (per16 ? sc[2 * g + L / 4] : sc[g]) * p;
        }
        lane[L] = s;
    }
}

/* The unpacking of one block for dot_k8: values v, scales sc (one per 16 values, or one per 32 for
 * Q5_K) and d = d_a * d_w. Q5_K adds its min term to the chain summs; Q2_K fma's its min terms
 * into the lanes acc (first, as vec_dot_q2_K does). */
static float q3_K_unpack(const sn_block_q3_K *x, const sn_block_q8_K *a, int *v, int *sc) {
    int8_t sc8[16];
    sn_q3_K_scales(x->scales, sc8);
    for (int i = 0; i < 16; i++) sc[i] = sc8[i];
    for (int e = 0; e < 256; e++) {
        const int h = e / 128, j = (e % 128) / 32, l = e % 32;
        v[e] = ((x->qs[32 * h + l] >> (2 * j)) & 3) - ((x->hmask[l] >> (4 * h + j)) & 1 ? 0 : 4);
    }
    return a->d * sn_k_h2f(x->d);
}

static float q5_K_unpack(const sn_block_q5_K *x, const sn_block_q8_K *a, int *v, int *sc, float *summs) {
    int msum = 0;
    for (int g = 0; g < 8; g++) {
        uint8_t s, m;
        sn_k_q4k_scale_min(g, x->scales, &s, &m);
        sc[g] = s;
        msum += m * (a->bsums[2 * g] + a->bsums[2 * g + 1]);
        const uint8_t *ql = x->qs + 32 * (g / 2);
        for (int l = 0; l < 32; l++) v[32 * g + l] = (g % 2 ? ql[l] >> 4 : ql[l] & 0xF) + ((x->qh[l] >> g) & 1 ? 16 : 0);
    }
    *summs = fmaf(-a->d * sn_k_h2f(x->dmin), (float)msum, *summs);
    return a->d * sn_k_h2f(x->d);
}

static float q2_K_unpack(const sn_block_q2_K *x, const sn_block_q8_K *a, int *v, int *sc, float *acc) {
    for (int e = 0; e < 256; e++) v[e] = (x->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    for (int i = 0; i < 16; i++) sc[i] = x->scales[i] & 0xF;
    const float dmin = -a->d * sn_k_h2f(x->dmin);
    for (int L = 0; L < 8; L++) {
        const int m = (x->scales[2 * L] >> 4) * a->bsums[2 * L] + (x->scales[2 * L + 1] >> 4) * a->bsums[2 * L + 1];
        acc[L] = fmaf(dmin, (float)m, acc[L]);
    }
    return a->d * sn_k_h2f(x->d);
}

/* Q3_K, Q5_K, and Q2_K where ggml does not repack it (CPUs without AVX-512: vec_dot_q2_K's 8
 * lanes); type is a constant in each caller. */
static inline __attribute__((always_inline)) float dot_k8(int type, int64_t n, const void *vw, const void *va) {
    const sn_block_q8_K *a = va;
    float acc[8] = {0}, summs = 0;
    for (int64_t b = 0; b < n / 256; b++) {
        int v[256], sc[16], lane[8];
        float d;
        if (type == SN_GGML_Q3_K) d = q3_K_unpack((const sn_block_q3_K *)vw + b, &a[b], v, sc);
        else if (type == SN_GGML_Q5_K) d = q5_K_unpack((const sn_block_q5_K *)vw + b, &a[b], v, sc, &summs);
        else d = q2_K_unpack((const sn_block_q2_K *)vw + b, &a[b], v, sc, acc);
        lanes256(v, sc, type != SN_GGML_Q5_K, a[b].qs, lane);
        for (int L = 0; L < 8; L++) acc[L] = fmaf(d, (float)lane[L], acc[L]);
    }
    return type == SN_GGML_Q5_K ? sn_k_hsum8(acc) + summs : sn_k_hsum8(acc);
}

static float dot_q3_K(int64_t n, const void *w, const void *a) { return dot_k8(SN_GGML_Q3_K, n, w, a); }
static float dot_q5_K(int64_t n, const void *w, const void *a) { return dot_k8(SN_GGML_Q5_K, n, w, a); }
static float dot_q2_K_lanes(int64_t n, const void *w, const void *a) { return dot_k8(SN_GGML_Q2_K, n, w, a); }

/* Q2_K half h (values 128h..128h+127) of one block: the scale and min integers. */
static inline void q2_K_half(const sn_block_q2_K *x, const sn_block_q8_K *a, int h, int *isum, int *msum) {
    int is = 0, ms = 0;
    for (int s = 8 * h; s < 8 * h + 8; s++) { /* 16-value sub-block s = 8h + 2j + (l >= 16) */
        const int j = (s % 8) / 2, l0 = 16 * (s % 2);
        int p = 0;
        for (int l = l0; l < l0 + 16; l++) p += ((x->qs[32 * h + l] >> (2 * j)) & 3) * a->qs[128 * h + 32 * j + l];
        is += (x->scales[s] & 0xF) * p;
        ms += (x->scales[s] >> 4) * a->bsums[s];
    }
    *isum = is;
    *msum = ms;
}

static float dot_q2_K(int64_t n, const void *w, const void *a) { return sn_kq_q2_K_dot(n, w, a, 0, q2_K_half); }
static float dot_q2_K_mm(int64_t n, const void *w, const void *a) { return sn_kq_q2_K_dot(n, w, a, 1, q2_K_half); }

void sn_kernels_quants_scalar(sn_kernels *k) {
    k->type[SN_GGML_Q4_1].dot = k->type[SN_GGML_Q4_1].dot_mm = dot_q4_1;
    k->type[SN_GGML_Q5_0].dot = k->type[SN_GGML_Q5_0].dot_mm = dot_q5_0;
    k->type[SN_GGML_Q5_1].dot = k->type[SN_GGML_Q5_1].dot_mm = dot_q5_1;
    k->type[SN_GGML_Q3_K].dot = k->type[SN_GGML_Q3_K].dot_mm = dot_q3_K;
    k->type[SN_GGML_Q5_K].dot = k->type[SN_GGML_Q5_K].dot_mm = dot_q5_K;
    sn_kq_set_q2_K(k, dot_q2_K, dot_q2_K_mm, dot_q2_K_lanes);
    k->quant[SN_GGML_Q8_1] = sn_quant_q8_1_scalar;
    sn_kernels_iq4_scalar(k); /* IQ4_NL / IQ4_XS (iq4_scalar.c) */
}
