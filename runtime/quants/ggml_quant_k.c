/* ggml_quant_k.c - ggml's reference quantizers for the K-quants Q4_K, Q5_K and Q6_K.
 *
 * Super-blocks of 256: Q4_K and Q5_K search a scale and min per sub-block of 32 (make_qkx2_quants)
 * and pack 6-bit scales/mins; Q6_K picks an int8 scale per sub-block of 16 (make_qx_quants, rmse
 * type 1). The AVX2 versions run eight independent sub-blocks side by side in lanes, each lane
 * doing exactly the scalar operations, so the bits match the scalar code and llama-quantize. */
#include "ggml_types_internal.h"

#include "quants.h"

/* Scale + min search for an asymmetric n-level quantization (ggml's make_qkx2_quants): start from
 * the min/max grid, then try nstep+1 slightly different scales and keep the weighted least-squares
 * fit with the smallest weighted error (squared, or absolute with use_mad). Returns the scale;
 * *the_min receives -min (>= 0). */
float sn_qkx2_quants(int n, int nmax, const float *x, const float *w, uint8_t *L, float *the_min, uint8_t *Laux,
                     float rmin, float rdelta, int nstep, int use_mad) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; i++) {
        int l = nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t)SN_MAX(0, SN_MIN(nmax, l));
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += w[i] * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = nearest_int(iscale * (x[i] - min));
            l = SN_MAX(0, SN_MIN(nmax, l));
            Laux[i] = (uint8_t)l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; i++) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                cur_error += w[i] * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; i++) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/* Symmetric quantization to [-nmax, nmax-1] with an x^2-weighted scale search (ggml's
 * make_qx_quants with rmse_type 1 and no importance weights); L holds q + nmax. */
static float qx_quants_rmse1(int n, int nmax, const float *x, int8_t *L) {
    float max;
    if (!sn_sym_start(x, n, L, &max)) return 0.f;
    float sumlx, suml2;
    sn_sym_fit(n, nmax, x, -nmax / max, L, nmax, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        const float iscale = -(nmax + 0.1f * is) / max;
        sn_sym_fit(n, nmax, x, iscale, NULL, 0, &sumlx, &suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            float s1, s2;
            sn_sym_fit(n, nmax, x, iscale, L, nmax, &s1, &s2); /* the accepted levels */
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

#ifdef SN_X86
/* Lane-parallel twins of sn_qkx2_quants and qx_quants_rmse1: lane j runs sub-block j, and every lane
 * performs exactly the scalar operations in the scalar order (no FMA, no reassociation, ordered
 * compares where C compares), so the results are bit-identical; only independent sub-blocks run
 * side by side. xt/wt are transposed: element i of sub-block j is at [i*8 + j]. */
#define LANES 8

__attribute__((target("avx2"))) static inline __m256 sel(__m256 mask, __m256 yes, __m256 no) {
    return _mm256_blendv_ps(no, yes, mask);
}

/* sn_qkx2_quants_x8 (AVX2) and sn_qkx2_quants_x16 (AVX-512): one body, qkx2_lanes.h. */
#define LANE_OPS 8
#include "lane_ops.h"
#define QK_NAME sn_qkx2_quants_x8
#define QKW_NAME qk_weights_x8
#include "qkx2_lanes.h"
#define LEVELS_NAME levels_x8
#include "levels_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"
#define LANE_OPS 16
#include "lane_ops.h"
#define QK_NAME sn_qkx2_quants_x16
#define QKW_NAME qk_weights_x16
#include "qkx2_lanes.h"
#define LEVELS_NAME levels_x16
#include "levels_lanes.h"
#define LANE_OPS 0
#include "lane_ops.h"

/* One scale of qx_quants_rmse1_x8 in every lane: the levels of iscale * x clamped to
 * [-nmax, nmax - 1], stored + nmax in L, and the weighted (w = x*x) sums sum(w*x*l), sum(w*l*l)
 * in the scalar order. */
__attribute__((target("avx2"))) static inline void rmse1_fit_x8(int n, const float *xt, __m256 iscale, __m256i lo,
                                                               __m256i hi, __m256i off, int32_t *L,
                                                               __m256 *sumlx_out, __m256 *suml2_out) {
    __m256 sumlx = _mm256_setzero_ps(), suml2 = _mm256_setzero_ps();
    for (int i = 0; i < n; i++) {
        __m256 x = _mm256_loadu_ps(xt + i * LANES);
        __m256i li = nearest_int8(_mm256_mul_ps(iscale, x));
        li = _mm256_max_epi32(lo, _mm256_min_epi32(hi, li));
        _mm256_storeu_si256((__m256i *)(void *)(L + i * LANES), _mm256_add_epi32(li, off));
        __m256 l = _mm256_cvtepi32_ps(li), w = _mm256_mul_ps(x, x);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, x), l));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, l), l));
    }
    *sumlx_out = sumlx;
    *suml2_out = suml2;
}

