/* test_recurrent.c - the recurrent families' kernels (runtime/kernels/recurrent.h): the AVX2 twins
 * (at 8 lanes) and the AVX-512 twins (at 16 lanes, and their fallback at 8) give the scalar
 * references' bits for head sizes, state sizes, row counts, token counts and channel counts that
 * hit every path (row blocks and leftover rows, token chunks and their remainder, SIMD groups with
 * and without a scalar tail, masked tails), and the scalar references compute the formulas they
 * name (checked in double precision to a tolerance, so a reference that drifted from the math
 * fails too). */
#include "sn_test.h"

#include "cpu.h"
#include "kernels/recurrent.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345;
static float frand(float lo, float hi) {
    rng = rng * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}
static float *fill(int64_t n, float lo, float hi) {
    float *p = malloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = frand(lo, hi);
    return p;
}
static float *dup(const float *p, int64_t n) {
    float *q = malloc((size_t)n * sizeof(float));
    memcpy(q, p, (size_t)n * sizeof(float));
    return q;
}
static int64_t differ(const float *a, const float *b, int64_t n) {
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) d += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return d;
}
static int have_avx2(void) {
    if (sn_test_tuning()->isa & SN_CPU_AVX2) return 1;
    printf("(skipped: no AVX2) ");
    return 0;
}
static int have_avx512(void) {
    if (sn_test_tuning()->isa & SN_CPU_AVX512) return 1;
    printf("(skipped: no AVX-512) ");
    return 0;
}

/* wkv7 inputs for T tokens of one head of N, rows ld apart */
typedef struct { float *r, *w, *k, *v, *a, *b; } wkv_in;
static wkv_in wkv_inputs(int64_t T, int64_t ld) {
    const int64_t n = T * ld;
    wkv_in in = {fill(n, -1, 1), fill(n, 0.55f, 1), fill(n, -1, 1), fill(n, -1, 1), fill(n, -0.2f, 0.2f),
                 fill(n, -0.2f, 0.2f)};
    return in;
}
static void wkv_free(wkv_in *in) {
    free(in->r); free(in->w); free(in->k); free(in->v); free(in->a); free(in->b);
}

static void test_wkv7_avx2_equals_scalar(void) {
    if (!have_avx2()) return;
    const int64_t Ns[] = {32, 64, 96, 48, 7};
    int64_t bad = 0, checked = 0;
    for (size_t c = 0; c < sizeof Ns / sizeof Ns[0]; c++) {
        const int64_t N = Ns[c], T = 5, ld = N + 24;
        wkv_in in = wkv_inputs(T, ld);
        float *S0 = fill(N * N, -1, 1), *S1 = dup(S0, N * N);
        float *y0 = calloc((size_t)(T * ld), sizeof(float)), *y1 = calloc((size_t)(T * ld), sizeof(float));
        sn_wkv7_scalar(N, 8, T, ld, in.r, in.w, in.k, in.v, in.a, in.b, S0, y0);
        sn_wkv7_avx2(N, 8, T, ld, in.r, in.w, in.k, in.v, in.a, in.b, S1, y1);
        bad += differ(S0, S1, N * N) + differ(y0, y1, T * ld);
        checked += N * N + T * ld;
        wkv_free(&in);
        free(S0); free(S1); free(y0); free(y1);
    }
    printf("(%lld floats) ", (long long)checked);
    CU_ASSERT_EQUAL(bad, 0);
}

/* 16 lanes: head sizes held in registers (64, 128, 32: pairs / quads of rows, an odd leftover row
 * for none of them), masked ones (48, 7, 96, 80, 200); 37 tokens = two chunks and a remainder.
 * Then 8 lanes, which must reach the AVX2 / scalar order. */
