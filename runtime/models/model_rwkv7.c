/* model_rwkv7.c - the forward pass of RWKV-7 ("Goose"): a recurrent network with a matrix-valued
 * state per head instead of attention over a KV cache. Reads top to bottom like the paper:
 *
 *   x = layernorm0(embed(token))
 *   per layer:  h = layernorm(x);  sx = h_prev - h                    (token shift)
 *               xr,xw,xk,xv,xa,xg = h + sx * mu_{r,w,k,v,a,g}      (the fused lerp tensor)
 *               r = Wr xr;  k = Wk xk;  v = Wv xv
 *               w = exp(-0.606531 * sigmoid(w0 + W2 tanh(W1 xw)))  (decay, in (0.545, 1))
 *               a = sigmoid(a0 + A2 A1 xa)                         (in-context learning rate)
 *               v += (v_first - v) * sigmoid(v0 + V2 V1 xv)        (value residual; layer 0 sets v_first)
 *               g = G2 sigmoid(G1 xg)                              (output gate)
 *               kk = l2norm(k * k_k) per head;  k = k + (a * k * k_a - k * k_a)
 *               per head: S = S diag(w) + v k^T + (S (-kk)) (kk * a)^T;  y = S r   (wkv7)
 *               y = groupnorm(y) * ln_x + b + v * sum(k * r * r_k) per head;  x += Wo (y * g)
 *               h = layernorm(x);  xk = h + (h_prev - h) * mu_k;  x += Wvalue relu(Wkey xk)^2
 *   logits = Whead layernorm(x_last)
 *
 * The state per layer is two token-shift vectors (the last normed inputs of time mix and channel
 * mix) and head_count matrices of head_size^2 floats, in llama.cpp's layout; its size does not
 * depend on the context. Numerics follow llama.cpp's CPU graph: every elementwise op rounds where
 * ggml's does, norms sum in double like ggml_norm/ggml_l2_norm (the variance in ggml's SIMD
 * blocks), the matmuls come from ops.c, and the wkv7 recurrence reproduces ggml's SIMD kernel
 * (FMAs in four vectors of 16 lanes on AVX-512 or 8 on AVX2, its reduction order). That kernel
 * walks the head in steps of 4 vectors (64 floats on AVX-512, 32 on AVX2): for a head size that
 * is not a multiple of the step ggml reads (and stores) past the head; here the lanes beyond the
 * head are zero, the mathematically right result (llama.cpp's output is wrong there, so parity
 * is claimed for head size 64 only). */
#include "ops.h"

#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { N_LERP = 6, VECS = 4 };
enum { PART_SHIFT = 0, PART_WKV = 1 };

typedef struct {
    int64_t n_embd, n_layer, n_vocab, n_ff, head_size, n_head;
    int64_t r_decay, r_iclr, r_vres, r_gate;
    float eps;
} rwkv_hparams;

typedef struct {
    const float *attn_norm, *attn_norm_b, *ffn_norm, *ffn_norm_b, *ln_x, *ln_x_b;
    const float *lerp;            /* [6][n_embd]: r, w, k, v, a, g */
    const float *w0, *a0, *v0, *k_k, *k_a, *r_k, *lerp_ffn;
    sn_matrix w1, w2, a1, a2, v1, v2, g1, g2;
    sn_matrix wr, wk, wv, wo, ffn_key, ffn_value;
} rwkv_layer;

typedef struct {
    rwkv_hparams hp;
    sn_matrix tok_embd;
    const float *ln0, *ln0_b, *out_norm, *out_norm_b;
    sn_matrix output;
    rwkv_layer *layers;
    sn_f32_store f32s; /* converted small tensors */
    sn_ops ops;
    int lanes; /* vector width of ggml's reductions on this CPU (16 or 8) */
    int wkv_avx2; /* 8 lanes and AVX2 usable: wkv_head_avx2 (for head sizes that are multiples of 32) */
    /* activations for up to cap_T tokens */
    int64_t cap_T;
    float *x, *h, *prev, *xx, *r, *w, *k, *v, *a, *g, *kk, *b, *vfirst, *y, *lo, *ff;
} rwkv_state;