__attribute__((target("avx2"))) static void qx_quants_rmse1_x8(int n, int nmax, const float *xt,
                                                               int32_t *Lt, float *scale_out) {
    int32_t Laux[16 * LANES];
    const __m256 zero = _mm256_setzero_ps(), absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1), off = _mm256_set1_epi32(nmax);
    __m256 max = zero, amax = zero;
    for (int i = 0; i < n; i++) {
        __m256 x = _mm256_loadu_ps(xt + i * LANES), ax = _mm256_and_ps(x, absmask);
        __m256 gt = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = sel(gt, ax, amax);
        max = sel(gt, x, max);
    }
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)-nmax), max);
    __m256 sumlx, suml2;
    rmse1_fit_x8(n, xt, iscale, lo, hi, off, Lt, &sumlx, &suml2);
    __m256 nz = _mm256_cmp_ps(suml2, zero, _CMP_NEQ_UQ); /* C truthiness: NaN counts as true */
    __m256 scale = sel(nz, _mm256_div_ps(sumlx, suml2), zero);
    __m256 best = _mm256_mul_ps(scale, sumlx);
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        const float num = -((float)nmax + 0.1f * (float)is);
        iscale = _mm256_div_ps(_mm256_set1_ps(num), max);
        rmse1_fit_x8(n, xt, iscale, lo, hi, off, Laux, &sumlx, &suml2);
        __m256 take = _mm256_and_ps(_mm256_cmp_ps(suml2, zero, _CMP_GT_OQ),
                                    _mm256_cmp_ps(_mm256_mul_ps(sumlx, sumlx),
                                                  _mm256_mul_ps(best, suml2), _CMP_GT_OQ));
        if (!_mm256_movemask_ps(take)) continue;
        for (int i = 0; i < n; i++) {
            __m256i old = _mm256_loadu_si256((const __m256i *)(const void *)(Lt + i * LANES));
            __m256i nw = _mm256_loadu_si256((const __m256i *)(const void *)(Laux + i * LANES));
            _mm256_storeu_si256((__m256i *)(void *)(Lt + i * LANES),
                                _mm256_blendv_epi8(old, nw, _mm256_castps_si256(take)));
        }
        scale = sel(take, _mm256_div_ps(sumlx, suml2), scale);
        best = sel(take, _mm256_mul_ps(scale, sumlx), best);
    }
    scale = sel(tiny, zero, scale);
    for (int i = 0; i < n; i++) {
        __m256i l = _mm256_loadu_si256((const __m256i *)(const void *)(Lt + i * LANES));
        _mm256_storeu_si256((__m256i *)(void *)(Lt + i * LANES),
                            _mm256_andnot_si256(_mm256_castps_si256(tiny), l));
    }
    _mm256_storeu_ps(scale_out, scale);
}
#endif

/* Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins relative to fp16 d and dmin; they
 * differ only in the level count (nmax 15 / 31), the search (rmin, nstep) and the bit packing. */
/* ggml's av_x of a 32-value sub-block: sqrt of the mean square (the weights are av_x + |x|). */
static inline float av_x32(const float *xs) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; l++) sum_x2 += xs[l] * xs[l];
    return sqrtf(sum_x2 / 32);
}

/* The sub-blocks' scales, mins and levels of nblk (1 or 2) consecutive Q4_K / Q5_K blocks: ggml's
 * make_qkx2_quants per sub-block; with AVX-512 (level 2) two blocks' 16 sub-blocks at once in
 * lanes, with AVX2 (level >= 1) one block's 8. */
