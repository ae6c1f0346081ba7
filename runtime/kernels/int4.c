/* int4.c - INT4G64 × int8 dot products for the runtime blob (see int4.h for the arithmetic).
 *
 * Decode is memory-bound: per 64 weights we read 32 code bytes + one fp32 scale. The SIMD versions
 * expand the 32 code bytes into 64 unsigned 4-bit values in one register (low nibbles then high
 * nibbles, matching the activation's element order) and use the u8×s8 multiply-add instructions;
 * the −8·Σa correction is folded in per group, so every group sum is an exact integer. */
#include "int4.h"
#include "../cpu.h"
#include <math.h>
#include <string.h>

void sn_int4_quantize_act(const float *x, int64_t n, sn_int4_act *a) {
    for (int64_t g = 0; g < n / SN_INT4_GROUP; g++) {
        const float *v = x + g * SN_INT4_GROUP;
        float amax = 0.0f;
        for (int j = 0; j < SN_INT4_GROUP; j++) amax = fmaxf(amax, fabsf(v[j]));
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        int32_t s = 0;
        for (int j = 0; j < SN_INT4_GROUP; j++) {
            int q = (int)roundf(v[j] * id);
            q = q > 127 ? 127 : q < -127 ? -127 : q;
            a->q[g * SN_INT4_GROUP + j] = (int8_t)q;
            s += q;
        }
        a->scale[g] = d;
        a->sum[g] = s;
    }
}

int64_t sn_int4_row_isum_ref(const uint8_t *wq_row, int64_t n, const int8_t *aq, int64_t g) {
    (void)n;
    const uint8_t *w = wq_row + g * 32;
    const int8_t *q = aq + g * SN_INT4_GROUP;
    int64_t s = 0;
    for (int j = 0; j < 32; j++) {
        s += (int64_t)((w[j] & 15) - 8) * q[j];
        s += (int64_t)((w[j] >> 4) - 8) * q[j + 32];
    }
    return s;
}

void sn_int4_gemv_scalar(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                         const sn_int4_act *a, float *y) {
    const int64_t ng = n / SN_INT4_GROUP;
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *w = wq + r * (n / 2);
        const float *sc = ws + r * ng;
        float acc = 0.0f;
        for (int64_t g = 0; g < ng; g++) {
            const uint8_t *wg = w + g * 32;
            const int8_t *q = a->q + g * SN_INT4_GROUP;
            int32_t s = 0;
            for (int j = 0; j < 32; j++) s += (int32_t)(wg[j] & 15) * q[j] + (int32_t)(wg[j] >> 4) * q[j + 32];
            s -= 8 * a->sum[g];
            acc += (float)s * (sc[g] * a->scale[g]);
        }
        y[r] = acc;
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2,fma"))) static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma")))
void sn_int4_gemv_avx2(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                       const sn_int4_act *a, float *y) {
    const int64_t ng = n / SN_INT4_GROUP;
    const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *w = wq + r * (n / 2);
        const float *sc = ws + r * ng;
        __m256 acc = _mm256_setzero_ps();
        float corr = 0.0f;
        for (int64_t g = 0; g < ng; g++) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(w + g * 32));
            __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
            __m256i q0 = _mm256_loadu_si256((const __m256i *)(a->q + g * 64));
            __m256i q1 = _mm256_loadu_si256((const __m256i *)(a->q + g * 64 + 32));
            /* u8 x s8 -> s16 pairs (no saturation: |15*127*2| < 32767), then pairs -> s32 */
            __m256i p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, q0), ones),
                                         _mm256_madd_epi16(_mm256_maddubs_epi16(hi, q1), ones));
            float s = sc[g] * a->scale[g];
            acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(s), acc);
            corr += (float)(8 * a->sum[g]) * s;
        }
        y[r] = hsum256(acc) - corr;
    }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
void sn_int4_gemv_avx512vnni(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                             const sn_int4_act *a, float *y) {
    const int64_t ng = n / SN_INT4_GROUP;
    const __m256i m4 = _mm256_set1_epi8(15);
    int64_t r = r0;
    /* two rows at a time share the activation loads */
    for (; r + 1 < r1; r += 2) {
        const uint8_t *w0 = wq + r * (n / 2), *w1 = w0 + n / 2;
        const float *s0 = ws + r * ng, *s1 = s0 + ng;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        float c0 = 0.0f, c1 = 0.0f;
        for (int64_t g = 0; g < ng; g++) {
            __m512i q = _mm512_loadu_si512((const void *)(a->q + g * 64));
            __m256i b0 = _mm256_loadu_si256((const __m256i *)(w0 + g * 32));
            __m256i b1 = _mm256_loadu_si256((const __m256i *)(w1 + g * 32));
            __m512i u0 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b0, m4)),
                                            _mm256_and_si256(_mm256_srli_epi16(b0, 4), m4), 1);
            __m512i u1 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b1, m4)),
                                            _mm256_and_si256(_mm256_srli_epi16(b1, 4), m4), 1);
            __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u0, q);
            __m512i p1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u1, q);
            float as = a->scale[g], f0 = s0[g] * as, f1 = s1[g] * as;
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_set1_ps(f0), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), _mm512_set1_ps(f1), acc1);
            float e = (float)(8 * a->sum[g]);
            c0 += e * f0;
            c1 += e * f1;
        }
        y[r] = _mm512_reduce_add_ps(acc0) - c0;
        y[r + 1] = _mm512_reduce_add_ps(acc1) - c1;
    }
    for (; r < r1; r++) {
        const uint8_t *w0 = wq + r * (n / 2);
        const float *s0 = ws + r * ng;
        __m512 acc0 = _mm512_setzero_ps();
        float c0 = 0.0f;
        for (int64_t g = 0; g < ng; g++) {
            __m512i q = _mm512_loadu_si512((const void *)(a->q + g * 64));
            __m256i b0 = _mm256_loadu_si256((const __m256i *)(w0 + g * 32));
            __m512i u0 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(b0, m4)),
                                            _mm256_and_si256(_mm256_srli_epi16(b0, 4), m4), 1);
            __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u0, q);
            float f0 = s0[g] * a->scale[g];
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_set1_ps(f0), acc0);
            c0 += (float)(8 * a->sum[g]) * f0;
        }
        y[r] = _mm512_reduce_add_ps(acc0) - c0;
    }
}
#else
void sn_int4_gemv_avx2(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                       const sn_int4_act *a, float *y) { sn_int4_gemv_scalar(wq, ws, n, r0, r1, a, y); }
void sn_int4_gemv_avx512vnni(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                             const sn_int4_act *a, float *y) { sn_int4_gemv_scalar(wq, ws, n, r0, r1, a, y); }
#endif

sn_int4_gemv_fn sn_int4_gemv_best(void) {
    uint32_t f = sn_cpu_usable();
    if ((f & SN_CPU_AVX512) && (f & SN_CPU_AVX512VNNI)) return sn_int4_gemv_avx512vnni;
    if (f & SN_CPU_AVX2) return sn_int4_gemv_avx2;
    return sn_int4_gemv_scalar;
}

const char *sn_int4_gemv_name(sn_int4_gemv_fn f) {
    return f == sn_int4_gemv_avx512vnni ? "avx512vnni" : f == sn_int4_gemv_avx2 ? "avx2" : "scalar";
}