#define RHP(m) (&((const rwkv_state *)(m)->impl)->hp)

/* ---- loading ---- */

static sn_status keep(sn_model *m, rwkv_state *s, const char *name, int n_dims, const int64_t *ne, const float **out,
                      sn_err *err) {
    return sn_ops_f32_tensor(m, &s->f32s, name, n_dims, ne, out, err);
}

static sn_status vec(sn_model *m, rwkv_state *s, const char *name, int64_t n, const float **out, sn_err *err) {
    return keep(m, s, name, 1, &n, out, err);
}

/* A LayerNorm's NAME.weight and NAME.bias, n each. */
static sn_status norm_wb(sn_model *m, rwkv_state *s, const char *name, int64_t n, const float **w, const float **b,
                         sn_err *err) {
    char full[SN_GGUF_MAX_NAME + 40];
    snprintf(full, sizeof full, "%s.weight", name);
    sn_status st = vec(m, s, full, n, w, err);
    if (st) return st;
    snprintf(full, sizeof full, "%s.bias", name);
    return vec(m, s, full, n, b, err);
}

static sn_status read_hparams(const sn_model *m, rwkv_hparams *hp, sn_err *err) {
    sn_status st;
    hp->n_embd = m->hp.n_embd;
    hp->n_layer = m->hp.n_layer;
    hp->n_vocab = m->hp.n_vocab;
    const int64_t BIG = (int64_t)1 << 24;
    if ((st = sn_model_key_int(m, "wkv.head_size", 1, 1, 4096, &hp->head_size, err))) return st;
    if ((st = sn_model_key_int(m, "feed_forward_length", 1, 1, BIG, &hp->n_ff, err))) return st;
    if ((st = sn_model_key_int(m, "attention.decay_lora_rank", 1, 1, BIG, &hp->r_decay, err))) return st;
    if ((st = sn_model_key_int(m, "attention.iclr_lora_rank", 1, 1, BIG, &hp->r_iclr, err))) return st;
    if ((st = sn_model_key_int(m, "attention.value_residual_mix_lora_rank", 1, 1, BIG, &hp->r_vres, err))) return st;
    if ((st = sn_model_key_int(m, "attention.gate_lora_rank", 1, 1, BIG, &hp->r_gate, err))) return st;
    int64_t shift = 2;
    if ((st = sn_model_key_int(m, "token_shift_count", 0, 0, 64, &shift, err))) return st;
    if (shift != 2)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.token_shift_count = %lld, rwkv7 needs 2", m->path, m->hp.arch,
                          (long long)shift);
    hp->eps = 0.0f;
    if ((st = sn_model_key_float(m, "attention.layer_norm_epsilon", 1, &hp->eps, err))) return st;
    if (!(hp->eps >= 0.0f))
        return sn_err_set(err, SN_EFORMAT, "%s: %s.attention.layer_norm_epsilon must be >= 0", m->path, m->hp.arch);
    if (hp->n_embd % hp->head_size != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: embedding length %lld is not a multiple of wkv.head_size %lld", m->path,
                          (long long)hp->n_embd, (long long)hp->head_size);
    hp->n_head = hp->n_embd / hp->head_size;
    return SN_OK;
}