static void qk_sub_scales(const float *x, int nblk, int level, int nmax, float rmin, int nstep, uint8_t *L,
                          float *mins, float *scales) {
#ifdef SN_X86
    if (level >= 1) {
        const int lanes = level == 2 && nblk == 2 ? 16 : 8;
        float xt[32 * 16], wt[32 * 16];
        int32_t Lt[32 * 16];
        for (int b = 0; b < nblk * 8; b += lanes) {
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 32; l++) xt[l * lanes + j] = x[32 * (b + j) + l];
            if (lanes == 16) {
                qk_weights_x16(32, xt, wt);
                sn_qkx2_quants_x16(32, nmax, xt, wt, Lt, mins + b, scales + b, rmin, 0.1f, nstep, 0);
            } else {
                qk_weights_x8(32, xt, wt);
                sn_qkx2_quants_x8(32, nmax, xt, wt, Lt, mins + b, scales + b, rmin, 0.1f, nstep, 0);
            }
            for (int j = 0; j < lanes; j++)
                for (int l = 0; l < 32; l++) L[32 * (b + j) + l] = (uint8_t)Lt[l * lanes + j];
        }
        return;
    }
#endif
    (void)level;
    uint8_t Laux[32];
    float weights[32];
    for (int j = 0; j < nblk * 8; j++) {
        const float *xs = x + 32 * j;
        const float av_x = av_x32(xs);
        for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(xs[l]);
        scales[j] = sn_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, 0);
    }
}

/* One Q4_K / Q5_K block's d, dmin, packed scales (12 bytes) and 256 levels in [0, nmax], from its
 * sub-blocks' fitted scales, mins and levels (qk_sub_scales). */
static void qk_block(const float *x, int nmax, const float *mins, const float *scales, uint16_t *dd, uint16_t *dmin,
                     uint8_t *packed, uint8_t *L, int level) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < SN_QK_K / 32; j++) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    memset(packed, 0, 12);
    for (int j = 0; j < SN_QK_K / 32; j++) {
        uint8_t ls = (uint8_t)nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)nearest_int(inv_min * mins[j]);
        ls = SN_MIN(63, ls);
        lm = SN_MIN(63, lm);
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
            packed[j - 4] |= (uint8_t)((ls >> 4) << 6);
            packed[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    *dd = sn_fp32_to_fp16(max_scale / 63.f);
    *dmin = sn_fp32_to_fp16(max_min / 63.f);
    float d[SN_QK_K / 32], dm[SN_QK_K / 32];
    for (int j = 0; j < SN_QK_K / 32; j++) {
        uint8_t sc, m;
        scale_min_k4(j, packed, &sc, &m);
        d[j] = sn_fp16_to_fp32(*dd) * sc;
        dm[j] = sn_fp16_to_fp32(*dmin) * m;
    }
#ifdef SN_X86
    if (level >= 1) {
        if (level == 2) levels_x16(x, 8, 32, d, dm, 0, nmax, 0, L);
        else levels_x8(x, 8, 32, d, dm, 0, nmax, 0, L);
        return;
    }
#endif
    (void)level;
    for (int j = 0; j < SN_QK_K / 32; j++) {
        if (d[j] == 0.0f) continue; /* keep the levels found above, as ggml does */
        for (int ii = 0; ii < 32; ii++) {
            int l = nearest_int((x[32 * j + ii] + dm[j]) / d[j]);
            L[32 * j + ii] = (uint8_t)SN_MAX(0, SN_MIN(nmax, l));
        }
    }
}

/* Rows of Q4_K (five = 0) or Q5_K (five = 1): 32 levels; the 5th bit of value n+j (n a multiple of
 * 64, j < 32) goes to bit 2*(n/64) of qh[j], that of value n+j+32 to the next bit. */
