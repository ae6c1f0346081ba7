/* recurrent_avx512.c - the recurrent families' kernels (recurrent.h) with 16-lane AVX-512 vectors,
 * for machines where llama.cpp loads an AVX-512 build of ggml-cpu (tuning.lanes == 16). Every
 * lane performs the same IEEE operations in the same order as the scalar twin in recurrent.c at
 * 16 lanes (a vector FMA rounds once, as fmaf does; the tails are masked so a lane past the head
 * is never added), and the reductions add the same pairs, so the results are bit-identical
 * (tests/unit/test_recurrent.c).
 *
 * What is ours is the schedule. In wkv7 and the scan a state row's update reads only that row
 * (and the token's shared vectors), so a block of rows is held in registers across a chunk of
 * tokens: the state is loaded and stored once per chunk instead of once per token, and the shared
 * vectors of the chunk (16 tokens) stay in L1 while every row block reads them. Head sizes that
 * are not whole vectors run a masked loop over the state in memory. */
#include "recurrent.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx2,fma")
#include <immintrin.h>
#include "simd_avx512.h"
#include "expf_avx512.h"

#define SN_AI static inline __attribute__((always_inline))
#define LD(p) _mm512_loadu_ps(p)

enum { CHUNK = 16 }; /* tokens per pass over the row blocks */

/* GGML_F32_VEC_REDUCE on AVX-512: (x0 + x2) + (x1 + x3), then _mm512_reduce_add_ps's tree
 * (sn_avx512_hsum16; sn_hsum16 is its scalar twin). */
SN_AI float reduce4(const __m512 *x) { return sn_avx512_hsum16(_mm512_add_ps(_mm512_add_ps(x[0], x[2]), _mm512_add_ps(x[1], x[3]))); }

/* lanes of 16-float vector c that lie inside n floats (none past the end) */
SN_AI __mmask16 inside(int64_t c, int64_t n) {
    const int64_t left = n - 16 * c;
    return left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);
}

/* Rows i0 .. i0+NR-1 of a state of NV vectors a row, into registers and back. */
SN_AI void rows_load(__m512 st[][8], const float *S, int64_t i0, const int NR, const int NV) {
#pragma GCC unroll 4
    for (int n = 0; n < NR; n++)
#pragma GCC unroll 8
        for (int q = 0; q < NV; q++) st[n][q] = LD(S + (i0 + n) * 16 * NV + 16 * q);
}
/* A software prefetch of the state STATE_AHEAD bytes past row block i0 (8 lines for a block of 512
 * bytes). Between two tokens of decode the 100 MB of weights streamed through the caches have
 * evicted the state, so each row block waits on DRAM; the prefetch hides part of that wait
 * (docs/PERFORMANCE.md). A prefetch past the state's end reads nothing a load would fault on. */
enum { STATE_AHEAD = 2048 };
SN_AI void rows_prefetch(const float *S, int64_t i0, const int NR, const int NV) {
#pragma GCC unroll 8
    for (int q = 0; q < NR * NV; q++) _mm_prefetch((const char *)(S + i0 * 16 * NV) + STATE_AHEAD + 64 * q, _MM_HINT_T0);
}
SN_AI void rows_store(__m512 st[][8], float *S, int64_t i0, const int NR, const int NV) {
#pragma GCC unroll 4
    for (int n = 0; n < NR; n++)
#pragma GCC unroll 8
        for (int q = 0; q < NV; q++) _mm512_storeu_ps(S + (i0 + n) * 16 * NV + 16 * q, st[n][q]);
}

/* zero the 4 accumulators of each of NR rows */
SN_AI void acc_zero(__m512 acc[][4], const int NR) {
#pragma GCC unroll 4
    for (int n = 0; n < NR; n++)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) acc[n][c] = _mm512_setzero_ps();
}

/* ---- wkv7 ---- */

/* Value rows i0 .. i0+NR-1 of a head of NV whole vectors (N = 16 NV), tokens [0, T): the rows'
 * state lives in st[][] for the whole run. Vector q adds into accumulator q % 4, as the scalar
 * twin's 64-float steps do. */
