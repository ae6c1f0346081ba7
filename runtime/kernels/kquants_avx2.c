/* kquants_avx2.c - fast AVX2 kernels for Q4_K and Q6_K against Q8_K activations: the single-row
 * dots (decode) and 4-row x 4-token register tiles (prompt batches, kernels.h gemm4x4).
 *
 * They compute exactly what scalar.c's q4_K_dot / dot_q6_K compute (the orders llama.cpp's CPU
 * backend uses, see there): every integer is exact, so the speed comes from keeping the integer
 * work in vectors (maddubs pair sums, madd with 16-bit scale vectors built by one shuffle, one
 * horizontal sum per block or per tile instead of per sub-block) while the float steps - one fma
 * per block or per sub-block pair, in the same order - stay as they are. Tests: test_kernels.c
 * compares every entry with the scalar twin bit for bit; test_quants.c compares Q6_K with
 * libggml's own vec_dot. Compiled for AVX2 via a target pragma; reached only from tables cpu.c
 * has cleared for AVX2 (sn_kernels_at levels 1 / 2). */
#include "kernels.h"

#include "quants.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kquants_x86.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define h2f(x) _cvtsh_ss(x)

/* ---- shared pieces ---- */

/* pshufb patterns (constant tables, so the unrolled loops load them rather than build them):
 * SPREAD16[j] copies 16-bit lane j of each 128-bit half over that half. */
static const uint8_t SPREAD16[8][32] __attribute__((aligned(32))) = {
#define S2(j) 2 * (j), 2 * (j) + 1
#define ROW(j) {S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j), S2(j)}
    ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7)
#undef ROW
};
/* Q6_K group g (of 4 in a broadcast half of 8 scales): int16 lane 2g in the low 128-bit half,
 * lane 2g + 1 in the high half. */
static const uint8_t Q6_SPLIT[4][32] __attribute__((aligned(32))) = {
#define ROW(j) {S2(2 * j), S2(2 * j), S2(2 * j), S2(2 * j), S2(2 * j), S2(2 * j), S2(2 * j), S2(2 * j), \
                S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1), S2(2 * j + 1)}
    ROW(0), ROW(1), ROW(2), ROW(3)
#undef ROW
#undef S2
};
static inline __m256i spread16(int j) { return _mm256_load_si256((const __m256i *)SPREAD16[j]); }

/* [sum(v0), sum(v1), sum(v2), sum(v3)] of four 8-lane int32 vectors (exact integers) */
static inline __m128i hsum4_i32(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* ---- Q4_K ---- */

/* One Q4_K block unpacked once and met by one or more Q8_K blocks. */
typedef struct {
    __m256i lo[4], hi[4]; /* nibbles of sub-block 2j and 2j+1 */
    __m256i sc[8];        /* scale of sub-block g in every int16 lane */
} q4k_block;

static inline void q4k_load(const sn_block_q4_K *w, q4k_block *k, __m128i *mn) {
    __m128i sc;
    sn_kq_q4k_scales(w->scales, &sc, mn);
    const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) k->sc[g] = _mm256_shuffle_epi8(s16, spread16(g));
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(w->qs + 32 * j));
        k->lo[j] = _mm256_and_si256(raw, m4);
        k->hi[j] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
    }
}

/* sc0 * dot(low nibbles, q8[64j..]) + sc1 * dot(high nibbles, q8[64j+32..]) as 8 lanes */
static inline __m256i q4k_pair(const q4k_block *k, int j, const int8_t *q8) {
    const __m256i pl = _mm256_maddubs_epi16(k->lo[j], _mm256_loadu_si256((const __m256i *)(q8 + 64 * j)));
    const __m256i ph = _mm256_maddubs_epi16(k->hi[j], _mm256_loadu_si256((const __m256i *)(q8 + 64 * j + 32)));
    return _mm256_add_epi32(_mm256_madd_epi16(pl, k->sc[2 * j]), _mm256_madd_epi16(ph, k->sc[2 * j + 1]));
}