static void qk_rows(const float *x, void *vy, int64_t k, int five, int level) {
    level = sn_ggml_level(level);
    const int nmax = five ? 31 : 15, nstep = five ? 15 : 20;
    const float rmin = five ? -0.5f : -1.f;
    const int64_t nb = k / SN_QK_K;
    uint8_t L[2 * SN_QK_K];
    float mins[16], scales[16];
    for (int64_t i = 0; i < nb;) {
        const int nblk = level == 2 && i + 1 < nb ? 2 : 1;
        qk_sub_scales(x, nblk, level, nmax, rmin, nstep, L, mins, scales);
        for (int b = 0; b < nblk; b++, i++, x += SN_QK_K) {
            uint8_t *Lb = L + SN_QK_K * b;
            if (!five) {
                sn_block_q4_K *y = (sn_block_q4_K *)vy + i;
                qk_block(x, nmax, mins + 8 * b, scales + 8 * b, &y->d, &y->dmin, y->scales, Lb, level);
                for (int j = 0; j < SN_QK_K; j += 64)
                    for (int l = 0; l < 32; l++) y->qs[j / 2 + l] = (uint8_t)(Lb[j + l] | (Lb[j + l + 32] << 4));
                continue;
            }
            sn_block_q5_K *y = (sn_block_q5_K *)vy + i;
            qk_block(x, nmax, mins + 8 * b, scales + 8 * b, &y->d, &y->dmin, y->scales, Lb, level);
            memset(y->qh, 0, sizeof y->qh);
            for (int n = 0; n < SN_QK_K; n += 64) {
                const uint8_t m1 = (uint8_t)(1u << (n / 32)), m2 = (uint8_t)(2u << (n / 32));
                for (int j = 0; j < 32; j++) {
                    int l1 = Lb[n + j], l2 = Lb[n + j + 32];
                    if (l1 > 15) { l1 -= 16; y->qh[j] |= m1; }
                    if (l2 > 15) { l2 -= 16; y->qh[j] |= m2; }
                    y->qs[n / 2 + j] = (uint8_t)(l1 | (l2 << 4));
                }
            }
        }
    }
}

void sn_quantize_row_q4_K_at(const float *x, void *vy, int64_t k, int level) { qk_rows(x, vy, k, 0, level); }
void sn_quantize_row_q5_K_at(const float *x, void *vy, int64_t k, int level) { qk_rows(x, vy, k, 1, level); }
void sn_quantize_row_q4_K(const float *x, void *vy, int64_t k) { qk_rows(x, vy, k, 0, SN_GGML_LEVEL_BEST); }
void sn_quantize_row_q5_K(const float *x, void *vy, int64_t k) { qk_rows(x, vy, k, 1, SN_GGML_LEVEL_BEST); }

/* Q6_K packing: levels 0..63 -> 4 low bits (ql) and 2 high bits (qh). */
static void q6_K_pack(const int8_t *L, sn_block_q6_K *y) {
    uint8_t *ql = y->ql, *qh = y->qh;
    for (int j = 0; j < SN_QK_K; j += 128) {
        for (int l = 0; l < 32; l++) {
            const uint8_t q1 = L[j + l + 0] & 0xF, q2 = L[j + l + 32] & 0xF;
            const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
            ql[l + 0] = (uint8_t)(q1 | (q3 << 4));
            ql[l + 32] = (uint8_t)(q2 | (q4 << 4));
            qh[l] = (uint8_t)((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                              ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

#ifdef SN_X86
/* q6_K_pack with byte vectors (levels are 0..63, so 16-bit shifts never carry between bytes). */
__attribute__((target("avx2"))) static void q6_K_pack_avx2(const int8_t *L, sn_block_q6_K *y) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int h = 0; h < 2; h++) {
        const int8_t *s = L + 128 * h;
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(s + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(const void *)(s + 96));
        __m256i ql0 = _mm256_or_si256(_mm256_and_si256(a, m4), _mm256_slli_epi16(_mm256_and_si256(c, m4), 4));
        __m256i ql1 = _mm256_or_si256(_mm256_and_si256(b, m4), _mm256_slli_epi16(_mm256_and_si256(d, m4), 4));
        __m256i qh = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4), 2)),
            _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(c, 4), m4), 4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(d, 4), m4), 6)));
        _mm256_storeu_si256((__m256i *)(void *)(y->ql + 64 * h), ql0);
        _mm256_storeu_si256((__m256i *)(void *)(y->ql + 64 * h + 32), ql1);
        _mm256_storeu_si256((__m256i *)(void *)(y->qh + 32 * h), qh);
    }
}

