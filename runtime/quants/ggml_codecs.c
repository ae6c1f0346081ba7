/* ggml_codecs.c - ggml's exact float conversions and the dequantizers of the types sunny writes.
 *
 * fp32 <-> fp16 and fp32 <-> bf16 exactly as ggml-impl.h converts them (round to nearest even,
 * ggml's NaN rules), one value at a time and as rows with AVX-512 / F16C / AVX2 twins that give
 * the same bits; and row dequantizers for Q8_0, Q4_0, Q4_K
 * and Q6_K (the other ggml types are runtime/quants/). */
#include "ggml_types_internal.h"

#include "quants.h"

/* ------------------------------------------------------------------------------------------------
 * Scalar conversions. */
static inline uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t sn_fp32_to_fp16(float f) {
    const uint32_t u = f2u(f);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;   /* NaN: ggml emits the canonical quiet NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;  /* >= 65520 rounds to infinity (and Inf) */
    if (a >= 0x38800000u) {                       /* result is a normal half (|f| >= 2^-14) */
        uint32_t r = a - 0x38000000u;             /* rebias exponent 127 -> 15 */
        r += 0x0fffu + ((r >> 13) & 1u);          /* round to nearest, ties to even */
        return sign | (uint16_t)(r >> 13);        /* a carry into the exponent is correct */
    }
    /* Subnormal half: the result is round_half_even(|f| * 2^24) in units of 2^-24. */
    const uint32_t e = a >> 23;
    if (e < 102) return sign;                     /* < 2^-25: rounds to zero */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;               /* 14..24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return sign | (uint16_t)q;                    /* q == 0x400 is the smallest normal: fine */
}

float sn_fp16_to_fp32(uint16_t h) { return sn_fp16_decode(h); }

uint16_t sn_fp32_to_bf16(float f) {
    const uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64u); /* quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float sn_bf16_to_fp32(uint16_t h) { return u2f((uint32_t)h << 16); }

/* ------------------------------------------------------------------------------------------------
 * Row conversions: AVX-512 / F16C / AVX2 when the CPU has them, scalar otherwise. The SIMD code
 * must equal the scalar functions bit for bit: hardware vcvtps2ph keeps NaN payloads while ggml
 * canonicalises them, so NaN lanes are patched from the scalar path. */
static void f32_to_f16_scalar(const float *x, uint16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = sn_fp32_to_fp16(x[i]);
}
static void f16_to_f32_scalar(const uint16_t *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = sn_fp16_to_fp32(x[i]);
}
static void f32_to_bf16_scalar(const float *x, uint16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = sn_fp32_to_bf16(x[i]);
}
static void bf16_to_f16_scalar(const uint16_t *x, uint16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = sn_fp32_to_fp16(sn_bf16_to_fp32(x[i]));
}

#ifdef SN_X86
#define F16C_TARGET __attribute__((target("avx2,f16c")))
#define AVX512_TARGET __attribute__((target("avx512f,avx2,f16c")))

/* The f32 values i.. (8 or 16) of a row of f32 (bf16 = 0) or of bf16 (bf16 = 1, widened exactly);
 * bf16 is a constant in each caller. */
F16C_TARGET static inline __attribute__((always_inline)) __m256 load8(const void *x, int bf16, size_t i) {
    if (bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)x + i))), 16));
    return _mm256_loadu_ps((const float *)x + i);
}
AVX512_TARGET static inline __attribute__((always_inline)) __m512 load16(const void *x, int bf16, size_t i) {
    if (bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)((const uint16_t *)x + i))), 16));
    return _mm512_loadu_ps((const float *)x + i);
}

/* ggml's fp16 for the NaN lanes (mask) of the chunk at i, from the scalar path. */
static inline __attribute__((always_inline)) void f16_nan_lanes(uint16_t *y, const void *x, int bf16, size_t i, unsigned mask) {
    for (; mask; mask &= mask - 1) {
        const size_t l = i + (size_t)__builtin_ctz(mask);
        y[l] = sn_fp32_to_fp16(bf16 ? sn_bf16_to_fp32(((const uint16_t *)x)[l]) : ((const float *)x)[l]);
    }
}