SN_AI void wkv7_block(const int NV, const int NR, int64_t T, int64_t ld, const float *r, const float *w,
                      const float *k, const float *v, const float *a, const float *b, float *S, float *y, int64_t i0) {
    __m512 st[4][8], acc[4][4];
    rows_load(st, S, i0, NR, NV);
    for (int64_t t = 0; t < T; t++, r += ld, w += ld, k += ld, v += ld, a += ld, b += ld, y += ld) {
        __m512 vsa[4], vi[4];
        acc_zero(acc, NR);
#pragma GCC unroll 8
        for (int q = 0; q < NV; q++) {
            const __m512 aq = LD(a + 16 * q);
#pragma GCC unroll 4
            for (int n = 0; n < NR; n++) acc[n][q % 4] = _mm512_fmadd_ps(aq, st[n][q], acc[n][q % 4]);
        }
#pragma GCC unroll 4
        for (int n = 0; n < NR; n++) {
            vsa[n] = _mm512_set1_ps(reduce4(acc[n]));
            vi[n] = _mm512_set1_ps(v[i0 + n]);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) acc[n][q] = _mm512_setzero_ps(); /* now the output sums */
        }
#pragma GCC unroll 8
        for (int q = 0; q < NV; q++) {
            const __m512 kq = LD(k + 16 * q), wq = LD(w + 16 * q), bq = LD(b + 16 * q), rq = LD(r + 16 * q);
#pragma GCC unroll 4
            for (int n = 0; n < NR; n++) {
                __m512 s = _mm512_fmadd_ps(st[n][q], wq, _mm512_mul_ps(vi[n], kq));
                s = _mm512_fmadd_ps(vsa[n], bq, s);
                st[n][q] = s;
                acc[n][q % 4] = _mm512_fmadd_ps(s, rq, acc[n][q % 4]);
            }
        }
#pragma GCC unroll 4
        for (int n = 0; n < NR; n++) y[i0 + n] = reduce4(acc[n]);
    }
    rows_store(st, S, i0, NR, NV);
}

/* A head of NV whole vectors: chunks of tokens, blocks of NR rows, the leftover rows one by one. */
SN_AI void wkv7_head(const int NV, const int NR, int64_t T, int64_t ld, const float *r, const float *w,
                     const float *k, const float *v, const float *a, const float *b, float *S, float *y) {
    const int64_t N = 16 * NV;
    for (int64_t t0 = 0; t0 < T; t0 += CHUNK) {
        const int64_t n = T - t0 < CHUNK ? T - t0 : CHUNK, o = t0 * ld;
        int64_t i = 0;
        for (; i + NR <= N; i += NR) {
            rows_prefetch(S, i, NR, NV);
            wkv7_block(NV, NR, n, ld, r + o, w + o, k + o, v + o, a + o, b + o, S, y + o, i);
        }
        for (; i < N; i++) wkv7_block(NV, 1, n, ld, r + o, w + o, k + o, v + o, a + o, b + o, S, y + o, i);
    }
}

/* Any head size: one row and one token at a time over the state in memory, the last vector masked
 * (its lanes past N neither load, store nor add). */
static void wkv7_masked(int64_t N, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                        const float *v, const float *a, const float *b, float *S, float *y) {
    const int64_t nv = (N + 15) / 16;
    for (int64_t t = 0; t < T; t++, r += ld, w += ld, k += ld, v += ld, a += ld, b += ld, y += ld)
        for (int64_t i = 0; i < N; i++) {
            float *Si = S + i * N;
            __m512 acc[4];
            for (int q = 0; q < 4; q++) acc[q] = _mm512_setzero_ps();
            for (int64_t j = 0; j < nv; j++) { /* vector j adds into accumulator j % 4, as in wkv7_head */
                const __mmask16 m = inside(j, N);
                const __m512 aq = _mm512_maskz_loadu_ps(m, a + 16 * j), sq = _mm512_maskz_loadu_ps(m, Si + 16 * j);
                acc[j & 3] = _mm512_mask3_fmadd_ps(aq, sq, acc[j & 3], m);
            }
            const __m512 vsa = _mm512_set1_ps(reduce4(acc)), vi = _mm512_set1_ps(v[i]);
            for (int q = 0; q < 4; q++) acc[q] = _mm512_setzero_ps();
            for (int64_t j = 0; j < nv; j++) {
                const __mmask16 m = inside(j, N);
                const int64_t o = 16 * j;
                const __m512 kq = _mm512_maskz_loadu_ps(m, k + o), wq = _mm512_maskz_loadu_ps(m, w + o);
                const __m512 bq = _mm512_maskz_loadu_ps(m, b + o), rq = _mm512_maskz_loadu_ps(m, r + o);
                __m512 s = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, Si + o), wq, _mm512_mul_ps(vi, kq));
                s = _mm512_fmadd_ps(vsa, bq, s);
                _mm512_mask_storeu_ps(Si + o, m, s);
                acc[j & 3] = _mm512_mask3_fmadd_ps(s, rq, acc[j & 3], m);
            }
            y[i] = reduce4(acc);
        }
}

