/* int4.c - INT4G32 × int8 dot products for the runtime blob (see int4.h for the layout and the
 * arithmetic).
 *
 * Decode is memory-bound: per 32 weights a row holds 16 code bytes + one fp16 scale (0.5625 bytes
 * per weight, read once, sequentially: codes, then the row's scales). The SIMD versions expand a
 * 32-byte chunk into the 64 unsigned 4-bit values of two whole groups (low nibbles = group 2c, high
 * nibbles = group 2c + 1, matching contiguous activation slices) and use the u8×s8 multiply-add
 * instructions. Each group's integer sum Σ u·a is exact; −8·Σ a is subtracted as an integer too, so
 * only the per-group factor w_scale · a_scale and the final accumulation are float.
 *
 * AVX2: eight groups (256 weights) per step. The eight groups' 8-lane partial sums are reduced with
 * a horizontal-add tree into one vector holding one exact sum per group, so the correction, the
 * int→float conversion, the fp16 scale conversion (F16C) and the fma are each one instruction per
 * eight groups instead of per group.
 *
 * Rows are short (576 bytes for 1024 inputs) and the matrix is far larger than the caches, so the
 * hardware prefetcher alone leaves the loop waiting on DRAM; a software prefetch PREFETCH_AHEAD
 * bytes ahead of the code pointer (which runs on into the next rows) keeps it streaming
 * (docs/PERFORMANCE.md). Prefetches never fault, so running
 * past the end of the mapping is harmless. */
#include "int4.h"
#include "cpu.h"
#include "kernels.h"
#include "ggml_types.h"
#include <math.h>
#include <string.h>

/* The three parts of an activation row (int4.h): codes, per-group scales, per-group code sums;
 * act_out for the quantizers that write one, act_view for the dots that read it. */
typedef struct { int8_t *q; float *scale; int32_t *sum; } act_out;
typedef struct { const int8_t *q; const float *scale; const int32_t *sum; } act_view;

static act_out out_view(void *act, int64_t n) {
    act_out v;
    v.q = act;
    v.scale = (float *)(void *)((uint8_t *)act + n);
    v.sum = (int32_t *)(void *)((uint8_t *)act + n + (n / SN_INT4_GROUP) * 4);
    return v;
}

static act_view view(const void *act, int64_t n) {
    const act_out o = out_view((void *)act, n); /* read only */
    const act_view v = {o.q, o.scale, o.sum};
    return v;
}

static const uint16_t *w_scales(const void *w_row, int64_t n) {
    return (const uint16_t *)(const void *)((const uint8_t *)w_row + n / 2);
}

/* The activation quantizer's loop, once for its scalar and SIMD twins: per group of 32 the largest
 * magnitude amax(v), d = amax / 127 and id = 1 / d (0 for an all-zero group), then codes(v, id, q)
 * writes round-half-away(v · id) clamped to ±127 and returns their sum. The twins pass their amax
 * and codes as always_inline functions (inlined through the constant pointers). */
typedef float (*group_amax_fn)(const float *v);
typedef int32_t (*group_codes_fn)(const float *v, float id, int8_t *q);

static inline __attribute__((always_inline)) void quantize_groups(const float *x, void *act, int64_t n,
                                                                  group_amax_fn amax, group_codes_fn codes) {
    const act_out o = out_view(act, n);
    for (int64_t g = 0; g < n / SN_INT4_GROUP; g++) {
        const float *v = x + g * SN_INT4_GROUP;
        const float d = amax(v) / 127.0f, id = d ? 1.0f / d : 0.0f;
        o.sum[g] = codes(v, id, o.q + g * SN_INT4_GROUP);
        o.scale[g] = d;
    }
}

static inline __attribute__((always_inline)) float amax_scalar(const float *v) {
    float amax = 0.0f;
    for (int j = 0; j < SN_INT4_GROUP; j++) amax = fmaxf(amax, fabsf(v[j]));
    return amax;
}

static inline __attribute__((always_inline)) int32_t codes_scalar(const float *v, float id, int8_t *q) {
    int32_t s = 0;
    for (int j = 0; j < SN_INT4_GROUP; j++) {
        int c = (int)roundf(v[j] * id);
        c = c > 127 ? 127 : c < -127 ? -127 : c;
        q[j] = (int8_t)c;
        s += c;
    }
    return s;
}

void sn_int4_quantize_act_scalar(const float *x, void *act, int64_t n) { quantize_groups(x, act, n, amax_scalar, codes_scalar); }

int64_t sn_int4_group_isum_ref(const uint8_t *w_row, const int8_t *aq, int64_t g) {
    const uint8_t *w = w_row + (g / 2) * 32;
    const int sh = (int)(g & 1) * 4;
    const int8_t *q = aq + g * SN_INT4_GROUP;
    int64_t s = 0;
    for (int j = 0; j < 32; j++) s += (int64_t)(((w[j] >> sh) & 15) - 8) * q[j];
    return s;
}

