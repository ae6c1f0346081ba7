/* quants_avx2.c - AVX2 twins of quants_scalar.c (Q4_1, Q5_0, Q5_1, Q2_K, Q3_K dots; Q5_K's is in kquants_avx2.c), and
 * the Q4_1 / Q5_0 / Q5_1 batches run as Q8_0 rows (kernels.h mm_as_q8_0; the AVX-512 table keeps it, its
 * Q8_0 kernels being its own VNNI ones). The dots: the
 * same exact integer per lane and the same float steps in the same order, so the results are
 * bit-identical to the scalar reference (tests/unit/test_quants.c). The integer products use
 * maddubs (unsigned weights x signed activations; every pair sum fits in int16 here: at most
 * 2 * 31 * 127) and madd with the scales, as ggml does; lane L of a 32-byte group ends up holding
 * bytes 4L..4L+3, which is the lane layout the scalar code spells out. Compiled for AVX2 via a
 * target pragma and only reached from the AVX2 / AVX-512 tables (cpu.c checked the CPU). */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "kquant_dots.h"
#include "quants.h"

#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define h2f(x) _cvtsh_ss(x)

/* 32 nibbles of 16 bytes: value j < 16 = low nibble of byte j, j >= 16 = high nibble of byte j-16 */
static inline __m256i nibbles32(const uint8_t *qs) {
    const __m128i t = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0xF));
}

/* byte j = 0x10 if bit j of the 32-bit word is set, else 0 */
static inline __m256i bits32(const uint8_t *p) {
    uint32_t x;
    memcpy(&x, p, 4);
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x), shuf);
    b = _mm256_and_si256(b, _mm256_set1_epi64x((long long)0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(b, _mm256_set1_epi64x((long long)0x8040201008040201ull)), _mm256_set1_epi8(0x10));
}

/* 8 int32 lanes: lane L = sum of u[4L+k] * s[4L+k] (u unsigned bytes, s signed) */
static inline __m256i udot(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

/* Q4_1 / Q5_0 / Q5_1 as in quants_scalar.c's dot32 (type: a constant in each caller). */
static inline __attribute__((always_inline)) float dot32(int type, int64_t n, const void *vw, const void *va) {
    const int has_min = type != SN_GGML_Q5_0;
    __m256 acc = _mm256_setzero_ps();
    float summs = 0;
    for (int64_t b = 0; b < n / 32; b++) {
        const sn_kq_blk32 w = sn_kq_blk32_at(type, vw, b);
        const sn_kq_act32 a = sn_kq_act32_at(type, va, b);
        if (has_min) summs = fmaf(h2f(w.m), h2f(a.s), summs);
        const __m256 d = _mm256_set1_ps(h2f(w.d) * h2f(a.d));
        __m256i q = nibbles32(w.qs);
        if (type != SN_GGML_Q4_1) q = _mm256_or_si256(q, bits32(w.qh)); /* 0..31 */
        const __m256i y = _mm256_loadu_si256((const __m256i *)a.qs);
        __m256i l = udot(q, y);
        /* Q5_0: (q - 16) * y = q * y - 16 * y, lane by lane, exactly */
        if (!has_min) l = _mm256_sub_epi32(l, _mm256_slli_epi32(udot(_mm256_set1_epi8(1), y), 4));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(l), acc);
    }
    return has_min ? sn_avx2_hsum8(acc) + summs : sn_avx2_hsum8(acc);
}

static float dot_q4_1(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q4_1, n, w, a); }
static float dot_q5_0(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q5_0, n, w, a); }
static float dot_q5_1(int64_t n, const void *w, const void *a) { return dot32(SN_GGML_Q5_1, n, w, a); }

/* ---- Q4_1 / Q5_0 / Q5_1 batches as Q8_0 (kernels.h mm_as_q8_0) ---- */

/* The nb blocks of a row as Q8_0 blocks: the same f16 scale, values q - 16 (Q5_0) or q. */
static inline __attribute__((always_inline)) void to_q8_0(int type, const void *vw, sn_block_q8_0 *dst, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const sn_kq_blk32 w = sn_kq_blk32_at(type, vw, b);
        __m256i q = nibbles32(w.qs);
        if (type != SN_GGML_Q4_1) q = _mm256_or_si256(q, bits32(w.qh));
        if (type == SN_GGML_Q5_0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
        dst[b].d = w.d;
        _mm256_storeu_si256((__m256i *)dst[b].qs, q);
    }
}

/* Rows are widened a group of about GROUP_BYTES at a time (it stays in L2 while every token meets it). */
enum { GROUP_BYTES = 128 * 1024 };