void sn_wkv7_avx512(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                    const float *v, const float *a, const float *b, float *S, float *y) {
    if (lanes != 16) {
        sn_wkv7_avx2(N, lanes, T, ld, r, w, k, v, a, b, S, y);
        return;
    }
    switch (N) {
    case 64: wkv7_head(4, 2, T, ld, r, w, k, v, a, b, S, y); break;
    case 128: wkv7_head(8, 2, T, ld, r, w, k, v, a, b, S, y); break;
    case 32: wkv7_head(2, 4, T, ld, r, w, k, v, a, b, S, y); break;
    default: wkv7_masked(N, T, ld, r, w, k, v, a, b, S, y); break;
    }
}

/* ---- the SSD scan ---- */

/* State rows i0 .. i0+NR-1 of a head with NV whole vectors of states (N = 16 NV, a multiple of 64,
 * so there is no scalar tail), tokens [0, T), the rows in registers. */
SN_AI void scan_block(const int NV, const int NR, int64_t T, const float *x, const float *B, const float *C,
                      int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy,
                      int64_t i0) {
    __m512 st[2][8];
    rows_load(st, S, i0, NR, NV);
    for (int64_t t = 0; t < T; t++, x += ldx, B += ldx, C += ldx, dt += ldt, dA += ldt, y += ldy) {
        const __m512 vdA = _mm512_set1_ps(*dA);
        __m512 vx[2], acc[2][4];
#pragma GCC unroll 2
        for (int n = 0; n < NR; n++) {
            vx[n] = _mm512_set1_ps(x[i0 + n] * *dt);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) acc[n][q] = _mm512_setzero_ps();
        }
#pragma GCC unroll 8
        for (int q = 0; q < NV; q++) {
            const __m512 Bq = LD(B + 16 * q), Cq = LD(C + 16 * q);
#pragma GCC unroll 2
            for (int n = 0; n < NR; n++) {
                const __m512 s = _mm512_fmadd_ps(st[n][q], vdA, _mm512_mul_ps(Bq, vx[n]));
                acc[n][q % 4] = _mm512_fmadd_ps(s, Cq, acc[n][q % 4]);
                st[n][q] = s;
            }
        }
#pragma GCC unroll 2
        for (int n = 0; n < NR; n++) y[i0 + n] = reduce4(acc[n]);
    }
    rows_store(st, S, i0, NR, NV);
}

SN_AI void scan_head(const int NV, const int NR, int64_t P, int64_t T, const float *x, const float *B, const float *C,
                     int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy) {
    for (int64_t t0 = 0; t0 < T; t0 += CHUNK) {
        const int64_t n = T - t0 < CHUNK ? T - t0 : CHUNK, ox = t0 * ldx, ot = t0 * ldt, oy = t0 * ldy;
        int64_t i = 0;
        for (; i + NR <= P; i += NR)
            scan_block(NV, NR, n, x + ox, B + ox, C + ox, ldx, dt + ot, dA + ot, ldt, S, y + oy, ldy, i);
        for (; i < P; i++) scan_block(NV, 1, n, x + ox, B + ox, C + ox, ldx, dt + ot, dA + ot, ldt, S, y + oy, ldy, i);
    }
}

/* Any state size: the whole groups of 64 states as vectors, the rest one by one as the scalar
 * twin adds them, over the state in memory. */
static void scan_any(int64_t N, int64_t P, int64_t T, const float *x, const float *B, const float *C, int64_t ldx,
                     const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy) {
    const int64_t np = N & ~(int64_t)63;
    for (int64_t t = 0; t < T; t++, x += ldx, B += ldx, C += ldx, dt += ldt, dA += ldt, y += ldy)
        for (int64_t i = 0; i < P; i++) {
            float *Si = S + i * N;
            const float x_dt = x[i] * *dt;
            const __m512 vdA = _mm512_set1_ps(*dA), vx = _mm512_set1_ps(x_dt);
            __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
            for (int64_t k0 = 0; k0 < np; k0 += 64)
#pragma GCC unroll 4
                for (int q = 0; q < 4; q++) {
                    const int64_t k = k0 + 16 * q;
                    const __m512 s = _mm512_fmadd_ps(LD(Si + k), vdA, _mm512_mul_ps(LD(B + k), vx));
                    acc[q] = _mm512_fmadd_ps(s, LD(C + k), acc[q]);
                    _mm512_storeu_ps(Si + k, s);
                }
            float sum = np ? reduce4(acc) : 0.0f;
            for (int64_t k = np; k < N; k++) {
                const float s = Si[k] * *dA + B[k] * x_dt;
                sum += s * C[k];
                Si[k] = s;
            }
            y[i] = sum;
        }
}