/* fp16 of the chunk of 8 / 16 values at i: the hardware conversion, then the NaN lanes patched. */
F16C_TARGET static inline __attribute__((always_inline)) void f16_chunk8(uint16_t *y, const void *x, int bf16, size_t i) {
    const __m256 v = load8(x, bf16, i);
    _mm_storeu_si128((__m128i *)(void *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    f16_nan_lanes(y, x, bf16, i, (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
AVX512_TARGET static inline __attribute__((always_inline)) void f16_chunk16(uint16_t *y, const void *x, int bf16, size_t i) {
    const __m512 v = load16(x, bf16, i);
    _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    f16_nan_lanes(y, x, bf16, i, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
}

/* fp16 rows from f32 or bf16: 8 values at a time with F16C, the rest scalar; 16 at a time with
 * AVX-512, the rest as with F16C. */
F16C_TARGET static inline __attribute__((always_inline)) void to_f16_f16c(const void *x, int bf16, uint16_t *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) f16_chunk8(y, x, bf16, i);
    if (bf16) bf16_to_f16_scalar((const uint16_t *)x + i, y + i, n - i);
    else f32_to_f16_scalar((const float *)x + i, y + i, n - i);
}
AVX512_TARGET static inline __attribute__((always_inline)) void to_f16_avx512(const void *x, int bf16, uint16_t *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) f16_chunk16(y, x, bf16, i);
    to_f16_f16c(bf16 ? (const void *)((const uint16_t *)x + i) : (const void *)((const float *)x + i), bf16, y + i, n - i);
}

F16C_TARGET static void f32_to_f16_f16c(const float *x, uint16_t *y, size_t n) { to_f16_f16c(x, 0, y, n); }
F16C_TARGET static void bf16_to_f16_f16c(const uint16_t *x, uint16_t *y, size_t n) { to_f16_f16c(x, 1, y, n); }
AVX512_TARGET static void f32_to_f16_avx512(const float *x, uint16_t *y, size_t n) { to_f16_avx512(x, 0, y, n); }
AVX512_TARGET static void bf16_to_f16_avx512(const uint16_t *x, uint16_t *y, size_t n) { to_f16_avx512(x, 1, y, n); }

F16C_TARGET static void f16_to_f32_f16c(const uint16_t *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(x + i))));
    f16_to_f32_scalar(x + i, y + i, n - i);
}

/* 16 values at a time; the last n % 16 go through the F16C version. */
AVX512_TARGET static void f16_to_f32_avx512(const uint16_t *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + i))));
    f16_to_f32_f16c(x + i, y + i, n - i);
}

__attribute__((target("avx512f,avx512bw"))) static void f32_to_bf16_avx512(const float *x,
                                                                            uint16_t *y, size_t n) {
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1);
    const __m512i quiet = _mm512_set1_epi32(64);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i u = _mm512_loadu_si512((const void *)(x + i));
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, absmask), inf);
        __m512i hi = _mm512_srli_epi32(u, 16);
        __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(hi, one)));
        r = _mm512_srli_epi32(r, 16);
        r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, quiet));
        _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm512_cvtepi32_epi16(r));
    }
    f32_to_bf16_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx2"))) static void f32_to_bf16_avx2(const float *x, uint16_t *y,
                                                              size_t n) {
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
    const __m256i quiet = _mm256_set1_epi32(64);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i out[2];
        for (int k = 0; k < 2; k++) {
            __m256i u = _mm256_loadu_si256((const __m256i *)(const void *)(x + i + 8 * (size_t)k));
            __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absmask), inf);
            __m256i hi = _mm256_srli_epi32(u, 16);
            __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(hi, one)));
            r = _mm256_srli_epi32(r, 16);
            out[k] = _mm256_blendv_epi8(r, _mm256_or_si256(hi, quiet), nan);
        }
        /* packus works per 128-bit lane: reorder the 64-bit quarters afterwards */
        __m256i p = _mm256_packus_epi32(out[0], out[1]);
        p = _mm256_permute4x64_epi64(p, 0xd8);
        _mm256_storeu_si256((__m256i *)(void *)(y + i), p);
    }
    f32_to_bf16_scalar(x + i, y + i, n - i);
}
#undef F16C_TARGET
#undef AVX512_TARGET
#endif

/* A public row converter at a level (NAME_at) and at the best one (NAME), from {scalar, AVX2/F16C,
 * AVX-512}. */
