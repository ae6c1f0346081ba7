/* ggml_types_internal.h - what the ggml type files share (internal to runtime/, not an API).
 *
 * ggml_types.c: the type table, the SIMD cap and the by-type dispatch; ggml_codecs.c: fp16/bf16
 * conversions (scalar and rows) and the dequantizers of the types sunny writes; ggml_quant.c:
 * the Q8_0 / Q4_0 / Q8_K reference quantizers; ggml_quant_k.c: Q4_K, Q5_K and Q6_K; ggml_quant_k23.c:
 * Q2_K and Q3_K; ggml_quant_legacy.c: Q4_1, Q5_0, Q5_1, IQ4_NL and IQ4_XS. Every file that
 * includes this one computes with ggml's rounding: no a*b+c is fused into an FMA. */
#ifndef SN_GGML_TYPES_INTERNAL_H
#define SN_GGML_TYPES_INTERNAL_H
#include "ggml_types.h"

#include "cpu.h"

/* Bit-exactness needs every a*b+c rounded twice, as in ggml's own build: never let the compiler
 * fuse them into FMA (it would under -march=native with GNU C's default -ffp-contract=fast).
 * Applies to every function defined after this header in the including file. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SN_X86 1
#endif

/* The SIMD level of a call: 0 scalar only, 1 up to AVX2/F16C, 2 also AVX-512 (cpu.h: SN_CPU_AVX2
 * includes FMA and F16C, SN_CPU_AVX512 the F/BW/VL/DQ/CD subsets these codecs use). Every codec
 * gives the same bytes at every level; the public entry points run at the best level this CPU runs
 * (CPUID + XCR0), the *_at ones at the level a caller asks for, clamped to it (tests compare every
 * level). Variants live in tables indexed by the level, {scalar, AVX2, AVX-512}, built with
 * SN_BY_LEVEL (a level with no variant of its own names the one below; off x86 every entry is the
 * scalar one). */
static inline int sn_ggml_level(int want) {
    const uint32_t f = sn_cpu_features();
    const int best = (f & SN_CPU_AVX512) ? 2 : (f & SN_CPU_AVX2) ? 1 : 0;
    return want < 0 ? 0 : want < best ? want : best;
}
enum { SN_GGML_LEVEL_BEST = 2 }; /* clamped by sn_ggml_level to what the CPU runs */
#ifdef SN_X86
#define SN_BY_LEVEL(scalar, avx2, avx512) {scalar, avx2, avx512}
#else
#define SN_BY_LEVEL(scalar, avx2, avx512) {scalar, scalar, scalar}
#endif

/* ---- the type table ---- */

/* One row of ggml_types.c's table, in the manner of ggml's type_traits: name, values per block,
 * bytes per block, and the row codecs this tree has for the type (k values, a multiple of the
 * block size; NULL where it has none). sn_ggml_from_f32 and sn_dequantize_row read them. from_f32_at:
 * the writer at a given SIMD level, for the types whose writer has SIMD variants (NULL: from_f32
 * has none). */
typedef struct {
    const char *name;
    uint32_t blck, size;
    void (*to_f32)(const void *x, float *y, int64_t k);
    void (*from_f32)(const float *x, void *y, int64_t k);
    void (*from_f32_at)(const float *x, void *y, int64_t k, int level);
} sn_ggml_traits;

/* The quantizers with SIMD variants, at a level (sn_ggml_level clamps it). */
void sn_quantize_row_q8_0_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q4_0_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q4_K_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q5_K_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q6_K_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q2_K_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_q3_K_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_iq4_nl_at(const float *x, void *y, int64_t k, int level);
void sn_quantize_row_iq4_xs_at(const float *x, void *y, int64_t k, int level);
/* The row of type, or NULL for an id with no entry (retired or out of range). */
const sn_ggml_traits *sn_ggml_traits_of(int type);

/* The dequantizers of ggml_codecs.c (the other types' are in quants/quants.h). */
void sn_dequantize_row_q8_0(const void *x, float *y, int64_t k);
void sn_dequantize_row_q4_0(const void *x, float *y, int64_t k);
void sn_dequantize_row_q4_K(const void *x, float *y, int64_t k);
void sn_dequantize_row_q6_K(const void *x, float *y, int64_t k);
void sn_dequantize_row_int4g32(const void *x, float *y, int64_t k); /* a whole row of k values */

/* ---- quantizer helpers ---- */

/* C's float -> int8_t cast as ggml's x86 build performs it: convert to int32 (out of range and NaN
 * give INT32_MIN, the "integer indefinite" value) and keep the low byte. */
