/* recurrent.c - scalar references of the recurrent families' kernels (recurrent.h): wkv7, the
 * Mamba-2 scan and conv1d, the gated delta rule, written lane by lane so each float is rounded where ggml's SIMD code
 * rounds it (fmaf is one rounding, as a vector FMA is). recurrent_avx2.c and recurrent_avx512.c
 * are their twins. */
#include "recurrent.h"

#include "cpu.h"
#include "kernels.h"

#include <math.h>
#include <string.h>

enum { VECS = 4, MAXL = 16 };

float sn_hsum16(const float *x) {
    float a[8], b[4];
    for (int i = 0; i < 8; i++) a[i] = x[i + 8] + x[i];
    for (int i = 0; i < 4; i++) b[i] = a[i + 4] + a[i];
    return (b[0] + b[2]) + (b[1] + b[3]);
}

float sn_hsum8(const float *x) {
    float t[4];
    for (int i = 0; i < 4; i++) t[i] = x[i] + x[i + 4];
    return (t[0] + t[1]) + (t[2] + t[3]);
}

/* GGML_F32_VEC_REDUCE over four accumulators of `lanes` lanes (x is modified). */
static float reduce4(float x[VECS][MAXL], int lanes) {
    for (int l = 0; l < lanes; l++) {
        x[0][l] += x[2][l];
        x[1][l] += x[3][l];
    }
    for (int l = 0; l < lanes; l++) x[0][l] += x[1][l];
    return lanes == 16 ? sn_hsum16(x[0]) : sn_hsum8(x[0]);
}

void sn_wkv7_scalar(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                    const float *v, const float *a, const float *b, float *S, float *y) {
    const int step = VECS * lanes;
    float sum[VECS][MAXL], acc[VECS][MAXL];
    for (int64_t t = 0; t < T; t++, r += ld, w += ld, k += ld, v += ld, a += ld, b += ld, y += ld) {
        for (int64_t i = 0; i < N; i++) {
            float *Si = S + i * N;
            memset(sum, 0, sizeof(sum));
            for (int64_t j0 = 0; j0 < N; j0 += step)
                for (int q = 0; q < VECS; q++)
                    for (int l = 0; l < lanes; l++) {
                        const int64_t j = j0 + q * lanes + l;
                        if (j < N) sum[q][l] = fmaf(a[j], Si[j], sum[q][l]);
                    }
            const float sa = reduce4(sum, lanes);
            memset(acc, 0, sizeof(acc));
            for (int64_t j0 = 0; j0 < N; j0 += step)
                for (int q = 0; q < VECS; q++)
                    for (int l = 0; l < lanes; l++) {
                        const int64_t j = j0 + q * lanes + l;
                        if (j >= N) continue;
                        const float kv = v[i] * k[j];
                        float st = fmaf(Si[j], w[j], kv);
                        st = fmaf(sa, b[j], st);
                        Si[j] = st;
                        acc[q][l] = fmaf(st, r[j], acc[q][l]);
                    }
            y[i] = reduce4(acc, lanes);
        }
    }
}

void sn_ssd_scan_scalar(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                        int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy) {
    const int64_t np = N & ~(int64_t)(VECS * lanes - 1);
    float acc[VECS][MAXL];
    for (int64_t t = 0; t < T; t++, x += ldx, B += ldx, C += ldx, dt += ldt, dA += ldt, y += ldy) {
        for (int64_t i = 0; i < P; i++) {
            float *Si = S + i * N;
            const float x_dt = x[i] * *dt;
            memset(acc, 0, sizeof acc);
            for (int64_t k0 = 0; k0 < np; k0 += VECS * lanes)
                for (int q = 0; q < VECS; q++)
                    for (int l = 0; l < lanes; l++) {
                        const int64_t k = k0 + q * lanes + l;
                        const float st = fmaf(Si[k], *dA, B[k] * x_dt); /* ggml's mul, mul, add as GCC fuses it */
                        acc[q][l] = fmaf(st, C[k], acc[q][l]);
                        Si[k] = st;
                    }
            float sum = np ? reduce4(acc, lanes) : 0.0f;
            for (int64_t k = np; k < N; k++) { /* the states past the SIMD groups */
                const float st = Si[k] * *dA + B[k] * x_dt;
                sum += st * C[k];
                Si[k] = st;
            }
            y[i] = sum;
        }
    }
}