float sn_int4_dot_scalar(int64_t n, const void *w_row, const void *act) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint8_t *w = w_row;
    const uint16_t *sc = w_scales(w_row, n);
    act_view a = view(act, n);
    float acc = 0.0f;
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t *wc = w + (g / 2) * 32;
        const int sh = (int)(g & 1) * 4;
        const int8_t *q = a.q + g * SN_INT4_GROUP;
        int32_t s = 0;
        for (int j = 0; j < 32; j++) s += (int32_t)((wc[j] >> sh) & 15) * q[j];
        s -= 8 * a.sum[g];
        acc += (float)s * (sn_fp16_decode(sc[g]) * a.scale[g]);
    }
    return acc;
}

void sn_int4_gemm4x4_scalar(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                            int64_t ldy) {
    for (int t = 0; t < 4; t++)
        for (int r = 0; r < 4; r++)
            y[t * ldy + r] = sn_int4_dot_scalar(n, (const uint8_t *)w + r * w_row, (const uint8_t *)x + t * x_row);
}

/* ---- 8-row groups ---- */

void sn_int4x8_pack(const uint8_t *rows, int nrows, int64_t n, uint8_t *group) {
    const uint64_t rb = sn_int4_w_row_bytes(n);
    const int64_t nb = n / SN_INT4_GROUP;
    for (int64_t b = 0; b < nb; b++) {
        uint8_t *blk = group + b * SN_INT4X8_BLOCK_BYTES;
        uint16_t sc[SN_INT4X8_ROWS] = {0};
        for (int r = 0; r < SN_INT4X8_ROWS; r++) {
            const uint8_t *row = rows + (uint64_t)r * rb;
            /* row layout: element e of block b sits in chunk b/2, byte e, nibble b&1 */
            uint8_t u[32];
            for (int e = 0; e < 32; e++) u[e] = r < nrows ? (uint8_t)((row[(b / 2) * 32 + e] >> ((b & 1) * 4)) & 15) : 8;
            for (int c = 0; c < 4; c++)
                for (int i = 0; i < 4; i++) blk[c * 32 + 4 * r + i] = (uint8_t)(u[4 * c + i] | (u[16 + 4 * c + i] << 4));
            if (r < nrows) memcpy(&sc[r], row + n / 2 + 2 * b, 2);
        }
        memcpy(blk + 128, sc, sizeof sc);
    }
}

void sn_int4x8_mm_scalar(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                         int64_t ldy) {
    const int64_t nb = n / SN_INT4_GROUP, ng = (nrows + SN_INT4X8_ROWS - 1) / SN_INT4X8_ROWS;
    for (int64_t G = 0; G < ng; G++) {
        const uint8_t *wg = (const uint8_t *)w + (uint64_t)G * sn_int4x8_group_bytes(n);
        for (int64_t t = 0; t < T; t++) {
            const act_view a = view((const uint8_t *)x + (uint64_t)t * x_row, n);
            float acc[SN_INT4X8_ROWS] = {0};
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = wg + b * SN_INT4X8_BLOCK_BYTES;
                const int8_t *q = a.q + b * SN_INT4_GROUP;
                const uint16_t *ws = (const uint16_t *)(const void *)(blk + 128);
                for (int r = 0; r < SN_INT4X8_ROWS; r++) {
                    int32_t s = 0;
                    for (int c = 0; c < 4; c++)
                        for (int i = 0; i < 4; i++) {
                            const uint8_t v = blk[c * 32 + 4 * r + i];
                            s += (int32_t)(v & 15) * q[4 * c + i] + (int32_t)(v >> 4) * q[16 + 4 * c + i];
                        }
                    s -= 8 * a.sum[b];
                    acc[r] = fmaf((float)s, sn_fp16_decode(ws[r]) * a.scale[b], acc[r]);
                }
            }
            for (int r = 0; r < SN_INT4X8_ROWS && G * SN_INT4X8_ROWS + r < nrows; r++) y[t * ldy + G * SN_INT4X8_ROWS + r] = acc[r];
        }
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

#include "simd_avx512.h"

enum { PREFETCH_AHEAD = 1024 };

#define AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

AVX2_TARGET static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* u[2c], u[2c+1]: the low and high nibbles of chunk c (c < 4) = groups 2c and 2c+1 of a block of
 * eight; q: the block's 256 activation codes. Returns Σ u·a of each of the eight groups (lane i =
 * group i). Products fit maddubs' int16 pairs (2·15·127 < 32767); group sums ≤ 32·15·127. */
AVX2_TARGET static inline __m256i isum8(const __m256i *u, const int8_t *q) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i p[8];
    for (int i = 0; i < 8; i++)
        p[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(u[i], _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 * i))), ones);
    /* hadd(a, b) = [a0+a1 a2+a3 b0+b1 b2+b3 | a4+a5 a6+a7 b4+b5 b6+b7]: two levels give, per 128-bit
     * half, the four groups' half sums; the halves are then added across. */
    const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
    const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* Unpacks nch (1..4) chunks into u (missing ones zero). */
AVX2_TARGET static inline void unpack8(const uint8_t *w, int nch, __m256i *u) {
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int c = 0; c < 4; c++) {
        if (c < nch) {
            const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(w + 32 * c));
            u[2 * c] = _mm256_and_si256(b, m4);
            u[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
        } else {
            u[2 * c] = u[2 * c + 1] = _mm256_setzero_si256();
        }
    }
}

/* The last ng % 8 groups of a row as a zero-padded block of eight: scales, sums and codes copied
 * so the full-block arithmetic applies unchanged (zero scales contribute exactly 0). */
