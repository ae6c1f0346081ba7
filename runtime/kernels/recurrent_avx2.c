/* recurrent_avx2.c - the recurrent families' kernels (recurrent.h) with 8-lane AVX2 vectors, for
 * machines where llama.cpp runs its AVX2 ("haswell") build. Every lane performs the same IEEE
 * operations in the same order as the scalar twin in recurrent.c (a vector FMA rounds once, as
 * fmaf does), and the reductions add the same pairs, so the results are bit-identical
 * (tests/unit/test_recurrent.c). What is ours is only the schedule: the scan runs two state rows
 * per pass so B and C are loaded once for both, wkv7 likewise two value rows, and the conv runs
 * over 8 channels per vector (the weights transposed by the caller). */
#include "recurrent.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include <math.h>

#define SN_AI static inline __attribute__((always_inline))

/* GGML_F32_VEC_REDUCE on AVX2: (x0 + x2) + (x1 + x3), 128-bit halves added, two hadds. */
SN_AI float reduce4(__m256 x0, __m256 x1, __m256 x2, __m256 x3) {
    const __m256 a8 = _mm256_add_ps(_mm256_add_ps(x0, x2), _mm256_add_ps(x1, x3));
    __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
    t4 = _mm_hadd_ps(t4, t4);
    return _mm_cvtss_f32(_mm_hadd_ps(t4, t4));
}

#define LD(p) _mm256_loadu_ps(p)

/* One wkv7 step for value rows i0 and i0 + 1 (NR = 1 or 2) of a head. */
SN_AI void wkv7_rows(int64_t N, const float *r, const float *w, const float *k, const float *v, const float *a,
                     const float *b, float *S, float *y, int64_t i0, const int NR) {
    __m256 s[2][4];
    for (int n = 0; n < NR; n++)
        for (int q = 0; q < 4; q++) s[n][q] = _mm256_setzero_ps();
    for (int64_t j = 0; j < N; j += 32)
        for (int q = 0; q < 4; q++) {
            const __m256 aq = LD(a + j + 8 * q);
            for (int n = 0; n < NR; n++) s[n][q] = _mm256_fmadd_ps(aq, LD(S + (i0 + n) * N + j + 8 * q), s[n][q]);
        }
    __m256 vsa[2], vi[2];
    for (int n = 0; n < NR; n++) {
        vsa[n] = _mm256_set1_ps(reduce4(s[n][0], s[n][1], s[n][2], s[n][3]));
        vi[n] = _mm256_set1_ps(v[i0 + n]);
        for (int q = 0; q < 4; q++) s[n][q] = _mm256_setzero_ps(); /* now the output accumulators */
    }
    for (int64_t j = 0; j < N; j += 32)
        for (int q = 0; q < 4; q++) {
            const int64_t o = j + 8 * q;
            const __m256 kq = LD(k + o), wq = LD(w + o), bq = LD(b + o), rq = LD(r + o);
            for (int n = 0; n < NR; n++) {
                float *Si = S + (i0 + n) * N + o;
                __m256 st = _mm256_fmadd_ps(LD(Si), wq, _mm256_mul_ps(vi[n], kq));
                st = _mm256_fmadd_ps(vsa[n], bq, st);
                _mm256_storeu_ps(Si, st);
                s[n][q] = _mm256_fmadd_ps(st, rq, s[n][q]);
            }
        }
    for (int n = 0; n < NR; n++) y[i0 + n] = reduce4(s[n][0], s[n][1], s[n][2], s[n][3]);
}

void sn_wkv7_avx2(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                  const float *v, const float *a, const float *b, float *S, float *y) {
    if (lanes != 8 || N % 32) {
        sn_wkv7_scalar(N, lanes, T, ld, r, w, k, v, a, b, S, y);
        return;
    }
    for (int64_t t = 0; t < T; t++, r += ld, w += ld, k += ld, v += ld, a += ld, b += ld, y += ld) {
        int64_t i = 0;
        for (; i + 2 <= N; i += 2) wkv7_rows(N, r, w, k, v, a, b, S, y, i, 2);
        for (; i < N; i++) wkv7_rows(N, r, w, k, v, a, b, S, y, i, 1);
    }
}