static sn_status load_layer(sn_model *m, rwkv_state *s, int il, sn_err *err) {
    const rwkv_hparams *hp = &s->hp;
    rwkv_layer *L = &s->layers[il];
    const int64_t D = hp->n_embd;
    char name[SN_GGUF_MAX_NAME + 32];
    sn_status st;
#define NAME(suffix) (snprintf(name, sizeof(name), "blk.%d." suffix, il), name)
#define VEC(suffix, dst) if ((st = vec(m, s, NAME(suffix), D, &(dst), err))) return st
#define MAT(suffix, nin, nout, dst) if ((st = sn_model_matrix(m, NAME(suffix), nin, nout, 1, &(dst), err))) return st
#define NORM(prefix, w, b) if ((st = norm_wb(m, s, NAME(prefix), D, &(w), &(b), err))) return st
    NORM("attn_norm", L->attn_norm, L->attn_norm_b);
    NORM("attn_norm_2", L->ffn_norm, L->ffn_norm_b);
    NORM("time_mix_ln", L->ln_x, L->ln_x_b);
    VEC("time_mix_w0.weight", L->w0);
    VEC("time_mix_a0.weight", L->a0);
    VEC("time_mix_v0.weight", L->v0);
    VEC("time_mix_k_k.weight", L->k_k);
    VEC("time_mix_k_a.weight", L->k_a);
    VEC("time_mix_r_k.weight", L->r_k);
    const int64_t ne_lerp[4] = {D, 1, 1, N_LERP}, ne_ffn[3] = {D, 1, 1};
    if ((st = keep(m, s, NAME("time_mix_lerp_fused.weight"), 4, ne_lerp, &L->lerp, err))) return st;
    if ((st = keep(m, s, NAME("channel_mix_lerp_k.weight"), 3, ne_ffn, &L->lerp_ffn, err))) return st;
    /* layer 0's value-residual LoRA is never used; llama.cpp's converter stores copies of the ICLR
     * LoRA there, so it has the ICLR rank */
    const int64_t rv = il == 0 ? hp->r_iclr : hp->r_vres;
    MAT("time_mix_w1.weight", D, hp->r_decay, L->w1);
    MAT("time_mix_w2.weight", hp->r_decay, D, L->w2);
    MAT("time_mix_a1.weight", D, hp->r_iclr, L->a1);
    MAT("time_mix_a2.weight", hp->r_iclr, D, L->a2);
    MAT("time_mix_v1.weight", D, rv, L->v1);
    MAT("time_mix_v2.weight", rv, D, L->v2);
    MAT("time_mix_g1.weight", D, hp->r_gate, L->g1);
    MAT("time_mix_g2.weight", hp->r_gate, D, L->g2);
    MAT("time_mix_receptance.weight", D, D, L->wr);
    MAT("time_mix_key.weight", D, D, L->wk);
    MAT("time_mix_value.weight", D, D, L->wv);
    MAT("time_mix_output.weight", D, D, L->wo);
    MAT("channel_mix_key.weight", D, hp->n_ff, L->ffn_key);
    MAT("channel_mix_value.weight", hp->n_ff, D, L->ffn_value);
#undef MAT
#undef NORM
#undef VEC
#undef NAME
    sn_matrix *mats[] = {&L->w1, &L->w2, &L->a1, &L->a2, &L->v1, &L->v2, &L->g1, &L->g2,
                         &L->wr, &L->wk, &L->wv, &L->wo, &L->ffn_key, &L->ffn_value};
    for (size_t i = 0; i < sizeof(mats) / sizeof(mats[0]); i++)
        if ((st = sn_model_repack(m, mats[i], err))) return st;
    return SN_OK;
}

static void rwkv_free(sn_model *m) {
    rwkv_state *s = m->impl;
    sn_f32_store_free(&s->f32s);
    free(s->layers);
    sn_ops_free(&s->ops);
    float *bufs[] = {s->x, s->h, s->prev, s->xx, s->r, s->w, s->k, s->v, s->a, s->g, s->kk, s->b,
                     s->vfirst, s->y, s->lo, s->ff};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) free(bufs[i]);
}