typedef struct { uint16_t ws[8]; float as[8]; int32_t sum[8]; int8_t q[256]; } tail8;

static void tail_fill(tail8 *t, const uint16_t *ws, const act_view *a, int64_t g, int64_t cnt) {
    memset(t, 0, sizeof *t);
    memcpy(t->ws, ws + g, (size_t)cnt * 2);
    memcpy(t->as, a->scale + g, (size_t)cnt * 4);
    memcpy(t->sum, a->sum + g, (size_t)cnt * 4);
    memcpy(t->q, a->q + g * SN_INT4_GROUP, (size_t)cnt * SN_INT4_GROUP);
}

/* One block of eight groups into acc: (Σ u·a − 8·Σ a) × (w_scale · a_scale). */
AVX2_TARGET static inline __m256 block8(__m256 acc, const __m256i *u, const int8_t *q, const int32_t *sum,
                                        const uint16_t *ws, const float *as) {
    const __m256i s = _mm256_sub_epi32(isum8(u, q), _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)sum), 3));
    const __m256 f = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)ws)), _mm256_loadu_ps(as));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), f, acc);
}

/* The two table entries over a row kernel ROW(n, w row, tokens, nt, y, ldy) (row_avx2, row_avx512):
 * the dot (one token) and the 4x4 tile (four rows, each meeting the four tokens). */
#define INT4_ENTRIES(TARGET, DOT, GEMM4X4, ROW)                                                                 \
    TARGET float DOT(int64_t n, const void *w_row, const void *act) {                                           \
        const act_view a = view(act, n);                                                                        \
        float y;                                                                                                \
        ROW(n, w_row, &a, 1, &y, 0);                                                                            \
        return y;                                                                                               \
    }                                                                                                           \
    TARGET void GEMM4X4(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,      \
                        int64_t ldy) {                                                                          \
        act_view a[4];                                                                                          \
        for (int t = 0; t < 4; t++) a[t] = view((const uint8_t *)x + t * x_row, n);                             \
        for (int r = 0; r < 4; r++) ROW(n, (const uint8_t *)w + r * w_row, a, 4, y + r, ldy);                  \
    }

/* One row against nt tokens (1 for the dot, 4 for the tile; a constant where inlined): y[t * ldy] =
 * the row's dot with token t. Each block of eight groups is unpacked once and meets every token,
 * and per output the operations are the same, in the same order (so tile = dot, bit for bit). */
AVX2_TARGET static inline __attribute__((always_inline)) void row_avx2(int64_t n, const uint8_t *w, const act_view *a,
                                                                       int nt, float *y, int64_t ldy) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint16_t *ws = w_scales(w, n);
    __m256 acc[4];
    for (int t = 0; t < nt; t++) acc[t] = _mm256_setzero_ps();
    __m256i u[8];
    int64_t g = 0;
    for (; g + 8 <= ng; g += 8) {
        _mm_prefetch((const char *)(w + g * 16) + PREFETCH_AHEAD, _MM_HINT_T0);
        _mm_prefetch((const char *)(w + g * 16) + PREFETCH_AHEAD + 64, _MM_HINT_T0);
        unpack8(w + g * 16, 4, u);
        for (int t = 0; t < nt; t++)
            acc[t] = block8(acc[t], u, a[t].q + g * SN_INT4_GROUP, a[t].sum + g, ws + g, a[t].scale + g);
    }
    if (g < ng) {
        unpack8(w + g * 16, (int)(ng - g) / 2, u);
        for (int t = 0; t < nt; t++) {
            tail8 tl;
            tail_fill(&tl, ws, &a[t], g, ng - g);
            acc[t] = block8(acc[t], u, tl.q, tl.sum, tl.ws, tl.as);
        }
    }
    for (int t = 0; t < nt; t++) y[t * ldy] = hsum256(acc[t]);
}

INT4_ENTRIES(AVX2_TARGET, sn_int4_dot_avx2, sn_int4_gemm4x4_avx2, row_avx2)

/* AVX-512 VNNI: sixteen groups per block, two chunks (four groups) per step. A 64-byte load holds
 * chunks k and k+1: its low nibbles are groups 2k and 2k+2, its high nibbles 2k+1 and 2k+3; two
 * 256-bit lane shuffles of the activation line them up, and each vpdpbusd leaves group partials in
 * lanes 0-7 and 8-15. The −8·Σ a term is each accumulator's starting value (vpdpbusd with a
 * constant 8), so every lane holds an exact integer; the float factors w_scale · a_scale of the
 * sixteen groups are one vector, spread over the lanes by one permute per product. */
#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

typedef struct { __m512i lo, hi; } u512;

/* One two-chunk step: weights (lo, hi) against activation codes q (256 bytes, groups 2k..2k+3);
 * factors f of the block, gi = index of group 2k within the block. */