static inline __attribute__((always_inline)) int mm_as_q8_0_t(int type, const sn_kernels *k, const char *w,
                                                              uint64_t w_row, int64_t n, const void *x, uint64_t x_row,
                                                              int64_t T, float *y, int64_t ldy, int64_t r0, int64_t r1) {
    const int has_min = type != SN_GGML_Q5_0;
    const int64_t nb = n / 32, t8 = (T + 7) & ~(int64_t)7;
    const uint64_t row8 = (uint64_t)nb * sizeof(sn_block_q8_0);
    int64_t g = (int64_t)(GROUP_BYTES / row8) / 16 * 16;
    if (g < 16) g = 16;
    if (g > r1 - r0) g = r1 - r0;
    /* the weight group; for the "_1" types also the activations as Q8_0 rows and their s terms as
     * floats, sa[b * t8 + t] (tokens past T: 0) */
    const size_t wbytes = (size_t)g * row8, xbytes = has_min ? (size_t)T * row8 : 0;
    char *buf = malloc(wbytes + xbytes + (has_min ? (size_t)(nb * t8) * sizeof(float) + 32 : 0));
    if (!buf) return 0;
    const char *xa = x;
    uint64_t xa_row = x_row;
    float *sa = NULL;
    if (has_min) {
        sa = (float *)(((uintptr_t)(buf + wbytes + xbytes) + 31) & ~(uintptr_t)31);
        for (int64_t t = 0; t < t8; t++) {
            const sn_block_q8_1 *a = (const sn_block_q8_1 *)((const char *)x + (uint64_t)(t < T ? t : 0) * x_row);
            sn_block_q8_0 *o = (sn_block_q8_0 *)(buf + wbytes + (uint64_t)t * row8);
            for (int64_t b = 0; b < nb; b++) {
                sa[b * t8 + t] = t < T ? h2f(a[b].s) : 0.0f;
                if (t >= T) continue;
                o[b].d = a[b].d;
                memcpy(o[b].qs, a[b].qs, 32);
            }
        }
        xa = buf + wbytes;
        xa_row = row8;
    }
    for (int64_t r = r0; r < r1; r += g) {
        const int64_t re = r + g < r1 ? r + g : r1;
        for (int64_t i = r; i < re; i++) to_q8_0(type, w + (uint64_t)i * w_row, (sn_block_q8_0 *)(buf + (uint64_t)(i - r) * row8), nb);
        sn_matmul(k, SN_GGML_Q8_0, buf, row8, n, xa, xa_row, T, y + r, ldy, 0, re - r);
        if (!has_min) continue;
        /* dot32's min term: the chain summs = fma(m_w, s_a, summs) over the blocks, added to hsum8 */
        for (int64_t i = r; i < re; i++) {
            const char *wr = w + (uint64_t)i * w_row;
            for (int64_t t = 0; t < T; t += 8) {
                __m256 s = _mm256_setzero_ps();
                for (int64_t b = 0; b < nb; b++)
                    s = _mm256_fmadd_ps(_mm256_set1_ps(h2f(sn_kq_blk32_at(type, wr, b).m)), _mm256_load_ps(sa + b * t8 + t), s);
                float sv[8];
                _mm256_storeu_ps(sv, s);
                for (int64_t j = 0; j < 8 && t + j < T; j++) y[(t + j) * ldy + i] += sv[j];
            }
        }
    }
    free(buf);
    return 1;
}

static int mm_as_q8_0(const sn_kernels *k, int wtype, const void *w, uint64_t w_row, int64_t n, const void *x,
                      uint64_t x_row, int64_t T, float *y, int64_t ldy, int64_t r0, int64_t r1) {
    if (n % 32 || r1 <= r0) return 0;
    if (wtype == SN_GGML_Q5_0) return mm_as_q8_0_t(SN_GGML_Q5_0, k, w, w_row, n, x, x_row, T, y, ldy, r0, r1);
    if (wtype == SN_GGML_Q5_1) return mm_as_q8_0_t(SN_GGML_Q5_1, k, w, w_row, n, x, x_row, T, y, ldy, r0, r1);
    if (wtype == SN_GGML_Q4_1) return mm_as_q8_0_t(SN_GGML_Q4_1, k, w, w_row, n, x, x_row, T, y, ldy, r0, r1);
    return 0;
}

/* 16 int16 copies of scale s in the low lane half and t in the high one */
static inline __m256i two_scales(int s, int t) { return _mm256_set_m128i(_mm_set1_epi16((short)t), _mm_set1_epi16((short)s)); }

/* Q3_K, and Q2_K where ggml does not repack it (type: a constant in each caller), as quants_scalar.c's
 * dot_k8: both keep 2-bit values the same way (32-value group g = 4h + j: bits 2j of qs[32h..]);
 * Q3_K subtracts 4 where its hmask bit is clear, Q2_K fma's its min terms into the lanes first. */
