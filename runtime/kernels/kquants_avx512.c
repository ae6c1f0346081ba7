/* kquants_avx512.c - Q4_K and Q6_K dots against Q8_K activations, 512 bits wide with VNNI
 * (vpdpwssd), for the AVX-512 table.
 *
 * Same results as kquants_avx2.c and scalar.c, bit for bit: the integer work per block is exact
 * whatever its order, so only its width changes (64 values per instruction instead of 32), while
 * the float steps stay ggml's - for Q4_K one fma per block into each of its two sums (the order of
 * llama.cpp's repacked q4_K_8x8 gemv), for Q6_K the 8 integer lanes of ggml's AVX2 vec_dot (the
 * 16 lanes here fold into those 8 with one exact add) and one 8-lane fma per block. The nibbles
 * are unpacked from a broadcast 32-byte load with per-half shift counts, so each 64-byte vector
 * meets 64 contiguous activations and no activation shuffle is needed. Tests: test_kernels.c
 * compares these with the scalar twins. Reached only from the AVX-512 table, when cpu.c found
 * AVX512-VNNI. */
#include "kernels.h"

#include "quants.h"

#if defined(__x86_64__) || defined(__i386__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")
#include "kquants_x86.h"
#include "simd_avx2.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define h2f(x) _cvtsh_ss(x)

/* pshufb patterns over a register whose 128-bit quarters each hold the same 8 int16 values:
 * PICK2[j] puts value 2j in every int16 of quarters 0-1 and value 2j+1 in quarters 2-3 (a Q4_K
 * sub-block pair); PICK4[k] puts value 4k+q in every int16 of quarter q (4 Q6_K scales). */
#define W2(j) 2 * (j), 2 * (j) + 1
#define Q8(j) W2(j), W2(j), W2(j), W2(j), W2(j), W2(j), W2(j), W2(j)
static const uint8_t PICK2[4][64] __attribute__((aligned(64))) = {
    {Q8(0), Q8(0), Q8(1), Q8(1)}, {Q8(2), Q8(2), Q8(3), Q8(3)}, {Q8(4), Q8(4), Q8(5), Q8(5)}, {Q8(6), Q8(6), Q8(7), Q8(7)}};
static const uint8_t PICK4[2][64] __attribute__((aligned(64))) = {{Q8(0), Q8(1), Q8(2), Q8(3)}, {Q8(4), Q8(5), Q8(6), Q8(7)}};
#undef Q8
#undef W2
static inline __m512i pick2(__m512i v, int j) { return _mm512_shuffle_epi8(v, _mm512_load_si512(PICK2[j])); }
static inline __m512i pick4(__m512i v, int k) { return _mm512_shuffle_epi8(v, _mm512_load_si512(PICK4[k])); }

/* int16 shift counts: the low 256 bits by lo, the high 256 bits by hi */
static inline __m512i halves16(short lo, short hi) {
    return _mm512_inserti64x4(_mm512_set1_epi16(lo), _mm256_set1_epi16(hi), 1);
}

static inline __m128i hsum4_i32(__m128i v0, __m128i v1, __m128i v2, __m128i v3) {
    return _mm_hadd_epi32(_mm_hadd_epi32(v0, v1), _mm_hadd_epi32(v2, v3));
}
static inline __m128i fold512(__m512i v) { /* 16 lanes -> 4 partial sums (exact) */
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* ---- Q4_K ---- */

/* sum over the block of scale * nibble * activation, as 16 int32 lanes (exact); s16: the block's 8
 * scales as int16, the same in every 128-bit quarter */
static inline __m512i q4k_block_lanes_s16(const sn_block_q4_K *w, const int8_t *q8, __m512i s16) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), shift = halves16(0, 4);
    __m512i acc = _mm512_setzero_si512();
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
        const __m512i raw = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w->qs + 32 * j)));
        const __m512i q = _mm512_and_si512(_mm512_srlv_epi16(raw, shift), m4); /* [sub-block 2j | 2j+1] */
        const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512(q8 + 64 * j));
        acc = _mm512_dpwssd_epi32(acc, p, pick2(s16, j));
    }
    return acc;
}
static inline __m512i q4k_block_lanes(const sn_block_q4_K *w, const int8_t *q8, __m128i sc) {
    return q4k_block_lanes_s16(w, q8, _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sc)));
}

