/* int4.c - INT4G64 × int8 dot products for the runtime blob (see int4.h for the arithmetic).
 *
 * Decode is memory-bound: per 64 weights a row holds 32 code bytes + one fp32 scale (0.5625 bytes
 * per weight, read once, sequentially). The SIMD versions expand the 32 code bytes into 64 unsigned
 * 4-bit values in one register (low nibbles then high nibbles, matching the activation's element
 * order) and use the u8×s8 multiply-add instructions. The scalar and AVX-512 kernels fold the −8·Σa
 * correction into each exact integer group sum; the AVX2 one subtracts it as a separate float sum.
 *
 * Rows are short (576 bytes for 1024 inputs) and the matrix is far larger than the caches, so the
 * hardware prefetcher alone leaves the loop waiting on DRAM (measured ~4 GB/s out of ~20 on the
 * dev EPYC); a software prefetch PREFETCH_AHEAD bytes ahead of the code pointer (which runs on into
 * the next rows) roughly doubles the streaming rate. Prefetches never fault, so running past the
 * end of the mapping is harmless. */
#include "int4.h"
#include "cpu.h"
#include <math.h>
#include <string.h>

typedef struct { const int8_t *q; const float *scale; const int32_t *sum; } act_view;

static act_view view(const void *act, int64_t n) {
    act_view v;
    v.q = act;
    v.scale = (const float *)(const void *)((const uint8_t *)act + n);
    v.sum = (const int32_t *)(const void *)((const uint8_t *)act + n + (n / SN_INT4_GROUP) * 4);
    return v;
}

void sn_int4_quantize_act_scalar(const float *x, void *act, int64_t n) {
    int8_t *q = act;
    float *scale = (float *)(void *)((uint8_t *)act + n);
    int32_t *sum = (int32_t *)(void *)((uint8_t *)act + n + (n / SN_INT4_GROUP) * 4);
    for (int64_t g = 0; g < n / SN_INT4_GROUP; g++) {
        const float *v = x + g * SN_INT4_GROUP;
        float amax = 0.0f;
        for (int j = 0; j < SN_INT4_GROUP; j++) amax = fmaxf(amax, fabsf(v[j]));
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        int32_t s = 0;
        for (int j = 0; j < SN_INT4_GROUP; j++) {
            int c = (int)roundf(v[j] * id);
            c = c > 127 ? 127 : c < -127 ? -127 : c;
            q[g * SN_INT4_GROUP + j] = (int8_t)c;
            s += c;
        }
        scale[g] = d;
        sum[g] = s;
    }
}

int64_t sn_int4_group_isum_ref(const uint8_t *w_row, const int8_t *aq, int64_t g) {
    const uint8_t *w = w_row + g * 32;
    const int8_t *q = aq + g * SN_INT4_GROUP;
    int64_t s = 0;
    for (int j = 0; j < 32; j++) {
        s += (int64_t)((w[j] & 15) - 8) * q[j];
        s += (int64_t)((w[j] >> 4) - 8) * q[j + 32];
    }
    return s;
}

float sn_int4_dot_scalar(int64_t n, const void *w_row, const void *act) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint8_t *w = w_row;
    const float *sc = (const float *)(const void *)(w + n / 2);
    act_view a = view(act, n);
    float acc = 0.0f;
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t *wg = w + g * 32;
        const int8_t *q = a.q + g * SN_INT4_GROUP;
        int32_t s = 0;
        for (int j = 0; j < 32; j++) s += (int32_t)(wg[j] & 15) * q[j] + (int32_t)(wg[j] >> 4) * q[j + 32];
        s -= 8 * a.sum[g];
        acc += (float)s * (sc[g] * a.scale[g]);
    }
    return acc;
}

#if defined(__x86_64__)
#include <immintrin.h>

enum { PREFETCH_AHEAD = 1024 };