/* One Q6_K super-block with AVX-512: its 16 sub-blocks run in the 16 lanes (xt transposed: element
 * i of sub-block j at [i*16 + j]), each lane doing exactly the scalar operations in the scalar
 * order, as in the AVX2 twins above. Two restructurings keep the bytes: x*x and x*x*x are the
 * same roundings in every one of the 19 scale trials, so they are computed once; and the levels
 * of a trial are not stored - the scalar code recomputes them from the accepted iscale with the
 * same expression, so the lane keeps its last accepted iscale and the levels are computed once
 * at the end. The Q6_K embedding/output matrix dominates a q4_0 conversion; this is its kernel. */

/* The level of f clamped to [-32, 31], as a float. With finite inputs f = iscale*x is within
 * [-33, 33] (or the lane is "tiny" and discarded), where one round-to-nearest-even instruction
 * equals nearest_int; blocks holding NaN/Inf take ggml's bit trick (a NaN's payload decides). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 q6k_level(__m512 f, int finite) {
    if (finite)
        return _mm512_min_ps(_mm512_max_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                           _mm512_set1_ps(-32.f)),
                             _mm512_set1_ps(31.f));
    __m512i li = nearest_int16(f);
    return _mm512_cvtepi32_ps(_mm512_max_epi32(_mm512_set1_epi32(-32), _mm512_min_epi32(_mm512_set1_epi32(31), li)));
}

/* make_qx_quants' scale search for the 16 lanes: the first trial, then 18 more accepted in order.
 * Leaves each lane's scale, and the iscale whose levels the scalar code would keep. */
__attribute__((target("avx512f"), always_inline)) static inline void q6k_search(const __m512 *xv, const __m512 *w,
                                                                               const __m512 *wx, __m512 max, int finite,
                                                                               __m512 *scale_out, __m512 *best_is_out) {
    enum { NMAX = 32 };
    const __m512 zero = _mm512_setzero_ps();
    __m512 iscale = _mm512_div_ps(_mm512_set1_ps((float)-NMAX), max);
    __m512 best_is = iscale, sumlx = zero, suml2 = zero;
    for (int i = 0; i < 16; i++) {
        __m512 l = q6k_level(_mm512_mul_ps(iscale, xv[i]), finite);
        sumlx = _mm512_add_ps(sumlx, _mm512_mul_ps(wx[i], l));
        suml2 = _mm512_add_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], l), l));
    }
    const __mmask16 nz = _mm512_cmp_ps_mask(suml2, zero, _CMP_NEQ_UQ); /* C truthiness: NaN is true */
    __m512 scale = _mm512_maskz_div_ps(nz, sumlx, suml2);
    __m512 best = _mm512_mul_ps(scale, sumlx);
    /* The 18 trials is = -9..-1, 1..9 are independent until the accept test, which must run in
     * order. Each lane's sums are serial chains of adds (their order is fixed by the scalar code),
     * so three trials are summed side by side to keep the adders busy, then tested in order. */
    for (int g = 0; g < 18; g += 3) {
        __m512 isc[3];
        for (int t = 0; t < 3; t++) {
            const int is = g + t < 9 ? g + t - 9 : g + t - 8;
            const float num = -((float)NMAX + 0.1f * (float)is);
            isc[t] = _mm512_div_ps(_mm512_set1_ps(num), max);
        }
        /* written out so the six accumulators stay in registers */
        __m512 sx[3], s2[3];
        __m512 sx0 = zero, sx1 = zero, sx2 = zero, s20 = zero, s21 = zero, s22 = zero;
        for (int i = 0; i < 16; i++) {
#define Q6K_TRIAL(t, sxv, s2v)                                                                    \
    do {                                                                                          \
        __m512 l = q6k_level(_mm512_mul_ps(isc[t], xv[i]), finite);                               \
        sxv = _mm512_add_ps(sxv, _mm512_mul_ps(wx[i], l));                                        \
        s2v = _mm512_add_ps(s2v, _mm512_mul_ps(_mm512_mul_ps(w[i], l), l));                       \
    } while (0)
            Q6K_TRIAL(0, sx0, s20);
            Q6K_TRIAL(1, sx1, s21);
            Q6K_TRIAL(2, sx2, s22);
#undef Q6K_TRIAL
        }
        sx[0] = sx0, sx[1] = sx1, sx[2] = sx2, s2[0] = s20, s2[1] = s21, s2[2] = s22;
        for (int t = 0; t < 3; t++) {
            __mmask16 take = _mm512_cmp_ps_mask(s2[t], zero, _CMP_GT_OQ) &
                             _mm512_cmp_ps_mask(_mm512_mul_ps(sx[t], sx[t]), _mm512_mul_ps(best, s2[t]), _CMP_GT_OQ);
            if (!take) continue;
            best_is = _mm512_mask_mov_ps(best_is, take, isc[t]);
            scale = _mm512_mask_mov_ps(scale, take, _mm512_div_ps(sx[t], s2[t]));
            best = _mm512_mask_mov_ps(best, take, _mm512_mul_ps(scale, sx[t]));
        }
    }
    *scale_out = scale;
    *best_is_out = best_is;
}