static void test_wkv7_avx512_equals_scalar(void) {
    if (!have_avx512()) return;
    const int64_t Ns[] = {64, 128, 32, 48, 7, 96, 80, 200};
    int64_t bad = 0, checked = 0;
    for (int lanes = 16; lanes >= 8; lanes -= 8)
        for (size_t c = 0; c < sizeof Ns / sizeof Ns[0]; c++) {
            const int64_t N = Ns[c], T = lanes == 16 ? 37 : 3, ld = N + 24;
            wkv_in in = wkv_inputs(T, ld);
            float *S0 = fill(N * N, -1, 1), *S1 = dup(S0, N * N);
            float *y0 = calloc((size_t)(T * ld), sizeof(float)), *y1 = calloc((size_t)(T * ld), sizeof(float));
            sn_wkv7_scalar(N, lanes, T, ld, in.r, in.w, in.k, in.v, in.a, in.b, S0, y0);
            sn_wkv7_avx512(N, lanes, T, ld, in.r, in.w, in.k, in.v, in.a, in.b, S1, y1);
            const int64_t d = differ(S0, S1, N * N) + differ(y0, y1, T * ld);
            if (d) printf("N %lld lanes %d: %lld differ ", (long long)N, lanes, (long long)d);
            bad += d;
            checked += N * N + T * ld;
            wkv_free(&in);
            free(S0); free(S1); free(y0); free(y1);
        }
    printf("(%lld floats) ", (long long)checked);
    CU_ASSERT_EQUAL(bad, 0);
}

/* the scalar wkv7 against the formula in double, both lane widths */
static void test_wkv7_scalar_is_the_formula(void) {
    const int64_t N = 64, T = 4, ld = N;
    for (int lanes = 8; lanes <= 16; lanes += 8) {
        wkv_in in = wkv_inputs(T, ld);
        float *S = fill(N * N, -1, 1), *y = calloc((size_t)(T * ld), sizeof(float));
        double *D = malloc((size_t)(N * N) * sizeof(double));
        for (int64_t i = 0; i < N * N; i++) D[i] = S[i];
        sn_wkv7_scalar(N, lanes, T, ld, in.r, in.w, in.k, in.v, in.a, in.b, S, y);
        double worst = 0;
        for (int64_t t = 0; t < T; t++) {
            const int64_t o = t * ld;
            for (int64_t i = 0; i < N; i++) {
                double sa = 0, yi = 0;
                for (int64_t j = 0; j < N; j++) sa += (double)in.a[o + j] * D[i * N + j];
                for (int64_t j = 0; j < N; j++) {
                    double *s = &D[i * N + j];
                    *s = *s * in.w[o + j] + (double)in.v[o + i] * in.k[o + j] + sa * in.b[o + j];
                    yi += *s * in.r[o + j];
                }
                worst = fmax(worst, fabs(yi - y[o + i]));
            }
        }
        for (int64_t i = 0; i < N * N; i++) worst = fmax(worst, fabs(D[i] - S[i]));
        CU_ASSERT(worst < 1e-4);
        if (worst >= 1e-4) printf("lanes %d: max error %g ", lanes, worst);
        wkv_free(&in);
        free(S); free(y); free(D);
    }
}

/* scan inputs: T tokens of x (P), B and C (N) in one row of ldx, dt and dA per token */
static void test_scan_avx2_equals_scalar(void) {
    if (!have_avx2()) return;
    const int64_t shapes[][2] = {{128, 64}, {64, 32}, {40, 7}, {16, 5}, {128, 1}}; /* N, P */
    int64_t bad = 0, checked = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int64_t N = shapes[c][0], P = shapes[c][1], T = 4, ldx = P + 2 * N + 3, ldt = 3, ldy = P + 1;
        float *xs = fill(T * ldx, -2, 2), *dt = fill(T * ldt, 0.01f, 2), *dA = fill(T * ldt, 0.1f, 1);
        float *S0 = fill(P * N, -1, 1), *S1 = dup(S0, P * N);
        float *y0 = calloc((size_t)(T * ldy), sizeof(float)), *y1 = calloc((size_t)(T * ldy), sizeof(float));
        sn_ssd_scan_scalar(N, P, 8, T, xs, xs + P, xs + P + N, ldx, dt, dA, ldt, S0, y0, ldy);
        sn_ssd_scan_avx2(N, P, 8, T, xs, xs + P, xs + P + N, ldx, dt, dA, ldt, S1, y1, ldy);
        bad += differ(S0, S1, P * N) + differ(y0, y1, T * ldy);
        checked += P * N + T * ldy;
        free(xs); free(dt); free(dA); free(S0); free(S1); free(y0); free(y1);
    }
    printf("(%lld floats) ", (long long)checked);
    CU_ASSERT_EQUAL(bad, 0);
}

