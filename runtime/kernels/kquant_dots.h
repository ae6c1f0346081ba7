/* kquant_dots.h - the float steps of the Q2_K and Q4_K dots in llama.cpp's repacked order, written
 * once for their scalar and SIMD twins, and the 32-value block views of Q4_1 / Q5_0 / Q5_1.
 *
 * On the CPUs where llama.cpp repacks these types (q4_K_8x8 on AVX2+, q2_K_8x8 on AVX-512) it
 * computes exact integers per block part and folds them into two float sums with fma, subtracted at
 * the end; those float steps decide the rounding. Here they are one function per type, and each
 * table passes only its integer work as a static inline function (inlined through the constant
 * pointer, so the twins cost nothing). Include it after the file's target pragma, like
 * simd_avx2.h: under F16C the fp16 scales are read with one instruction (same value). */
#ifndef SN_KQUANT_DOTS_H
#define SN_KQUANT_DOTS_H
#include "kernels.h"
#include "quants.h"

#include <math.h>

#ifdef __F16C__
#include <immintrin.h>
static inline float sn_kq_h2f(uint16_t h) { return _cvtsh_ss(h); }
#else
static inline float sn_kq_h2f(uint16_t h) { return sn_k_h2f(h); }
#endif

/* Block b of a Q4_1, Q5_0 or Q5_1 row (type: an SN_GGML_* id, a constant wherever this is inlined)
 * and of its activation row (Q8_1 for the two "_1" types, Q8_0 for Q5_0), their fields under one
 * name so that one dot body serves the three types: m and s are 0 and qh NULL where the type has
 * none. */
typedef struct { uint16_t d, m; const uint8_t *qh, *qs; } sn_kq_blk32;
typedef struct { uint16_t d, s; const int8_t *qs; } sn_kq_act32;

static inline __attribute__((always_inline)) sn_kq_blk32 sn_kq_blk32_at(int type, const void *w, int64_t b) {
    sn_kq_blk32 k = {0, 0, NULL, NULL};
    if (type == SN_GGML_Q4_1) {
        const sn_block_q4_1 *x = (const sn_block_q4_1 *)w + b;
        k.d = x->d, k.m = x->m, k.qs = x->qs;
    } else if (type == SN_GGML_Q5_0) {
        const sn_block_q5_0 *x = (const sn_block_q5_0 *)w + b;
        k.d = x->d, k.qh = x->qh, k.qs = x->qs;
    } else {
        const sn_block_q5_1 *x = (const sn_block_q5_1 *)w + b;
        k.d = x->d, k.m = x->m, k.qh = x->qh, k.qs = x->qs;
    }
    return k;
}

static inline __attribute__((always_inline)) sn_kq_act32 sn_kq_act32_at(int type, const void *a, int64_t b) {
    sn_kq_act32 k = {0, 0, NULL};
    if (type == SN_GGML_Q5_0) {
        const sn_block_q8_0 *x = (const sn_block_q8_0 *)a + b;
        k.d = x->d, k.qs = x->qs;
    } else {
        const sn_block_q8_1 *x = (const sn_block_q8_1 *)a + b;
        k.d = x->d, k.s = x->s, k.qs = x->qs;
    }
    return k;
}

/* Q2_K half h (values 128h..128h+127) of one block: the exact scale and min integers. */
typedef void (*sn_kq_q2_K_half_fn)(const sn_block_q2_K *x, const sn_block_q8_K *a, int h, int *isum, int *msum);

/* The repacked gemv takes one integer per block for the scales and one for the mins, each fma'd
 * into its sum (per_half = 0: dot); the 4-token gemm does the same per half (per_half = 1: dot_mm). */