void sn_ssd_scan_avx512(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                        int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy) {
    if (lanes != 16) {
        sn_ssd_scan_avx2(N, P, lanes, T, x, B, C, ldx, dt, dA, ldt, S, y, ldy);
        return;
    }
    switch (N) {
    case 64: scan_head(4, 2, P, T, x, B, C, ldx, dt, dA, ldt, S, y, ldy); break;
    case 128: scan_head(8, 2, P, T, x, B, C, ldx, dt, dA, ldt, S, y, ldy); break;
    default: scan_any(N, P, T, x, B, C, ldx, dt, dA, ldt, S, y, ldy); break;
    }
}

/* ---- the gated delta rule ---- */

/* Rows j0 .. j0+NR-1 of a head of NV whole vectors (S = 16 NV, NV a multiple of 4), tokens [0, T),
 * the rows in registers. Vector c adds into accumulator c % 4, as the scalar twin's groups of 64. */
SN_AI void gdn_block(const int NV, const int NR, int64_t T, const float *q, const float *k, const float *v,
                     int64_t ldx, const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy,
                     float scale, int64_t j0) {
    __m512 st[4][8], acc[4][4];
    rows_load(st, M, j0, NR, NV);
    for (int64_t t = 0; t < T; t++, q += ldx, k += ldx, v += ldx, beta += ldg, g += ldg, y += ldy) {
        const __m512 dg = _mm512_set1_ps(expf(*g));
        acc_zero(acc, NR);
#pragma GCC unroll 8
        for (int c = 0; c < NV; c++) {
            const __m512 kc = LD(k + 16 * c);
#pragma GCC unroll 4
            for (int n = 0; n < NR; n++) {
                st[n][c] = _mm512_mul_ps(st[n][c], dg);
                acc[n][c % 4] = _mm512_fmadd_ps(st[n][c], kc, acc[n][c % 4]);
            }
        }
        __m512 d[4];
#pragma GCC unroll 4
        for (int n = 0; n < NR; n++) {
            d[n] = _mm512_set1_ps((v[j0 + n] - reduce4(acc[n])) * *beta);
        }
        acc_zero(acc, NR); /* now the output sums */
#pragma GCC unroll 8
        for (int c = 0; c < NV; c++) {
            const __m512 kc = LD(k + 16 * c), qc = LD(q + 16 * c);
#pragma GCC unroll 4
            for (int n = 0; n < NR; n++) {
                st[n][c] = _mm512_fmadd_ps(kc, d[n], st[n][c]);
                acc[n][c % 4] = _mm512_fmadd_ps(st[n][c], qc, acc[n][c % 4]);
            }
        }
#pragma GCC unroll 4
        for (int n = 0; n < NR; n++) y[j0 + n] = reduce4(acc[n]) * scale;
    }
    rows_store(st, M, j0, NR, NV);
}

SN_AI void gdn_head(const int NV, const int NR, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                    const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy) {
    const int64_t S = 16 * NV;
    const float scale = 1.0f / sqrtf((float)S);
    for (int64_t t0 = 0; t0 < T; t0 += CHUNK) {
        const int64_t n = T - t0 < CHUNK ? T - t0 : CHUNK, ox = t0 * ldx, og = t0 * ldg;
        for (int64_t j = 0; j < S; j += NR) {
            rows_prefetch(M, j, NR, NV);
            gdn_block(NV, NR, n, q + ox, k + ox, v + ox, ldx, beta + og, g + og, ldg, M, y + t0 * ldy, ldy, scale, j);
        }
    }
}