/* 16 lanes: state sizes held in registers (128, 64) with even, odd and single rows, and the rest
 * (40: no SIMD group, 80 and 200: groups and a scalar tail, 16); 37 tokens; then 8 lanes. */
static void test_scan_avx512_equals_scalar(void) {
    if (!have_avx512()) return;
    const int64_t shapes[][2] = {{128, 64}, {128, 7}, {64, 32}, {64, 1}, {40, 7}, {80, 5}, {200, 3}, {16, 5}};
    int64_t bad = 0, checked = 0;
    for (int lanes = 16; lanes >= 8; lanes -= 8)
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
            const int64_t N = shapes[c][0], P = shapes[c][1], T = lanes == 16 ? 37 : 3;
            const int64_t ldx = P + 2 * N + 3, ldt = 3, ldy = P + 1;
            float *xs = fill(T * ldx, -2, 2), *dt = fill(T * ldt, 0.01f, 2), *dA = fill(T * ldt, 0.1f, 1);
            float *S0 = fill(P * N, -1, 1), *S1 = dup(S0, P * N);
            float *y0 = calloc((size_t)(T * ldy), sizeof(float)), *y1 = calloc((size_t)(T * ldy), sizeof(float));
            sn_ssd_scan_scalar(N, P, lanes, T, xs, xs + P, xs + P + N, ldx, dt, dA, ldt, S0, y0, ldy);
            sn_ssd_scan_avx512(N, P, lanes, T, xs, xs + P, xs + P + N, ldx, dt, dA, ldt, S1, y1, ldy);
            const int64_t d = differ(S0, S1, P * N) + differ(y0, y1, T * ldy);
            if (d) printf("N %lld P %lld lanes %d: %lld differ ", (long long)N, (long long)P, lanes, (long long)d);
            bad += d;
            checked += P * N + T * ldy;
            free(xs); free(dt); free(dA); free(S0); free(S1); free(y0); free(y1);
        }
    printf("(%lld floats) ", (long long)checked);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_scan_scalar_is_the_formula(void) {
    const int64_t N = 128, P = 8, T = 3, ldx = P + 2 * N;
    for (int lanes = 8; lanes <= 16; lanes += 8) {
        float *xs = fill(T * ldx, -2, 2), *dt = fill(T, 0.01f, 2), *dA = fill(T, 0.1f, 1);
        float *S = fill(P * N, -1, 1), *y = calloc((size_t)(T * P), sizeof(float));
        double *D = malloc((size_t)(P * N) * sizeof(double));
        for (int64_t i = 0; i < P * N; i++) D[i] = S[i];
        sn_ssd_scan_scalar(N, P, lanes, T, xs, xs + P, xs + P + N, ldx, dt, dA, 1, S, y, P);
        double worst = 0;
        for (int64_t t = 0; t < T; t++) {
            const float *x = xs + t * ldx, *B = x + P, *C = x + P + N;
            for (int64_t i = 0; i < P; i++) {
                double yi = 0;
                for (int64_t k = 0; k < N; k++) {
                    double *s = &D[i * N + k];
                    *s = *s * dA[t] + (double)B[k] * x[i] * dt[t];
                    yi += *s * C[k];
                }
                worst = fmax(worst, fabs(yi - y[t * P + i]) / (1 + fabs(yi)));
            }
        }
        CU_ASSERT(worst < 1e-4);
        if (worst >= 1e-4) printf("lanes %d: max error %g ", lanes, worst);
        free(xs); free(dt); free(dA); free(S); free(y); free(D);
    }
}

/* ggml-cpu's scan writes state * dA + B * (x dt) as two multiplies and an add, and GCC's default
 * -ffp-contract=fast fuses it: the new state is fma(state, dA, B * x dt) in the SIMD groups (the
 * unfused form differs by an ulp, which an f16 KV cache downstream turns into 1e-4 logits). */