/* lane 4r + t = sum of the 4 int32 of quarter r of v[t] */
static inline __m512i reduce4x4(const __m512i v[4]) {
    const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
    const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2], v[3]), _mm512_unpackhi_epi32(v[2], v[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
}

/* sn_kq_q4k_scales with vector instructions, for 4 blocks at once: each block's 12 scale bytes (and
 * 4 bytes of qs after them) in 128-bit quarter k, shuffled so that [scales 0-7 | mins 0-7] come out
 * of 2 shuffles, 2 shifts and masks. */
static inline __m512i q4k_scales_vec4(const sn_block_q4_K *w) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)w[0].scales));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)w[1].scales), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)w[2].scales), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)w[3].scales), 3);
#define Q(...) _mm512_broadcast_i32x4(_mm_setr_epi8(__VA_ARGS__))
    const __m512i p = _mm512_shuffle_epi8(v, Q(0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7));
    const __m512i t = _mm512_shuffle_epi8(v, Q(-1, -1, -1, -1, 8, 9, 10, 11, -1, -1, -1, -1, 8, 9, 10, 11));
    const __m512i lo6 = Q(63, 63, 63, 63, 0, 0, 0, 0, 63, 63, 63, 63, 0, 0, 0, 0);
    const __m512i top2 = Q(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48);
    const __m512i nib_lo = Q(0, 0, 0, 0, 15, 15, 15, 15, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i nib_hi = Q(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
#undef Q
    return _mm512_or_si512(_mm512_or_si512(_mm512_and_si512(p, lo6), _mm512_and_si512(_mm512_srli_epi16(p, 2), top2)),
                           _mm512_or_si512(_mm512_and_si512(t, nib_lo), _mm512_and_si512(_mm512_srli_epi16(t, 4), nib_hi)));
}

/* 4 blocks' integers, exact: [isum 0..3 | msum 0..3] as lanes is0 ms0 is1 ms1 .. of 8 int32.
 * The scales of all 4 are unpacked in one register; each block's min term is its 8 mins (each
 * twice) times its 16 bsums in one vpmaddwd (m * bs[2i] + m * bs[2i+1], the same integer as m times
 * the pair's sum), two blocks per register. */
static inline __m256i q4k_quad(const sn_block_q4_K *w, const sn_block_q8_K *a) {
    const __m512i r = q4k_scales_vec4(w), z = _mm512_setzero_si512();
    const __m512i s16 = _mm512_unpacklo_epi8(r, z); /* quarter k: block k's scales as int16 */
    __m512i lanes[4];
    lanes[0] = q4k_block_lanes_s16(&w[0], a[0].qs, _mm512_shuffle_i32x4(s16, s16, 0x00));
    lanes[1] = q4k_block_lanes_s16(&w[1], a[1].qs, _mm512_shuffle_i32x4(s16, s16, 0x55));
    lanes[2] = q4k_block_lanes_s16(&w[2], a[2].qs, _mm512_shuffle_i32x4(s16, s16, 0xAA));
    lanes[3] = q4k_block_lanes_s16(&w[3], a[3].qs, _mm512_shuffle_i32x4(s16, s16, 0xFF));
    /* quarter k: block k's mins, each twice */
    const __m128i dup8 = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    const __m512i md = _mm512_shuffle_epi8(r, _mm512_broadcast_i32x4(dup8));
    const __m512i m01 = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(md));
    const __m512i m23 = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(md, 1));
#define BS2(k) _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a[k].bsums)), \
                                  _mm256_loadu_si256((const __m256i *)a[(k) + 1].bsums), 1)
    const __m512i p01 = _mm512_madd_epi16(m01, BS2(0)), p23 = _mm512_madd_epi16(m23, BS2(2));