static sn_status rwkv_load(sn_model *m, sn_err *err) {
    rwkv_state *s = m->impl;
    sn_ops_init(&s->ops, m);
    s->lanes = sn_ops_lanes(&s->ops);
    s->wkv_avx2 = s->lanes == 8 && (sn_cpu_usable() & SN_CPU_AVX2);
    rwkv_hparams *hp = &s->hp;
    sn_status st;
    if ((st = read_hparams(m, hp, err))) return st;
    const int64_t D = hp->n_embd;
    if ((st = sn_model_matrix(m, "token_embd.weight", D, hp->n_vocab, 1, &s->tok_embd, err))) return st;
    if ((st = norm_wb(m, s, "token_embd_norm", D, &s->ln0, &s->ln0_b, err))) return st;
    if ((st = norm_wb(m, s, "output_norm", D, &s->out_norm, &s->out_norm_b, err))) return st;
    if ((st = sn_model_matrix(m, "output.weight", D, hp->n_vocab, 1, &s->output, err))) return st;
    if ((st = sn_model_repack(m, &s->output, err))) return st;
    s->layers = calloc((size_t)hp->n_layer, sizeof(*s->layers));
    if (!s->layers) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int il = 0; il < hp->n_layer; il++)
        if ((st = load_layer(m, s, il, err))) return st;
    const sn_state_decl decl = {2, {"token_shift", "wkv"},
                                {(uint64_t)(2 * D), (uint64_t)(hp->n_head * hp->head_size * hp->head_size)}};
    return sn_model_state_declare(m, &decl, err);
}

static sn_status ensure_batch(rwkv_state *s, int64_t T, sn_err *err) {
    if (T <= s->cap_T) return SN_OK;
    const rwkv_hparams *hp = &s->hp;
    const int64_t D = hp->n_embd;
    int64_t rmax = hp->r_decay;
    const int64_t ranks[] = {hp->r_iclr, hp->r_vres, hp->r_gate};
    for (int i = 0; i < 3; i++) rmax = ranks[i] > rmax ? ranks[i] : rmax;
    float **bufs[] = {&s->x, &s->h, &s->prev, &s->xx, &s->r, &s->w, &s->k, &s->v, &s->a, &s->g, &s->kk, &s->b,
                      &s->vfirst, &s->y, &s->lo, &s->ff};
    const int64_t widths[] = {D, D, D, N_LERP * D, D, D, D, D, D, D, D, D, D, D, rmax, hp->n_ff};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
        free(*bufs[i]);
        *bufs[i] = malloc((size_t)(T * widths[i]) * sizeof(float));
        if (!*bufs[i]) return sn_err_set(err, SN_ENOMEM, "out of memory (activations)");
    }
    const int64_t widest = hp->n_ff > D ? hp->n_ff : D;
    sn_status st = sn_ops_reserve(&s->ops, T, widest, err);
    if (st) return st;
    s->cap_T = T;
    return SN_OK;
}

/* ---- elementwise pieces, as ggml computes them ---- */

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ggml's CPU backend is built once per ISA and the variant the CPU supports is loaded, so its
 * reductions have the vector width of that ISA: 16 lanes for the AVX-512 builds (zen4, skylakex,
 * ...), 8 for AVX2 (haswell). We take the width of the kernel table in use, which is chosen from
 * the same CPUID bits (the scalar table mirrors the AVX2 layout). */
enum { MAXL = 16 };