static inline int8_t cast_i8(float v) {
    int32_t i;
    if (v >= -2147483648.0f && v < 2147483648.0f) i = (int32_t)v;
    else i = INT32_MIN;
    return (int8_t)(uint8_t)((uint32_t)i & 0xffu);
}

/* Round to nearest, ties to even, by adding 1.5*2^23 and reading the mantissa (ggml's
 * nearest_int; only meaningful for |f| <= 2^22, like the original). */
static inline int nearest_int(float f) {
    float v = f + 12582912.f;
    int32_t i;
    memcpy(&i, &v, 4);
    return (i & 0x007fffff) - 0x00400000;
}

#ifdef SN_X86
/* nearest_int in every lane of a vector (the SIMD quantizers; lane_ops.h's NEAREST) */
__attribute__((target("avx2"))) static inline __m256i nearest_int8(__m256 f) {
    __m256i i = _mm256_castps_si256(_mm256_add_ps(f, _mm256_set1_ps(12582912.f)));
    return _mm256_sub_epi32(_mm256_and_si256(i, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x00400000));
}
__attribute__((target("avx512f"))) static inline __m512i nearest_int16(__m512 f) {
    __m512i i = _mm512_castps_si512(_mm512_add_ps(f, _mm512_set1_ps(12582912.f)));
    return _mm512_sub_epi32(_mm512_and_si512(i, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x00400000));
}
#endif

#define SN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SN_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GROUP_MAX_EPS 1e-15f

/* The signed value of largest magnitude among x[0..n) (the first on ties; a NaN never wins), its
 * magnitude in *amax: the scan that starts ggml's symmetric quantizers. */
static inline float sn_signed_amax(const float *x, int n, float *amax) {
    float max = 0, am = 0;
    for (int i = 0; i < n; i++) {
        float ax = fabsf(x[i]);
        if (ax > am) { am = ax; max = x[i]; }
    }
    *amax = am;
    return max;
}

/* The start of ggml's symmetric quantizers: the signed largest-magnitude value in *max; 0 (and L
 * all zero) when every |x| is below GROUP_MAX_EPS, 1 otherwise. */
static inline int sn_sym_start(const float *x, int n, int8_t *L, float *max) {
    float amax;
    *max = sn_signed_amax(x, n, &amax);
    if (amax >= GROUP_MAX_EPS) return 1;
    for (int i = 0; i < n; i++) L[i] = 0;
    return 0;
}

/* One x^2-weighted symmetric fit in ggml's order (make_qx_quants rmse_type 1, make_q3_quants):
 * l = clamp(nearest_int(iscale * x), -nmax, nmax - 1), stored as l + off in L unless L is NULL,
 * and sum(w*x*l), sum(w*l*l) with w = x*x. */
static inline void sn_sym_fit(int n, int nmax, const float *x, float iscale, int8_t *L, int off, float *sumlx,
                              float *suml2) {
    float slx = 0, sl2 = 0;
    for (int i = 0; i < n; i++) {
        int l = nearest_int(iscale * x[i]);
        l = SN_MAX(-nmax, SN_MIN(nmax - 1, l));
        if (L) L[i] = (int8_t)(l + off);
        float w = x[i] * x[i];
        slx += w * x[i] * l;
        sl2 += w * l * l;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

/* ggml's make_qkx2_quants (ggml_quant_k.c): the scale and -min (>= 0, in *the_min) of an
 * asymmetric fit of n values to levels 0..nmax in L, weighted squared error or, with use_mad,
 * absolute error. Q2_K, Q4_K and Q5_K use it. */
float sn_qkx2_quants(int n, int nmax, const float *x, const float *w, uint8_t *L, float *the_min, uint8_t *Laux,
                     float rmin, float rdelta, int nstep, int use_mad);
#ifdef SN_X86
/* sn_qkx2_quants for 8 sub-blocks of n (<= 32) at once with AVX2, bit-identical: lane j is
 * sub-block j, xt/wt transposed (element i of sub-block j at [i*8 + j]); levels to Lt likewise,
 * -min and the scale of each lane to the_min[8], scale[8]. */
void sn_qkx2_quants_x8(int n, int nmax, const float *xt, const float *wt, int32_t *Lt, float *the_min, float *scale,
                       float rmin, float rdelta, int nstep, int use_mad);
/* The same for 16 sub-blocks with AVX-512 ([i*16 + j]). */
void sn_qkx2_quants_x16(int n, int nmax, const float *xt, const float *wt, int32_t *Lt, float *the_min, float *scale,
                        float rmin, float rdelta, int nstep, int use_mad);
#endif

/* The 6-bit scale and min of sub-block j of a Q4_K block. */
static inline void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}


#endif
