/* recurrent.h - the state recurrences of the recurrent families (RWKV-7's wkv7, Mamba-2's
 * causal conv1d and SSD scan, Qwen3.5's gated delta rule), one head or one block of channels at a
 * time, in the order llama.cpp's CPU backend computes them so every float is the same as ggml's.
 *
 * Each kernel has a scalar reference (recurrent.c) and AVX2 and AVX-512 twins (recurrent_avx2.c,
 * recurrent_avx512.c) that give the same bits (tests/unit/test_recurrent.c compares them); `lanes`
 * is the vector width of ggml's reductions on this machine (the kernel object's tuning.lanes: 16
 * on the AVX-512 builds, 8 on AVX2). The AVX2 twins serve lanes == 8 and the AVX-512 twins lanes == 16; each falls
 * back to the one below it for other widths (and off x86 their names are the scalar ones). Callers take
 * them from the model's kernel table (k->rec). */
#ifndef SN_RECURRENT_H
#define SN_RECURRENT_H
#include <stdint.h>

/* The horizontal sums of ggml's vector reductions (GGML_F32_VEC_REDUCE) over a lane accumulator:
 * 16 lanes in the order GCC's _mm512_reduce_add_ps adds them (halves, quarters, then
 * (b0 + b2) + (b1 + b3)); 8 lanes as the AVX2 macro's tail does (128-bit halves, two hadds:
 * (t0 + t1) + (t2 + t3)). */
float sn_hsum16(const float *x);
float sn_hsum8(const float *x);

/* ggml_rwkv_wkv7 for one head of size N over T tokens. Token t's vectors are at r + t*ld, w + t*ld,
 * ... (N floats each; a is -kk and b is kk * iclr, as llama.cpp passes them), its output at
 * y + t*ld. S is the head's N x N state, row i = value channel i, updated in place:
 *   sa = S_i . a;  S_ij = S_ij * w_j + v_i * k_j + sa * b_j;  y_i = S_i . r
 * with the dots in ggml's 4-accumulator SIMD order of `lanes` lanes, positions past N counted as 0. */
void sn_wkv7_scalar(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                    const float *v, const float *a, const float *b, float *S, float *y);
/* Same bits; runs when lanes == 8 and N % 32 == 0, else calls sn_wkv7_scalar. */
void sn_wkv7_avx2(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                  const float *v, const float *a, const float *b, float *S, float *y);
/* Same bits; runs when lanes == 16 (any N), else calls sn_wkv7_avx2. */
void sn_wkv7_avx512(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                    const float *v, const float *a, const float *b, float *S, float *y);

/* ggml_ssm_scan's Mamba-2 branch for one head: P rows of N states (S, row-major, in place), T
 * tokens. Token t: x_t = x + t*ldx (P values), B_t = B + t*ldx, C_t = C + t*ldx (N values each),
 * dt_t = dt[t*ldt] (after softplus), dA_t = dA[t*ldt] (= exp(dt_t * A)), output y + t*ldy (P):
 *   S_ik = S_ik * dA + B_k * (x_i * dt);  y_i = sum_k S_ik * C_k
 * the sum in ggml's order: whole groups of 4 * lanes states in 4 accumulators of `lanes` lanes,
 * reduced as GGML_F32_VEC_REDUCE does, then the remaining states one by one. */
void sn_ssd_scan_scalar(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                        int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy);
/* Same bits; runs when lanes == 8, else calls sn_ssd_scan_scalar. */
void sn_ssd_scan_avx2(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                      int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy);
/* Same bits; runs when lanes == 16, else calls sn_ssd_scan_avx2. */
void sn_ssd_scan_avx512(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                        int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy);

/* ggml_gated_delta_net for one head of S over T tokens. M is the head's S x S state stored transposed
 * (row j = column j of the delta rule's state), updated in place. Token t's q, k and v are at
 * q + t*ldx, k + t*ldx, v + t*ldx (S floats each), its beta and log decay at beta[t*ldg], g[t*ldg],
 * its output at y + t*ldy:
 *   M_j *= expf(g);  d = (v_j - M_j . k) * beta;  M_j += d k;  y_j = (M_j . q) * (1 / sqrtf(S))
 * the dots in ggml_vec_dot_f32's order at `lanes` lanes (4 accumulators over whole groups of 4 *
 * lanes, GGML_F32_VEC_REDUCE, its float tail as kernels.h sn_k_dot_f32_tail), the update one fma
 * per element (ggml_vec_mad_f32), the decay one multiply (ggml_vec_scale_f32). */
void sn_gdn_scalar(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                   const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy);
/* Same bits; runs when lanes == 8 and S % 32 == 0, else calls sn_gdn_scalar. */
void sn_gdn_avx2(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                 const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy);
/* Same bits; runs when lanes == 16 and S % 64 == 0, else calls sn_gdn_avx2. */
void sn_gdn_avx512(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                   const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy);