__attribute__((target("avx2,fma"))) static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma")))
float sn_int4_dot_avx2(int64_t n, const void *w_row, const void *act) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint8_t *w = w_row;
    const float *sc = (const float *)(const void *)(w + n / 2);
    act_view a = view(act, n);
    const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
    __m256 acc = _mm256_setzero_ps();
    float corr = 0.0f;
    for (int64_t g = 0; g < ng; g++) {
        _mm_prefetch((const char *)(w + g * 32) + PREFETCH_AHEAD, _MM_HINT_T0);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(w + g * 32));
        __m256i lo = _mm256_and_si256(b, m4), hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
        __m256i q0 = _mm256_loadu_si256((const __m256i *)(const void *)(a.q + g * 64));
        __m256i q1 = _mm256_loadu_si256((const __m256i *)(const void *)(a.q + g * 64 + 32));
        /* u8 x s8 -> s16 pair sums (|2·15·127| < 32767, no saturation), then pairs -> s32 */
        __m256i p = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, q0), ones),
                                     _mm256_madd_epi16(_mm256_maddubs_epi16(hi, q1), ones));
        float s = sc[g] * a.scale[g];
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(s), acc);
        corr += (float)(8 * a.sum[g]) * s;
    }
    return hsum256(acc) - corr;
}

/* Two groups per step: 64 code bytes hold groups g and g+1; their low nibbles pair with
 * [q_g[0..31], q_g+1[0..31]] and the high nibbles with [q_g[32..63], q_g+1[32..63]] (two 256-bit
 * lane shuffles of the activation), so after two vpdpbusd lanes 0-7 hold group g's partial sums and
 * lanes 8-15 group g+1's. The −8·Σa term enters as the accumulator's starting value (−8 × the same
 * lanes' activation sums, two vpdpbusd with a constant 8), so every lane is an exact integer and
 * no separate correction sum is reduced at the end (measured ~10 % faster decode than correcting
 * with a float sum per 16 groups). The float factors w_scale · a_scale of 16 groups are one vector
 * product; one permute spreads the pair's two factors over the lanes.
 *
 * One row per call: a 4-row variant sharing the activation shuffles measured 2x slower decode on
 * the dev EPYC (its loads of four interleaved row streams stall; one sequential stream with a
 * software prefetch does not). */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
float sn_int4_dot_avx512vnni(int64_t n, const void *w_row, const void *act) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint8_t *w = w_row;
    const float *sc = (const float *)(const void *)(w + n / 2);
    act_view a = view(act, n);
    const __m512i m4 = _mm512_set1_epi8(15), eight = _mm512_set1_epi8(8), two = _mm512_set1_epi32(2);
    const __m512i pair0 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (int64_t g0 = 0; g0 < ng; g0 += 16) {
        const int64_t cnt = ng - g0 < 16 ? ng - g0 : 16;
        const __mmask16 mk = (__mmask16)((1u << cnt) - 1);
        const __m512 f = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, sc + g0), _mm512_maskz_loadu_ps(mk, a.scale + g0));
        __m512i idx = pair0;
        int64_t g = g0;
        for (; g + 2 <= g0 + cnt; g += 2) {
            _mm_prefetch((const char *)(w + g * 32) + PREFETCH_AHEAD, _MM_HINT_T0);
            const __m512i b = _mm512_loadu_si512((const void *)(w + g * 32));
            const __m512i qa = _mm512_loadu_si512((const void *)(a.q + g * 64));
            const __m512i qb = _mm512_loadu_si512((const void *)(a.q + g * 64 + 64));
            const __m512i ql = _mm512_shuffle_i64x2(qa, qb, 0x44), qh = _mm512_shuffle_i64x2(qa, qb, 0xEE);
            const __m512i neg = _mm512_sub_epi32(_mm512_setzero_si512(),
                                                 _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, ql), eight, qh));
            const __m512i lo = _mm512_and_si512(b, m4), hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
            const __m512i p = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(neg, lo, ql), hi, qh);
            const __m512 fs = _mm512_permutexvar_ps(idx, f);
            if ((g - g0) & 2) acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), fs, acc1);
            else acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), fs, acc0);
            idx = _mm512_add_epi32(idx, two);
        }
        if (g < g0 + cnt) { /* an odd last group: one group across all 16 lanes */
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(w + g * 32));
            const __m512i u = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(b), _mm256_srli_epi16(b, 4), 1), m4);
            const __m512i q = _mm512_loadu_si512((const void *)(a.q + g * 64));
            const __m512i neg = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, q));
            const __m512i p = _mm512_dpbusd_epi32(neg, u, q);
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(_mm512_set1_epi32((int)(g - g0)), f), acc0);
        }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}