/* One scan step for state rows i0 and i0 + 1 (NR = 1 or 2) of a head. */
SN_AI void scan_rows(int64_t N, int64_t np, const float *x, const float *B, const float *C, float dt, float dA,
                     float *S, float *y, int64_t i0, const int NR) {
    const __m256 vdA = _mm256_set1_ps(dA);
    float xdt[2];
    __m256 vx[2], acc[2][4];
    for (int n = 0; n < NR; n++) {
        xdt[n] = x[i0 + n] * dt;
        vx[n] = _mm256_set1_ps(xdt[n]);
        for (int q = 0; q < 4; q++) acc[n][q] = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < np; k += 32)
        for (int q = 0; q < 4; q++) {
            const int64_t o = k + 8 * q;
            const __m256 Bq = LD(B + o), Cq = LD(C + o);
            for (int n = 0; n < NR; n++) {
                float *Si = S + (i0 + n) * N + o;
                const __m256 st = _mm256_fmadd_ps(LD(Si), vdA, _mm256_mul_ps(Bq, vx[n]));
                acc[n][q] = _mm256_fmadd_ps(st, Cq, acc[n][q]);
                _mm256_storeu_ps(Si, st);
            }
        }
    for (int n = 0; n < NR; n++) {
        float *Si = S + (i0 + n) * N;
        float sum = np ? reduce4(acc[n][0], acc[n][1], acc[n][2], acc[n][3]) : 0.0f;
        for (int64_t k = np; k < N; k++) { /* the states past the SIMD groups, as the scalar twin */
            const float st = Si[k] * dA + B[k] * xdt[n];
            sum += st * C[k];
            Si[k] = st;
        }
        y[i0 + n] = sum;
    }
}

void sn_ssd_scan_avx2(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                      int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy) {
    if (lanes != 8) {
        sn_ssd_scan_scalar(N, P, lanes, T, x, B, C, ldx, dt, dA, ldt, S, y, ldy);
        return;
    }
    const int64_t np = N & ~(int64_t)31;
    for (int64_t t = 0; t < T; t++, x += ldx, B += ldx, C += ldx, dt += ldt, dA += ldt, y += ldy) {
        int64_t i = 0;
        for (; i + 2 <= P; i += 2) scan_rows(N, np, x, B, C, *dt, *dA, S, y, i, 2);
        for (; i < P; i++) scan_rows(N, np, x, B, C, *dt, *dA, S, y, i, 1);
    }
}

/* The gated delta rule: one row and one token at a time over the state in memory (a row of 128 is
 * 16 vectors, too many to hold), 4 accumulators over groups of 32. */
void sn_gdn_avx2(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                 const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy) {
    if (lanes != 8 || S % 32) {
        sn_gdn_scalar(S, lanes, T, q, k, v, ldx, beta, g, ldg, M, y, ldy);
        return;
    }
    const float scale = 1.0f / sqrtf((float)S);
    for (int64_t t = 0; t < T; t++, q += ldx, k += ldx, v += ldx, beta += ldg, g += ldg, y += ldy) {
        const __m256 dg = _mm256_set1_ps(expf(*g));
        for (int64_t j = 0; j < S; j++) {
            float *r = M + j * S;
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int64_t i = 0; i < S; i += 8) {
                const __m256 x = _mm256_mul_ps(LD(r + i), dg);
                _mm256_storeu_ps(r + i, x);
                acc[(i / 8) % 4] = _mm256_fmadd_ps(x, LD(k + i), acc[(i / 8) % 4]);
            }
            const __m256 d = _mm256_set1_ps((v[j] - reduce4(acc[0], acc[1], acc[2], acc[3])) * *beta);
            for (int c = 0; c < 4; c++) acc[c] = _mm256_setzero_ps();
            for (int64_t i = 0; i < S; i += 8) {
                const __m256 x = _mm256_fmadd_ps(LD(k + i), d, LD(r + i));
                _mm256_storeu_ps(r + i, x);
                acc[(i / 8) % 4] = _mm256_fmadd_ps(x, LD(q + i), acc[(i / 8) % 4]);
            }
            y[j] = reduce4(acc[0], acc[1], acc[2], acc[3]) * scale;
        }
    }
}

void sn_ssm_conv_avx2(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                      const float *bias, float *out, int64_t ldo) {
    const int64_t n8 = n & ~(int64_t)7;
    for (int64_t t = 0; t < T; t++, win += ldw, out += ldo) {
        for (int64_t c = 0; c < n8; c += 8) {
            __m256 sum = _mm256_setzero_ps();
            for (int64_t j = 0; j < K; j++) sum = _mm256_fmadd_ps(LD(win + j * ldw + c), LD(wt + j * ldt + c), sum);
            _mm256_storeu_ps(out + c, _mm256_add_ps(sum, LD(bias + c)));
        }
        if (n8 < n) sn_ssm_conv_scalar(n - n8, K, 1, win + n8, ldw, wt + n8, ldt, bias + n8, out + n8, ldo);
    }
}

#pragma GCC pop_options
#endif