#undef BS2
    /* mins: quarter 0 -> [ms0 ms2 ms0 ms2], quarter 2 -> [ms1 ms3 ..] */
    __m512i ms = _mm512_add_epi32(_mm512_unpacklo_epi32(p01, p23), _mm512_unpackhi_epi32(p01, p23));
    ms = _mm512_add_epi32(ms, _mm512_shuffle_epi32(ms, _MM_PERM_BADC));
    ms = _mm512_add_epi32(ms, _mm512_shuffle_i32x4(ms, ms, _MM_SHUFFLE(2, 3, 0, 1)));
    const __m512i q = reduce4x4(lanes); /* lane 4r + k: quarter r of block k */
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(q), _mm512_extracti64x4_epi64(q, 1));
    const __m128i is = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    const __m512i all = _mm512_inserti32x4(ms, is, 1); /* lanes 4..7: is0..is3 */
    const __m512i order = _mm512_setr_epi32(4, 0, 5, 8, 6, 1, 7, 9, 0, 0, 0, 0, 0, 0, 0, 0); /* is0 ms0 is1 ms1 .. */
    return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, all));
}

/* decode order (scalar q4_K_dot, per_pair = 0): one integer per block, one fma each for s1, s2;
 * 4 blocks at a time (q4k_quad) */
static float dot_q4_K(int64_t n, const void *vw, const void *va) {
    const sn_block_q4_K *w = vw;
    const sn_block_q8_K *a = va;
    const int64_t nb = n / SN_QK_K;
    int64_t b = 0;
    /* the 8 products d_w * d_a, dmin_w * d_a in one vector and the two fma chains in lanes 0 and 1 */
    __m128 s12 = _mm_setzero_ps(); /* lane 0: s1, lane 1: s2 */
    const __m256i dup = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    for (; b + 4 <= nb; b += 4) {
        uint32_t d4[4]; /* per block: d and dmin, adjacent fp16 */
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {
            sn_k_prefetch(&w[b + k], sizeof w[b + k]);
            memcpy(&d4[k], &w[b + k].d, 4);
        }
        const __m256 f = _mm256_cvtepi32_ps(q4k_quad(&w[b], &a[b])); /* is0 ms0 is1 ms1 .. */
        /* a load, not _mm_insert_epi32: its lane must be an immediate, which k is only once the
         * loop is unrolled (not at the ASan build's -O1) */
        const __m128i dd = _mm_loadu_si128((const __m128i *)d4);
        const __m256 ad = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_setr_ps(a[b].d, a[b + 1].d, a[b + 2].d, a[b + 3].d)), dup);
        const __m256 d = _mm256_mul_ps(_mm256_cvtph_ps(dd), ad); /* d0 dmin0 d1 dmin1 .. */
        const __m128 f01 = _mm256_castps256_ps128(f), f23 = _mm256_extractf128_ps(f, 1);
        const __m128 d01 = _mm256_castps256_ps128(d), d23 = _mm256_extractf128_ps(d, 1);
        s12 = _mm_fmadd_ps(f01, d01, s12);
        s12 = _mm_fmadd_ps(_mm_movehl_ps(f01, f01), _mm_movehl_ps(d01, d01), s12);
        s12 = _mm_fmadd_ps(f23, d23, s12);
        s12 = _mm_fmadd_ps(_mm_movehl_ps(f23, f23), _mm_movehl_ps(d23, d23), s12);
    }
    float s1 = _mm_cvtss_f32(s12), s2 = _mm_cvtss_f32(_mm_movehdup_ps(s12));
    for (; b < nb; b++) {
        sn_k_prefetch(&w[b], sizeof w[b]);
        __m128i sc, mn;
        sn_kq_q4k_scales(w[b].scales, &sc, &mn);
        const __m128i z = _mm_setzero_si128();
        int is[4], ms[4];
        _mm_storeu_si128((__m128i *)is, hsum4_i32(fold512(q4k_block_lanes(&w[b], a[b].qs, sc)), z, z, z));
        _mm_storeu_si128((__m128i *)ms, hsum4_i32(sn_kq_q4k_mins(mn, a[b].bsums), z, z, z));
        s1 = fmaf((float)is[0], h2f(w[b].d) * a[b].d, s1);
        s2 = fmaf((float)ms[0], h2f(w[b].dmin) * a[b].d, s2);
    }
    return s1 - s2;
}