static void test_scan_state_is_fused(void) {
    const int64_t N = 64, P = 4, ldx = P + 2 * N;
    int64_t bad = 0;
    for (int lanes = 8; lanes <= 16; lanes += 8) {
        float *xs = fill(ldx, -2, 2), dt = 0.37f, dA = 0.81f, *S = fill(P * N, -1, 1), y[4];
        float *S0 = dup(S, P * N);
        sn_ssd_scan_scalar(N, P, lanes, 1, xs, xs + P, xs + P + N, ldx, &dt, &dA, 1, S, y, P);
        for (int64_t i = 0; i < P; i++)
            for (int64_t k = 0; k < N; k++)
                bad += S[i * N + k] != fmaf(S0[i * N + k], dA, xs[P + k] * (xs[i] * dt));
        free(xs); free(S); free(S0);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* gated delta rule inputs: T tokens of q, k, v (S each) in rows of ldx, k of unit length (as the
 * model's l2 norm makes it, so the state stays bounded), beta in (0, 1), log decay below 0 */
typedef struct { float *x, *beta, *g; } gdn_in;
static gdn_in gdn_inputs(int64_t S, int64_t T, int64_t ldx, int64_t ldg) {
    gdn_in in = {fill(T * ldx, -1, 1), fill(T * ldg, 0.05f, 0.95f), fill(T * ldg, -2, -0.01f)};
    for (int64_t t = 0; t < T; t++) {
        float *k = in.x + t * ldx + S, n = 0;
        for (int64_t i = 0; i < S; i++) n += k[i] * k[i];
        for (int64_t i = 0; i < S; i++) k[i] /= sqrtf(n);
    }
    return in;
}

/* the AVX2 twin at 8 lanes and the AVX-512 twin at 16 (S 64 and 128 held in registers, 192 in
 * memory, 16, 32 and 48 falling back) and 8 lanes, against the scalar twin, bit for bit; 37 tokens
 * = two chunks and a remainder */
static void test_gdn_simd_equals_scalar(void) {
    const int64_t Ss[] = {128, 64, 192, 32, 16, 48};
    int64_t bad = 0, checked = 0;
    for (int level = 1; level <= 2; level++) {
        if (level == 1 ? !have_avx2() : !have_avx512()) continue;
        for (int lanes = 16; lanes >= 8; lanes -= 8)
            for (size_t c = 0; c < sizeof Ss / sizeof Ss[0]; c++) {
                const int64_t S = Ss[c], T = lanes == 16 ? 37 : 5, ldx = 3 * S + 5, ldg = 3, ldy = S + 7;
                gdn_in in = gdn_inputs(S, T, ldx, ldg);
                float *M0 = fill(S * S, -1, 1), *M1 = dup(M0, S * S);
                float *y0 = calloc((size_t)(T * ldy), sizeof(float)), *y1 = calloc((size_t)(T * ldy), sizeof(float));
                sn_gdn_scalar(S, lanes, T, in.x, in.x + S, in.x + 2 * S, ldx, in.beta, in.g, ldg, M0, y0, ldy);
                (level == 1 ? sn_gdn_avx2 : sn_gdn_avx512)(S, lanes, T, in.x, in.x + S, in.x + 2 * S, ldx, in.beta, in.g,
                                                          ldg, M1, y1, ldy);
                const int64_t d = differ(M0, M1, S * S) + differ(y0, y1, T * ldy);
                if (d) printf("level %d S %lld lanes %d: %lld differ ", level, (long long)S, lanes, (long long)d);
                bad += d;
                checked += S * S + T * ldy;
                free(in.x); free(in.beta); free(in.g); free(M0); free(M1); free(y0); free(y1);
            }
    }
    printf("(%lld floats) ", (long long)checked);
    CU_ASSERT_EQUAL(bad, 0);
}

/* the scalar twin against the delta rule in double, both lane widths, S with and without a tail */
static void test_gdn_scalar_is_the_formula(void) {
    const int64_t Ss[] = {128, 48}, T = 6;
    double worst = 0;
    for (int lanes = 8; lanes <= 16; lanes += 8)
        for (int c = 0; c < 2; c++) {
            const int64_t S = Ss[c], ldx = 3 * S;
            gdn_in in = gdn_inputs(S, T, ldx, 1);
            float *M = fill(S * S, -1, 1), *y = calloc((size_t)(T * S), sizeof(float));
            double *D = malloc((size_t)(S * S) * sizeof(double));
            for (int64_t i = 0; i < S * S; i++) D[i] = M[i];
            sn_gdn_scalar(S, lanes, T, in.x, in.x + S, in.x + 2 * S, ldx, in.beta, in.g, 1, M, y, S);
            for (int64_t t = 0; t < T; t++) {
                const float *q = in.x + t * ldx, *k = q + S, *v = q + 2 * S;
                for (int64_t j = 0; j < S; j++) {
                    double *r = D + j * S, sk = 0, sq = 0;
                    for (int64_t i = 0; i < S; i++) sk += (r[i] *= exp((double)in.g[t])) * k[i];
                    const double d = (v[j] - sk) * in.beta[t];
                    for (int64_t i = 0; i < S; i++) sq += (r[i] += d * k[i]) * q[i];
                    worst = fmax(worst, fabs(sq / sqrt((double)S) - y[t * S + j]));
                }
            }
            for (int64_t i = 0; i < S * S; i++) worst = fmax(worst, fabs(D[i] - M[i]));
            free(in.x); free(in.beta); free(in.g); free(M); free(y); free(D);
        }
    CU_ASSERT(worst < 1e-4);
    if (worst >= 1e-4) printf("max error %g ", worst);
}

static void test_conv_avx2_equals_scalar_and_formula(void) {
    const int64_t ns[] = {1792, 13, 8, 3};
    int64_t bad = 0, checked = 0;
    double worst = 0;
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
        const int64_t n = ns[c], K = 4, T = 7, ldw = n + 5, ldt = n + 1, ldo = n + 2;
        float *win = fill((K - 1 + T) * ldw, -3, 3), *wt = fill(K * ldt, -1, 1), *bias = fill(n, -1, 1);
        float *o0 = calloc((size_t)(T * ldo), sizeof(float)), *o1 = calloc((size_t)(T * ldo), sizeof(float));
        sn_ssm_conv_scalar(n, K, T, win, ldw, wt, ldt, bias, o0, ldo);
        for (int64_t t = 0; t < T; t++)
            for (int64_t ch = 0; ch < n; ch++) {
                double s = bias[ch];
                for (int64_t j = 0; j < K; j++) s += (double)win[(t + j) * ldw + ch] * wt[j * ldt + ch];
                worst = fmax(worst, fabs(s - o0[t * ldo + ch]));
            }
        if (sn_test_tuning()->isa & SN_CPU_AVX2) {
            sn_ssm_conv_avx2(n, K, T, win, ldw, wt, ldt, bias, o1, ldo);
            bad += differ(o0, o1, T * ldo);
            checked += T * ldo;
        }
        if (sn_test_tuning()->isa & SN_CPU_AVX512) {
            memset(o1, 0, (size_t)(T * ldo) * sizeof(float));
            sn_ssm_conv_avx512(n, K, T, win, ldw, wt, ldt, bias, o1, ldo);
            bad += differ(o0, o1, T * ldo);
            checked += T * ldo;
        }
        free(win); free(wt); free(bias); free(o0); free(o1);
    }
    printf("(%lld floats vs the twins, max error vs double %g) ", (long long)checked, worst);
    CU_ASSERT(worst < 1e-5);
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_hsums(void) {
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = ldexpf(1.0f, i);
    CU_ASSERT_EQUAL(sn_hsum16(x), 65535.0f);
    CU_ASSERT_EQUAL(sn_hsum8(x), 255.0f);
    /* the pairing: (x0 + x4) + (x1 + x5) first, then the two halves; 1 + 2^24 loses the 1 */
    float y[8] = {1.0f, 16777216.0f, 0, 0, 1.0f, 0, 0, 0};
    CU_ASSERT_EQUAL(sn_hsum8(y), 16777218.0f); /* (1+1) + 2^24 exactly */
    /* 16 lanes as _mm512_reduce_add_ps adds them: a_i = x_i + x_(i+8), b_i = a_i + a_(i+4), then
     * (b0 + b2) + (b1 + b3). Inputs where any other pairing rounds differently: */
    float z[16] = {0};
    z[0] = 1.0f; z[8] = 1.0f; z[4] = 16777216.0f; /* a0 = 2 first, then b0 = 2^24 + 2 exactly */
    CU_ASSERT_EQUAL(sn_hsum16(z), 16777218.0f);
    float u[16] = {0};
    u[0] = 16777216.0f; u[2] = -16777216.0f; u[1] = 1.0f; /* (b0 + b2) cancels before b1 is added */
    CU_ASSERT_EQUAL(sn_hsum16(u), 1.0f);
}

/* expf: the AVX-512 one against the C library's on every 61st float bit pattern of the fast path
 * (|x| < 88, both signs: 37 million values; the whole range, 2.2e9, was checked when it was written) and on
 * the edges and special values the library handles itself. */
static void test_expf_avx512_equals_libm(void) {
    if (!have_avx512()) return;
    enum { CH = 4096 };
    static float x[CH], y[CH];
    int64_t bad = 0, n = 0;
    for (uint64_t sign = 0; sign < 2; sign++)
        for (uint64_t u = 0; u < 0x42B00000ull;) {
            int c = 0;
            for (; c < CH && u < 0x42B00000ull; c++, u += 61) {
                const uint32_t b = (uint32_t)u | (uint32_t)(sign << 31);
                memcpy(&x[c], &b, 4);
            }
            sn_expf_avx512(c, x, y);
            for (int i = 0; i < c; i++) {
                const float want = expf(x[i]);
                bad += memcmp(&want, &y[i], 4) != 0;
            }
            n += c;
        }
    const float edge[] = {88.0f, -88.0f, 88.7f, 88.73f, -103.0f, -103.3f, -104.0f, 0.0f, -0.0f, 1e-30f, -1e-30f,
                          87.99999f, -87.99999f, INFINITY, -INFINITY, NAN, 3.0e38f, -3.0e38f};
    const int ne = (int)(sizeof edge / sizeof edge[0]);
    float xe[32], ye[32];
    for (int i = 0; i < 32; i++) xe[i] = edge[i % ne];
    sn_expf_avx512(32, xe, ye);
    for (int i = 0; i < 32; i++) {
        const float want = expf(xe[i]);
        bad += memcmp(&want, &ye[i], 4) != 0 && !(isnan(want) && isnan(ye[i]));
    }
    printf("(%lld values) ", (long long)n);
    CU_ASSERT_EQUAL(bad, 0);
}

/* RWKV-7's time-mix step: the AVX-512 twin = the scalar one (channel counts with and without a
 * tail, the first layer's copy and the others' mix), and the scalar one = the formula in double. */
static void test_rwkv7_mix(void) {
    const int64_t ns[] = {768, 37, 16, 5};
    for (int f = 0; f < 2; f++)
        for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
            const int64_t n = ns[c];
            float *w0 = fill(n, -3, 3), *a0 = fill(n, -2, 2), *v0 = fill(n, -2, 2), *vm = fill(n, -4, 4);
            float *w = fill(n, -6, 6), *a = fill(n, -3, 3), *v = fill(n, -1, 1), *vf = fill(n, -1, 1);
            w[0] = 120.0f, a[n - 1] = -95.0f; /* the library's slow path inside the vector loop */
            float *w1 = dup(w, n), *a1 = dup(a, n), *v1 = dup(v, n), *vf1 = dup(vf, n);
            sn_rwkv7_mix_scalar(n, w1, w0, a1, a0, v1, vf1, vm, v0, f);
            double err = 0;
            for (int64_t i = 0; i < n; i++) {
                const double sw = 1 / (1 + exp(-((double)w[i] + w0[i]))), sa = 1 / (1 + exp(-((double)a[i] + a0[i])));
                const double sv = 1 / (1 + exp(-((double)vm[i] + v0[i])));
                const double vv = f ? v[i] : v[i] + ((double)vf[i] - v[i]) * sv;
                err = fmax(err, fabs(w1[i] - exp(sw * -0.606531)) + fabs(a1[i] - sa) + fabs(v1[i] - vv));
                if (f) CU_ASSERT_EQUAL(memcmp(&vf1[i], &v[i], 4), 0);
            }
            CU_ASSERT(err < 1e-5);
            if (have_avx512()) {
                float *w2 = dup(w, n), *a2 = dup(a, n), *v2 = dup(v, n), *vf2 = dup(vf, n);
                sn_rwkv7_mix_avx512(n, w2, w0, a2, a0, v2, vf2, vm, v0, f);
                CU_ASSERT_EQUAL(differ(w1, w2, n) + differ(a1, a2, n) + differ(v1, v2, n) + differ(vf1, vf2, n), 0);
                free(w2), free(a2), free(v2), free(vf2);
            }
            free(w0), free(a0), free(v0), free(vm), free(w), free(a), free(v), free(vf);
            free(w1), free(a1), free(v1), free(vf1);
        }
}

/* RWKV's token-shift lerp: avx512 = scalar (with and without a tail, 1 and 6 mixes), scalar = the
 * three float steps written out. */
static void test_rwkv7_lerp(void) {
    const int64_t ns[] = {768, 37, 5};
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++)
        for (int nq = 1; nq <= 6; nq += 5) {
            const int64_t n = ns[c];
            float *h = fill(n, -3, 3), *prev = fill(n, -3, 3), *mu = fill(nq * n, -1, 2);
            float *x1 = fill(nq * n, 0, 1), *x2 = dup(x1, nq * n);
            sn_rwkv7_lerp_scalar(n, nq, h, prev, mu, n, x1, n);
            int64_t bad = 0;
            for (int q = 0; q < nq; q++)
                for (int64_t i = 0; i < n; i++) {
                    volatile float d = prev[i] - h[i];
                    volatile float m = d * mu[q * n + i];
                    const float want = m + h[i];
                    bad += memcmp(&want, &x1[q * n + i], 4) != 0;
                }
            CU_ASSERT_EQUAL(bad, 0);
            if (have_avx512()) {
                sn_rwkv7_lerp_avx512(n, nq, h, prev, mu, n, x2, n);
                CU_ASSERT_EQUAL(differ(x1, x2, nq * n), 0);
            }
            free(h), free(prev), free(mu), free(x1), free(x2);
        }
}

static const sn_test_case cases[] = {
    {"rwkv7 token-shift lerp: avx512 = scalar = the float steps", test_rwkv7_lerp},
    {"expf: avx512 = the C library's, bit for bit", test_expf_avx512_equals_libm},
    {"rwkv7 time-mix step: avx512 = scalar, bit for bit; scalar = the formula", test_rwkv7_mix},
    {"wkv7: avx2 = scalar, bit for bit (N 32/64/96 and scalar fallbacks)", test_wkv7_avx2_equals_scalar},
    {"wkv7: avx512 = scalar, bit for bit (16 lanes: N 64/128/32 in registers, masked sizes; 8 lanes)",
     test_wkv7_avx512_equals_scalar},
    {"wkv7: scalar = the recurrence in double (8 and 16 lanes)", test_wkv7_scalar_is_the_formula},
    {"ssd scan: avx2 = scalar, bit for bit (row pairs, odd rows, tails)", test_scan_avx2_equals_scalar},
    {"ssd scan: avx512 = scalar, bit for bit (16 lanes: N 128/64 in registers, tails; 8 lanes)",
     test_scan_avx512_equals_scalar},
    {"ssd scan: scalar = the recurrence in double (8 and 16 lanes)", test_scan_scalar_is_the_formula},
    {"ssd scan: the new state is ggml's as GCC fuses it, fma(state, dA, B x dt)", test_scan_state_is_fused},
    {"ssm conv: avx2 and avx512 = scalar bit for bit, scalar = the formula", test_conv_avx2_equals_scalar_and_formula},
    {"gated delta rule: avx2 and avx512 = scalar, bit for bit (S 128/64 in registers, 192, fallbacks; 8 and 16 lanes)",
     test_gdn_simd_equals_scalar},
    {"gated delta rule: scalar = the recurrence in double (8 and 16 lanes, with and without a tail)",
     test_gdn_scalar_is_the_formula},
    {"vector reductions: ggml's pairings", test_hsums},
};
SN_TEST_MAIN("recurrent", cases)