/* decode order (scalar q4_K_dot, per_pair = 0): one integer per block, one fma each for s1, s2 */
static float dot_q4_K(int64_t n, const void *vw, const void *va) {
    const sn_block_q4_K *w = vw;
    const sn_block_q8_K *a = va;
    float s1 = 0, s2 = 0;
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        sn_k_prefetch(&w[b], sizeof w[b]);
        q4k_block k;
        __m128i mn;
        q4k_load(&w[b], &k, &mn);
        __m256i acc = q4k_pair(&k, 0, a[b].qs);
        __m256i acc2 = q4k_pair(&k, 1, a[b].qs);
        acc = _mm256_add_epi32(acc, q4k_pair(&k, 2, a[b].qs));
        acc2 = _mm256_add_epi32(acc2, q4k_pair(&k, 3, a[b].qs));
        acc = _mm256_add_epi32(acc, acc2);
        const __m128i m = sn_kq_q4k_mins(mn, a[b].bsums);
        const __m128i m2 = _mm_add_epi32(m, _mm_unpackhi_epi64(m, m));
        const int summ = _mm_cvtsi128_si32(_mm_add_epi32(m2, _mm_shuffle_epi32(m2, 1)));
        const float d = h2f(w[b].d) * a[b].d, dmin = h2f(w[b].dmin) * a[b].d;
        s1 = fmaf((float)sn_avx2_hsum_i32(acc), d, s1);
        s2 = fmaf((float)summ, dmin, s2);
    }
    return s1 - s2;
}

/* batched order (per_pair = 1) for 4 rows x 4 tokens: lanes of s1/s2 are the 4 tokens, one fma
 * per sub-block pair in pair order, as each output's scalar chain. */
static inline __attribute__((always_inline)) void q4k_row4(int64_t n, const void *vw, const sn_block_q8_K *const x[4],
                                                            float *y, int64_t ldy) {
    const sn_block_q4_K *w = vw;
    __m128 s1 = _mm_setzero_ps(), s2 = _mm_setzero_ps();
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        q4k_block k;
        __m128i mn;
        q4k_load(&w[b], &k, &mn);
        const __m128 ad = _mm_setr_ps(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
        const __m128 d = _mm_mul_ps(_mm_set1_ps(h2f(w[b].d)), ad), dmin = _mm_mul_ps(_mm_set1_ps(h2f(w[b].dmin)), ad);
        /* min terms: rows t, lanes j -> transposed to rows j, lanes t */
        __m128 m0 = _mm_castsi128_ps(sn_kq_q4k_mins(mn, x[0][b].bsums)), m1 = _mm_castsi128_ps(sn_kq_q4k_mins(mn, x[1][b].bsums));
        __m128 m2 = _mm_castsi128_ps(sn_kq_q4k_mins(mn, x[2][b].bsums)), m3 = _mm_castsi128_ps(sn_kq_q4k_mins(mn, x[3][b].bsums));
        _MM_TRANSPOSE4_PS(m0, m1, m2, m3);
        const __m128 mj[4] = {m0, m1, m2, m3};
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            const __m128i is = hsum4_i32(q4k_pair(&k, j, x[0][b].qs), q4k_pair(&k, j, x[1][b].qs),
                                         q4k_pair(&k, j, x[2][b].qs), q4k_pair(&k, j, x[3][b].qs));
            s1 = _mm_fmadd_ps(_mm_cvtepi32_ps(is), d, s1);
            s2 = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_castps_si128(mj[j])), dmin, s2);
        }
    }
    float o[4];
    _mm_storeu_ps(o, _mm_sub_ps(s1, s2));
    for (int t = 0; t < 4; t++) y[t * ldy] = o[t];
}

static void gemm_q4_K(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy) {
    sn_kq_gemm4x4(n, w, w_row, x, x_row, y, ldy, q4k_row4);
}

/* ---- Q6_K ---- */

/* The 16-bit scale vectors of a Q6_K block: group g (32 values) has sc[2g] for its bytes 0..15 (the
 * low 128-bit half) and sc[2g+1] for bytes 16..31. lo/hi = the 8 first / last scales as int16,
 * broadcast to both halves; the shuffles pick one lane per half. */
typedef struct { __m256i lo, hi, all; } q6k_scales;

static inline void q6k_scales_load(const int8_t *sc, q6k_scales *s) {
    const __m128i b = _mm_loadu_si128((const __m128i *)sc);
    s->all = _mm256_cvtepi8_epi16(b);
    s->lo = _mm256_permute2x128_si256(s->all, s->all, 0x00);
    s->hi = _mm256_permute2x128_si256(s->all, s->all, 0x11);
}

static inline __m256i q6k_scale(const q6k_scales *s, int g) {
    return _mm256_shuffle_epi8(g < 4 ? s->lo : s->hi, _mm256_load_si256((const __m256i *)Q6_SPLIT[g % 4]));
}

/* group k (0..3) of half h: 6-bit values as unsigned bytes */
static inline __m256i q6k_values(__m256i l0, __m256i l1, __m256i qh, int k) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    switch (k) {
    case 0: return _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
    case 1: return _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
    case 2: return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
    default: return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
    }
}

/* 32 * (bsums[2L] * sc[2L] + bsums[2L+1] * sc[2L+1]) per lane L: the offset of the unsigned values */
static inline __m256i q6k_offset(const q6k_scales *s, const sn_block_q8_K *a) {
    return _mm256_slli_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsums), s->all), 5);
}

