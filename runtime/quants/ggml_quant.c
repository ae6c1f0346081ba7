/* ggml_quant.c - ggml's reference quantizers for Q8_0, Q4_0 and Q8_K (quantize_row_*_ref).
 *
 * The block formats are in ggml_types.h. Each quantizer keeps ggml's float evaluation order and
 * x86 cast semantics, so the converter's bytes equal llama.cpp's; the AVX2 / AVX-512 block
 * versions repeat the scalar operations exactly (tests/unit/test_ggml_types.c). */
#include "ggml_types_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Q8_0: d = max|x| / 127, q = roundf(x / d). */
static void q8_0_row_scalar(const float *x, sn_block_q8_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * SN_QK8_0;
        float amax = 0.0f;
        for (int j = 0; j < SN_QK8_0; j++) amax = SN_MAX(amax, fabsf(xb[j])); /* NaN semantics too */
        const float d = amax / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        for (int j = 0; j < SN_QK8_0; j++) y[i].qs[j] = cast_i8(roundf(xb[j] * id));
    }
}

#ifdef SN_X86
/* Same arithmetic 8 lanes at a time. roundf (half away from zero) is t = trunc(v) plus sign(v)
 * when |v - t| >= 0.5 (v - t is exact); NaN/out-of-range lanes convert to INT32_MIN like the
 * scalar cast. Blocks containing NaN take the scalar path: ggml's sequential MAX forgets a NaN
 * in a way a vector max cannot reproduce. */
__attribute__((target("avx2"))) static void q8_0_row_avx2(const float *x, sn_block_q8_0 *y,
                                                           int64_t nb) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 signmask = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f);
    const __m256 one = _mm256_set1_ps(1.0f);
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * SN_QK8_0;
        __m256 v[4], m = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
        for (int k = 0; k < 4; k++) {
            v[k] = _mm256_loadu_ps(xb + 8 * k);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v[k], v[k], _CMP_UNORD_Q));
            m = _mm256_max_ps(m, _mm256_and_ps(v[k], absmask));
        }
        if (_mm256_movemask_ps(nan)) { q8_0_row_scalar(xb, &y[i], 1); continue; }
        float lanes[8];
        _mm256_storeu_ps(lanes, m);
        float amax = 0.0f;
        for (int k = 0; k < 8; k++) amax = SN_MAX(amax, lanes[k]);
        const float d = amax / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        const __m256 vid = _mm256_set1_ps(id);
        int32_t q[32];
        for (int k = 0; k < 4; k++) {
            __m256 p = _mm256_mul_ps(v[k], vid);
            __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            __m256 frac = _mm256_and_ps(_mm256_sub_ps(p, t), absmask);
            __m256 step = _mm256_or_ps(_mm256_and_ps(p, signmask), one);
            step = _mm256_and_ps(step, _mm256_cmp_ps(frac, half, _CMP_GE_OQ));
            __m256i r = _mm256_cvttps_epi32(_mm256_add_ps(t, step));
            _mm256_storeu_si256((__m256i *)(void *)(q + 8 * k), r);
        }
        for (int j = 0; j < 32; j++) y[i].qs[j] = (int8_t)(uint8_t)((uint32_t)q[j] & 0xffu);
    }
}
#endif

void sn_quantize_row_q8_0_at(const float *x, void *vy, int64_t k, int level) {
    static void (*const by_level[3])(const float *, sn_block_q8_0 *, int64_t) =
        SN_BY_LEVEL(q8_0_row_scalar, q8_0_row_avx2, q8_0_row_avx2);
    by_level[sn_ggml_level(level)](x, vy, k / SN_QK8_0);
}
void sn_quantize_row_q8_0(const float *x, void *vy, int64_t k) {
    sn_quantize_row_q8_0_at(x, vy, k, SN_GGML_LEVEL_BEST);
}

/* Q4_0: d = (signed value of largest magnitude) / -8, q = min(15, (int8)(x/d + 8.5)). */
static void q4_0_row_scalar(const float *x, sn_block_q4_0 *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * SN_QK4_0;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < SN_QK4_0; j++) {
            if (amax < fabsf(xb[j])) { amax = fabsf(xb[j]); max = xb[j]; }
        }
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        for (int j = 0; j < SN_QK4_0 / 2; j++) {
            const float x0 = xb[j] * id, x1 = xb[j + SN_QK4_0 / 2] * id;
            const uint8_t q0 = (uint8_t)SN_MIN(15, (int)cast_i8(x0 + 8.5f));
            const uint8_t q1 = (uint8_t)SN_MIN(15, (int)cast_i8(x1 + 8.5f));
            y[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

#ifdef SN_X86
/* Same arithmetic 8 lanes at a time. The scalar scan keeps the first element of largest
 * magnitude and never picks a NaN; max_ps(|v|, acc) ignores NaN the same way, and the first lane
 * equal to the maximum is the one the scan keeps. The (int8_t) cast is x86's: int32 conversion
 * (INT32_MIN for NaN/out of range), low byte, sign-extended. */
__attribute__((target("avx2"))) static void q4_0_row_avx2(const float *x, sn_block_q4_0 *y,
                                                           int64_t nb) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 bias = _mm256_set1_ps(8.5f);
    const __m256i fifteen = _mm256_set1_epi32(15), lowbyte = _mm256_set1_epi32(0xff);
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * SN_QK4_0;
        __m256 v[4], m = _mm256_setzero_ps();
        for (int k = 0; k < 4; k++) {
            v[k] = _mm256_loadu_ps(xb + 8 * k);
            m = _mm256_max_ps(_mm256_and_ps(v[k], absmask), m); /* NaN -> keeps m */
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, m);
        float amax = 0.0f;
        for (int k = 0; k < 8; k++) amax = lanes[k] > amax ? lanes[k] : amax;
        float max = 0.0f;
        if (amax > 0.0f) {
            for (int j = 0; j < SN_QK4_0; j++)
                if (fabsf(xb[j]) == amax) { max = xb[j]; break; }
        }
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; k++) {
            __m256i t = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), bias));
            t = _mm256_srai_epi32(_mm256_slli_epi32(t, 24), 24); /* (int8_t) */
            q[k] = _mm256_and_si256(_mm256_min_epi32(t, fifteen), lowbyte); /* (uint8_t)MIN */
        }
        int32_t out[16];
        _mm256_storeu_si256((__m256i *)(void *)out,
                            _mm256_or_si256(q[0], _mm256_slli_epi32(q[2], 4)));
        _mm256_storeu_si256((__m256i *)(void *)(out + 8),
                            _mm256_or_si256(q[1], _mm256_slli_epi32(q[3], 4)));
        for (int j = 0; j < 16; j++) y[i].qs[j] = (uint8_t)out[j];
    }
}
#endif