AVX512_TARGET static inline void step4(__m512 *acc0, __m512 *acc1, u512 u, const int8_t *q, __m512 f, int gi) {
    const __m512i eight = _mm512_set1_epi8(8), zero = _mm512_setzero_si512();
    const __m512i qa = _mm512_loadu_si512((const void *)q), qb = _mm512_loadu_si512((const void *)(q + 64));
    const __m512i ql = _mm512_shuffle_i64x2(qa, qb, 0x44), qh = _mm512_shuffle_i64x2(qa, qb, 0xEE);
    const __m512i pl = _mm512_dpbusd_epi32(_mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, eight, ql)), u.lo, ql);
    const __m512i ph = _mm512_dpbusd_epi32(_mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, eight, qh)), u.hi, qh);
    const __m512i il = _mm512_add_epi32(_mm512_set_epi32(2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_set1_epi32(gi));
    const __m512i ih = _mm512_add_epi32(il, _mm512_set1_epi32(1));
    *acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pl), _mm512_permutexvar_ps(il, f), *acc0);
    *acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ph), _mm512_permutexvar_ps(ih, f), *acc1);
}

/* One single-chunk step (the odd last chunk of a row): groups gi, gi+1 of the block in lanes 0-7, 8-15. */
AVX512_TARGET static inline void step2(__m512 *acc0, __m512i u, const int8_t *q, __m512 f, int gi) {
    const __m512i eight = _mm512_set1_epi8(8), zero = _mm512_setzero_si512();
    const __m512i qv = _mm512_loadu_si512((const void *)q);
    const __m512i p = _mm512_dpbusd_epi32(_mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, eight, qv)), u, qv);
    const __m512i ix = _mm512_add_epi32(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_set1_epi32(gi));
    *acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(ix, f), *acc0);
}

AVX512_TARGET static inline u512 unpack4(const uint8_t *w) {
    const __m512i m4 = _mm512_set1_epi8(15), b = _mm512_loadu_si512((const void *)w);
    u512 u = {_mm512_and_si512(b, m4), _mm512_and_si512(_mm512_srli_epi16(b, 4), m4)};
    return u;
}

AVX512_TARGET static inline __m512i unpack2(const uint8_t *w) {
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)w);
    return _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(b), _mm256_srli_epi16(b, 4), 1), _mm512_set1_epi8(15));
}

/* The factors w_scale · a_scale of the cnt (≤ 16) groups from g0 (the rest 0). */
AVX512_TARGET static inline __m512 factors16(const uint16_t *ws, const float *as, int64_t cnt) {
    const __mmask16 mk = (__mmask16)((1u << cnt) - 1);
    return _mm512_mul_ps(_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mk, ws)), _mm512_maskz_loadu_ps(mk, as));
}

/* One row against nt tokens (1 or 4, a constant where inlined), as row_avx2: per output the
 * operations of the one-token case, in its order. */
AVX512_TARGET static inline __attribute__((always_inline)) void row_avx512(int64_t n, const uint8_t *w, const act_view *a,
                                                                           int nt, float *y, int64_t ldy) {
    const int64_t ng = n / SN_INT4_GROUP;
    const uint16_t *ws = w_scales(w, n);
    __m512 acc0[4], acc1[4];
    for (int t = 0; t < nt; t++) acc0[t] = acc1[t] = _mm512_setzero_ps();
    for (int64_t g0 = 0; g0 < ng; g0 += 16) {
        const int64_t cnt = ng - g0 < 16 ? ng - g0 : 16;
        __m512 f[4];
        for (int t = 0; t < nt; t++) f[t] = factors16(ws + g0, a[t].scale + g0, cnt);
        int64_t gi = 0;
        for (; gi + 4 <= cnt; gi += 4) {
            const int64_t g = g0 + gi;
            _mm_prefetch((const char *)(w + g * 16) + PREFETCH_AHEAD, _MM_HINT_T0);
            const u512 u = unpack4(w + g * 16);
            for (int t = 0; t < nt; t++) step4(&acc0[t], &acc1[t], u, a[t].q + g * SN_INT4_GROUP, f[t], (int)gi);
        }
        if (gi < cnt) {
            const __m512i u = unpack2(w + (g0 + gi) * 16);
            for (int t = 0; t < nt; t++) step2(&acc0[t], u, a[t].q + (g0 + gi) * SN_INT4_GROUP, f[t], (int)gi);
        }
    }
    for (int t = 0; t < nt; t++) y[t * ldy] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[t], acc1[t]));
}

INT4_ENTRIES(AVX512_TARGET, sn_int4_dot_avx512vnni, sn_int4_gemm4x4_avx512vnni, row_avx512)
#undef INT4_ENTRIES

/* The scalar quantizer 8 lanes at a time, bit for bit (the AVX-512 one's method on AVX2): the same
 * amax and products v·id, and roundf's half-away-from-zero rounding rebuilt from a truncation, so
 * codes, scales and sums equal the scalar ones. */
AVX2_TARGET static inline __attribute__((always_inline)) float amax_avx2(const float *v) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < 4; k++) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(v + 8 * k), absmask));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    return _mm_cvtss_f32(m4);
}