/* 4 rows x 4 tokens in the batched order (per_pair = 1: llama.cpp's q4_K_8x8 gemm): per output and
 * sub-block pair one exact integer, fma'd into s1 (and the pair's min term into s2) pair by pair.
 * The 16 outputs are the lanes of one register, lane 4r + t: 128-bit quarter r carries 16 nibbles
 * of row r, every token's 16 activations are broadcast to all quarters, so one vpdpbusd makes 4
 * partial sums for each row against that token, and a 4x4 transpose-add turns 4 tokens' partial
 * sums into the 16 outputs. Scales multiply the reduced sums (scale * sum is the same integer). */
/* dword j of each 128-bit lane to all four of its dwords (what _mm512_shuffle_epi32(v, j * 0x55)
 * does, as a byte shuffle: the immediate would need j known at compile time) */
static const uint8_t DWORD_BCAST[4][16] __attribute__((aligned(16))) = {
    {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3},
    {4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7},
    {8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11},
    {12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15},
};
static const uint8_t DWORD16[8][16] __attribute__((aligned(16))) = { /* int16 g -> every int32 */
#define D(g) {2 * (g), 2 * (g) + 1, 0x80, 0x80, 2 * (g), 2 * (g) + 1, 0x80, 0x80, 2 * (g), 2 * (g) + 1, 0x80, 0x80, 2 * (g), 2 * (g) + 1, 0x80, 0x80}
    D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7)
#undef D
};

static inline __m512i quarters(__m128i q0, __m128i q1, __m128i q2, __m128i q3) {
    const __m512i lo = _mm512_inserti32x4(_mm512_castsi128_si512(q0), q1, 1);
    return _mm512_inserti32x4(_mm512_inserti32x4(lo, q2, 2), q3, 3);
}
static inline __m512i quarters_at(const uint8_t *const p[4], int64_t off) {
    return quarters(_mm_loadu_si128((const __m128i *)(p[0] + off)), _mm_loadu_si128((const __m128i *)(p[1] + off)),
                    _mm_loadu_si128((const __m128i *)(p[2] + off)), _mm_loadu_si128((const __m128i *)(p[3] + off)));
}
static inline __m512i bcast16(const int8_t *p) { return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)p)); }