__attribute__((target("avx512f"))) static void q6_K_block_x16(const float *x, sn_block_q6_K *y) {
    enum { NMAX = 32 };
    float xt[16 * 16], scales[16];
    int8_t L[SN_QK_K];
    for (int j = 0; j < 16; j++)
        for (int l = 0; l < 16; l++) xt[l * 16 + j] = x[16 * j + l];
    const __m512 zero = _mm512_setzero_ps(), inf = _mm512_set1_ps(INFINITY);
    const __m512i lo = _mm512_set1_epi32(-NMAX), hi = _mm512_set1_epi32(NMAX - 1);
    const __m512i off = _mm512_set1_epi32(NMAX);
    __m512 xv[16], w[16], wx[16];
    __m512 max = zero, amax = zero;
    __mmask16 finite = 0xFFFF;
    for (int i = 0; i < 16; i++) {
        xv[i] = _mm512_loadu_ps(xt + 16 * i);
        __m512 ax = _mm512_abs_ps(xv[i]);
        __mmask16 gt = _mm512_cmp_ps_mask(ax, amax, _CMP_GT_OQ);
        amax = _mm512_mask_mov_ps(amax, gt, ax);
        max = _mm512_mask_mov_ps(max, gt, xv[i]);
        finite &= _mm512_cmp_ps_mask(ax, inf, _CMP_LT_OQ);
        w[i] = _mm512_mul_ps(xv[i], xv[i]);
        wx[i] = _mm512_mul_ps(w[i], xv[i]);
    }
    const __mmask16 tiny = _mm512_cmp_ps_mask(amax, _mm512_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    __m512 scale, best_is;
    if (finite == 0xFFFF)
        q6k_search(xv, w, wx, max, 1, &scale, &best_is);
    else
        q6k_search(xv, w, wx, max, 0, &scale, &best_is);
    scale = _mm512_mask_mov_ps(scale, tiny, zero);
    _mm512_storeu_ps(scales, scale);
    /* the super-block scale, as in the scalar function */
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ib++) {
        const float abs_scale = fabsf(scales[ib]);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scales[ib];
        }
    }
    if (max_abs_scale < GROUP_MAX_EPS) {
        memset(y, 0, sizeof *y);
        y->d = sn_fp32_to_fp16(0.f);
        return;
    }
    float iscale_s = -128.f / max_scale;
    y->d = sn_fp32_to_fp16(1 / iscale_s);
    float dj[16];
    const float d0 = sn_fp16_to_fp32(y->d);
    for (int ib = 0; ib < 16; ib++) {
        y->scales[ib] = (int8_t)SN_MIN(127, nearest_int(iscale_s * scales[ib]));
        dj[ib] = d0 * y->scales[ib];
    }
    /* Levels again against the rounded scales, one sub-block (in x's own order) per vector. A
     * sub-block whose d is 0 keeps make_qx_quants' levels: those of its accepted iscale (rare). */
    float bis[16];
    _mm512_storeu_ps(bis, best_is);
    for (int j = 0; j < 16; j++) {
        const float *xs = x + 16 * j;
        if (dj[j] != 0.0f) { /* NaN counts as non-zero, as in C */
            __m512i li = nearest_int16(_mm512_div_ps(_mm512_loadu_ps(xs), _mm512_set1_ps(dj[j])));
            li = _mm512_add_epi32(_mm512_max_epi32(lo, _mm512_min_epi32(hi, li)), off);
            _mm_storeu_si128((__m128i *)(void *)(L + 16 * j), _mm512_cvtepi32_epi8(li));
        } else if ((tiny >> j) & 1) {
            memset(L + 16 * j, 0, 16);
        } else {
            for (int l = 0; l < 16; l++) {
                int v = nearest_int(bis[j] * xs[l]);
                L[16 * j + l] = (int8_t)(SN_MAX(-NMAX, SN_MIN(NMAX - 1, v)) + NMAX);
            }
        }
    }
    q6_K_pack_avx2(L, y);
}
#endif