/* Other multiples of 64: one row and one token at a time over the state in memory. */
static void gdn_any(int64_t S, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                    const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy) {
    const float scale = 1.0f / sqrtf((float)S);
    for (int64_t t = 0; t < T; t++, q += ldx, k += ldx, v += ldx, beta += ldg, g += ldg, y += ldy) {
        const __m512 dg = _mm512_set1_ps(expf(*g));
        for (int64_t j = 0; j < S; j++) {
            float *r = M + j * S;
            __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
            for (int64_t i = 0; i < S; i += 16) {
                const __m512 x = _mm512_mul_ps(LD(r + i), dg);
                _mm512_storeu_ps(r + i, x);
                acc[(i / 16) % 4] = _mm512_fmadd_ps(x, LD(k + i), acc[(i / 16) % 4]);
            }
            const __m512 d = _mm512_set1_ps((v[j] - reduce4(acc)) * *beta);
            for (int c = 0; c < 4; c++) acc[c] = _mm512_setzero_ps();
            for (int64_t i = 0; i < S; i += 16) {
                const __m512 x = _mm512_fmadd_ps(LD(k + i), d, LD(r + i));
                _mm512_storeu_ps(r + i, x);
                acc[(i / 16) % 4] = _mm512_fmadd_ps(x, LD(q + i), acc[(i / 16) % 4]);
            }
            y[j] = reduce4(acc) * scale;
        }
    }
}

void sn_gdn_avx512(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                   const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy) {
    if (lanes != 16 || S % 64) {
        sn_gdn_avx2(S, lanes, T, q, k, v, ldx, beta, g, ldg, M, y, ldy);
        return;
    }
    switch (S) {
    case 64: gdn_head(4, 4, T, q, k, v, ldx, beta, g, ldg, M, y, ldy); break;
    case 128: gdn_head(8, 2, T, q, k, v, ldx, beta, g, ldg, M, y, ldy); break;
    default: gdn_any(S, T, q, k, v, ldx, beta, g, ldg, M, y, ldy); break;
    }
}

/* ---- conv1d: 16 channels per vector, the channel tail masked ---- */

void sn_ssm_conv_avx512(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                        const float *bias, float *out, int64_t ldo) {
    const int64_t nv = (n + 15) / 16;
    for (int64_t t = 0; t < T; t++, win += ldw, out += ldo)
        for (int64_t c = 0; c < nv; c++) {
            const __mmask16 m = inside(c, n);
            const int64_t o = 16 * c;
            __m512 sum = _mm512_setzero_ps();
            for (int64_t j = 0; j < K; j++)
                sum = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, win + j * ldw + o), _mm512_maskz_loadu_ps(m, wt + j * ldt + o),
                                      sum);
            _mm512_mask_storeu_ps(out + o, m, _mm512_add_ps(sum, _mm512_maskz_loadu_ps(m, bias + o)));
        }
}

/* ---- RWKV-7's time-mix step: 16 channels at a time, the tail by the scalar twin ---- */

static inline __m512 sigmoid16(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, sn_expf16(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f))))); /* -x */
}

void sn_rwkv7_mix_avx512(int64_t n, float *w, const float *w0, float *a, const float *a0, float *v, float *vfirst,
                         const float *vm, const float *v0, int first) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 sw = sigmoid16(_mm512_add_ps(LD(w + i), LD(w0 + i)));
        _mm512_storeu_ps(w + i, sn_expf16(_mm512_mul_ps(sw, _mm512_set1_ps(-0.606531f))));
        _mm512_storeu_ps(a + i, sigmoid16(_mm512_add_ps(LD(a + i), LD(a0 + i))));
        if (first) {
            _mm512_storeu_ps(vfirst + i, LD(v + i));
        } else {
            const __m512 vi = LD(v + i), mix = sigmoid16(_mm512_add_ps(LD(vm + i), LD(v0 + i)));
            _mm512_storeu_ps(v + i, _mm512_add_ps(vi, _mm512_mul_ps(_mm512_sub_ps(LD(vfirst + i), vi), mix)));
        }
    }
    if (i < n) sn_rwkv7_mix_scalar(n - i, w + i, w0 + i, a + i, a0 + i, v + i, vfirst + i, vm + i, v0 + i, first);
}

void sn_rwkv7_lerp_avx512(int64_t n, int nq, const float *h, const float *prev, const float *mu, int64_t ldmu, float *xx,
                          int64_t ldx) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 hv = LD(h + i), d = _mm512_sub_ps(LD(prev + i), hv);
        for (int q = 0; q < nq; q++) _mm512_storeu_ps(xx + q * ldx + i, _mm512_add_ps(_mm512_mul_ps(d, LD(mu + q * ldmu + i)), hv));
    }
    if (i < n) sn_rwkv7_lerp_scalar(n - i, nq, h + i, prev + i, mu + i, ldmu, xx + i, ldx);
}

void sn_expf_avx512(int64_t n, const float *x, float *y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, sn_expf16(LD(x + i)));
    for (; i < n; i++) y[i] = expf(x[i]);
}

#pragma GCC pop_options
#endif