void sn_ssm_conv_scalar(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                        const float *bias, float *out, int64_t ldo) {
    for (int64_t t = 0; t < T; t++, win += ldw, out += ldo)
        for (int64_t c = 0; c < n; c++) {
            float sum = 0.0f;
            for (int64_t j = 0; j < K; j++) sum = fmaf(win[j * ldw + c], wt[j * ldt + c], sum);
            out[c] = sum + bias[c];
        }
}

/* ggml_vec_dot_f32 at `lanes` lanes: whole groups of 4 * lanes in 4 accumulators, reduce4, the tail
 * as ggml's build adds it (sn_k_dot_f32_tail) */
static float dot_f32(int64_t n, int lanes, const float *x, const float *y) {
    float acc[VECS][MAXL];
    memset(acc, 0, sizeof acc);
    const int64_t np = n & ~(int64_t)(VECS * lanes - 1);
    for (int64_t i0 = 0; i0 < np; i0 += VECS * lanes)
        for (int q = 0; q < VECS; q++)
            for (int l = 0; l < lanes; l++) {
                const int64_t i = i0 + q * lanes + l;
                acc[q][l] = fmaf(x[i], y[i], acc[q][l]);
            }
    return sn_k_dot_f32_tail(np ? reduce4(acc, lanes) : 0.0f, x, y, np, n, lanes);
}

void sn_gdn_scalar(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                   const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy) {
    const float scale = 1.0f / sqrtf((float)S);
    for (int64_t t = 0; t < T; t++, q += ldx, k += ldx, v += ldx, beta += ldg, g += ldg, y += ldy) {
        const float dg = expf(*g);
        for (int64_t j = 0; j < S; j++) {
            float *r = M + j * S;
            for (int64_t i = 0; i < S; i++) r[i] *= dg;
            const float d = (v[j] - dot_f32(S, lanes, r, k)) * *beta;
            for (int64_t i = 0; i < S; i++) r[i] = fmaf(k[i], d, r[i]);
            y[j] = dot_f32(S, lanes, r, q) * scale;
        }
    }
}

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

void sn_rwkv7_mix_scalar(int64_t n, float *w, const float *w0, float *a, const float *a0, float *v, float *vfirst,
                         const float *vm, const float *v0, int first) {
    for (int64_t i = 0; i < n; i++) {
        w[i] = expf(sigmoid(w[i] + w0[i]) * -0.606531f);
        a[i] = sigmoid(a[i] + a0[i]);
        if (first) vfirst[i] = v[i];
        else v[i] = v[i] + (vfirst[i] - v[i]) * sigmoid(vm[i] + v0[i]);
    }
}

void sn_rwkv7_lerp_scalar(int64_t n, int nq, const float *h, const float *prev, const float *mu, int64_t ldmu, float *xx,
                          int64_t ldx) {
    for (int q = 0; q < nq; q++)
        for (int64_t i = 0; i < n; i++) xx[q * ldx + i] = (prev[i] - h[i]) * mu[q * ldmu + i] + h[i];
}

const sn_recurrent_kernels *sn_recurrent_kernels_at(int level) {
    static const sn_recurrent_kernels k512 = {"avx512", sn_wkv7_avx512, sn_ssd_scan_avx512, sn_ssm_conv_avx512,
                                               sn_rwkv7_mix_avx512, sn_rwkv7_lerp_avx512, sn_gdn_avx512};
    static const sn_recurrent_kernels k256 = {"avx2", sn_wkv7_avx2, sn_ssd_scan_avx2, sn_ssm_conv_avx2,
                                               sn_rwkv7_mix_scalar, sn_rwkv7_lerp_scalar, sn_gdn_avx2};
    static const sn_recurrent_kernels k1 = {"scalar", sn_wkv7_scalar, sn_ssd_scan_scalar, sn_ssm_conv_scalar,
                                             sn_rwkv7_mix_scalar, sn_rwkv7_lerp_scalar, sn_gdn_scalar};
    return level == 2 ? &k512 : level == 1 ? &k256 : &k1;
}