static void gemm_q4_K(int64_t n, const void *vw, uint64_t w_row, const void *vx, uint64_t x_row, float *y, int64_t ldy) {
    const sn_block_q8_K *x[4];
    const sn_block_q4_K *w[4];
    for (int i = 0; i < 4; i++) {
        x[i] = (const sn_block_q8_K *)((const char *)vx + i * x_row);
        w[i] = (const sn_block_q4_K *)((const char *)vw + i * w_row);
    }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512 s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps();
    for (int64_t b = 0; b < n / SN_QK_K; b++) {
        __m128i sc[4], mn[4], bp[4];
        const uint8_t *qs[4];
        float dw[4], mw[4], da[4];
        for (int i = 0; i < 4; i++) {
            sn_kq_q4k_scales(w[i][b].scales, &sc[i], &mn[i]);
            sc[i] = _mm_cvtepu8_epi16(sc[i]);
            mn[i] = _mm_cvtepu8_epi16(mn[i]);
            qs[i] = w[i][b].qs;
            dw[i] = h2f(w[i][b].d);
            mw[i] = h2f(w[i][b].dmin);
            da[i] = x[i][b].d;
            /* int32 j = (bsums pair 2j, pair 2j+1) of token i, as the mins' (m[2j], m[2j+1]) */
            bp[i] = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)x[i][b].bsums), _mm_loadu_si128((const __m128i *)(x[i][b].bsums + 8)));
        }
        const __m512i zs = quarters(sc[0], sc[1], sc[2], sc[3]), zm = quarters(mn[0], mn[1], mn[2], mn[3]);
        __m128 b0 = _mm_castsi128_ps(bp[0]), b1 = _mm_castsi128_ps(bp[1]), b2 = _mm_castsi128_ps(bp[2]), b3 = _mm_castsi128_ps(bp[3]);
        _MM_TRANSPOSE4_PS(b0, b1, b2, b3); /* bj: int32 t = token t's pair j */
        const __m128 bt[4] = {b0, b1, b2, b3};
        const __m512 a4 = _mm512_broadcast_f32x4(_mm_loadu_ps(da));
        const __m512 d = _mm512_mul_ps(_mm512_castsi512_ps(quarters(_mm_castps_si128(_mm_set1_ps(dw[0])), _mm_castps_si128(_mm_set1_ps(dw[1])),
                                                                   _mm_castps_si128(_mm_set1_ps(dw[2])), _mm_castps_si128(_mm_set1_ps(dw[3])))), a4);
        const __m512 dmin = _mm512_mul_ps(_mm512_castsi512_ps(quarters(_mm_castps_si128(_mm_set1_ps(mw[0])), _mm_castps_si128(_mm_set1_ps(mw[1])),
                                                                      _mm_castps_si128(_mm_set1_ps(mw[2])), _mm_castps_si128(_mm_set1_ps(mw[3])))), a4);
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
            const __m512i v0 = quarters_at(qs, 32 * j), v1 = quarters_at(qs, 32 * j + 16);
            const __m512i l0 = _mm512_and_si512(v0, m4), l1 = _mm512_and_si512(v1, m4);
            const __m512i h0 = _mm512_and_si512(_mm512_srli_epi16(v0, 4), m4), h1 = _mm512_and_si512(_mm512_srli_epi16(v1, 4), m4);
            __m512i lo[4], hi[4];
            _Pragma("GCC unroll 4") for (int t = 0; t < 4; t++) {
                const int8_t *q8 = x[t][b].qs + 64 * j;
                lo[t] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), l0, bcast16(q8)), l1, bcast16(q8 + 16));
                hi[t] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), h0, bcast16(q8 + 32)), h1, bcast16(q8 + 48));
            }
            const __m512i sc0 = _mm512_shuffle_epi8(zs, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)DWORD16[2 * j])));
            const __m512i sc1 = _mm512_shuffle_epi8(zs, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)DWORD16[2 * j + 1])));
            const __m512i is = _mm512_add_epi32(_mm512_mullo_epi32(reduce4x4(lo), sc0), _mm512_mullo_epi32(reduce4x4(hi), sc1));
            const __m512i ms = _mm512_madd_epi16(_mm512_shuffle_epi8(zm, _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)DWORD_BCAST[j]))),
                                                 _mm512_broadcast_i32x4(_mm_castps_si128(bt[j])));
            s1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), d, s1);
            s2 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ms), dmin, s2);
        }
    }
    float o[16];
    _mm512_storeu_ps(o, _mm512_sub_ps(s1, s2));
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < 4; t++) y[t * ldy + r] = o[4 * r + t];
}

/* ---- Q6_K ---- */

/* One Q6_K block unpacked: v[m] = the unsigned 6-bit values of 32-groups 2m and 2m+1 (64 values
 * that meet activations 64m..64m+63), sc[m] = their scales, s16 = all 16 scales as int16. */
typedef struct { __m512i v[4], sc[4]; __m256i s16; } q6k_block;