#define ROW_BY_LEVEL(NAME, XT, YT, SCALAR, AVX2, AVX512)                                            \
    void NAME##_at(const XT *x, YT *y, size_t n, int level) {                                       \
        static void (*const by_level[3])(const XT *, YT *, size_t) = SN_BY_LEVEL(SCALAR, AVX2, AVX512); \
        by_level[sn_ggml_level(level)](x, y, n);                                                    \
    }                                                                                               \
    void NAME(const XT *x, YT *y, size_t n) { NAME##_at(x, y, n, SN_GGML_LEVEL_BEST); }
ROW_BY_LEVEL(sn_bf16_to_fp16_row, uint16_t, uint16_t, bf16_to_f16_scalar, bf16_to_f16_f16c, bf16_to_f16_avx512)
ROW_BY_LEVEL(sn_fp32_to_fp16_row, float, uint16_t, f32_to_f16_scalar, f32_to_f16_f16c, f32_to_f16_avx512)
ROW_BY_LEVEL(sn_fp16_to_fp32_row, uint16_t, float, f16_to_f32_scalar, f16_to_f32_f16c, f16_to_f32_avx512)
ROW_BY_LEVEL(sn_fp32_to_bf16_row, float, uint16_t, f32_to_bf16_scalar, f32_to_bf16_avx2, f32_to_bf16_avx512)
#undef ROW_BY_LEVEL

void sn_bf16_to_fp32_row(const uint16_t *x, float *y, size_t n) {
    /* a shift; the compiler vectorises this well enough */
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)x[i] << 16;
        memcpy(&y[i], &u, 4);
    }
}


/* ------------------------------------------------------------------------------------------------
 * Dequantization. */
void sn_dequantize_row_q8_0(const void *vx, float *y, int64_t k) {
    const sn_block_q8_0 *x = vx;
    for (int64_t i = 0; i < k / SN_QK8_0; i++) {
        const float d = sn_fp16_to_fp32(x[i].d);
        for (int j = 0; j < SN_QK8_0; j++) y[i * SN_QK8_0 + j] = x[i].qs[j] * d;
    }
}

void sn_dequantize_row_q4_0(const void *vx, float *y, int64_t k) {
    const sn_block_q4_0 *x = vx;
    for (int64_t i = 0; i < k / SN_QK4_0; i++) {
        const float d = sn_fp16_to_fp32(x[i].d);
        for (int j = 0; j < SN_QK4_0 / 2; j++) {
            const int x0 = (x[i].qs[j] & 0x0F) - 8, x1 = (x[i].qs[j] >> 4) - 8;
            y[i * SN_QK4_0 + j] = x0 * d;
            y[i * SN_QK4_0 + j + SN_QK4_0 / 2] = x1 * d;
        }
    }
}

void sn_dequantize_row_q4_K(const void *vx, float *y, int64_t k) {
    const sn_block_q4_K *x = vx;
    for (int64_t i = 0; i < k / SN_QK_K; i++) {
        const uint8_t *q = x[i].qs;
        const float d = sn_fp16_to_fp32(x[i].d), min = sn_fp16_to_fp32(x[i].dmin);
        int is = 0;
        for (int j = 0; j < SN_QK_K; j += 64) {
            uint8_t sc, m;
            scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; l++) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; l++) *y++ = d2 * (q[l] >> 4) - m2;
            q += 32;
            is += 2;
        }
    }
}

void sn_dequantize_row_q6_K(const void *vx, float *y, int64_t k) {
    const sn_block_q6_K *x = vx;
    for (int64_t i = 0; i < k / SN_QK_K; i++) {
        const float d = sn_fp16_to_fp32(x[i].d);
        const uint8_t *ql = x[i].ql, *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int n = 0; n < SN_QK_K; n += 128) {
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                const int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

/* A blob's INT4G32 row (docs/BLOB.md): k/2 bytes of codes, two per byte (low nibble: value j of a
 * 64-value chunk, high: value 32 + j), then k/32 f16 scales; value = (code - 8) * scale. */
void sn_dequantize_row_int4g32(const void *x, float *y, int64_t k) {
    const uint8_t *q = x;
    const uint8_t *sc = q + k / 2;
    for (int64_t c = 0; c < k / 64; c++) {
        uint16_t h0, h1;
        memcpy(&h0, sc + 4 * c, 2);
        memcpy(&h1, sc + 4 * c + 2, 2);
        const float d0 = sn_fp16_to_fp32(h0), d1 = sn_fp16_to_fp32(h1);
        const uint8_t *o = q + c * 32;
        for (int j = 0; j < 32; j++) {
            y[c * 64 + j] = (float)((o[j] & 15) - 8) * d0;
            y[c * 64 + 32 + j] = (float)((o[j] >> 4) - 8) * d1;
        }
    }
}

int sn_dequantize_row(int type, const void *x, float *y, int64_t k) {
    if (k < 0) return -1;
    const sn_ggml_traits *t = sn_ggml_traits_of(type);
    if (!t || !t->to_f32 || (uint64_t)k % t->blck != 0) return -1;
    t->to_f32(x, y, k);
    return 0;
}