AVX2_TARGET static inline __attribute__((always_inline)) int32_t codes_avx2(const float *v, float id, int8_t *q) {
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 signmask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256i lim = _mm256_set1_epi32(127), nlim = _mm256_set1_epi32(-127);
    const __m256 idv = _mm256_set1_ps(id);
    __m256i acc = _mm256_setzero_si256();
    int32_t c32[SN_INT4_GROUP];
    for (int k = 0; k < 4; k++) {
        const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(v + 8 * k), idv);
        __m256 r = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 up = _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(p, r), absmask), half, _CMP_GE_OQ);
        const __m256 sgn = _mm256_or_ps(_mm256_and_ps(p, signmask), one);
        r = _mm256_add_ps(r, _mm256_and_ps(up, sgn));
        const __m256i c = _mm256_min_epi32(_mm256_max_epi32(_mm256_cvttps_epi32(r), nlim), lim);
        _mm256_storeu_si256((__m256i *)(void *)(c32 + 8 * k), c);
        acc = _mm256_add_epi32(acc, c);
    }
    for (int j = 0; j < SN_INT4_GROUP; j++) q[j] = (int8_t)c32[j];
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
    return _mm_cvtsi128_si32(s4);
}

AVX2_TARGET void sn_int4_quantize_act_avx2(const float *x, void *act, int64_t n) {
    quantize_groups(x, act, n, amax_avx2, codes_avx2);
}

/* The scalar quantizer 16 lanes at a time, bit for bit, the same way (x − trunc(x) is exact here). */
#define AVX512F_TARGET __attribute__((target("avx512f")))

AVX512F_TARGET static inline __attribute__((always_inline)) float amax_avx512(const float *v) {
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(_mm512_setzero_ps(), _mm512_abs_ps(_mm512_loadu_ps(v))),
                                              _mm512_abs_ps(_mm512_loadu_ps(v + 16))));
}

AVX512F_TARGET static inline __attribute__((always_inline)) int32_t codes_avx512(const float *v, float id, int8_t *q) {
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512i lim = _mm512_set1_epi32(127), nlim = _mm512_set1_epi32(-127);
    const __m512 idv = _mm512_set1_ps(id);
    __m512i acc = _mm512_setzero_si512();
    for (int k = 0; k < 2; k++) {
        const __m512 p = _mm512_mul_ps(_mm512_loadu_ps(v + 16 * k), idv);
        __m512 r = _mm512_roundscale_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(p, r)), half, _CMP_GE_OQ);
        const __m512 sgn = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(p),
            _mm512_set1_epi32((int)0x80000000u)), _mm512_castps_si512(one)));
        r = _mm512_mask_add_ps(r, up, r, sgn);
        __m512i c = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvttps_epi32(r), nlim), lim);
        _mm_storeu_si128((__m128i *)(void *)(q + 16 * k), _mm512_cvtsepi32_epi8(c));
        acc = _mm512_add_epi32(acc, c);
    }
    return _mm512_reduce_add_epi32(acc);
}

AVX512F_TARGET void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n) {
    quantize_groups(x, act, n, amax_avx512, codes_avx512);
}
#undef AVX512F_TARGET

/* ---- 8-row groups, AVX2 and AVX-512 VNNI (256-bit) ----
 * Per block and token: four 32-byte chunks → 8 nibble vectors (lane = row), each against one
 * broadcast 4-byte activation word; the eight maddubs results add up in int16 (each ≤ 2·15·127,
 * eight of them ≤ 30480), one madd makes the rows' int32 sums. Tokens go in tiles of up to four so
 * an unpacked block meets several tokens. */
static void store_rows(float *y, int64_t ldy, int64_t t, int64_t row0, int64_t nrows, const float *v) {
    for (int r = 0; r < SN_INT4X8_ROWS && row0 + r < nrows; r++) y[t * ldy + row0 + r] = v[r];
}

/* One 8-row group against TT (1..4, a compile-time constant where inlined) tokens a[0..TT): the
 * unpacked block and the accumulators stay in registers. */
#define X8_TILE(TARGET, NAME, ISUM)                                                                               \
    TARGET static inline __attribute__((always_inline)) void NAME(const int TT, int64_t n, const uint8_t *wg,     \
                                                                  const act_view *a, __m256 *acc) {               \
        const int64_t nb = n / SN_INT4_GROUP;                                                                     \
        const __m256i m4 = _mm256_set1_epi8(15);                                                                  \
        _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) acc[t] = _mm256_setzero_ps();                        \
        for (int64_t b = 0; b < nb; b++) {                                                                        \
            const uint8_t *blk = wg + b * SN_INT4X8_BLOCK_BYTES;                                                  \
            _mm_prefetch((const char *)blk + PREFETCH_AHEAD, _MM_HINT_T0);                                        \
            _mm_prefetch((const char *)blk + PREFETCH_AHEAD + 64, _MM_HINT_T0);                                   \
            __m256i u[8];                                                                                         \
            _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {                                                 \
                const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(blk + 32 * c));              \
                u[2 * c] = _mm256_and_si256(v, m4);                                                               \
                u[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);                                     \
            }                                                                                                     \
            const __m256 ws = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(blk + 128)));       \
            _Pragma("GCC unroll 4") for (int t = 0; t < TT; t++) {                                                \
                const int8_t *q = a[t].q + b * SN_INT4_GROUP;                                                     \
                __m256i s = ISUM(u, q);                                                                           \
                s = _mm256_sub_epi32(s, _mm256_set1_epi32(8 * a[t].sum[b]));                                      \
                const __m256 f = _mm256_mul_ps(ws, _mm256_set1_ps(a[t].scale[b]));                                \
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), f, acc[t]);                                       \
            }                                                                                                     \
        }                                                                                                         \
    }