static inline void q6k_unpack(const sn_block_q6_K *w, q6k_block *k) {
    k->s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w->scales));
    const __m512i slo = _mm512_broadcast_i32x4(_mm256_castsi256_si128(k->s16)), shi = _mm512_broadcast_i32x4(_mm256_extracti128_si256(k->s16, 1));
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i up01 = halves16(4, 2), dn23 = halves16(0, 2);
    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {
        const __m512i l = _mm512_loadu_si512(w->ql + 64 * h); /* [ql 64h.. | ql 64h+32..] */
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w->qh + 32 * h)));
        /* [group 4h | 4h+1] and [group 4h+2 | 4h+3] */
        k->v[2 * h] = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, up01), m30));
        k->v[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                          _mm512_and_si512(_mm512_srlv_epi16(qh, dn23), m30));
        k->sc[2 * h] = pick4(h ? shi : slo, 0);
        k->sc[2 * h + 1] = pick4(h ? shi : slo, 1);
    }
}

/* ggml's 8 lanes of one block against one activation block: lane L = sum over 32-groups g of
 * scale(g, L/4) * (unsigned values 4L..4L+3 of g times their activations) minus
 * 32 * (bsums[2L] sc[2L] + bsums[2L+1] sc[2L+1]); the 16 lanes fold into those 8 exactly. */
static inline __m256i q6k_lanes(const q6k_block *k, const sn_block_q8_K *a) {
    __m512i acc = _mm512_setzero_si512();
    _Pragma("GCC unroll 4") for (int m = 0; m < 4; m++)
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(k->v[m], _mm512_loadu_si512(a->qs + 64 * m)), k->sc[m]);
    const __m256i lanes = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    const __m256i off = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsums), k->s16), 5);
    return _mm256_sub_epi32(lanes, off);
}

SN_KQ_Q6K_DOT(dot_q6_K, q6k_block, q6k_unpack, q6k_lanes)
SN_KQ_Q6K_GEMM4X4(gemm_q6_K, q6k_block, q6k_unpack, q6k_lanes)

/* dot_q6_K on four rows (kernels.h sn_k_mv_quarters), block by block: each row's blocks unpacked,
 * met and fma'd in dot_q6_K's order, so y[i] == dot_q6_K(row i, x). No software prefetch: the four
 * streams alone read faster than with dot_q6_K's (docs/PERFORMANCE.md). */
static void rows4_q6_K(int64_t n, const void *const *vw, const void *va, const float *aux, float *y) {
    (void)aux;
    const sn_block_q8_K *a = va;
    __m256 acc[4];
    for (int r = 0; r < 4; r++) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / SN_QK_K; b++)
        _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {
            const sn_block_q6_K *w = (const sn_block_q6_K *)vw[r] + b;
            q6k_block k;
            q6k_unpack(w, &k);
            const float d = a[b].d * _cvtsh_ss(w->d);
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q6k_lanes(&k, &a[b])), acc[r]);
        }
    for (int r = 0; r < 4; r++) y[r] = sn_avx2_hsum8(acc[r]);
}
static int mv_q6_K_quarters(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y) {
    sn_k_mv_quarters(rows4_q6_K, n, w, w_row, R, x, NULL, dot_q6_K, y);
    return 1;
}
/* Q4_K stays row by row here: its dot is compute-bound (about what one core reads from DRAM), so
 * four-row versions gained nothing. Decode of a model's Q4_K matrices runs on their 8-row
 * repacked form instead (q4_K_x8.c, much faster; docs/PERFORMANCE.md); this dot serves the rows
 * left over. */
void sn_kernels_kquants_mv_avx512(sn_kernels *k) { k->type[SN_GGML_Q6_K].mv = mv_q6_K_quarters; }

void sn_kernels_kquants_avx512(sn_kernels *k) {
    sn_kq_set_q4k_q6k(k, dot_q4_K, gemm_q4_K, dot_q6_K, gemm_q6_K);
}
#pragma GCC pop_options
#else
void sn_kernels_kquants_avx512(sn_kernels *k) { (void)k; }
void sn_kernels_kquants_mv_avx512(sn_kernels *k) { (void)k; }
#endif