/* ggml_ssm_conv, then the bias add: for tokens t < T and channels c < n,
 *   out[t*ldo + c] = (sum_{j<K} win[(t+j)*ldw + c] * wt[j*ldt + c]) + bias[c]
 * win holds K-1+T rows of the conv window (the saved columns, then this batch's inputs) and wt the
 * conv weights transposed ([j][c]); each sum is one fused multiply-add chain j = 0..K-1 from 0,
 * what ggml's FMA-contracted loop computes. */
void sn_ssm_conv_scalar(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                        const float *bias, float *out, int64_t ldo);
/* Same bits (the conv's sums do not depend on the lane width). */
void sn_ssm_conv_avx2(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                      const float *bias, float *out, int64_t ldo);
void sn_ssm_conv_avx512(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                        const float *bias, float *out, int64_t ldo);

/* RWKV-7's per-channel time-mix step for n channels, as ggml's elementwise ops compute it on CPU
 * (sigmoid(x) = 1 / (1 + expf(-x)), ggml_exp = expf, each product and sum rounded to float):
 *   w = exp(sigmoid(w + w0) * -0.606531);  a = sigmoid(a + a0);
 *   first layer: vfirst = v;  else v = v + (vfirst - v) * sigmoid(vm + v0). */
void sn_rwkv7_mix_scalar(int64_t n, float *w, const float *w0, float *a, const float *a0, float *v, float *vfirst,
                         const float *vm, const float *v0, int first);
/* Same bits (expf_avx512.h). */
void sn_rwkv7_mix_avx512(int64_t n, float *w, const float *w0, float *a, const float *a0, float *v, float *vfirst,
                         const float *vm, const float *v0, int first);
/* RWKV's token-shift lerp for nq mixes of one token: xx[q * ldx + i] = (prev[i] - h[i]) *
 * mu[q * ldmu + i] + h[i], each step rounded to float (ggml's sub, mul and add). */
void sn_rwkv7_lerp_scalar(int64_t n, int nq, const float *h, const float *prev, const float *mu, int64_t ldmu, float *xx,
                          int64_t ldx);
void sn_rwkv7_lerp_avx512(int64_t n, int nq, const float *h, const float *prev, const float *mu, int64_t ldmu, float *xx,
                          int64_t ldx);
/* expf over n floats, bit-identical to the C library's (expf_avx512.h), for the tests. */
void sn_expf_avx512(int64_t n, const float *x, float *y);

/* Without x86 the twins are not compiled (their files are empty): their names are the scalar
 * references, so callers and tests need no conditions of their own. */
#if !defined(__x86_64__)
#define sn_wkv7_avx2 sn_wkv7_scalar
#define sn_wkv7_avx512 sn_wkv7_scalar
#define sn_ssd_scan_avx2 sn_ssd_scan_scalar
#define sn_ssd_scan_avx512 sn_ssd_scan_scalar
#define sn_gdn_avx2 sn_gdn_scalar
#define sn_gdn_avx512 sn_gdn_scalar
#define sn_ssm_conv_avx2 sn_ssm_conv_scalar
#define sn_ssm_conv_avx512 sn_ssm_conv_scalar
#define sn_rwkv7_mix_avx512 sn_rwkv7_mix_scalar
#define sn_rwkv7_lerp_avx512 sn_rwkv7_lerp_scalar
#endif

/* The twins of one instruction-set level (2: AVX-512, 1: AVX2, 0: scalar; kernels.c puts them in
 * each kernel table as k->rec); each serves every lane width through its fallbacks, so callers pass
 * tuning.lanes' width and need not check it. */
typedef struct sn_recurrent_kernels {
    const char *name; /* "avx512", "avx2", "scalar" */
    void (*wkv7)(int64_t N, int lanes, int64_t T, int64_t ld, const float *r, const float *w, const float *k,
                 const float *v, const float *a, const float *b, float *S, float *y);
    void (*ssd_scan)(int64_t N, int64_t P, int lanes, int64_t T, const float *x, const float *B, const float *C,
                     int64_t ldx, const float *dt, const float *dA, int64_t ldt, float *S, float *y, int64_t ldy);
    void (*ssm_conv)(int64_t n, int64_t K, int64_t T, const float *win, int64_t ldw, const float *wt, int64_t ldt,
                     const float *bias, float *out, int64_t ldo);
    void (*rwkv7_mix)(int64_t n, float *w, const float *w0, float *a, const float *a0, float *v, float *vfirst,
                      const float *vm, const float *v0, int first);
    void (*rwkv7_lerp)(int64_t n, int nq, const float *h, const float *prev, const float *mu, int64_t ldmu, float *xx,
                       int64_t ldx);
    void (*gdn)(int64_t S, int lanes, int64_t T, const float *q, const float *k, const float *v, int64_t ldx,
                const float *beta, const float *g, int64_t ldg, float *M, float *y, int64_t ldy);
} sn_recurrent_kernels;
const sn_recurrent_kernels *sn_recurrent_kernels_at(int level);

#endif