/* The 8-row groups in turn, tokens in tiles of up to four (TILE: an X8_TILE). */
#define X8_MM_BODY(TILE)                                                                                          \
    const int64_t ng = (nrows + SN_INT4X8_ROWS - 1) / SN_INT4X8_ROWS;                                             \
    for (int64_t G = 0; G < ng; G++) {                                                                            \
        const uint8_t *wg = (const uint8_t *)w + (uint64_t)G * sn_int4x8_group_bytes(n);                          \
        for (int64_t t0 = 0; t0 < T; t0 += 4) {                                                                   \
            const int nt = T - t0 < 4 ? (int)(T - t0) : 4;                                                       \
            act_view a[4];                                                                                        \
            __m256 acc[4];                                                                                        \
            for (int t = 0; t < nt; t++) a[t] = view((const uint8_t *)x + (uint64_t)(t0 + t) * x_row, n);         \
            switch (nt) {                                                                                         \
            case 4: TILE(4, n, wg, a, acc); break;                                                                \
            case 3: TILE(3, n, wg, a, acc); break;                                                                \
            case 2: TILE(2, n, wg, a, acc); break;                                                                \
            default: TILE(1, n, wg, a, acc); break;                                                               \
            }                                                                                                     \
            for (int t = 0; t < nt; t++) {                                                                        \
                float v[8];                                                                                       \
                _mm256_storeu_ps(v, acc[t]);                                                                      \
                store_rows(y, ldy, t0 + t, G * SN_INT4X8_ROWS, nrows, v);                                         \
            }                                                                                                     \
        }                                                                                                         \
    }

static inline int32_t word(const int8_t *q) { int32_t v; memcpy(&v, q, 4); return v; }

AVX2_TARGET static inline __m256i isum_x8_avx2(const __m256i *u, const int8_t *q) {
    __m256i s16 = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(u[2 * c], _mm256_set1_epi32(word(q + 4 * c))));
        s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(u[2 * c + 1], _mm256_set1_epi32(word(q + 16 + 4 * c))));
    }
    return _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
}

X8_TILE(AVX2_TARGET, x8_tile_avx2, isum_x8_avx2)

AVX2_TARGET void sn_int4x8_mm_avx2(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                                   float *y, int64_t ldy) {
    X8_MM_BODY(x8_tile_avx2)
}

__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))
static inline __m256i isum_x8_vnni(const __m256i *u, const int8_t *q) {
    __m256i s = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        s = _mm256_dpbusd_epi32(s, u[2 * c], _mm256_set1_epi32(word(q + 4 * c)));
        s = _mm256_dpbusd_epi32(s, u[2 * c + 1], _mm256_set1_epi32(word(q + 16 + 4 * c)));
    }
    return s;
}

X8_TILE(__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni"))), x8_tile_vnni, isum_x8_vnni)

__attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512vnni")))
static void x8_mm_vnni(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy) {
    X8_MM_BODY(x8_tile_vnni)
}
#undef X8_MM_BODY
#undef X8_TILE

/* Two groups at once on AVX-512, one in each 256-bit half of every vector: each lane's integers
 * and float steps are the 8-row body's, 16 rows per instruction (one broadcast activation word
 * meets both groups). Pair P is groups P and P + npairs: two streams far apart, since two
 * neighbouring groups read together decoded slower than one stream (kernels.h sn_k_mv_quarters,
 * docs/PERFORMANCE.md). Groups [0, 2 npairs) of w, rows [0, nrows) of them stored. */
#define X16_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

/* The 16 rows' integer sums of one block against a token's 32 codes q, minus 8 x their sum: four
 * chains of two VPDPBUSD (the first seeded with -8 * sum) instead of one chain of eight, so a
 * block's sums wait out two instruction latencies, not eight. Integer adds: the same sums in any
 * order (each lane's magnitude <= 32 * 15 * 127 + 8 * 32 * 127). */
X16_TARGET static inline __m512i isum_x16_vnni(const __m512i *u, const int8_t *q, int32_t sum) {
    const __m512i z = _mm512_setzero_si512();
    __m512i s0 = _mm512_dpbusd_epi32(_mm512_set1_epi32(-8 * sum), u[0], _mm512_set1_epi32(word(q)));
    __m512i s1 = _mm512_dpbusd_epi32(z, u[2], _mm512_set1_epi32(word(q + 4)));
    __m512i s2 = _mm512_dpbusd_epi32(z, u[1], _mm512_set1_epi32(word(q + 16)));
    __m512i s3 = _mm512_dpbusd_epi32(z, u[3], _mm512_set1_epi32(word(q + 20)));
    s0 = _mm512_dpbusd_epi32(s0, u[4], _mm512_set1_epi32(word(q + 8)));
    s1 = _mm512_dpbusd_epi32(s1, u[6], _mm512_set1_epi32(word(q + 12)));
    s2 = _mm512_dpbusd_epi32(s2, u[5], _mm512_set1_epi32(word(q + 24)));
    s3 = _mm512_dpbusd_epi32(s3, u[7], _mm512_set1_epi32(word(q + 28)));
    return _mm512_add_epi32(_mm512_add_epi32(s0, s1), _mm512_add_epi32(s2, s3));
}

/* One block of two groups (g0's in the low 256 bits, g1's in the high): codes into u[0..7] (u[2c],
 * u[2c + 1]: chunk c's low and high nibbles), the 16 rows' fp16 scales returned as floats. */
X16_TARGET static inline __attribute__((always_inline)) __m512 x16_unpack(const uint8_t *b0, const uint8_t *b1,
                                                                         __m512i m4, __m512i *u) {
    _Pragma("GCC unroll 4") for (int c = 0; c < 4; c++) {
        const __m512i v = sn_avx512_join256(b0 + 32 * c, b1 + 32 * c);
        u[2 * c] = _mm512_and_si512(v, m4);
        u[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
    return _mm512_cvtph_ps(_mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(b0 + 128))),
        _mm_loadu_si128((const __m128i *)(const void *)(b1 + 128)), 1));
}