/* ggml_vec_cvar_f32's AVX2 block sum: halves, movehl, movehdup: (t0 + t2) + (t1 + t3). */
static float hsum8_movehl(const float *x) {
    float t[4];
    for (int i = 0; i < 4; i++) t[i] = x[i] + x[i + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

/* GGML_F32_VEC_REDUCE over the four accumulators (x is modified). */
static float reduce_acc(float x[VECS][MAXL], int lanes) {
    for (int l = 0; l < lanes; l++) {
        x[0][l] += x[2][l];
        x[1][l] += x[3][l];
    }
    for (int l = 0; l < lanes; l++) x[0][l] += x[1][l];
    return lanes == 16 ? sn_ops_hsum16(x[0]) : sn_ops_hsum8(x[0]);
}

/* ggml_norm over n floats then weight and bias (either may be NULL): the mean from a double sum,
 * the variance as ggml_vec_cvar_f32 (blocks of `lanes` squares summed in float, added in double,
 * the tail one by one). */
static void layernorm(float *y, const float *x, const float *w, const float *b, int64_t n, float eps, int lanes) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)x[i];
    const float mean = (float)sum / (float)n;
    double var = 0.0;
    int64_t i = 0;
    for (; i + lanes - 1 < n; i += lanes) {
        float sq[MAXL];
        for (int l = 0; l < lanes; l++) {
            y[i + l] = x[i + l] - mean;
            sq[l] = y[i + l] * y[i + l];
        }
        var += (double)(lanes == 16 ? sn_ops_hsum16(sq) : hsum8_movehl(sq));
    }
    for (; i < n; i++) {
        float d = x[i] - mean;
        y[i] = d;
        d *= d;
        var += (double)d;
    }
    const float variance = (float)(var / (double)n);
    const float scale = 1.0f / sqrtf(variance + eps);
    for (int64_t j = 0; j < n; j++) {
        float t = y[j] * scale;
        if (w) t = t * w[j];
        if (b) t = t + b[j];
        y[j] = t;
    }
}

/* ---- the wkv7 recurrence (ggml_rwkv_wkv7), one job per head range ---- */

typedef struct {
    const rwkv_state *s;
    float *S;   /* this layer's state [head][i][j] */
    int64_t T;
} wkv_job;

/* One head over T tokens: for each value row i of the head's state matrix,
 *   sa = S_i . a_t (a = -kk), S_ij = S_ij w_j + v_i k_j + sa b_j (b = kk * iclr), y_i = S_i . r_t. */
static void wkv_head(const rwkv_state *s, float *S, int64_t T, int64_t h) {
    const int64_t N = s->hp.head_size, C = s->hp.n_embd;
    const int lanes = s->lanes, step = VECS * lanes;
    float sum[VECS][MAXL], acc[VECS][MAXL];
    for (int64_t t = 0; t < T; t++) {
        const int64_t o = t * C + h * N;
        const float *r = s->r + o, *w = s->w + o, *k = s->k + o, *v = s->v + o, *a = s->kk + o, *b = s->b + o;
        for (int64_t i = 0; i < N; i++) {
            float *Si = S + i * N;
            memset(sum, 0, sizeof(sum));
            for (int64_t j0 = 0; j0 < N; j0 += step)
                for (int q = 0; q < VECS; q++)
                    for (int l = 0; l < lanes; l++) {
                        const int64_t j = j0 + q * lanes + l;
                        if (j < N) sum[q][l] = fmaf(a[j], Si[j], sum[q][l]);
                    }
            const float sa = reduce_acc(sum, lanes);
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
            s->y[t * C + h * N + i] = reduce_acc(acc, lanes);
        }
    }
}

#if defined(__x86_64__)
/* wkv_head with 8 lanes as AVX2 vectors: every lane does the same fused multiply-adds in the same
 * order as the scalar twin (a*b+c rounded once either way), and the reductions are the same
 * reduce_acc on the stored lanes, so the results are bit-identical (test_rwkv7's parity runs it). */
/* reduce_acc(…, 8) as vectors: (x0 + x2) + (x1 + x3), halves added, then two hadds. */
__attribute__((target("avx2,fma"))) static inline float reduce8_avx2(const __m256 *x) {
    const __m256 a8 = _mm256_add_ps(_mm256_add_ps(x[0], x[2]), _mm256_add_ps(x[1], x[3]));
    __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
    t4 = _mm_hadd_ps(t4, t4);
    return _mm_cvtss_f32(_mm_hadd_ps(t4, t4));
}