/* The 16 sub-blocks' scales and levels of one Q6_K block: ggml's make_qx_quants (rmse_type 1) per
 * sub-block, 8 sub-blocks at once in lanes when the CPU has AVX2 (lanes). */
static void q6_K_sub_scales(const float *x, int lanes, int8_t *L, float *scales) {
#ifdef SN_X86
    if (lanes) {
        float xt[16 * 8];
        int32_t Lt[16 * 8];
        for (int half = 0; half < 2; half++) {
            for (int j = 0; j < 8; j++)
                for (int l = 0; l < 16; l++) xt[l * 8 + j] = x[16 * (8 * half + j) + l];
            qx_quants_rmse1_x8(16, 32, xt, Lt, scales + 8 * half);
            for (int j = 0; j < 8; j++)
                for (int l = 0; l < 16; l++) L[16 * (8 * half + j) + l] = (int8_t)Lt[l * 8 + j];
        }
        return;
    }
#endif
    (void)lanes;
    for (int ib = 0; ib < SN_QK_K / 16; ib++) scales[ib] = qx_quants_rmse1(16, 32, x + 16 * ib, L + 16 * ib);
}

/* Q6_K: 16 sub-blocks of 16 with int8 scales relative to one fp16 d; 6-bit levels split into
 * 4 low bits (ql) and 2 high bits (qh). */
void sn_quantize_row_q6_K(const float *x, void *vy, int64_t k) {
    sn_quantize_row_q6_K_at(x, vy, k, SN_GGML_LEVEL_BEST);
}

void sn_quantize_row_q6_K_at(const float *x, void *vy, int64_t k, int level) {
    level = sn_ggml_level(level);
    sn_block_q6_K *y = vy;
    const int64_t nb = k / SN_QK_K;
    int8_t L[SN_QK_K];
    float scales[SN_QK_K / 16];
#ifdef SN_X86
    if (level >= 2) {
        for (int64_t i = 0; i < nb; i++) q6_K_block_x16(x + i * SN_QK_K, &y[i]);
        return;
    }
#endif
    const int lanes = level >= 1;
    for (int64_t i = 0; i < nb; i++) {
        q6_K_sub_scales(x, lanes, L, scales);
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < SN_QK_K / 16; ib++) {
            const float scale = scales[ib];
            const float abs_scale = fabsf(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < GROUP_MAX_EPS) {
            memset(&y[i], 0, sizeof y[i]);
            y[i].d = sn_fp32_to_fp16(0.f);
            x += SN_QK_K;
            continue;
        }
        float iscale = -128.f / max_scale;
        y[i].d = sn_fp32_to_fp16(1 / iscale);
        for (int ib = 0; ib < SN_QK_K / 16; ib++)
            y[i].scales[ib] = (int8_t)SN_MIN(127, nearest_int(iscale * scales[ib]));
        for (int j = 0; j < SN_QK_K / 16; j++) {
            float d = sn_fp16_to_fp32(y[i].d) * y[i].scales[j];
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ii++) {
                int l = nearest_int(x[16 * j + ii] / d);
                l = SN_MAX(-32, SN_MIN(31, l));
                L[16 * j + ii] = (int8_t)(l + 32);
            }
        }
        q6_K_pack(L, &y[i]);
        x += SN_QK_K;
    }
}