static inline __attribute__((always_inline)) float sn_kq_q2_K_dot(int64_t n, const void *vw, const void *va,
                                                                   int per_half, sn_kq_q2_K_half_fn half) {
    const sn_block_q2_K *w = vw;
    const sn_block_q8_K *a = va;
    float s1 = 0, s2 = 0;
    for (int64_t b = 0; b < n / 256; b++) {
        const float d = sn_kq_h2f(w[b].d) * a[b].d, dmin = sn_kq_h2f(w[b].dmin) * a[b].d;
        int i0, m0, i1, m1;
        half(&w[b], &a[b], 0, &i0, &m0);
        half(&w[b], &a[b], 1, &i1, &m1);
        if (per_half) {
            s1 = fmaf((float)i0, d, s1);
            s2 = fmaf((float)m0, dmin, s2);
            s1 = fmaf((float)i1, d, s1);
            s2 = fmaf((float)m1, dmin, s2);
        } else {
            s1 = fmaf((float)(i0 + i1), d, s1);
            s2 = fmaf((float)(m0 + m1), dmin, s2);
        }
    }
    return s1 - s2;
}

/* Q2_K's table entries follow llama.cpp's choice: its repacked order where it repacks Q2_K
 * (sn_kernel_q2_K_repacked: dot and dot_mm above), else vec_dot's 8 lanes for everything. */
static inline void sn_kq_set_q2_K(sn_kernels *k, sn_dot_fn dot, sn_dot_fn dot_mm, sn_dot_fn lanes) {
    const int repacked = sn_kernel_q2_K_repacked();
    k->type[SN_GGML_Q2_K].dot = repacked ? dot : lanes;
    k->type[SN_GGML_Q2_K].dot_mm = repacked ? dot_mm : lanes;
    k->type[SN_GGML_Q2_K].dot_unpacked = repacked ? lanes : NULL;
}

/* The two 32-element integer dots of a Q4_K sub-block pair: lo = low nibbles of q[0..31] with
 * q8[0..31], hi = high nibbles with q8[32..63]. */
typedef void (*sn_kq_q4_K_pair_fn)(const uint8_t *q, const int8_t *q8, int *lo, int *hi);

/* Per pair j of 32-element sub-blocks two exact integers: isum = sc0 * lo + sc1 * hi and the min
 * term msum. Two float sums s1 (isum * d_w * d_a) and s2 (msum * dmin_w * d_a), s1 - s2 at the end.
 * The single-token kernel adds the integers over the block and takes one fma per block
 * (per_pair = 0: dot); the batched q4_K_8x8 gemm takes one fma per pair (per_pair = 1: dot_mm, for
 * groups of 4 tokens, sn_kernel_mm_tokens). */
static inline __attribute__((always_inline)) float sn_kq_q4_K_dot(int64_t n, const void *vw, const void *va,
                                                                   int per_pair, sn_kq_q4_K_pair_fn pair) {
    const sn_block_q4_K *w = vw;
    const sn_block_q8_K *a = va;
    float s1 = 0, s2 = 0;
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        const uint8_t *q = w[b].qs;
        const int8_t *q8 = a[b].qs;
        const float d = sn_kq_h2f(w[b].d) * a[b].d, dmin = sn_kq_h2f(w[b].dmin) * a[b].d;
        int sumi = 0, summ = 0;
        for (int j = 0; j < SN_QK_K / 64; j++) {
            int sc0, sc1, lo, hi;
            const int msum = sn_k_q4k_pair(j, w[b].scales, a[b].bsums, &sc0, &sc1);
            pair(q, q8, &lo, &hi);
            if (per_pair) {
                s1 = fmaf((float)(sc0 * lo + sc1 * hi), d, s1);
                s2 = fmaf((float)msum, dmin, s2);
            } else {
                sumi += sc0 * lo + sc1 * hi;
                summ += msum;
            }
            q += 32;
            q8 += 64;
        }
        if (!per_pair) {
            s1 = fmaf((float)sumi, d, s1);
            s2 = fmaf((float)summ, dmin, s2);
        }
    }
    return s1 - s2;
}
#endif