__attribute__((target("avx2,fma"))) static void wkv_head_avx2(const rwkv_state *s, float *S, int64_t T, int64_t h) {
    const int64_t N = s->hp.head_size, C = s->hp.n_embd;
    for (int64_t t = 0; t < T; t++) {
        const int64_t o = t * C + h * N;
        const float *r = s->r + o, *w = s->w + o, *k = s->k + o, *v = s->v + o, *a = s->kk + o, *b = s->b + o;
        for (int64_t i = 0; i < N; i++) {
            float *Si = S + i * N;
            __m256 vs[VECS];
            for (int q = 0; q < VECS; q++) vs[q] = _mm256_setzero_ps();
            for (int64_t j0 = 0; j0 < N; j0 += VECS * 8)
                for (int q = 0; q < VECS; q++)
                    vs[q] = _mm256_fmadd_ps(_mm256_loadu_ps(a + j0 + 8 * q), _mm256_loadu_ps(Si + j0 + 8 * q), vs[q]);
            const float sa = reduce8_avx2(vs);
            const __m256 vi = _mm256_set1_ps(v[i]), vsa = _mm256_set1_ps(sa);
            __m256 va[VECS];
            for (int q = 0; q < VECS; q++) va[q] = _mm256_setzero_ps();
            for (int64_t j0 = 0; j0 < N; j0 += VECS * 8)
                for (int q = 0; q < VECS; q++) {
                    const int64_t j = j0 + 8 * q;
                    const __m256 kv = _mm256_mul_ps(vi, _mm256_loadu_ps(k + j));
                    __m256 st = _mm256_fmadd_ps(_mm256_loadu_ps(Si + j), _mm256_loadu_ps(w + j), kv);
                    st = _mm256_fmadd_ps(vsa, _mm256_loadu_ps(b + j), st);
                    _mm256_storeu_ps(Si + j, st);
                    va[q] = _mm256_fmadd_ps(st, _mm256_loadu_ps(r + j), va[q]);
                }
            s->y[t * C + h * N + i] = reduce8_avx2(va);
        }
    }
}
#endif

static void wkv_worker(void *arg, int ith, int nth) {
    const wkv_job *j = arg;
    const int64_t H = j->s->hp.n_head, N = j->s->hp.head_size;
    const int64_t h0 = H * ith / nth, h1 = H * (ith + 1) / nth;
    for (int64_t h = h0; h < h1; h++) {
#if defined(__x86_64__)
        if (j->s->wkv_avx2 && N % (VECS * 8) == 0) {
            wkv_head_avx2(j->s, j->S + h * N * N, j->T, h);
            continue;
        }
#endif
        wkv_head(j->s, j->S + h * N * N, j->T, h);
    }
}

/* ---- the forward pass over one micro-batch ---- */

/* x_prev rows: the saved shift vector for token 0, then the previous rows of h. */
static void shifted(float *prev, const float *h, const float *saved, int64_t T, int64_t D) {
    memcpy(prev, saved, (size_t)D * sizeof(float));
    if (T > 1) memcpy(prev + D, h, (size_t)((T - 1) * D) * sizeof(float));
}