/* The scalar quantizer 16 lanes at a time, bit for bit: the same amax, the same d = amax/127 and
 * id = 1/d, the same products v·id, and roundf's half-away-from-zero rounding rebuilt from a
 * truncation (x − trunc(x) is exact here), so codes, scales and sums equal the scalar ones. */
__attribute__((target("avx512f")))
void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n) {
    int8_t *q = act;
    float *scale = (float *)(void *)((uint8_t *)act + n);
    int32_t *sum = (int32_t *)(void *)((uint8_t *)act + n + (n / SN_INT4_GROUP) * 4);
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512i lim = _mm512_set1_epi32(127), nlim = _mm512_set1_epi32(-127);
    for (int64_t g = 0; g < n / SN_INT4_GROUP; g++) {
        const float *v = x + g * SN_INT4_GROUP;
        __m512 xv[4];
        __m512 m = _mm512_setzero_ps();
        for (int k = 0; k < 4; k++) {
            xv[k] = _mm512_loadu_ps(v + 16 * k);
            m = _mm512_max_ps(m, _mm512_abs_ps(xv[k]));
        }
        const float amax = _mm512_reduce_max_ps(m);
        const float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        const __m512 idv = _mm512_set1_ps(id);
        __m512i acc = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++) {
            const __m512 p = _mm512_mul_ps(xv[k], idv);
            __m512 r = _mm512_roundscale_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(p, r)), half, _CMP_GE_OQ);
            const __m512 sgn = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(p),
                _mm512_set1_epi32((int)0x80000000u)), _mm512_castps_si512(one)));
            r = _mm512_mask_add_ps(r, up, r, sgn);
            __m512i c = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvttps_epi32(r), nlim), lim);
            _mm_storeu_si128((__m128i *)(void *)(q + g * SN_INT4_GROUP + 16 * k), _mm512_cvtsepi32_epi8(c));
            acc = _mm512_add_epi32(acc, c);
        }
        scale[g] = d;
        sum[g] = _mm512_reduce_add_epi32(acc);
    }
}
#else
void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n) { sn_int4_quantize_act_scalar(x, act, n); }
float sn_int4_dot_avx2(int64_t n, const void *w_row, const void *act) { return sn_int4_dot_scalar(n, w_row, act); }
float sn_int4_dot_avx512vnni(int64_t n, const void *w_row, const void *act) { return sn_int4_dot_scalar(n, w_row, act); }
#endif

/* The activation quantizer the kernel tables use: AVX-512 when this process may use it (SN_CPU). */
void sn_int4_quantize_act(const float *x, void *act, int64_t n) {
    static int level = -1;
    int l = __atomic_load_n(&level, __ATOMIC_RELAXED);
    if (l < 0) {
        l = (sn_cpu_usable() & SN_CPU_AVX512) ? 1 : 0;
        __atomic_store_n(&level, l, __ATOMIC_RELAXED);
    }
    if (l) sn_int4_quantize_act_avx512(x, act, n);
    else sn_int4_quantize_act_scalar(x, act, n);
}

sn_int4_dot_fn sn_int4_dot_best(void) {
    uint32_t f = sn_cpu_usable();
    if ((f & SN_CPU_AVX512) && (f & SN_CPU_AVX512VNNI)) return sn_int4_dot_avx512vnni;
    if (f & SN_CPU_AVX2) return sn_int4_dot_avx2;
    return sn_int4_dot_scalar;
}

const char *sn_int4_dot_name(sn_int4_dot_fn f) {
    return f == sn_int4_dot_avx512vnni ? "avx512vnni" : f == sn_int4_dot_avx2 ? "avx2" : "scalar";
}