static inline __attribute__((always_inline)) float dot_k2bit(int type, int64_t n, const void *vw, const void *va) {
    const sn_block_q8_K *a = va;
    __m256 acc = _mm256_setzero_ps();
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < n / 256; b++) {
        int8_t sc[16];
        const uint8_t *qs;
        __m256i hb = _mm256_setzero_si256();
        float d;
        if (type == SN_GGML_Q3_K) {
            const sn_block_q3_K *w = (const sn_block_q3_K *)vw + b;
            sn_q3_K_scales(w->scales, sc);
            hb = _mm256_loadu_si256((const __m256i *)w->hmask);
            qs = w->qs;
            d = a[b].d * h2f(w->d);
        } else {
            const sn_block_q2_K *w = (const sn_block_q2_K *)vw + b;
            const float dmin = -a[b].d * h2f(w->dmin);
            const __m128i ms = _mm_loadu_si128((const __m128i *)w->scales);
            const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(ms, 4), _mm_set1_epi8(0xF)));
            const __m256i prod = _mm256_madd_epi16(mins, _mm256_loadu_si256((const __m256i *)a[b].bsums));
            acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(prod), acc);
            for (int i = 0; i < 16; i++) sc[i] = (int8_t)(w->scales[i] & 0xF);
            qs = w->qs;
            d = a[b].d * h2f(w->d);
        }
        __m256i sumi = _mm256_setzero_si256();
        for (int g = 0; g < 8; g++) {
            const int h = g / 4, j = g % 4;
            const __m256i bits = _mm256_loadu_si256((const __m256i *)(qs + 32 * h));
            const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * j), m3);
            const __m256i y = _mm256_loadu_si256((const __m256i *)(a[b].qs + 32 * g));
            __m256i p = _mm256_maddubs_epi16(q, y);
            if (type == SN_GGML_Q3_K) { /* 4 where the high bit is clear: value = q - 4 * (1 - hbit) */
                const __m256i hclr = _mm256_andnot_si256(_mm256_srli_epi16(hb, 4 * h + j), one);
                p = _mm256_sub_epi16(p, _mm256_maddubs_epi16(_mm256_slli_epi16(hclr, 2), y));
            }
            sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, two_scales(sc[2 * g], sc[2 * g + 1])));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return sn_avx2_hsum8(acc);
}

static float dot_q3_K(int64_t n, const void *w, const void *a) { return dot_k2bit(SN_GGML_Q3_K, n, w, a); }
static float dot_q2_K_lanes(int64_t n, const void *w, const void *a) { return dot_k2bit(SN_GGML_Q2_K, n, w, a); }

/* Q2_K: the exact scale and min integers of half h, as in the scalar q2_K_half */
static inline void q2_K_half(const sn_block_q2_K *x, const sn_block_q8_K *a, int h, int *isum, int *msum) {
    const __m256i bits = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * h)), m3 = _mm256_set1_epi8(3);
    __m256i s = _mm256_setzero_si256();
    int ms = 0;
    for (int j = 0; j < 4; j++) {
        const int s0 = 8 * h + 2 * j;
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * j), m3);
        const __m256i y = _mm256_loadu_si256((const __m256i *)(a->qs + 128 * h + 32 * j));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), two_scales(x->scales[s0] & 0xF, x->scales[s0 + 1] & 0xF)));
        ms += (x->scales[s0] >> 4) * a->bsums[s0] + (x->scales[s0 + 1] >> 4) * a->bsums[s0 + 1];
    }
    *isum = sn_avx2_hsum_i32(s);
    *msum = ms;
}

static float dot_q2_K(int64_t n, const void *w, const void *a) { return sn_kq_q2_K_dot(n, w, a, 0, q2_K_half); }
static float dot_q2_K_mm(int64_t n, const void *w, const void *a) { return sn_kq_q2_K_dot(n, w, a, 1, q2_K_half); }

void sn_kernels_quants_avx2(sn_kernels *k) {
    sn_kernels_quants_scalar(k); /* the Q8_1 conversion and anything not twinned below */
    k->type[SN_GGML_Q4_1].dot = k->type[SN_GGML_Q4_1].dot_mm = dot_q4_1;
    k->type[SN_GGML_Q5_0].dot = k->type[SN_GGML_Q5_0].dot_mm = dot_q5_0;
    k->type[SN_GGML_Q5_1].dot = k->type[SN_GGML_Q5_1].dot_mm = dot_q5_1;
    k->type[SN_GGML_Q3_K].dot = k->type[SN_GGML_Q3_K].dot_mm = dot_q3_K;
    k->mm_as_q8_0 = mm_as_q8_0; /* their batches through the table's Q8_0 batch kernels (sn_matmul) */
    sn_kq_set_q2_K(k, dot_q2_K, dot_q2_K_mm, dot_q2_K_lanes);
    sn_kernels_iq4_avx2(k); /* IQ4_NL / IQ4_XS (iq4_avx2.c) */
    sn_kernels_mxfp4_x86(k, 0);
}
#pragma GCC pop_options
#else
void sn_kernels_quants_avx2(sn_kernels *k) { sn_kernels_quants_scalar(k); }
#endif