static sn_status time_mix(sn_model *m, rwkv_state *s, int il, int64_t T, sn_err *err) {
    const rwkv_hparams *hp = &s->hp;
    const rwkv_layer *L = &s->layers[il];
    const int64_t D = hp->n_embd, N = hp->head_size, H = hp->n_head, TD = T * D;
    sn_status st;
    float *shift = sn_model_state_part(m, il, PART_SHIFT);
    shifted(s->prev, s->h, shift, T, D);
    for (int q = 0; q < N_LERP; q++) /* xxx = (x_prev - h) * mu_q + h */
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < D; i++) {
                const float sx = s->prev[t * D + i] - s->h[t * D + i];
                s->xx[q * TD + t * D + i] = sx * L->lerp[q * D + i] + s->h[t * D + i];
            }
    const float *xr = s->xx, *xw = s->xx + TD, *xk = s->xx + 2 * TD, *xv = s->xx + 3 * TD, *xa = s->xx + 4 * TD,
                *xg = s->xx + 5 * TD;
    if ((st = sn_ops_project1(&s->ops, xr, T, &L->wr, s->r, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xw, T, &L->w1, s->lo, err))) return st;
    for (int64_t i = 0; i < T * L->w1.n_out; i++) s->lo[i] = tanhf(s->lo[i]);
    if ((st = sn_ops_project1(&s->ops, s->lo, T, &L->w2, s->w, err))) return st;
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < D; i++) {
            const float z = s->w[t * D + i] + L->w0[i];
            s->w[t * D + i] = expf(sigmoidf_(z) * -0.606531f);
        }
    if ((st = sn_ops_project1(&s->ops, xk, T, &L->wk, s->k, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xv, T, &L->wv, s->v, err))) return st;
    if (il == 0) {
        memcpy(s->vfirst, s->v, (size_t)TD * sizeof(float));
    } else {
        if ((st = sn_ops_project1(&s->ops, xv, T, &L->v1, s->lo, err))) return st;
        if ((st = sn_ops_project1(&s->ops, s->lo, T, &L->v2, s->a, err))) return st; /* a is computed later */
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < D; i++) {
                const int64_t e = t * D + i;
                const float mix = sigmoidf_(s->a[e] + L->v0[i]);
                s->v[e] = s->v[e] + (s->vfirst[e] - s->v[e]) * mix;
            }
    }
    if ((st = sn_ops_project1(&s->ops, xg, T, &L->g1, s->lo, err))) return st;
    for (int64_t i = 0; i < T * L->g1.n_out; i++) s->lo[i] = sigmoidf_(s->lo[i]);
    if ((st = sn_ops_project1(&s->ops, s->lo, T, &L->g2, s->g, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xa, T, &L->a1, s->lo, err))) return st;
    if ((st = sn_ops_project1(&s->ops, s->lo, T, &L->a2, s->a, err))) return st;
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < D; i++) s->a[t * D + i] = sigmoidf_(s->a[t * D + i] + L->a0[i]);
    for (int64_t t = 0; t < T; t++) {
        for (int64_t h = 0; h < H; h++) { /* kk = l2norm(k * k_k) per head */
            float *kk = s->kk + t * D + h * N;
            const float *k = s->k + t * D + h * N, *kk_w = L->k_k + h * N;
            double ss = 0.0;
            for (int64_t i = 0; i < N; i++) {
                kk[i] = k[i] * kk_w[i];
                ss += (double)(kk[i] * kk[i]);
            }
            const float scale = 1.0f / fmaxf(sqrtf((float)ss), 1e-12f);
            for (int64_t i = 0; i < N; i++) kk[i] = kk[i] * scale;
        }
        for (int64_t i = 0; i < D; i++) {
            const int64_t e = t * D + i;
            const float ka = s->k[e] * L->k_a[i];
            s->k[e] = s->k[e] + (s->a[e] * ka - ka);
            s->b[e] = s->kk[e] * s->a[e]; /* wkv7's b = kk * a; its a = -kk */
            s->kk[e] = -s->kk[e];
        }
    }
    wkv_job wj = {s, sn_model_state_part(m, il, PART_WKV), T};
    sn_pool_run(m->pool, wkv_worker, &wj);
    for (int64_t t = 0; t < T; t++) {
        for (int64_t h = 0; h < H; h++) {
            const int64_t o = t * D + h * N;
            float *y = s->y + o;
            layernorm(y, y, NULL, NULL, N, 64e-5f, s->lanes); /* group norm, one group per head */
            for (int64_t i = 0; i < N; i++) y[i] = y[i] * L->ln_x[h * N + i] + L->ln_x_b[h * N + i];
            double rk = 0.0;
            for (int64_t i = 0; i < N; i++) rk += (double)((s->k[o + i] * s->r[o + i]) * L->r_k[h * N + i]);
            const float rkf = (float)rk;
            for (int64_t i = 0; i < N; i++) y[i] = y[i] + s->v[o + i] * rkf;
            for (int64_t i = 0; i < N; i++) y[i] = y[i] * s->g[o + i];
        }
    }
    memcpy(shift, s->h + (T - 1) * D, (size_t)D * sizeof(float));
    return sn_ops_project1(&s->ops, s->y, T, &L->wo, s->r, err); /* the time-mix output goes to s->r */
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    rwkv_state *s = m->impl;
    const rwkv_hparams *hp = &s->hp;
    const int64_t D = hp->n_embd;
    sn_status st;
    if ((st = ensure_batch(s, T, err))) return st;
    if ((st = sn_ops_embed(&s->tok_embd, tokens, T, s->x, err))) return st;
    for (int64_t t = 0; t < T; t++) layernorm(s->x + t * D, s->x + t * D, s->ln0, s->ln0_b, D, hp->eps, s->lanes);
    for (int il = 0; il < hp->n_layer; il++) {
        const rwkv_layer *L = &s->layers[il];
        for (int64_t t = 0; t < T; t++) layernorm(s->h + t * D, s->x + t * D, L->attn_norm, L->attn_norm_b, D, hp->eps, s->lanes);
        if ((st = time_mix(m, s, il, T, err))) return st;
        for (int64_t i = 0; i < T * D; i++) s->x[i] = s->r[i] + s->x[i];
        /* channel mix; its token shift is the second half of the layer's shift state */
        float *shift = sn_model_state_part(m, il, PART_SHIFT) + D;
        for (int64_t t = 0; t < T; t++) layernorm(s->h + t * D, s->x + t * D, L->ffn_norm, L->ffn_norm_b, D, hp->eps, s->lanes);
        shifted(s->prev, s->h, shift, T, D);
        memcpy(shift, s->h + (T - 1) * D, (size_t)D * sizeof(float));
        /* In the last layer only the rows whose logits are wanted go on (llama.cpp's inp_out_ids):
         * the last token, or none; this also picks the matmuls' single-row summation order. */
        float *x = s->x, *h = s->h, *prev = s->prev;
        int64_t R = T;
        if (il == hp->n_layer - 1) {
            if (!logits) break;
            x += (T - 1) * D;
            h += (T - 1) * D;
            prev += (T - 1) * D;
            R = 1;
        }
        for (int64_t t = 0; t < R; t++)
            for (int64_t i = 0; i < D; i++) {
                const int64_t e = t * D + i;
                s->xx[e] = (prev[e] - h[e]) * L->lerp_ffn[i] + h[e];
            }
        if ((st = sn_ops_project1(&s->ops, s->xx, R, &L->ffn_key, s->ff, err))) return st;
        for (int64_t i = 0; i < R * hp->n_ff; i++) {
            const float z = s->ff[i] > 0.0f ? s->ff[i] : 0.0f;
            s->ff[i] = z * z;
        }
        if ((st = sn_ops_project1(&s->ops, s->ff, R, &L->ffn_value, s->y, err))) return st;
        for (int64_t i = 0; i < R * D; i++) x[i] = s->y[i] + x[i];
    }
    if (!logits) return SN_OK;
    layernorm(s->h, s->x + (T - 1) * D, s->out_norm, s->out_norm_b, D, hp->eps, s->lanes);
    return sn_ops_project1(&s->ops, s->h, 1, &s->output, logits, err);
}

const sn_family sn_family_rwkv7 = {
    .name = "rwkv7",
    .impl_size = sizeof(rwkv_state),
    .state_kind = SN_STATE_RECURRENT,
    .load = rwkv_load,
    .forward = forward,
    .free = rwkv_free,
};