/* A row's block unpacked once for the 4x4 tile's 4 tokens: the 8 groups' unsigned values and
 * scales. */
typedef struct {
    __m256i v[8], sc[8];
    q6k_scales s;
} q6k_block;

static inline void q6k_unpack(const sn_block_q6_K *w, q6k_block *k) {
    q6k_scales_load(w->scales, &k->s);
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        const __m256i l0 = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h));
        const __m256i l1 = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * h));
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) k->v[4 * h + j] = q6k_values(l0, l1, qh, j);
    }
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) k->sc[g] = q6k_scale(&k->s, g);
}

static inline __m256i q6k_lanes(const q6k_block *k, const sn_block_q8_K *a) {
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
        const __m256i p = _mm256_maddubs_epi16(k->v[g], _mm256_loadu_si256((const __m256i *)(a->qs + 32 * g)));
        if (g % 2) s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(p, k->sc[g]));
        else s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(p, k->sc[g]));
    }
    return _mm256_sub_epi32(_mm256_add_epi32(s0, s1), q6k_offset(&k->s, a));
}

/* The single-token dot keeps the block as loaded and builds each group's values where they are
 * used (holding all 8 groups and scales needs more than AVX2's 16 registers, and spills). */
typedef struct {
    __m256i l0[2], l1[2], qh[2];
    q6k_scales s;
} q6k_raw;

static inline void q6k_load(const sn_block_q6_K *w, q6k_raw *k) {
    q6k_scales_load(w->scales, &k->s);
    for (int h = 0; h < 2; h++) {
        k->l0[h] = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h));
        k->l1[h] = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h + 32));
        k->qh[h] = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * h));
    }
}

static inline __m256i q6k_raw_lanes(const q6k_raw *k, const sn_block_q8_K *a) {
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
        const __m256i v = q6k_values(k->l0[g / 4], k->l1[g / 4], k->qh[g / 4], g % 4);
        const __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *)(a->qs + 32 * g)));
        if (g % 2) s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(p, q6k_scale(&k->s, g)));
        else s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(p, q6k_scale(&k->s, g)));
    }
    return _mm256_sub_epi32(_mm256_add_epi32(s0, s1), q6k_offset(&k->s, a));
}

SN_KQ_Q6K_DOT(dot_q6_K, q6k_raw, q6k_load, q6k_raw_lanes)
SN_KQ_Q6K_GEMM4X4(gemm_q6_K, q6k_block, q6k_unpack, q6k_lanes)

/* ---- Q5_K (vec_dot_q5_K order, scalar twin in quants_scalar.c: 8 integer lanes per block, lane
 * L = sum over the 32-value groups g of scale_g * (products 4L..4L+3 of g); fma(d, lane) per
 * block; hsum8; plus the min terms as a separate scalar fma chain, added last) ---- */

typedef struct {
    __m256i v[8], sc[8];
    __m128i mn;
} q5k_block;

static inline void q5k_load(const sn_block_q5_K *w, q5k_block *k) {
    __m128i sc;
    sn_kq_q4k_scales(w->scales, &sc, &k->mn);
    const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc));
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    const __m256i qh = _mm256_loadu_si256((const __m256i *)w->qh);
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(w->qs + 32 * (g / 2)));
        const __m256i lo = _mm256_and_si256(g % 2 ? _mm256_srli_epi16(raw, 4) : raw, m4);
        const __m256i hi = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, g), one), 4);
        k->v[g] = _mm256_or_si256(lo, hi);
        k->sc[g] = _mm256_shuffle_epi8(s16, spread16(g));
    }
}

static inline __m256i q5k_lanes(const q5k_block *k, const int8_t *q8) {
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    _Pragma("GCC unroll 8") for (int g = 0; g < 8; g++) {
        const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(k->v[g], _mm256_loadu_si256((const __m256i *)(q8 + 32 * g))), k->sc[g]);
        if (g % 2) s1 = _mm256_add_epi32(s1, p);
        else s0 = _mm256_add_epi32(s0, p);
    }
    return _mm256_add_epi32(s0, s1);
}

static inline int q5k_msum(const q5k_block *k, const int16_t *bsums) {
    const __m128i m = sn_kq_q4k_mins(k->mn, bsums);
    const __m128i m2 = _mm_add_epi32(m, _mm_unpackhi_epi64(m, m));
    return _mm_cvtsi128_si32(_mm_add_epi32(m2, _mm_shuffle_epi32(m2, 1)));
}