/* Pair P of the groups against TT (1..X16_TT, a compile-time constant where inlined) tokens from
 * t0, so the unpacked block and the accumulators stay in registers. pf: software prefetch ahead of
 * both streams, off with far streams (tuning.far_streams, AMD): there the hardware prefetchers follow two far
 * streams and the software prefetch only cost time (docs/PERFORMANCE.md). */
X16_TARGET static inline __attribute__((always_inline)) void x16_pair_tile(const int TT, int pf, int64_t n,
                                                                           const uint8_t *g0, const uint8_t *g1,
                                                                           const act_view *a, __m512 *acc) {
    const int64_t nb = n / SN_INT4_GROUP;
    const __m512i m4 = _mm512_set1_epi8(15);
    _Pragma("GCC unroll 8") for (int t = 0; t < TT; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *b0 = g0 + b * SN_INT4X8_BLOCK_BYTES, *b1 = g1 + b * SN_INT4X8_BLOCK_BYTES;
        if (pf) {
            _mm_prefetch((const char *)b0 + PREFETCH_AHEAD, _MM_HINT_T0);
            _mm_prefetch((const char *)b0 + PREFETCH_AHEAD + 64, _MM_HINT_T0);
            _mm_prefetch((const char *)b1 + PREFETCH_AHEAD, _MM_HINT_T0);
            _mm_prefetch((const char *)b1 + PREFETCH_AHEAD + 64, _MM_HINT_T0);
        }
        __m512i u[8];
        const __m512 ws = x16_unpack(b0, b1, m4, u);
        _Pragma("GCC unroll 8") for (int t = 0; t < TT; t++) {
            const __m512i s = isum_x16_vnni(u, a[t].q + b * SN_INT4_GROUP, a[t].sum[b]);
            const __m512 f = _mm512_mul_ps(ws, _mm512_set1_ps(a[t].scale[b]));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), f, acc[t]);
        }
    }
}

enum { X16_TT = 4 };

X16_TARGET static void x16_pairs_vnni(int64_t n, const uint8_t *w, int64_t npairs, int64_t nrows, const void *x,
                                      uint64_t x_row, int64_t T, float *y, int64_t ldy, int pf) {
    const uint64_t gb = sn_int4x8_group_bytes(n);
    for (int64_t P = 0; P < npairs; P++) {
        const uint8_t *g0 = w + (uint64_t)P * gb, *g1 = w + (uint64_t)(P + npairs) * gb;
        const int64_t hi0 = 8 * (P + npairs), hin = nrows - hi0 >= 8 ? 8 : nrows - hi0; /* rows of g1 kept */
        const __mmask8 keep = (__mmask8)((1u << hin) - 1);
        for (int64_t t0 = 0; t0 < T; t0 += X16_TT) {
            const int nt = T - t0 < X16_TT ? (int)(T - t0) : X16_TT;
            act_view a[X16_TT];
            __m512 acc[X16_TT];
            for (int t = 0; t < nt; t++) a[t] = view((const uint8_t *)x + (uint64_t)(t0 + t) * x_row, n);
            switch (nt) {
            case 4: x16_pair_tile(4, pf, n, g0, g1, a, acc); break;
            case 3: x16_pair_tile(3, pf, n, g0, g1, a, acc); break;
            case 2: x16_pair_tile(2, pf, n, g0, g1, a, acc); break;
            default: x16_pair_tile(1, pf, n, g0, g1, a, acc); break;
            }
            for (int t = 0; t < nt; t++) {
                _mm256_storeu_ps(y + (t0 + t) * ldy + 8 * P, _mm512_castps512_ps256(acc[t]));
                _mm256_mask_storeu_ps(y + (t0 + t) * ldy + hi0, keep, _mm512_extractf32x8_ps(acc[t], 1));
            }
        }
    }
}

/* One token (decode) with far streams: four streams, groups Q, Q + nq, Q + 2 nq, Q + 3 nq,
 * as two pair tiles stepped block by block together. Each lane does the pair tile's operations, so
 * every output is bit for bit what x16_pairs_vnni gives. Four streams read memory faster than two
 * (kernels.h sn_k_mv_quarters; numbers in docs/PERFORMANCE.md); each stream's lines are also
 * prefetched once, ahead (kernels.h sn_k_stream). Groups [0, 4 nq) of w, rows [0, nrows) stored. */