#ifdef SN_X86
/* The AVX2 version with a block in two registers: the first lane holding the largest magnitude
 * comes from a compare mask instead of a scalar scan, and the nibbles are packed in registers. */
__attribute__((target("avx512f"))) static void q4_0_row_avx512(const float *x, sn_block_q4_0 *y,
                                                               int64_t nb) {
    const __m512 bias = _mm512_set1_ps(8.5f);
    const __m512i fifteen = _mm512_set1_epi32(15), lowbyte = _mm512_set1_epi32(0xff);
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * SN_QK4_0;
        const __m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
        const __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
        /* max_ps(|v|, acc) returns acc for a NaN lane: NaN never wins, as in the scalar scan */
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a1, _mm512_max_ps(a0, _mm512_setzero_ps())));
        float max = 0.0f;
        if (amax > 0.0f) {
            const __m512 am = _mm512_set1_ps(amax);
            __mmask16 m0 = _mm512_cmp_ps_mask(a0, am, _CMP_EQ_OQ), m1 = _mm512_cmp_ps_mask(a1, am, _CMP_EQ_OQ);
            max = m0 ? xb[__builtin_ctz(m0)] : xb[16 + __builtin_ctz(m1)];
        }
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = sn_fp32_to_fp16(d);
        const __m512 vid = _mm512_set1_ps(id);
        __m512i q0 = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v0, vid), bias));
        __m512i q1 = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v1, vid), bias));
        q0 = _mm512_srai_epi32(_mm512_slli_epi32(q0, 24), 24); /* (int8_t) */
        q1 = _mm512_srai_epi32(_mm512_slli_epi32(q1, 24), 24);
        q0 = _mm512_and_si512(_mm512_min_epi32(q0, fifteen), lowbyte); /* (uint8_t)MIN */
        q1 = _mm512_and_si512(_mm512_min_epi32(q1, fifteen), lowbyte);
        _mm_storeu_si128((__m128i *)(void *)y[i].qs,
                         _mm512_cvtepi32_epi8(_mm512_or_si512(q0, _mm512_slli_epi32(q1, 4))));
    }
}
#endif

void sn_quantize_row_q4_0_at(const float *x, void *vy, int64_t k, int level) {
    static void (*const by_level[3])(const float *, sn_block_q4_0 *, int64_t) =
        SN_BY_LEVEL(q4_0_row_scalar, q4_0_row_avx2, q4_0_row_avx512);
    by_level[sn_ggml_level(level)](x, vy, k / SN_QK4_0);
}
void sn_quantize_row_q4_0(const float *x, void *vy, int64_t k) {
    sn_quantize_row_q4_0_at(x, vy, k, SN_GGML_LEVEL_BEST);
}

/* Q8_K: the activation format of the K-quant dot products (float d, 16 partial sums). */
void sn_quantize_row_q8_K(const float *x, void *vy, int64_t k) {
    sn_block_q8_K *y = vy;
    const int64_t nb = k / SN_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        float max = 0, amax = 0;
        for (int j = 0; j < SN_QK_K; j++) {
            float ax = fabsf(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
        if (amax == 0.0f) {
            y[i].d = 0;
            memset(y[i].qs, 0, sizeof y[i].qs);
            memset(y[i].bsums, 0, sizeof y[i].bsums); /* ggml leaves these unset */
            x += SN_QK_K;
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < SN_QK_K; j++) {
            int v = nearest_int(iscale * x[j]);
            y[i].qs[j] = (int8_t)SN_MIN(127, v);
        }
        for (int j = 0; j < SN_QK_K / 16; j++) {
            int sum = 0;
            for (int ii = 0; ii < 16; ii++) sum += y[i].qs[j * 16 + ii];
            y[i].bsums[j] = (int16_t)sum;
        }
        y[i].d = 1 / iscale;
        x += SN_QK_K;
    }
}