static float dot_q5_K(int64_t n, const void *vw, const void *va) {
    const sn_block_q5_K *w = vw;
    const sn_block_q8_K *a = va;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0;
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        sn_k_prefetch(&w[b], sizeof w[b]);
        q5k_block k;
        q5k_load(&w[b], &k);
        const float d = a[b].d * h2f(w[b].d), dmin = -a[b].d * h2f(w[b].dmin);
        summs = fmaf(dmin, (float)q5k_msum(&k, a[b].bsums), summs);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q5k_lanes(&k, a[b].qs)), acc);
    }
    return sn_avx2_hsum8(acc) + summs;
}

/* 4 rows x 4 tokens in dot_q5_K's order (Q5_K's batched order is the same) */
static inline __attribute__((always_inline)) void q5k_row4(int64_t n, const void *vw, const sn_block_q8_K *const x[4],
                                                            float *y, int64_t ldy) {
    const sn_block_q5_K *w = vw;
    __m256 acc[4];
    float summs[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; t++) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        q5k_block k;
        q5k_load(&w[b], &k);
        const float dw = h2f(w[b].d), dmw = h2f(w[b].dmin);
        _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {
            summs[t] = fmaf(-x[t][b].d * dmw, (float)q5k_msum(&k, x[t][b].bsums), summs[t]);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(x[t][b].d * dw), _mm256_cvtepi32_ps(q5k_lanes(&k, x[t][b].qs)), acc[t]);
        }
    }
    for (int t = 0; t < 4; t++) y[t * ldy] = sn_avx2_hsum8(acc[t]) + summs[t];
}

static void gemm_q5_K(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy) {
    sn_kq_gemm4x4(n, w, w_row, x, x_row, y, ldy, q5k_row4);
}

/* ---- Q8_K activations (scalar.c's quant_q8_K: the max by magnitude, first one on ties; scale
 * -127 / max; round half to even; clamp at 127; 16-value sums; d = 1 / scale) ---- */

static void quant_q8_K(const float *x, void *vy, int64_t n) {
    sn_block_q8_K *y = vy;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / SN_QK_K; b++, x += SN_QK_K) {
        __m256 mx = _mm256_setzero_ps();
        for (int i = 0; i < SN_QK_K; i += 8) mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
        __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(mx, 1), _mm256_castps256_ps128(mx));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        if (amax == 0.0f) {
            memset(&y[b], 0, sizeof(y[b]));
            continue;
        }
        float max = 0.0f; /* the first element whose magnitude is amax */
        for (int i = 0; i < SN_QK_K; i += 8) {
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (hit) {
                max = x[i + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
        const float iscale = -127.f / max;
        const __m256 is = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int i = 0; i < SN_QK_K; i += 32) {
            __m256i v[4];
            for (int j = 0; j < 4; j++) {
                const __m256 p = _mm256_round_ps(_mm256_mul_ps(is, _mm256_loadu_ps(x + i + 8 * j)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                v[j] = _mm256_min_epi32(_mm256_cvtps_epi32(p), top);
            }
            const __m256i s01 = _mm256_add_epi32(v[0], v[1]), s23 = _mm256_add_epi32(v[2], v[3]);
            const __m256i h = _mm256_hadd_epi32(s01, s23); /* [s01 pairs | s23 pairs] per 128-bit half */
            const __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            /* q = [a01, a23, b01, b23] with a = s01 halves: bsums of values i..i+15 and i+16..i+31 */
            y[b].bsums[i / 16] = (int16_t)(_mm_extract_epi32(q, 0) + _mm_extract_epi32(q, 1));
            y[b].bsums[i / 16 + 1] = (int16_t)(_mm_extract_epi32(q, 2) + _mm_extract_epi32(q, 3));
            __m256i p16a = _mm256_packs_epi32(v[0], v[1]), p16b = _mm256_packs_epi32(v[2], v[3]);
            __m256i p8 = _mm256_packs_epi16(p16a, p16b);
            p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256((__m256i *)(y[b].qs + i), p8);
        }
        y[b].d = 1 / iscale;
    }
}

void sn_kernels_kquants_avx2(sn_kernels *k) {
    k->quant[SN_GGML_Q8_K] = quant_q8_K;
    sn_kq_set_q4k_q6k(k, dot_q4_K, gemm_q4_K, dot_q6_K, gemm_q6_K);
    k->type[SN_GGML_Q5_K].dot = k->type[SN_GGML_Q5_K].dot_mm = dot_q5_K;
    k->type[SN_GGML_Q5_K].gemm4x4 = gemm_q5_K;
}
#pragma GCC pop_options
#else
void sn_kernels_kquants_avx2(sn_kernels *k) { (void)k; }
#endif