X16_TARGET static void x16_quads_vnni(int64_t n, const uint8_t *w, int64_t nq, int64_t nrows, const void *x,
                                      float *y) {
    const uint64_t gb = sn_int4x8_group_bytes(n);
    const int64_t nb = n / SN_INT4_GROUP;
    const __m512i m4 = _mm512_set1_epi8(15);
    const act_view a = view(x, n);
    sn_k_stream pf[4]; /* kernels.h: each stream's lines once, SN_K_STREAM_AHEAD bytes before they are read */
    for (int i = 0; i < 4; i++) pf[i] = sn_k_stream_start(w + (uint64_t)(i * nq) * gb, (uint64_t)nq * gb, SN_K_LINE, SN_K_STREAM_AHEAD);
    for (int64_t Q = 0; Q < nq; Q++) {
        const uint8_t *g[4];
        for (int i = 0; i < 4; i++) g[i] = w + (uint64_t)(Q + i * nq) * gb;
        __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
        for (int64_t b = 0; b < nb; b++) {
            const uint64_t o = (uint64_t)b * SN_INT4X8_BLOCK_BYTES;
            for (int i = 0; i < 4; i++) sn_k_stream_to(&pf[i], g[i] + o + SN_INT4X8_BLOCK_BYTES);
            __m512i u[2][8];
            const __m512 ws0 = x16_unpack(g[0] + o, g[1] + o, m4, u[0]), ws1 = x16_unpack(g[2] + o, g[3] + o, m4, u[1]);
            const __m512 as = _mm512_set1_ps(a.scale[b]);
            const __m512i s0 = isum_x16_vnni(u[0], a.q + b * SN_INT4_GROUP, a.sum[b]);
            const __m512i s1 = isum_x16_vnni(u[1], a.q + b * SN_INT4_GROUP, a.sum[b]);
            acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_mul_ps(ws0, as), acc[0]);
            acc[1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), _mm512_mul_ps(ws1, as), acc[1]);
        }
        for (int i = 0; i < 4; i++) { /* group Q + i nq: half i % 2 of acc[i / 2] */
            const int64_t r0 = 8 * (Q + i * nq), keep = nrows - r0 >= 8 ? 8 : nrows - r0;
            const __m256 v = i % 2 ? _mm512_extractf32x8_ps(acc[i / 2], 1) : _mm512_castps512_ps256(acc[i / 2]);
            _mm256_mask_storeu_ps(y + r0, (__mmask8)((1u << keep) - 1), v);
        }
    }
}
#undef X16_TARGET

static void x16_mm_vnni(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                        int64_t ldy, int far) {
    int64_t ng = (nrows + SN_INT4X8_ROWS - 1) / SN_INT4X8_ROWS;
    if (T == 1 && ng >= 8 && far) { /* the quads, then the last ng % 4 groups below */
        const int64_t nq = ng / 4;
        x16_quads_vnni(n, w, nq, nrows < 32 * nq ? nrows : 32 * nq, x, y);
        w = (const uint8_t *)w + (uint64_t)(4 * nq) * sn_int4x8_group_bytes(n);
        nrows -= 32 * nq;
        y += 32 * nq;
        ng -= 4 * nq;
    }
    const int64_t np = ng / 2;
    if (np) x16_pairs_vnni(n, w, np, nrows < 16 * np ? nrows : 16 * np, x, x_row, T, y, ldy, !far);
    if (ng % 2) /* a lone last group */
        x8_mm_vnni(n, (const uint8_t *)w + (uint64_t)(2 * np) * sn_int4x8_group_bytes(n), nrows - 16 * np, x, x_row, T,
                   y + 16 * np, ldy);
}
void sn_int4x8_mm_avx512vnni(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                             float *y, int64_t ldy) {
    x16_mm_vnni(n, w, nrows, x, x_row, T, y, ldy, 0);
}
void sn_int4x8_mm_avx512vnni_far(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                                 float *y, int64_t ldy) {
    x16_mm_vnni(n, w, nrows, x, x_row, T, y, ldy, 1);
}
#else
void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n) { sn_int4_quantize_act_scalar(x, act, n); }
void sn_int4_quantize_act_avx2(const float *x, void *act, int64_t n) { sn_int4_quantize_act_scalar(x, act, n); }
float sn_int4_dot_avx2(int64_t n, const void *w_row, const void *act) { return sn_int4_dot_scalar(n, w_row, act); }
float sn_int4_dot_avx512vnni(int64_t n, const void *w_row, const void *act) { return sn_int4_dot_scalar(n, w_row, act); }
void sn_int4_gemm4x4_avx2(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                          int64_t ldy) { sn_int4_gemm4x4_scalar(n, w, w_row, x, x_row, y, ldy); }
void sn_int4_gemm4x4_avx512vnni(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                                int64_t ldy) { sn_int4_gemm4x4_scalar(n, w, w_row, x, x_row, y, ldy); }
void sn_int4x8_mm_avx2(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy) { sn_int4x8_mm_scalar(n, w, nrows, x, x_row, T, y, ldy); }
void sn_int4x8_mm_avx512vnni(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                             float *y, int64_t ldy) { sn_int4x8_mm_scalar(n, w, nrows, x, x_row, T, y, ldy); }
void sn_int4x8_mm_avx512vnni_far(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                                 float *y, int64_t ldy) { sn_int4x8_mm_scalar(n, w, nrows, x, x_row, T, y, ldy); }
#endif
